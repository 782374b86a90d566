"""Proton's wrappers of a live connection's links and sessions are let go on its engine thread.

Proton is not thread-safe, and its Python wrappers (``proton.Receiver``, ``Sender``,
``Session``) decrement the C object's reference count in ``__del__`` without the GIL. A closed
consumer, producer or session of a connection that lives on is collected wherever the garbage
collector runs (its provider objects form a cycle with their session): on an application
thread, that decrement could overlap the engine thread's own change of the same count. The
provider objects hand the wrappers to the engine (``OrphanedRefs``), which drops them on its
turn. Checked with a real broker: every drop of a wrapper of the connection's closed links and
session is recorded with its thread.
"""

from __future__ import annotations

import gc
import threading
import time
from typing import Any

import proton._wrapper as proton_wrapper
import pytest
from cproton import addressof

import jmspy


def _engine_of(connection: Any) -> Any:
    return connection._amqp.engine


def _all_let_go(watched: dict[int, str], drops: list[tuple[int, threading.Thread]]) -> bool:
    return set(watched) <= {address for address, _ in drops}


def test_closed_links_and_sessions_are_let_go_on_the_engine_thread(
    factory: jmspy.ConnectionFactory, unique_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    drops: list[tuple[int, threading.Thread]] = []
    watched: dict[int, str] = {}
    original = proton_wrapper.Wrapper.__del__

    def recording_del(wrapper: Any) -> None:
        address = addressof(wrapper._impl)
        if address in watched:
            drops.append((address, threading.current_thread()))
        original(wrapper)

    monkeypatch.setattr(proton_wrapper.Wrapper, "__del__", recording_del)
    with factory.createConnection() as connection:
        connection.start()
        engine = _engine_of(connection)
        for _ in range(5):
            session = connection.createSession()
            queue = session.createQueue(unique_name)
            consumer = session.createConsumer(queue)
            producer = session.createProducer(queue)
            producer.send(session.createTextMessage("x"))
            assert consumer.receive(10000) is not None
            watched[addressof(consumer._receiver.link._impl)] = "consumer link"
            watched[addressof(producer._links[queue].link._impl)] = "producer link"
            amqp_session: Any = session._amqp
            watched[addressof(amqp_session._proton._impl)] = "session"
            session.close()
            del session, queue, consumer, producer, amqp_session

        # The closed objects' cycles are collected here, on the test's (an application's)
        # thread; before the engine took the wrappers they were dropped right here.
        gc.collect()
        engine.submit(lambda: None)  # a turn of the engine, which drops what it was handed
        deadline = time.monotonic() + 30
        while not _all_let_go(watched, drops) and time.monotonic() < deadline:
            time.sleep(0.01)
            engine.submit(lambda: None)
        left = set(watched) - {address for address, _ in drops}
        assert not left, f"never let go: {sorted(watched[address] for address in left)}"
        foreign = [(watched[a], thread.name) for a, thread in drops if thread is not engine.thread]
        assert not foreign, f"dropped off the engine thread: {foreign}"
