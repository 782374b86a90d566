"""jmspy.aio: the JMS API for asyncio, over the same engine as the blocking API.

    async with aio.connect("amqp://localhost:5672", "admin", "admin") as connection:
        session = await connection.create_session()
        queue = session.create_queue("orders")
        producer = await session.create_producer(queue)
        await producer.send(session.create_text_message("hello"))
        consumer = await session.create_consumer(queue)
        message = await consumer.receive(5000)

Sends complete through the engine's completion path and receives wait on futures the
consumer's delivery path completes (``loop.call_soon_threadsafe``): no thread is blocked per
call. Engine calls that only exist in a blocking form (attaching links, commit, rollback,
close, the drain of a timed-out receive) run on a small pool of control threads per
connection, each bounded by the timeout the blocking API honours for it.
"""

from ._bridge import acknowledge
from .connection import Connection, ConnectionFactory, connect
from .consumer import MessageConsumer
from .context import JMSContext, JMSProducer
from .producer import MessageProducer
from .session import Session

__all__ = [
    "Connection",
    "ConnectionFactory",
    "JMSContext",
    "JMSProducer",
    "MessageConsumer",
    "MessageProducer",
    "Session",
    "acknowledge",
    "connect",
]
