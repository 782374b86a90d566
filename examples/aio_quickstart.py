"""jmspy.aio: send, receive with a timeout, iterate, and a coroutine listener, on asyncio.

Uses the broker named by JMSPY_BROKER_URL (with JMSPY_BROKER_USER / JMSPY_BROKER_PASSWORD);
without it, provisions a local Apache Artemis (fetched from Maven Central and cached) for the
duration of the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Iterator

import jmspy
from jmspy import aio


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


async def run(url: str, user: str, password: str) -> None:
    # Started on open: consumers receive at once.
    async with aio.connect(url, user, password) as connection:
        session = await connection.create_session(jmspy.CLIENT_ACKNOWLEDGE)
        queue = session.create_queue(f"jmspy.aio.quickstart.{uuid.uuid4().hex[:8]}")
        producer = await session.create_producer(queue)

        # Each await returns once the broker settled the message.
        await producer.send(session.create_text_message("Hello from jmspy.aio"))
        # Or start many sends and await them together (pipelined, outcomes in order).
        sends = [producer.send(session.create_text_message(f"#{i}")) for i in range(3)]
        await asyncio.gather(*sends)

        consumer = await session.create_consumer(queue)
        first = await consumer.receive(5000)
        assert first is not None
        print(f"received {first.getBody(str)!r}")
        await aio.acknowledge(first)

        async for message in consumer:  # until the consumer is closed
            print(f"received {message.getBody(str)!r}")
            await aio.acknowledge(message)
            if message.getBody(str) == "#2":
                await consumer.close()

        # A coroutine listener runs on this event loop.
        done = asyncio.Event()

        async def on_message(message: jmspy.Message) -> None:
            print(f"listener got {message.getBody(str)!r}")
            await aio.acknowledge(message)  # typed form of: await message.acknowledge()
            done.set()

        listening = await session.create_consumer(queue)
        listening.set_message_listener(on_message)
        await producer.send(session.create_text_message("for the listener"))
        await asyncio.wait_for(done.wait(), 30)


def main() -> int:
    with broker_url() as (url, user, password):
        asyncio.run(run(url, user, password))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
