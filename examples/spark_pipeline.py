"""A Spark pipeline over JMS: orders in from a queue, enriched, written to Parquet, and a delayed
payment reminder published back for every unpaid order.

    python examples/spark_pipeline.py [--orders 60] [--reminder-delay-ms 2000] [--out DIR]

Uses the broker named by JMSPY_BROKER_URL (with JMSPY_BROKER_USER / JMSPY_BROKER_PASSWORD);
without it, provisions a local Apache Artemis for the duration of the run. Needs the spark
extra: pip install -e '.[spark]'.

The streaming query reads ``queue://shop.orders`` with ``trigger(availableNow=True)`` (every
order there now, then stop). Each micro-batch goes to two sinks in ``foreachBatch``: Parquet
files, and reminders written with ``format("jms")`` and a per-row ``delivery_delay``. The
orders are settled on the broker only after Spark has recorded the batch (at-least-once);
the reminders carry ``jmspy_spark_row_id`` and, on Artemis, duplicate detection drops a
replayed batch's copies.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import jmspy

ORDERS = "shop.orders"
REMINDERS = "shop.reminders"


@contextlib.contextmanager
def broker_url() -> Iterator[tuple[str, str, str]]:
    url = os.environ.get("JMSPY_BROKER_URL")
    if url:
        yield (
            url,
            os.environ.get("JMSPY_BROKER_USER", "admin"),
            os.environ.get("JMSPY_BROKER_PASSWORD", "admin"),
        )
        return
    from jmspy.conformance.brokers import ArtemisBroker

    print("starting a local Apache Artemis (first run downloads it from Maven Central) ...")
    with ArtemisBroker() as broker:
        yield broker.url, broker.username, broker.password


def publish_orders(factory: jmspy.ConnectionFactory, count: int) -> None:
    """What a shop front end would do: one JSON text message per order."""
    rng = random.Random(7)
    with factory.createConnection() as connection:
        session = connection.createSession(jmspy.SESSION_TRANSACTED)
        producer = session.createProducer(session.createQueue(ORDERS))
        for number in range(1, count + 1):
            order = {
                "order": number,
                "customer": f"c{rng.randrange(1, 8)}",
                "amount": round(rng.uniform(5, 500), 2),
                "paid": rng.random() < 0.6,
            }
            message = session.createTextMessage(json.dumps(order))
            message.setStringProperty("region", rng.choice(["eu", "us", "apac"]))
            producer.send(message)
        session.commit()
    print(f"published {count} orders to {ORDERS}")


def run_pipeline(spark: Any, jms: dict[str, str], out: str, delay_ms: int) -> Any:
    from pyspark.sql import functions as F

    order_schema = "order long, customer string, amount double, paid boolean"
    orders = (
        spark.readStream.format("jms")
        .options(**jms, destination=f"queue://{ORDERS}", maxMessagesPerTrigger="25")
        .load()
        .select(
            F.from_json("text", order_schema).alias("o"),
            F.col("properties")["region"].alias("region"),
            F.col("timestamp").alias("ordered_at"),
            "message_id",
            "redelivered",
        )
        .select("o.*", "region", "ordered_at", "message_id", "redelivered")
        .withColumn(
            "tier",
            F.when(F.col("amount") >= 250, "gold")
            .when(F.col("amount") >= 50, "silver")
            # the rest
            .otherwise("bronze"),
        )
        .withColumn("vat", F.round(F.col("amount") * F.lit(0.2), 2))
    )

    def each_batch(batch: Any, batch_id: int) -> None:
        batch.persist()
        batch.write.mode("append").parquet(out)
        reminders = batch.where(~F.col("paid")).select(
            F.format_string(
                "order %d: %.2f is still unpaid (%s)", "order", "amount", "customer"
            ).alias("body"),
            F.col("message_id").alias("correlation_id"),
            F.lit("payment-reminder").alias("type"),
            F.create_map(F.lit("customer"), F.col("customer")).alias("properties"),
            F.when(F.col("tier") == "gold", 9).otherwise(4).alias("priority"),
            F.lit(delay_ms).cast("long").alias("delivery_delay"),
        )
        # A replay of this batch writes the same row ids; Artemis drops the copies.
        reminders.write.format("jms").options(
            **jms,
            destination=f"queue://{REMINDERS}",
            writeId=f"reminders-{batch_id}",
            duplicateDetection="true",
        ).mode("append").save()
        batch.unpersist()

    return (
        orders.writeStream.foreachBatch(each_batch)
        .option("checkpointLocation", os.path.join(out, "_checkpoint"))
        .trigger(availableNow=True)
        .start()
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=60)
    parser.add_argument("--reminder-delay-ms", type=int, default=2000)
    parser.add_argument("--out", default=None, help="Parquet directory (default: a temp dir)")
    args = parser.parse_args()
    out = args.out or os.path.join(tempfile.mkdtemp(prefix="jmspy-spark-"), "orders")

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import jmspy.spark

    with broker_url() as (url, user, password):
        factory = jmspy.ConnectionFactory(url, user, password)
        publish_orders(factory, args.orders)

        spark = (
            SparkSession.builder.master("local[2]")
            .appName("jmspy-spark-pipeline")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        jmspy.spark.register(spark)
        try:
            jms = {"url": url, "user": user, "password": password}
            started = time.monotonic()
            query = run_pipeline(spark, jms, out, args.reminder_delay_ms)
            query.awaitTermination()
            batches = [p["numInputRows"] for p in query.recentProgress]
            print(f"stream done in {time.monotonic() - started:.1f} s: batches of {batches} orders")
            stored = spark.read.parquet(out)
            print(f"{stored.count()} orders in {out}; by tier:")
            stored.groupBy("tier").count().orderBy("tier").show()
            unpaid = stored.where("NOT paid").count()
        finally:
            spark.stop()

        print(
            f"waiting for {unpaid} reminders on {REMINDERS} (delayed {args.reminder_delay_ms} ms)"
        )
        with factory.createConnection() as connection:
            session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
            consumer = session.createConsumer(session.createQueue(REMINDERS))
            connection.start()
            received = 0
            early = 0
            while received < unpaid:
                message = consumer.receive(args.reminder_delay_ms + 10_000)
                if message is None:
                    break
                received += 1
                early += time.time_ns() // 1_000_000 < message.getJMSDeliveryTime()
                if received <= 3:
                    print(f"  {message.getBody(str)} [priority {message.getJMSPriority()}]")
        print(f"{received} reminders received, {early} before their JMSDeliveryTime")
        return 0 if received == unpaid and early == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
