"""Two proton connections joined in memory (no sockets, no broker), for the tests of the proton
internals jmspy relies on."""

from __future__ import annotations

from proton import Collector, Connection, Delivery, Link, Transport

__all__ = ["ProtonPair", "send_one"]


class ProtonPair:
    """A client and a server proton connection joined in memory."""

    def __init__(self) -> None:
        self.collector = Collector()
        self.client = Connection()
        self.client.collect(self.collector)
        self.server = Connection()
        self.server_collector = Collector()
        self.server.collect(self.server_collector)
        self.client_transport = Transport()
        self.client_transport.bind(self.client)
        self.server_transport = Transport(Transport.SERVER)
        self.server_transport.bind(self.server)

    def pump(self) -> None:
        for _ in range(20):
            moved = _move(self.client_transport, self.server_transport)
            moved += _move(self.server_transport, self.client_transport)
            if not moved:
                return

    def open_link_pair(self) -> tuple[Link, Link]:
        """A sender on the client and its receiver on the server, both active, 10 credits."""
        self.client.open()
        session = self.client.session()
        session.open()
        sender = session.sender("s")
        sender.target.address = "q"
        sender.open()
        self.pump()
        self.server.open()
        server_session = self.server.session_head(0)
        assert server_session is not None
        server_session.open()
        receiver = self.server.link_head(0)
        assert receiver is not None and receiver.is_receiver
        receiver.target.copy(receiver.remote_target)
        receiver.open()
        receiver.flow(10)
        self.pump()
        return sender, receiver


def _move(source: Transport, sink: Transport) -> int:
    pending = source.pending()
    if pending <= 0:
        return 0
    data = source.peek(pending)
    sink.push(data)
    source.pop(len(data))
    return len(data)


def send_one(pair: ProtonPair, sender: Link) -> Delivery:
    delivery = sender.delivery(b"tag-1")
    sender.send(b"payload")
    sender.advance()
    pair.pump()
    return delivery
