"""A whole working life of a connection on a real Artemis whose password is distinctive (login,
send, transacted receive, a cut connection, the reconnect and the work after it), logged at
DEBUG with every frame traced: the password appears in no log line, repr or error.

The suite's brokers use the user name as the password, so a search for it proves nothing;
this broker gets a password of its own. The refused-login case is in
tests/broker/test_credentials_on_broker.py.
"""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest
from jmspy.conformance.faultproxy import FaultProxy
from log_capture import LogCapture

import jmspy

from .failover_support import Events, failover_url

USER = "svc-orders"
SECRET = "Kx9-distinctive-Pa55phrase-q7Zr"


def _secret_forms() -> list[str]:
    """The password as it could appear: plain, base64, and inside SASL PLAIN's response."""
    plain = b"\0" + USER.encode() + b"\0" + SECRET.encode()
    return [
        SECRET,
        base64.b64encode(SECRET.encode()).decode(),
        base64.b64encode(plain).decode(),
        plain.hex(),
        SECRET.encode().hex(),
    ]


def test_password_appears_nowhere_through_a_reconnect(local_artemis: Any) -> None:
    handler = LogCapture()
    root = logging.getLogger()
    saved = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    texts: list[str] = []
    try:
        with (
            local_artemis(username=USER, password=SECRET) as info,
            FaultProxy(info.host, info.port) as proxy,
        ):
            url = failover_url(proxy.url, failover__nested__amqp__traceFrames="true")
            factory = jmspy.ConnectionFactory(url, USER, SECRET)
            events = Events()
            connection = factory.createConnection()
            try:
                connection.setConnectionListener(events)
                connection.start()
                session = connection.createSession(jmspy.SESSION_TRANSACTED)
                queue = session.createQueue("secrets.through.failover")
                producer = session.createProducer(queue)
                consumer = session.createConsumer(queue)
                producer.send(session.createTextMessage("before the cut"))
                session.commit()
                received = consumer.receive(30_000)
                assert received is not None and received.getText() == "before the cut"
                session.commit()

                assert proxy.cut() >= 1
                events.wait("restored")
                producer.send(session.createTextMessage("after the cut"))
                session.commit()
                received = consumer.receive(30_000)
                assert received is not None and received.getText() == "after the cut"
                session.commit()
                texts += [repr(factory), repr(factory.options), repr(connection)]
                texts += [repr(session), repr(producer), repr(consumer), str(factory.options)]
            finally:
                connection.close()
            # A refused login through the same factory, with its error chain.
            wrong = jmspy.ConnectionFactory(url, USER, "x")
            with pytest.raises(jmspy.JMSException) as caught:
                with wrong.createConnection() as refused:
                    refused.start()
            current: BaseException | None = caught.value
            while current is not None:
                texts += [str(current), repr(current)]
                current = current.__cause__ or current.__context__
    finally:
        root.removeHandler(handler)
        root.setLevel(saved)
    texts += handler.lines
    # The trace was on, so the frames carrying the credentials went through the logger.
    assert any("sasl-init" in line for line in handler.lines), "frame trace was not captured"
    assert sum("sasl-init" in line for line in handler.lines) >= 2, "no login after the cut"
    leaks = [text[:300] for text in texts for form in _secret_forms() if form in text]
    assert not leaks, f"the password leaked in: {leaks}"
