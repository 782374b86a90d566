"""A user program written only with jmspy's snake_case names.

Never run: tests/unit/test_typed_names.py type-checks it with ``mypy --strict`` and expects no
error, so every snake_case name used here must be visible to a type checker with its types.
"""

from __future__ import annotations

from jmspy import (
    AUTO_ACKNOWLEDGE,
    SESSION_TRANSACTED,
    BytesMessage,
    ConnectionFactory,
    DeliveryMode,
    Destination,
    IllegalStateRuntimeException,
    JMSConsumer,
    JMSContext,
    JMSError,
    JMSException,
    JMSRuntimeException,
    MapMessage,
    Message,
    MessageConsumer,
    Queue,
    QueueBrowser,
    Session,
    StreamMessage,
    TemporaryQueue,
    TemporaryTopic,
    TextMessage,
    Topic,
)


class AuditedText(TextMessage):
    """An application subclass: ``get_text()`` calls this override too."""

    def getText(self) -> str | None:
        text = super().getText()
        return None if text is None else text.strip()


def classic(factory: ConnectionFactory) -> list[str]:
    seen: list[str] = []
    with factory.create_connection("user", "secret") as connection:
        connection.set_client_id("orders-service")
        session: Session = connection.create_session(False, AUTO_ACKNOWLEDGE)
        transacted: Session = connection.create_session(SESSION_TRANSACTED)
        queue: Queue = session.create_queue("orders")
        topic: Topic = session.create_topic("prices")
        temporary: TemporaryQueue = session.create_temporary_queue()
        producer = session.create_producer(queue)
        producer.set_delivery_mode(DeliveryMode.PERSISTENT)
        producer.set_priority(7)
        producer.set_time_to_live(60_000)
        message: TextMessage = session.create_text_message("hello")
        message.set_string_property("region", "eu")
        message.set_int_property("attempt", 1)
        message.set_jms_correlation_id("c-1")
        message.set_jms_reply_to(temporary)
        producer.send(message)
        producer.send(message, DeliveryMode.NON_PERSISTENT, 4, 0)
        anonymous = session.create_producer()
        anonymous.send(topic, session.create_bytes_message())
        bytes_message: BytesMessage = session.create_bytes_message()
        bytes_message.write_int(42)
        bytes_message.write_utf("text")
        map_message: MapMessage = session.create_map_message()
        map_message.set_string("sku", "A-1")
        stream: StreamMessage = session.create_stream_message()
        stream.write_long(1)
        connection.start()
        consumer: MessageConsumer = session.create_consumer(queue, "region = 'eu'")
        received: Message | None = consumer.receive_no_wait()
        if isinstance(received, TextMessage):
            text: str | None = received.get_text()
            seen.append(text or "")
            destination: Destination | None = received.get_jms_destination()
            seen.append(str(destination))
            seen.append(str(received.get_jms_priority() + received.get_int_property("attempt")))
            body: str | None = received.get_body(str)
            seen.append(body or "")
        browser: QueueBrowser = session.create_browser(queue)
        for browsed in browser.get_enumeration():
            seen.append(browsed.get_jms_message_id() or "")
        seen.append(queue.get_queue_name())
        seen.append(connection.get_meta_data().get_jms_provider_name())
        transacted.commit()
        audited = AuditedText()
        audited.set_text("  padded  ")
        seen.append(audited.get_text() or "")
    return seen


def simplified(factory: ConnectionFactory) -> int:
    try:
        with factory.create_context("user", "secret", AUTO_ACKNOWLEDGE) as context:
            queue = context.create_queue("orders")
            temporary: TemporaryTopic = context.create_temporary_topic()
            browser: QueueBrowser = context.create_browser(queue)
            browser.close()
            producer = context.create_producer().set_priority(5).set_jms_type("order")
            producer.set_property("region", "eu").send(queue, "a text body")
            producer.set_jms_reply_to(temporary).send(queue, {"sku": "A-1"})
            child: JMSContext = context.create_context(AUTO_ACKNOWLEDGE)
            consumer: JMSConsumer = child.create_consumer(queue)
            message = consumer.receive_no_wait()
            order: str | None = consumer.receive_body(str, 1000)
            print(order, connection_listener(factory))
            return 0 if message is None else message.get_jms_delivery_mode()
    except JMSRuntimeException as error:
        code: str | None = error.get_error_code()
        cause: BaseException | None = error.get_linked_exception()
        print(code, cause)
        return -1


def connection_listener(factory: ConnectionFactory) -> bool:
    with factory.create_connection() as connection:
        connection.set_exception_listener(print)
        return connection.get_exception_listener() is not None


def either_family(action: str) -> str:
    try:
        if action == "checked":
            raise JMSException("checked", "E1")
        raise IllegalStateRuntimeException("runtime", "E2")
    except JMSError as error:  # the common root of both families
        return error.get_message() + (error.get_error_code() or "")
