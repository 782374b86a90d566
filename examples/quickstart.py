"""Send and receive one message through a real broker with the JMS API.

Uses the broker named by JMSPY_BROKER_URL (with JMSPY_BROKER_USER / JMSPY_BROKER_PASSWORD);
without it, provisions a local Apache Artemis (fetched from Maven Central and cached) for the
duration of the run.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

import jmspy


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


def main() -> int:
    with broker_url() as (url, user, password):
        factory = jmspy.ConnectionFactory(url, user, password)
        with factory.createConnection() as connection:
            session = connection.createSession(jmspy.AUTO_ACKNOWLEDGE)
            queue = session.createQueue("jmspy.quickstart")
            producer = session.createProducer(queue)
            message = session.createTextMessage("Hello from jmspy")
            message.setStringProperty("greeting", "hello")
            producer.send(message)
            print(f"sent     {message.getJMSMessageID()} to {queue} at {url}")

            consumer = session.createConsumer(queue)
            connection.start()
            received = consumer.receive(10_000)
            if received is None:
                print("no message received within 10 s", file=sys.stderr)
                return 1
            print(
                f"received {received.getJMSMessageID()}: {received.getText()!r} "
                f"(greeting={received.getStringProperty('greeting')!r})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
