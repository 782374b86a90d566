"""Closing an asyncio connection leaves no awaited send waiting: the close cancels the timer
that bounds tracked sends by jms.sendTimeout, so the sends still tracked fail then."""

from __future__ import annotations

import asyncio

import pytest

from jmspy.aio._bridge import Control, SendCompletion
from jmspy.errors import JMSException


def test_shutdown_fails_the_sends_still_waited_for_and_keeps_posted_outcomes() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        control = Control(loop, 60000)
        settled = loop.create_future()
        failed = loop.create_future()
        outstanding = loop.create_future()
        for future in (settled, failed, outstanding):
            control.track_send(future, "an asyncio send")
        # Outcomes posted before the close but not yet run on the loop keep their meaning.
        SendCompletion(control, settled).succeed()
        SendCompletion(control, failed).fail(JMSException("refused by the peer"))
        control.shutdown()
        await asyncio.wait_for(settled, 5)
        with pytest.raises(JMSException, match="refused by the peer"):
            await asyncio.wait_for(failed, 5)
        with pytest.raises(JMSException, match="connection was closed.*outcome is unknown"):
            await asyncio.wait_for(outstanding, 5)

    asyncio.run(main())
