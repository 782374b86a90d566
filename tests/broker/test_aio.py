"""jmspy.aio against the real broker: sends, receives, iteration, listeners, acknowledgement,
transactions, the JMSContext style, and receives cancelled while messages arrive."""

from __future__ import annotations

import asyncio
import random
import threading
import time
import uuid
from typing import Any

import pytest

import jmspy
from jmspy import aio

pytestmark = pytest.mark.timeout(300) if hasattr(pytest.mark, "timeout") else []


def _name(prefix: str) -> str:
    return f"aio.{prefix}.{uuid.uuid4().hex[:10]}"


def _connect(broker: Any, **options: Any) -> Any:
    options.setdefault("connect_timeout", 10000)
    return aio.connect(broker.url, broker.username, broker.password, **options)


def test_send_receive_in_order_and_timeout_returns_none(broker: Any) -> None:
    async def main() -> None:
        async with _connect(broker) as connection:
            session = await connection.create_session()
            queue = session.create_queue(_name("order"))
            producer = await session.create_producer(queue)
            for i in range(20):
                message = session.create_text_message(f"m{i}")
                message.setIntProperty("i", i)
                await producer.send(message)
            consumer = await session.create_consumer(queue)
            got = []
            for _ in range(20):
                message = await consumer.receive(10000)
                assert message is not None
                got.append(message.getText())
            assert got == [f"m{i}" for i in range(20)]
            started = time.monotonic()
            assert await consumer.receive(300) is None
            assert time.monotonic() - started >= 0.25
            assert await consumer.receive_no_wait() is None

    asyncio.run(main())


def test_async_for_ends_when_consumer_closes(broker: Any) -> None:
    async def main() -> None:
        async with _connect(broker) as connection:
            session = await connection.create_session()
            queue = session.create_queue(_name("iter"))
            consumer = await session.create_consumer(queue)
            producer = await session.create_producer(queue)
            seen: list[str] = []

            async def collect() -> None:
                async for message in consumer:
                    seen.append(message.getText())
                    if len(seen) == 5:
                        await consumer.close()

            task = asyncio.create_task(collect())
            for i in range(5):
                await producer.send(session.create_text_message(f"x{i}"))
            await asyncio.wait_for(task, 60)
            assert seen == [f"x{i}" for i in range(5)]

    asyncio.run(main())


def test_cancelled_receives_lose_nothing(broker: Any) -> None:
    """Receives cancelled at random while messages arrive: every message is received exactly
    once, by a receive that was not cancelled, or afterwards."""
    total = 300

    async def main() -> None:
        async with _connect(broker) as connection:
            session = await connection.create_session()
            queue = session.create_queue(_name("cancel"))
            consumer = await session.create_consumer(queue)
            producer = await session.create_producer(queue)
            received: list[int] = []
            rng = random.Random(16)
            done = asyncio.Event()

            async def receiver() -> None:
                while not done.is_set():
                    task = asyncio.create_task(consumer.receive(2000))
                    # Cancel some receives at once, some after a moment, some never.
                    await asyncio.sleep(rng.choice((0, 0, 0.001, 0.005)))
                    if rng.random() < 0.5:
                        task.cancel()
                    try:
                        message = await task
                    except asyncio.CancelledError:
                        continue
                    if message is not None:
                        received.append(message.getIntProperty("i"))

            receivers = [asyncio.create_task(receiver()) for _ in range(8)]
            sends = []
            for i in range(total):
                message = session.create_text_message("c")
                message.setIntProperty("i", i)
                sends.append(producer.send(message))
            await asyncio.gather(*sends)
            deadline = time.monotonic() + 120
            while len(received) < total and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            done.set()
            await asyncio.gather(*receivers)
            while (message := await consumer.receive(500)) is not None:
                received.append(message.getIntProperty("i"))
            assert sorted(received) == list(range(total))

    asyncio.run(main())


def test_coroutine_listener_failure_is_redelivered(broker: Any) -> None:
    async def main() -> None:
        async with _connect(broker, **{"jms.redeliveryPolicy.maxRedeliveries": 3}) as connection:
            session = await connection.create_session()
            queue = session.create_queue(_name("listener"))
            producer = await session.create_producer(queue)
            consumer = await session.create_consumer(queue)
            delivered: asyncio.Queue[tuple[str, bool, Any]] = asyncio.Queue()
            loop = asyncio.get_running_loop()
            failed_once = False

            async def on_message(message: Any) -> None:
                nonlocal failed_once
                # Runs on the event loop itself.
                assert asyncio.get_running_loop() is loop
                await asyncio.sleep(0)
                if message.getText() == "boom" and not failed_once:
                    failed_once = True
                    raise RuntimeError("first attempt fails")
                await delivered.put((message.getText(), message.getJMSRedelivered(), message))

            consumer.set_message_listener(on_message)
            await producer.send(session.create_text_message("ok"))
            await producer.send(session.create_text_message("boom"))
            first = await asyncio.wait_for(delivered.get(), 60)
            second = await asyncio.wait_for(delivered.get(), 60)
            assert first[:2] == ("ok", False)
            assert second[:2] == ("boom", True)
            consumer.set_message_listener(None)
            await consumer.close()
            check = await session.create_consumer(queue)
            assert await check.receive(500) is None  # both were acknowledged

    asyncio.run(main())


def test_coroutine_batch_listener(broker: Any) -> None:
    async def main() -> None:
        async with _connect(broker) as connection:
            session = await connection.create_session()
            queue = session.create_queue(_name("batch"))
            producer = await session.create_producer(queue)
            await asyncio.gather(
                *(producer.send(session.create_text_message(f"b{i}")) for i in range(10))
            )
            consumer = await session.create_consumer(queue)
            batches: list[list[str]] = []
            all_in = asyncio.Event()

            async def on_messages(messages: list[Any]) -> None:
                batches.append([m.getText() for m in messages])
                if sum(map(len, batches)) == 10:
                    all_in.set()

            consumer.set_batch_message_listener(on_messages, 4, 2000)
            await asyncio.wait_for(all_in.wait(), 60)
            assert [t for b in batches for t in b] == [f"b{i}" for i in range(10)]
            assert all(1 <= len(b) <= 4 for b in batches)

    asyncio.run(main())


def test_client_acknowledge_awaited(broker: Any) -> None:
    async def main() -> None:
        async with _connect(broker) as connection:
            session = await connection.create_session(jmspy.Session.CLIENT_ACKNOWLEDGE)
            queue = session.create_queue(_name("ack"))
            producer = await session.create_producer(queue)
            await producer.send(session.create_text_message("a"))
            await producer.send(session.create_text_message("b"))
            consumer = await session.create_consumer(queue)
            first = await consumer.receive(10000)
            assert first is not None and first.getText() == "a"
            await first.acknowledge()
            second = await consumer.receive(10000)
            assert second is not None and second.getText() == "b"
            await session.close()  # "b" not acknowledged: back on the queue

            other = await connection.create_session()
            again = await other.create_consumer(queue)
            message = await again.receive(10000)
            assert message is not None and message.getText() == "b"
            assert message.getJMSRedelivered()
            assert await again.receive(300) is None

    asyncio.run(main())


def test_transactions_commit_and_rollback(broker: Any) -> None:
    async def main() -> None:
        async with _connect(broker) as connection:
            session = await connection.create_session(True, jmspy.Session.SESSION_TRANSACTED)
            queue = session.create_queue(_name("txn"))
            producer = await session.create_producer(queue)
            consumer = await session.create_consumer(queue)
            await producer.send(session.create_text_message("discarded"))
            await session.rollback()
            await producer.send(session.create_text_message("kept"))
            await session.commit()
            message = await consumer.receive(10000)
            assert message is not None and message.getText() == "kept"
            await session.rollback()  # the receive is undone
            message = await consumer.receive(10000)
            assert message is not None and message.getText() == "kept"
            assert message.getJMSRedelivered()
            await session.commit()
            assert await consumer.receive(300) is None

    asyncio.run(main())


def test_context_style(broker: Any) -> None:
    async def main() -> None:
        factory = aio.ConnectionFactory(
            broker.url, broker.username, broker.password, connect_timeout=10000
        )
        async with await factory.create_context() as context:
            queue = context.create_queue(_name("ctx"))
            producer = await context.create_producer()
            await producer.setProperty("k", "v").send(queue, "hello")
            await producer.send(queue, {"n": 1})
            consumer = await context.create_consumer(queue)
            text = await consumer.receive(10000)
            assert text is not None and text.getText() == "hello"
            assert text.getStringProperty("k") == "v"
            mapped = await consumer.receive(10000)
            assert mapped is not None and mapped.getInt("n") == 1

    asyncio.run(main())


def test_aio_quickstart_example_runs(broker: Any) -> None:
    """examples/aio_quickstart.py (the README's asyncio section) against the session broker."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    example = Path(__file__).resolve().parents[2] / "examples" / "aio_quickstart.py"
    env = dict(os.environ)
    env.update(
        JMSPY_BROKER_URL=broker.url,
        JMSPY_BROKER_USER=broker.username,
        JMSPY_BROKER_PASSWORD=broker.password,
    )
    result = subprocess.run(
        [sys.executable, str(example)], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == [
        "received 'Hello from jmspy.aio'",
        "received '#0'",
        "received '#1'",
        "received '#2'",
        "listener got 'for the listener'",
    ], result.stdout


def test_awaits_on_a_closed_connection_fail_promptly(broker: Any) -> None:
    """After the connection closed, sends and receives raise instead of waiting."""

    async def main() -> None:
        connection = await _connect(broker)
        session = await connection.create_session()
        queue = session.create_queue(_name("closed"))
        producer = await session.create_producer(queue)
        consumer = await session.create_consumer(queue)
        waiting = asyncio.create_task(consumer.receive())
        await asyncio.sleep(0.2)
        await connection.close()
        # A receive waiting without a timeout returns None when its consumer is closed.
        assert await asyncio.wait_for(waiting, 30) is None
        with pytest.raises(jmspy.JMSException):
            await asyncio.wait_for(producer.send(session.create_text_message("late")), 30)
        # Closing what the connection already closed is a no-op, as in the blocking API.
        await asyncio.wait_for(consumer.close(), 30)
        await asyncio.wait_for(session.close(), 30)

    asyncio.run(main())


def test_coroutine_listener_commits_and_rolls_back_its_session(broker: Any) -> None:
    """A transacted session's coroutine listener awaits rollback() then commit(), as a blocking
    listener calls them on its own thread (which holds the session's delivery lock)."""

    async def main() -> None:
        async with _connect(broker) as connection:
            session = await connection.create_session(True, jmspy.Session.SESSION_TRANSACTED)
            queue = session.create_queue(_name("txlistener"))
            producer = await session.create_producer(queue)
            await producer.send(session.create_text_message("t"))
            await session.commit()
            consumer = await session.create_consumer(queue)
            seen: list[bool] = []
            committed = asyncio.Event()

            async def on_message(message: Any) -> None:
                seen.append(message.getJMSRedelivered())
                if len(seen) == 1:
                    await session.rollback()
                else:
                    await session.commit()
                    committed.set()

            consumer.set_message_listener(on_message)
            await asyncio.wait_for(committed.wait(), 60)
            assert seen == [False, True]
            consumer.set_message_listener(None)
            await consumer.close()
            other = await connection.create_session()
            check = await other.create_consumer(queue)
            assert await check.receive(500) is None

    asyncio.run(main())


def test_many_connections_share_the_control_threads(broker: Any) -> None:
    """Link attaches, commits and closes of five connections, one after another, run on the
    process's control threads: no thread is kept per connection (there were two each)."""

    def control_threads() -> int:
        return sum(t.name.startswith("jmspy-aio") for t in threading.enumerate())

    before = control_threads()

    async def main() -> None:
        connections = [await _connect(broker) for _ in range(5)]
        try:
            for connection in connections:
                session = await connection.create_session(jmspy.SESSION_TRANSACTED)
                queue = session.create_queue(_name("shared-control"))
                producer = await session.create_producer(queue)
                await producer.send(session.create_text_message("m"))
                await session.commit()
                consumer = await session.create_consumer(queue)
                received = await consumer.receive(10000)
                assert received is not None and received.getText() == "m"
                await session.commit()
            # One call at a time: a thread finishing a call may not be idle yet when the next
            # one comes (on a busy machine even twice in a row), so at most three whatever
            # the number of connections; a pool per connection kept nine here.
            assert control_threads() - before <= 3
        finally:
            for connection in connections:
                await connection.close()

    asyncio.run(main())
