"""Deliberate type errors in snake_case code: tests/unit/test_typed_names.py expects mypy to
report each line marked ``# error``. Never run."""

from __future__ import annotations

from jmspy import ConnectionFactory, JMSError, TextMessage


def mistakes(factory: ConnectionFactory, message: TextMessage) -> None:
    connection = factory.create_connection()
    session = connection.create_session()
    count: int = message.get_text()  # error: str | None is not int
    message.set_int_property("n", "one")  # error: a str where an int goes
    queue_name: int = session.create_queue("q").get_queue_name()  # error: str
    temporary: int = session.create_context  # error: no such attribute
    context = factory.create_context()
    browser_name: int = context.create_browser(context.create_queue("q"))  # error: QueueBrowser
    temporary_queue: str = context.create_temporary_queue()  # error: TemporaryQueue
    session.create_session(True, 1)  # error: a Session creates no session
    code: int = JMSError("x").get_error_code()  # error: str | None
    consumer = context.create_consumer(context.create_queue("q"))
    body: int = consumer.receive_body(str)  # error: str | None, not int
    print(body)
    producer = session.create_producer()
    producer.send("a str is no Message")  # error: no send(str) form
    producer.send(message, 1, 4)  # error: deliveryMode, priority and timeToLive go together
    context.create_producer().send("queue name", "body")  # error: a Destination goes first
    print(count, queue_name, temporary, browser_name, temporary_queue, code)
