"""Spark pipelines over JMS destinations: the ``jms`` data source for PySpark 4.x.

    import jmspy.spark
    jmspy.spark.register(spark)
    orders = (spark.readStream.format("jms")
              .option("url", "amqp://localhost:5672").option("destination", "queue://orders")
              .load())

Needs the ``spark`` extra (``pip install 'jmspy[spark]'``). The row schemas, options and
guarantees are in docs/spark.md. Importing this package does not import
pyspark; :func:`register` does.
"""

from __future__ import annotations

from typing import Any

from ._options import JmsOptionError, JmsOptions, parse_destination
from ._rows import READ_COLUMNS, READ_SCHEMA, ROW_ID_PROPERTY, WRITE_COLUMNS
from ._writer import JmsWriteError

__all__ = [
    "READ_COLUMNS",
    "READ_SCHEMA",
    "ROW_ID_PROPERTY",
    "WRITE_COLUMNS",
    "JmsOptionError",
    "JmsOptions",
    "JmsWriteError",
    "parse_destination",
    "register",
]


def register(spark: Any) -> None:
    """Register ``format("jms")`` with a SparkSession (once per session)."""
    try:
        from .datasource import JmsDataSource
    except ImportError as exc:
        raise ImportError(
            f"jmspy.spark needs pyspark 4.x with pyarrow: pip install 'jmspy[spark]' ({exc})"
        ) from exc
    spark.dataSource.register(JmsDataSource)
