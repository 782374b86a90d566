"""How asyncio code waits for the engine: engine completions come back to the event loop as
futures completed with ``loop.call_soon_threadsafe``; the few engine calls that only exist in a
blocking form (link attach, commit, close, a drain) run on a small pool of control threads per
connection, never on a new thread per call."""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import types
from collections.abc import Callable
from typing import Any, TypeVar

from ..message import Message

T = TypeVar("T")

# Control threads per connection: enough for a commit not to wait behind a slow close.
CONTROL_THREADS = 2
_names = itertools.count(1)


class Control:
    """Runs the blocking engine calls of one asyncio connection off the event loop.

    Every such call is bounded by the timeout the synchronous API honours for it
    (jms.requestTimeout, jms.sendTimeout, jms.closeTimeout, jmspy.receiveDrainTimeout), so a
    control thread is never held longer than the blocking call would hold a caller's thread."""

    def __init__(self) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=CONTROL_THREADS, thread_name_prefix=f"jmspy-aio-{next(_names)}"
        )

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` on a control thread. A cancelled await does not stop the call
        (an engine request cannot be taken back half way); its result is dropped."""
        future = self._pool.submit(function, *args)
        return await asyncio.shield(asyncio.wrap_future(future))

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False)


def resolve(future: asyncio.Future[Any], value: Any = None) -> None:
    """Complete ``future`` unless it was cancelled meanwhile (event loop thread)."""
    if not future.done():
        future.set_result(value)


def reject(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


class SendCompletion:
    """A CompletionListener whose callbacks (on the session's completion thread) complete an
    asyncio future on its loop."""

    __slots__ = ("_loop", "_future")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]) -> None:
        self._loop = loop
        self._future = future

    def onCompletion(self, message: Message) -> None:
        self._loop.call_soon_threadsafe(resolve, self._future, None)

    def onException(self, message: Message, exception: BaseException) -> None:
        self._loop.call_soon_threadsafe(reject, self._future, exception)


async def _acknowledge(message: Message) -> None:
    """``await message.acknowledge()``: settles without waiting (as the blocking form does),
    so nothing leaves the event loop thread."""
    Message.acknowledge(message)


def asyncio_message(message: Message) -> Message:
    """The received message with an awaitable ``acknowledge()`` (instance attribute: the
    message stays an instance of its own JMS type)."""
    message.acknowledge = types.MethodType(_acknowledge, message)  # type: ignore[method-assign]
    return message
