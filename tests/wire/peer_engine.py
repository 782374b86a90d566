"""One TCP connection accepted by the scripted peer, driven on the peer thread.

A proton server engine (Transport + Connection + Collector) answers the client as the link
scripts say; SASL is done here by hand; every frame is decoded and recorded (see peer.py).
"""

from __future__ import annotations

import socket
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from proton import (
    Collector,
    Condition,
    Connection,
    Delivery,
    Event,
    Link,
    Sender,
    Session,
    Terminus,
    Transport,
    symbol,
    ubyte,
)

if TYPE_CHECKING:
    from .peer import ScriptedPeer

from .peer_records import (
    _ACCEPTED,
    _AMQP_HEADER,
    _SASL_AUTH,
    _SASL_HEADER,
    _SASL_INIT,
    _SASL_MECHANISMS,
    _SASL_OK,
    _SASL_OUTCOME,
    AttachRecord,
    LinkScript,
    SaslRecord,
    TransferRecord,
)
from .peer_wire import (
    _echo,
    _encode_frame,
    _field,
    _Frame,
    _read_frame,
    _symbol_array,
    record_incoming,
    record_transfer_frame,
)

# --------------------------------------------------------------------------------------------
# One accepted TCP connection, owned by the peer thread.
# --------------------------------------------------------------------------------------------


@dataclass
class _LinkState:
    link: Link
    attach: AttachRecord | None
    script: LinkScript
    address: str | None
    hung: bool = False


class _PeerConnection:
    def __init__(self, peer: ScriptedPeer, sock: socket.socket, index: int) -> None:
        self.peer = peer
        self.sock = sock
        self.index = index
        self.phase: Literal["header", "sasl", "amqp"] = "header"
        self.sasl_buf = bytearray()
        self.in_buf = bytearray()
        self.out_parse_buf = bytearray()
        self.outbuf = bytearray()
        self.close_after_flush = False
        self.eof = False
        self.closed = False
        self.deadline = 0.0
        self.transport: Transport | None = None
        self.connection: Connection | None = None
        self.collector: Collector | None = None
        # Client handle -> link name, per client channel; used to name flows/transfers/detaches.
        self.in_handles: dict[tuple[int, int], str] = {}
        self.pending_transfers: dict[tuple[int, int], dict[str, Any]] = {}
        # Delivery-id -> tag, keyed by the CLIENT's channel, for resolving disposition ranges.
        self.client_sent_tags: dict[tuple[int, int], bytes] = {}
        self.peer_sent_tags: dict[tuple[int, int], bytes] = {}
        self.peer_channel_to_client: dict[int, int] = {}
        self.peer_last_delivery: dict[tuple[int, int], int] = {}
        self.links: dict[tuple[bool, str], _LinkState] = {}

    # ---- input ------------------------------------------------------------------------------

    def on_readable(self) -> None:
        try:
            data = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.eof = True
            if self.transport is not None:
                self.transport.close_tail()
            else:
                self.close_after_flush = True
            return
        if self.phase == "amqp":
            self._amqp_input(data)
        else:
            self.sasl_buf += data
            self._pre_amqp_input()

    def _pre_amqp_input(self) -> None:
        # Handles the protocol header and the SASL exchange by hand (see module docstring).
        opts = self.peer.options
        while self.phase != "amqp" and not self.close_after_flush:
            if opts.hang_on_connect:
                self.sasl_buf.clear()
                return
            frame, used = _read_frame(self.sasl_buf)
            if frame is None:
                return
            if self.phase == "header":
                if frame.kind != "header":
                    raise ValueError(f"expected a protocol header, got {frame.raw[:8]!r}")
                if frame.raw == _SASL_HEADER:
                    del self.sasl_buf[:used]
                    self.peer._trace(self.index, "<- SASL header")
                    mechs = _symbol_array(*map(symbol, opts.sasl_mechanisms))
                    self._write(_SASL_HEADER + _encode_frame(1, _SASL_MECHANISMS, [mechs]))
                    self.peer._trace(self.index, f"-> SASL mechanisms {list(opts.sasl_mechanisms)}")
                    self.phase = "sasl"
                    continue
                if frame.raw == _AMQP_HEADER:
                    if opts.require_sasl:
                        self._write(_SASL_HEADER)
                        self.close_after_flush = True
                        return
                    self._start_amqp()
                    return
                # TLS or an unknown protocol: answer with what we speak and hang up, per spec.
                self._write(_AMQP_HEADER)
                self.close_after_flush = True
                return
            # phase == "sasl"
            del self.sasl_buf[:used]
            if frame.kind != "frame" or frame.code != _SASL_INIT:
                raise ValueError(f"unexpected SASL frame {frame.code:#x}")
            self._sasl_init(frame)

    def _sasl_init(self, frame: _Frame) -> None:
        opts = self.peer.options
        mechanism = str(_field(frame.fields, 0, ""))
        response = _field(frame.fields, 1)
        hostname = _field(frame.fields, 2)
        username = password = None
        if mechanism == "PLAIN" and isinstance(response, bytes):
            parts = response.split(b"\0")
            if len(parts) == 3:
                username = parts[1].decode("utf-8", "replace")
                password = parts[2].decode("utf-8", "replace")
        self.peer._record(
            SaslRecord(
                self.index,
                mechanism,
                hostname,
                username,
                password,
                bytes(response) if response is not None else None,
            )
        )
        self.peer._trace(self.index, f"<- SASL init mechanism={mechanism} user={username!r}")
        ok = mechanism in opts.sasl_mechanisms and not opts.reject_credentials
        code = _SASL_OK if ok else _SASL_AUTH
        self._write(_encode_frame(1, _SASL_OUTCOME, [ubyte(code)]))
        self.peer._trace(self.index, f"-> SASL outcome code={code}")
        if not ok:
            self.close_after_flush = True
            return
        self._start_amqp()

    def _start_amqp(self) -> None:
        opts = self.peer.options
        self.phase = "amqp"
        transport = Transport(Transport.SERVER)
        if opts.trace:
            transport.trace(Transport.TRACE_FRM)
            index = self.index
            transport.tracer = lambda _t, msg: self.peer._trace(index, msg)
        if opts.idle_timeout is not None:
            transport.idle_timeout = opts.idle_timeout
        if opts.max_frame_size is not None:
            transport.max_frame_size = opts.max_frame_size
        connection = Connection()
        connection.container = opts.container_id
        connection.offered_capabilities = [symbol(c) for c in opts.offered_capabilities]
        if opts.desired_capabilities:
            connection.desired_capabilities = [symbol(c) for c in opts.desired_capabilities]
        connection.properties = {symbol(k): v for k, v in opts.properties.items()}
        collector = Collector()
        connection.collect(collector)
        transport.bind(connection)
        self.transport, self.connection, self.collector = transport, connection, collector
        rest = bytes(self.sasl_buf)
        self.sasl_buf.clear()
        if rest:
            self._amqp_input(rest)

    def _amqp_input(self, data: bytes) -> None:
        # Record first, so the engine events that follow can find their records.
        self.in_buf += data
        while True:
            frame, used = _read_frame(self.in_buf)
            if frame is None:
                break
            del self.in_buf[:used]
            if frame.kind == "frame" and frame.frame_type == 0 and frame.code >= 0:
                self._record_incoming(frame)
        assert self.transport is not None
        view = memoryview(data)
        while view:
            capacity = self.transport.capacity()
            if capacity < 0:  # the engine closed its input (e.g. after close); drop the rest
                return
            if capacity == 0:
                self.process()
                if self.transport.capacity() == 0:
                    raise RuntimeError("transport input stalled")
                continue
            chunk = bytes(view[:capacity])
            self.transport.push(chunk)
            view = view[len(chunk) :]

    # Decoding and recording what the client sent lives in peer_wire.
    _record_incoming = record_incoming
    _record_transfer_frame = record_transfer_frame

    def _note_outgoing(self, data: bytes) -> None:
        # Only the bits of the peer's own frames needed to name deliveries in dispositions.
        self.out_parse_buf += data
        while True:
            frame, used = _read_frame(self.out_parse_buf)
            if frame is None:
                return
            del self.out_parse_buf[:used]
            if frame.kind != "frame" or frame.frame_type != 0:
                continue
            if frame.code == 0x11 and _field(frame.fields, 0) is not None:
                self.peer_channel_to_client[frame.channel] = int(frame.fields[0])
            elif frame.code == 0x14:
                client_ch = self.peer_channel_to_client.get(frame.channel, frame.channel)
                key = (frame.channel, int(_field(frame.fields, 0, 0)))
                delivery_id = _field(frame.fields, 1)
                tag = _field(frame.fields, 2)
                if delivery_id is not None and tag is not None:
                    self.peer_last_delivery[key] = int(delivery_id)
                    self.peer_sent_tags[(client_ch, int(delivery_id))] = bytes(tag)

    # ---- output -----------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        self.outbuf += data

    def _pull_output(self) -> bool:
        if self.transport is None:
            return False
        pulled = False
        while True:
            pending = self.transport.pending()
            if pending < 0:
                # The engine has written everything it ever will (close sent or error).
                self.close_after_flush = True
                return pulled
            if pending == 0:
                return pulled
            data = self.transport.peek(pending) or b""
            self.transport.pop(len(data))
            self._note_outgoing(data)
            self.outbuf += data
            pulled = True

    def flush(self) -> None:
        while self.outbuf:
            try:
                sent = self.sock.send(self.outbuf)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                # The client went away; nothing more can be delivered.
                self.outbuf.clear()
                self.close_after_flush = True
                return
            del self.outbuf[:sent]

    @property
    def finished(self) -> bool:
        if self.closed:
            return True
        if self.close_after_flush and not self.outbuf:
            return True
        # The client hung up: nothing we still hold can reach it.
        return self.eof and not self.outbuf

    # ---- engine events ----------------------------------------------------------------------

    def process(self) -> None:
        """Run engine events and move engine output into the socket buffer until quiet."""
        if self.transport is None or self.collector is None:
            return
        while True:
            handled = False
            while True:
                event = self.collector.peek()
                if event is None:
                    break
                handled = True
                try:
                    self._dispatch(event)
                finally:
                    self.collector.pop()
            pulled = self._pull_output()
            if not handled and not pulled:
                break
        if self.peer.options.heartbeats and not self.close_after_flush:
            self.deadline = self.transport.tick(time.monotonic())
            self._pull_output()

    def _dispatch(self, event: Event) -> None:
        t = event.type
        opts = self.peer.options
        conn, session, link = event.connection, event.session, event.link
        if t == Event.CONNECTION_REMOTE_OPEN and conn is not None:
            if opts.hang_on_open:
                return
            conn.open()
            if opts.close_on_open_with is not None:
                cond, desc = opts.close_on_open_with
                conn.condition = Condition(cond, desc)
                conn.close()
        elif t == Event.SESSION_REMOTE_OPEN and session is not None:
            if session.state & Session.LOCAL_UNINIT:
                session.open()
        elif t == Event.LINK_REMOTE_OPEN and link is not None:
            self._on_attach(link)
        elif t == Event.LINK_FLOW and link is not None:
            if link.is_sender:
                self.pump(link)
        elif t == Event.DELIVERY and event.delivery is not None:
            self._on_delivery(event.delivery)
        elif t in (Event.LINK_REMOTE_CLOSE, Event.LINK_REMOTE_DETACH) and link is not None:
            state = self.links.get((link.is_sender, link.name))
            if state is not None and state.hung:
                return  # a hung link stays silent to the end
            if link.state & Link.LOCAL_ACTIVE:
                if t == Event.LINK_REMOTE_CLOSE:
                    link.close()
                else:
                    link.detach()
            self.links.pop((link.is_sender, link.name), None)
        elif t == Event.SESSION_REMOTE_CLOSE and session is not None:
            if not session.state & Session.LOCAL_CLOSED:
                session.close()
        elif t == Event.TRANSPORT_ERROR and event.transport is not None:
            self.peer._trace(self.index, f"transport error: {event.transport.condition}")
        elif t == Event.CONNECTION_REMOTE_CLOSE and conn is not None:
            if not conn.state & Connection.LOCAL_CLOSED:
                conn.close()

    def _find_attach(self, link: Link) -> AttachRecord | None:
        # The client's attach role is the opposite of our link's role.
        role = "receiver" if link.is_sender else "sender"
        for r in reversed(self.peer.records()):
            if (
                isinstance(r, AttachRecord)
                and r.conn == self.index
                and r.name == link.name
                and r.role == role
            ):
                return r
        return None

    def _on_attach(self, link: Link) -> None:
        attach = self._find_attach(link)
        script = self.peer._script_for(attach) if attach is not None else LinkScript()
        address = attach.address if attach is not None else None
        state = _LinkState(link, attach, script, address)
        self.links[(link.is_sender, link.name)] = state
        if script.hang:
            state.hung = True
            return
        if script.end_session is not None:
            # No answer to the attach: the whole session ends with the error instead.
            session = link.session
            session.condition = Condition(*script.end_session)
            session.close()
            return
        # Our terminus that names the node: source when we send, target when we receive.
        source_sent = attach is not None and attach.source is not None
        target_sent = attach is not None and attach.target is not None
        if link.is_sender:
            ours, theirs, ours_sent, ours_type = (
                link.source,
                link.remote_source,
                source_sent,
                Terminus.SOURCE,
            )
            other, other_remote, other_sent, other_type = (
                link.target,
                link.remote_target,
                target_sent,
                Terminus.TARGET,
            )
        else:
            ours, theirs, ours_sent, ours_type = (
                link.target,
                link.remote_target,
                target_sent,
                Terminus.TARGET,
            )
            other, other_remote, other_sent, other_type = (
                link.source,
                link.remote_source,
                source_sent,
                Terminus.SOURCE,
            )
        _echo(other, other_remote, other_sent, other_type)
        if script.refuse is not None:
            # A null terminus in the reply is how a broker says "no such node".
            ours.type = Terminus.UNSPECIFIED
        else:
            _echo(ours, theirs, ours_sent, ours_type)
            if theirs.dynamic:
                state.address = script.dynamic_address or f"dynamic.{uuid.uuid4()}"
                ours.address = state.address
            if script.capabilities is not None or script.extra_capabilities:
                recorded = None
                if attach is not None:
                    recorded = attach.source if link.is_sender else attach.target
                caps = (
                    list(script.capabilities)
                    if script.capabilities is not None
                    else list(recorded.capabilities if recorded is not None else [])
                )
                caps += list(script.extra_capabilities)
                data = ours.capabilities
                data.clear()
                data.put_object(_symbol_array(*map(symbol, caps)))
        # Adopt the client's settle modes, as brokers do, so settlement tests see what they asked.
        link.snd_settle_mode = link.remote_snd_settle_mode
        link.rcv_settle_mode = link.remote_rcv_settle_mode
        link.open()
        error = script.refuse or script.close_with
        if error is not None:
            link.condition = Condition(error[0], error[1])
            link.close()
            return
        if link.is_receiver:
            if script.credit > 0:
                link.flow(script.credit)
        else:
            self.pump(link)

    def _on_delivery(self, delivery: Delivery) -> None:
        link = delivery.link
        if link.is_sender:
            # The client settled or updated something we sent; settle our side to free it.
            if delivery.settled:
                delivery.settle()
            return
        if delivery.partial and not delivery.aborted:
            return
        if delivery.aborted:
            delivery.settle()
            return
        if not delivery.readable:
            return
        link.recv(delivery.pending)
        link.advance()
        state = self.links.get((False, link.name))
        script = state.script if state is not None else LinkScript()
        if script.credit > 0 and link.credit <= script.credit // 2:
            link.flow(script.credit - link.credit)
        if delivery.settled:  # proton's "settled" means settled by the remote (presettled)
            delivery.settle()
            return
        choice = script.outcome
        if callable(choice):
            tag = delivery.tag
            record = self._find_transfer(link.name, tag.encode() if isinstance(tag, str) else tag)
            outcome = choice(record) if record is not None else _ACCEPTED
        else:
            outcome = choice
        if outcome is None:
            return  # scripted to never settle
        local = delivery.local
        if outcome.kind == "received":
            local.section_number = 0
            local.section_offset = 0
            delivery.update(Delivery.RECEIVED)
            return  # not settled: an outcome may follow
        if outcome.kind == "none":
            delivery.settle()
            return
        if outcome.kind == "accepted":
            delivery.update(Delivery.ACCEPTED)
        elif outcome.kind == "rejected":
            local.condition = Condition(
                outcome.condition or "amqp:internal-error", outcome.description
            )
            delivery.update(Delivery.REJECTED)
        elif outcome.kind == "released":
            delivery.update(Delivery.RELEASED)
        else:
            local.failed = outcome.delivery_failed
            local.undeliverable = outcome.undeliverable_here
            delivery.update(Delivery.MODIFIED)
        delivery.settle()

    def _find_transfer(self, link_name: str, tag: bytes) -> TransferRecord | None:
        for r in reversed(self.peer.records()):
            if (
                isinstance(r, TransferRecord)
                and r.conn == self.index
                and r.link_name == link_name
                and r.delivery_tag == tag
            ):
                return r
        return None

    def pump(self, link: Link) -> None:
        """Send queued messages for this link's address while it has credit; answer drains."""
        state = self.links.get((True, link.name))
        if state is None or state.hung or not link.state & Link.LOCAL_ACTIVE:
            return
        if not link.state & Link.REMOTE_ACTIVE:
            return
        queue = self.peer._queues.get(state.address or "")
        while queue and link.credit > 0:
            item = queue.popleft()
            tag = item.tag or f"peer-{next(self.peer._tag_counter)}".encode()
            # proton's stub says str, but the C call takes the raw bytes we want on the wire.
            delivery = link.delivery(cast(str, tag))
            cast(Sender, link).send(item.payload)
            link.advance()
            presettle = item.settled
            if presettle is None:
                presettle = link.remote_snd_settle_mode == Link.SND_SETTLED
            if presettle:
                delivery.settle()
        if link.drain_mode and link.credit > 0 and state.script.answer_drain:
            link.drained()

    # ---- scripted actions -------------------------------------------------------------------

    def close_connection(self, condition: str | None, description: str | None) -> None:
        if self.connection is None:
            # Still in SASL: the only way to refuse is to hang up.
            self.close_after_flush = True
            return
        if self.connection.state & Connection.LOCAL_UNINIT:
            # proton would send a bare open for us; send ours so the client sees our caps.
            self.connection.open()
        if condition is not None:
            self.connection.condition = Condition(condition, description)
        self.connection.close()

    def shutdown(self) -> None:
        if self.closed:
            return
        self.closed = True
        # Unregister before closing: a selector can't look up a closed socket's descriptor.
        try:
            self.peer._selector.unregister(self.sock)
        except (KeyError, ValueError, OSError):
            pass
        try:
            self.sock.close()
        except OSError:
            pass
