"""A refused login on a real Artemis leaves the password in no log line and no exception."""

from __future__ import annotations

import base64
import logging

import pytest
from log_capture import LogCapture

import jmspy
from jmspy.errors import JMSException

SECRET = "Wr0ng-distinctive-Pa55phrase-77q"


def test_wrong_password_on_artemis_is_never_logged(broker) -> None:  # type: ignore[no-untyped-def]
    handler = LogCapture()
    root = logging.getLogger("jmspy")
    saved = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    try:
        factory = jmspy.ConnectionFactory(
            f"{broker.url}?amqp.traceFrames=true&jms.connectTimeout=20000",
            broker.username,
            SECRET,
        )
        connection = factory.createConnection()
        with pytest.raises(JMSException) as caught:
            connection.start()
        connection.close()
    finally:
        root.removeHandler(handler)
        root.setLevel(saved)
    plain = b"\0" + broker.username.encode() + b"\0" + SECRET.encode()
    forms = [SECRET, base64.b64encode(SECRET.encode()).decode(), base64.b64encode(plain).decode()]
    assert any("sasl-init" in line for line in handler.lines), "frame trace was not captured"
    texts = [*handler.lines, repr(factory), repr(connection), repr(factory.options)]
    current: BaseException | None = caught.value
    while current is not None:
        texts += [str(current), repr(current)]
        current = current.__cause__ or current.__context__
    for text in texts:
        for form in forms:
            assert form not in text, f"credential leaked in: {text[:300]}"
