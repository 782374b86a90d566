"""jmspy.aio's bridge between the engine thread and the event loop, without a broker: work
posted from other threads runs in order on the loop, and an unsettled send's await ends at
jms.sendTimeout."""

from __future__ import annotations

import asyncio
import threading

import pytest

from jmspy.aio._bridge import Control, SendCompletion
from jmspy.errors import JMSException


def test_posts_from_another_thread_run_on_the_loop_in_order() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        control = Control(loop, 30000)
        seen: list[int] = []
        threads: set[int] = set()
        done = asyncio.Event()

        def record(i: int) -> None:
            seen.append(i)
            threads.add(threading.get_ident())
            if i == 9999:
                done.set()

        def engine() -> None:
            for i in range(10000):
                control.post(record, i)

        thread = threading.Thread(target=engine)
        thread.start()
        await asyncio.wait_for(done.wait(), 60)
        thread.join()
        control.shutdown()
        assert seen == list(range(10000))
        assert threads == {threading.get_ident()}

    asyncio.run(main())


def test_an_unsettled_send_fails_at_the_send_timeout() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        control = Control(loop, 300)
        settled_one = loop.create_future()
        never = loop.create_future()
        control.track_send(settled_one, "send one")
        control.track_send(never, "send two")
        SendCompletion(control, settled_one).succeed()
        started = loop.time()
        await settled_one
        with pytest.raises(JMSException, match=r"send two .*jms\.sendTimeout"):
            await asyncio.wait_for(never, 30)
        assert loop.time() - started >= 0.25
        control.shutdown()

    asyncio.run(main())


def test_a_failed_send_raises_its_error() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        control = Control(loop, 30000)
        future = loop.create_future()
        control.track_send(future, "send")
        error = JMSException("refused by the broker")
        threading.Thread(target=SendCompletion(control, future).fail, args=(error,)).start()
        with pytest.raises(JMSException, match="refused by the broker"):
            await asyncio.wait_for(future, 30)
        control.shutdown()

    asyncio.run(main())
