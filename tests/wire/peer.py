"""A scripted AMQP 1.0 peer for wire-level tests (the Python cousin of Qpid JMS's TestAmqpPeer).

The peer is a small AMQP server on ``127.0.0.1`` (free port) that runs on its own thread. It
records every frame a client puts on the wire and can be scripted to behave like brokers that lack
capabilities or misbehave. Typical use::

    with ScriptedPeer(offered_capabilities=["ANONYMOUS-RELAY"]) as peer:
        client = connect(peer.url)
        ...
        attach = peer.wait_for_attach("queue-a", role="sender")
        assert attach.target.capabilities == ["queue"]

Design notes (why it is built this way):

* The proton *engine* (``Transport`` in server mode + ``Connection`` + ``Collector``) is driven
  from a plain ``selectors`` loop rather than the ``Container`` reactor, so the peer can withhold
  answers, close abruptly and time every byte it writes.
* Records are decoded by the peer's own frame reader from the raw bytes, not read back from the
  engine. proton-c drops fields a JMS client cares about (the source's ``default-outcome``, link
  attach capabilities, range dispositions), and tests must see exactly what was on the wire.
* SASL is answered by this module, not by proton: with Cyrus linked, a proton server would need a
  Cyrus config and a password database to accept PLAIN. Doing it by hand lets the peer accept any
  user/password (and record them), or reject them on demand.
* Every wait is a condition-variable wait with a deadline, never a fixed sleep.
* Strict mode (``strict=True``, the default of the wire fixtures) fails ``check()``/``close()``
  on frames nobody expected (peer_strict.py).

Modules: this one is the peer (lifecycle, scripting, waiting); peer_records.py the records,
outcomes and link scripts; peer_engine.py one accepted connection on the peer thread;
peer_wire.py the frame reader/writer and field decoders; peer_views.py the records by kind;
peer_connections.py the records of one connection. Tests import everything from here.

Out of scope for now: TLS and WebSockets. Transactions: a coordinator attach is recorded, and
declares and discharges are answered only for a test that asks for the ``coordinator`` fixture
(peer_coordinator.py).
"""

from __future__ import annotations

import functools
import itertools
import selectors
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from proton import (
    Condition,
    Message,
)

from .peer_engine import (
    _PeerConnection,
)
from .peer_records import (
    AMQP_SEQUENCE,
    AMQP_VALUE,
    APPLICATION_PROPERTIES,
    DATA,
    DEFAULT_OFFERED_CAPABILITIES,
    DELIVERY_ANNOTATIONS,
    FOOTER,
    HEADER,
    MESSAGE_ANNOTATIONS,
    PROPERTIES,
    AttachRecord,
    BeginRecord,
    CloseRecord,
    ConnectRecord,
    DetachRecord,
    DisconnectRecord,
    DispositionRecord,
    EndRecord,
    ErrorRecord,
    FlowRecord,
    LinkScript,
    LinkScripts,
    OpenRecord,
    Outcome,
    OutcomeRecord,
    PeerError,
    PeerTimeout,
    R,
    Record,
    SaslRecord,
    SourceRecord,
    T,
    TargetRecord,
    TransferRecord,
    _Queued,
)
from .peer_strict import unexpected_frames
from .peer_views import RecordViews
from .peer_wire import (
    _abbrev,
    decode_sections,
)

if TYPE_CHECKING:
    from .peer_connections import ConnectionView

__all__ = [
    "AMQP_SEQUENCE",
    "AMQP_VALUE",
    "APPLICATION_PROPERTIES",
    "DATA",
    "DEFAULT_OFFERED_CAPABILITIES",
    "DELIVERY_ANNOTATIONS",
    "FOOTER",
    "HEADER",
    "MESSAGE_ANNOTATIONS",
    "PROPERTIES",
    "AttachRecord",
    "BeginRecord",
    "CloseRecord",
    "ConnectRecord",
    "DetachRecord",
    "DisconnectRecord",
    "DispositionRecord",
    "EndRecord",
    "ErrorRecord",
    "FlowRecord",
    "LinkScript",
    "OpenRecord",
    "Outcome",
    "OutcomeRecord",
    "PeerError",
    "PeerTimeout",
    "Record",
    "SaslRecord",
    "ScriptedPeer",
    "SourceRecord",
    "TargetRecord",
    "TransferRecord",
    "decode_sections",
]

# --------------------------------------------------------------------------------------------
# The peer
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Options:
    offered_capabilities: tuple[str, ...]
    desired_capabilities: tuple[str, ...]
    properties: dict[str, Any]
    container_id: str
    sasl_mechanisms: tuple[str, ...]
    require_sasl: bool
    reject_credentials: bool
    close_on_open_with: tuple[str, str | None] | None
    hang_on_connect: bool
    hang_on_open: bool
    idle_timeout: float | None
    heartbeats: bool
    max_frame_size: int | None
    trace: bool


class ScriptedPeer(RecordViews):
    """A scripted AMQP 1.0 server on 127.0.0.1 for wire tests. See the module docstring.

    Connection options:
      offered_capabilities: open's offered capabilities (default: Artemis's set).
      desired_capabilities: open's desired capabilities (default none).
      properties: open's properties (default ``{"product": "scripted-peer"}``).
      container_id: the peer's container-id.
      sasl_mechanisms: offered SASL mechanisms (default PLAIN and ANONYMOUS; any user/password
        is accepted). ``require_sasl``: refuse clients that skip SASL.
      reject_credentials: fail SASL with the ``auth`` outcome.
      close_on_open_with: (condition, description): answer open, then close with that error
        (Artemis does this for a bad password).
      hang_on_connect: accept TCP, never answer anything. hang_on_open: finish SASL and the
        protocol header but never answer the open.
      idle_timeout: idle timeout (seconds) advertised in the peer's open.
      heartbeats: when False the peer never ticks its transport, so it neither sends heartbeats
        nor enforces its own idle timeout (to test the client's idle-timeout detection).
      max_frame_size: the peer's max frame size.
      links: scripts per link address (``None`` key: anonymous or dynamic links), or a callable
        ``AttachRecord -> LinkScript | None``; unmatched links get ``LinkScript()``.
      trace: record proton's frame trace in ``trace``.
      strict: ``check()`` and ``close()`` also fail on frames nobody expected (see
        peer_strict.py); ``allow`` (a predicate over records) exempts frames a test provokes.
    """

    def __init__(
        self,
        *,
        offered_capabilities: Iterable[str] = DEFAULT_OFFERED_CAPABILITIES,
        desired_capabilities: Iterable[str] = (),
        properties: Mapping[str, Any] | None = None,
        container_id: str = "scripted-peer",
        sasl_mechanisms: Iterable[str] = ("PLAIN", "ANONYMOUS"),
        require_sasl: bool = False,
        reject_credentials: bool = False,
        close_on_open_with: tuple[str, str | None] | None = None,
        hang_on_connect: bool = False,
        hang_on_open: bool = False,
        idle_timeout: float | None = None,
        heartbeats: bool = True,
        max_frame_size: int | None = None,
        links: LinkScripts | None = None,
        trace: bool = True,
        strict: bool = False,
        allow: Callable[[Record], bool] | None = None,
    ) -> None:
        self.strict = strict
        self._allow = allow
        self.options = _Options(
            offered_capabilities=tuple(offered_capabilities),
            desired_capabilities=tuple(desired_capabilities),
            properties=dict(properties) if properties is not None else {"product": "scripted-peer"},
            container_id=container_id,
            sasl_mechanisms=tuple(sasl_mechanisms),
            require_sasl=require_sasl,
            reject_credentials=reject_credentials,
            close_on_open_with=close_on_open_with,
            hang_on_connect=hang_on_connect,
            hang_on_open=hang_on_open,
            idle_timeout=idle_timeout,
            heartbeats=heartbeats,
            max_frame_size=max_frame_size,
            trace=trace,
        )
        self._scripts: dict[str | None, LinkScript] = {}
        self._script_fn: Callable[[AttachRecord], LinkScript | None] | None = None
        if callable(links):
            self._script_fn = links
        elif links is not None:
            self._scripts.update(links)
        self._cond = threading.Condition(threading.RLock())
        self._events: list[Record] = []
        self._trace_lines: list[str] = []
        self._errors: list[BaseException] = []
        self._queues: dict[str, deque[_Queued]] = {}
        self._tag_counter = itertools.count(1)
        self._commands: deque[tuple[Callable[[], Any], Future[Any]]] = deque()
        self._conns: list[_PeerConnection] = []
        self._every_conn: dict[int, _PeerConnection] = {}
        self._conn_counter = itertools.count()
        self._stopping = False
        self._closed = False

        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._listener.setblocking(False)
        self.host, self.port = self._listener.getsockname()[:2]
        # A socketpair wakes the selector when the test thread queues work.
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, "listener")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._thread = threading.Thread(
            target=self._run, name=f"scripted-peer-{self.port}", daemon=True
        )
        self._thread.start()

    # ---- lifecycle --------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"amqp://{self.host}:{self.port}"

    @property
    def address(self) -> str:
        """``host:port`` (no scheme), for clients that take the two separately."""
        return f"{self.host}:{self.port}"

    def __enter__(self) -> ScriptedPeer:
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is None:
            self.close()
            return
        # Don't hide the test's own failure, but don't lose the peer's either.
        try:
            self.close()
        except PeerError as peer_error:
            exc.add_note(f"scripted peer also failed: {peer_error}")

    def close(self) -> None:
        """Stop the thread, close every socket, and re-raise any failure from the peer thread."""
        if not self._closed:
            self._closed = True
            self._stopping = True
            self._wake()
            self._thread.join(timeout=10)
            if self._thread.is_alive():
                self._errors.append(RuntimeError("peer thread did not stop within 10 s"))
            for conn in self._conns:
                conn.shutdown()
            for s in (self._listener, self._wake_r, self._wake_w):
                s.close()
            self._selector.close()
        self.check()

    def check(self) -> None:
        """Raise PeerError now if the peer thread has failed (``close()`` does this too)."""
        with self._cond:
            errors = list(self._errors)
        if errors:
            detail = "; ".join(f"{type(e).__name__}: {e}" for e in errors)
            raise PeerError(f"scripted peer failed: {detail}") from errors[0]
        if self.strict:
            problems = self.unexpected_frames()
            if problems:
                listed = "\n  ".join(problems)
                raise PeerError(f"the client sent frames nobody expected:\n  {listed}")

    def unexpected_frames(self) -> list[str]:
        """What strict mode reports (see peer_strict.py), whether or not the peer is strict."""
        conns = dict(self._every_conn)

        def credit_of(conn: int, link_name: str) -> int | None:
            state = conns[conn].links.get((False, link_name)) if conn in conns else None
            return state.script.credit if state is not None else None

        def peer_sent(conn: int, channel: int, delivery_id: int) -> bool:
            c = conns.get(conn)
            return c is not None and (channel, delivery_id) in c.peer_sent_tags

        return unexpected_frames(self.records(), credit_of, peer_sent, self._allow)

    # ---- scripting ------------------------------------------------------------------------

    def script(self, address: str | None, script: LinkScript | None = None, **kw: Any) -> None:
        """Set the script for links on ``address`` (applies to attaches that arrive later).

        Either pass a LinkScript or its fields as keywords: ``peer.script("q", credit=0)``.
        """
        with self._cond:
            self._scripts[address] = script if script is not None else LinkScript(**kw)

    def _script_for(self, attach: AttachRecord) -> LinkScript:
        if self._script_fn is not None:
            chosen = self._script_fn(attach)
            if chosen is not None:
                return chosen
        with self._cond:
            return self._scripts.get(attach.address, LinkScript())

    def enqueue(
        self,
        address: str,
        message: bytes | Message,
        *,
        delivery_count: int | None = None,
        tag: bytes | None = None,
        settled: bool | None = None,
    ) -> None:
        """Queue a message for client receivers on ``address``; sent as credit allows.

        ``message``: raw payload bytes (sent as-is) or a proton Message (encoded here).
        ``delivery_count`` sets the Message header's delivery-count (redelivery tests).
        ``settled``: send presettled; default follows the client's snd-settle-mode.
        """
        if isinstance(message, Message):
            if delivery_count is not None:
                message.delivery_count = delivery_count
            payload = bytes(message.encode())
        else:
            if delivery_count is not None:
                raise ValueError("delivery_count needs a proton.Message, not raw bytes")
            payload = bytes(message)
        item = _Queued(payload, tag, settled)

        def run() -> None:
            self._queues.setdefault(address, deque()).append(item)
            self._pump_all()

        self._call(run)

    def close_connection(
        self,
        condition: str | None = "amqp:connection:forced",
        description: str | None = None,
        *,
        conn: int | None = None,
    ) -> None:
        """Close the client connection(s) with an error (``condition=None``: a clean close)."""

        def run() -> None:
            for c in self._live(conn):
                c.close_connection(condition, description)
                c.process()

        self._call(run)

    def drop(self, *, conn: int | None = None, reset: bool = False) -> None:
        """Close the TCP socket(s) abruptly, with no AMQP close.

        ``reset=True`` sends a RST instead of a FIN (SO_LINGER 0), as a crashed host would.
        The peer keeps listening: a client that reconnects gets a new, numbered connection.
        """

        def run() -> None:
            for c in self._live(conn):
                if reset:
                    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                c.shutdown()

        self._call(run)

    @property
    def connections(self) -> list[ConnectionView]:
        """One view per TCP connection accepted so far, in order: ``connections[1].attaches``
        are the attaches of the second connection (e.g. the re-attaches after a reconnect)."""
        from .peer_connections import ConnectionView  # kept apart: this module is long enough

        return [ConnectionView(self, r.conn) for r in self.connects]

    def close_link(
        self,
        name: str,
        condition: str | None = None,
        description: str | None = None,
        *,
        closed: bool = True,
    ) -> None:
        """Detach the live link called ``name`` from the peer side (e.g. a deleted queue)."""

        def run() -> None:
            for c in self._live(None):
                for (_is_sender, link_name), state in list(c.links.items()):
                    if link_name != name:
                        continue
                    if condition is not None:
                        state.link.condition = Condition(condition, description)
                    if closed:
                        state.link.close()
                    else:
                        state.link.detach()
                    c.process()
                    return
            raise KeyError(f"no live link named {name!r}")

        self._call(run)

    def _live(self, index: int | None) -> list[_PeerConnection]:
        return [c for c in self._conns if not c.closed and (index is None or c.index == index)]

    def _pump_all(self) -> None:
        for c in self._live(None):
            for (is_sender, _name), state in list(c.links.items()):
                if is_sender:
                    c.pump(state.link)

    def _call(self, fn: Callable[[], T], timeout: float = 5.0) -> T:
        """Run ``fn`` on the peer thread (engine objects are not thread-safe) and wait for it."""
        if self._closed or not self._thread.is_alive():
            self.check()
            raise RuntimeError("peer is closed")
        future: Future[T] = Future()
        with self._cond:
            self._commands.append((fn, future))
        self._wake()
        return future.result(timeout)

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except (BlockingIOError, OSError):
            pass  # already a wake byte pending, or closing

    # ---- records ----------------------------------------------------------------------------

    def _record(self, record: Record) -> None:
        with self._cond:
            self._events.append(record)
            self._cond.notify_all()

    def _trace(self, conn: int, line: str) -> None:
        with self._cond:
            self._trace_lines.append(f"[{conn}] {line}")

    def records(self) -> list[Record]:
        """Everything recorded so far, in arrival order."""
        with self._cond:
            return list(self._events)

    def _of(self, kind: type[R]) -> list[R]:
        with self._cond:
            return [r for r in self._events if isinstance(r, kind)]

    @property
    def trace(self) -> list[str]:
        """proton's frame trace plus the peer's SASL lines, each prefixed ``[conn]``."""
        with self._cond:
            return list(self._trace_lines)

    # ---- waiting ----------------------------------------------------------------------------

    def wait_for(
        self, predicate: Callable[[], T], timeout: float = 5.0, what: str = "condition"
    ) -> T:
        """Wait until ``predicate()`` is truthy and return its value; PeerTimeout otherwise.

        Woken by every new record, so it returns as soon as the frame arrives.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                if self._errors:
                    self.check()
                result = predicate()
                if result:
                    return result
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    recent = "\n  ".join(_abbrev(repr(r)) for r in self._events[-15:])
                    raise PeerTimeout(
                        f"timed out after {timeout}s waiting for {what}; recent records:\n  "
                        f"{recent or '(none)'}"
                    )
                self._cond.wait(remaining)

    def wait_for_records(
        self,
        kind: type[R],
        match: Callable[[R], bool] | None = None,
        count: int = 1,
        timeout: float = 5.0,
    ) -> list[R]:
        """Wait for ``count`` records of ``kind`` matching ``match``; returns all matches."""

        def found() -> list[R]:
            hits = [r for r in self._of(kind) if match is None or match(r)]
            return hits if len(hits) >= count else []

        return self.wait_for(found, timeout, f"{count} x {kind.__name__}")

    def wait_for_open(self, timeout: float = 5.0) -> OpenRecord:
        return self.wait_for_records(OpenRecord, timeout=timeout)[-1]

    def wait_for_attach(
        self,
        address: str | None = None,
        *,
        name: str | None = None,
        role: Literal["sender", "receiver"] | None = None,
        timeout: float = 5.0,
    ) -> AttachRecord:
        """The first attach matching all given filters (address, link name, client role)."""

        def match(r: AttachRecord) -> bool:
            return (
                (address is None or r.address == address)
                and (name is None or r.name == name)
                and (role is None or r.role == role)
            )

        return self.wait_for_records(AttachRecord, match, timeout=timeout)[0]

    def wait_for_transfers(
        self, count: int = 1, *, link_name: str | None = None, timeout: float = 5.0
    ) -> list[TransferRecord]:
        return self.wait_for_records(
            TransferRecord,
            lambda r: link_name is None or r.link_name == link_name,
            count,
            timeout,
        )

    def wait_for_dispositions(
        self, count: int = 1, timeout: float = 5.0
    ) -> list[DispositionRecord]:
        return self.wait_for_records(DispositionRecord, None, count, timeout)

    def wait_for_flow(
        self, match: Callable[[FlowRecord], bool] | None = None, timeout: float = 5.0
    ) -> FlowRecord:
        return self.wait_for_records(FlowRecord, match, timeout=timeout)[0]

    def wait_for_detach(self, name: str | None = None, timeout: float = 5.0) -> DetachRecord:
        return self.wait_for_records(
            DetachRecord, lambda r: name is None or r.link_name == name, timeout=timeout
        )[0]

    def wait_for_close(self, timeout: float = 5.0) -> CloseRecord:
        return self.wait_for_records(CloseRecord, timeout=timeout)[0]

    def wait_for_disconnects(self, count: int = 1, timeout: float = 5.0) -> list[DisconnectRecord]:
        return self.wait_for_records(DisconnectRecord, None, count, timeout)

    # ---- the peer thread --------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stopping:
                self._loop_once()
        except BaseException as e:  # noqa: BLE001 - surfaced in the test thread by close()
            with self._cond:
                self._errors.append(e)
                self._cond.notify_all()
        finally:
            self._fail_pending_commands()

    def _loop_once(self) -> None:
        now = time.monotonic()
        timeout = 0.5
        for c in self._conns:
            if c.deadline:
                timeout = min(timeout, max(0.0, c.deadline - now))
        for key, mask in self._selector.select(timeout):
            if key.data == "listener":
                self._accept()
            elif key.data == "wake":
                try:
                    while self._wake_r.recv(4096):
                        pass
                except (BlockingIOError, InterruptedError):
                    pass
            else:
                conn: _PeerConnection = key.data
                if conn.closed:
                    continue
                self._guarded(conn, functools.partial(self._io, conn, mask))
        self._run_commands()
        for conn in list(self._conns):
            self._guarded(conn, conn.process)
            self._guarded(conn, conn.flush)
            self._settle_conn(conn)

    def _io(self, conn: _PeerConnection, mask: int) -> None:
        if mask & selectors.EVENT_READ:
            conn.on_readable()
        if mask & selectors.EVENT_WRITE:
            conn.flush()

    def _guarded(self, conn: _PeerConnection, fn: Callable[[], Any]) -> None:
        # A failure on one connection is kept for close() and ends that connection only,
        # so the test sees a client-side error promptly instead of a hang.
        try:
            fn()
        except Exception as e:
            with self._cond:
                self._errors.append(e)
                self._cond.notify_all()
            conn.shutdown()

    def _settle_conn(self, conn: _PeerConnection) -> None:
        if conn.finished and not conn.closed:
            conn.shutdown()
        if conn.closed:
            self._conns.remove(conn)
            self._record(DisconnectRecord(conn.index))
            return
        events = selectors.EVENT_READ if not conn.eof else 0
        if conn.outbuf:
            events |= selectors.EVENT_WRITE
        try:
            if events:
                self._selector.modify(conn.sock, events, conn)
            else:
                self._selector.unregister(conn.sock)
        except KeyError:
            if events:
                self._selector.register(conn.sock, events, conn)

    def _accept(self) -> None:
        try:
            sock, _addr = self._listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = _PeerConnection(self, sock, next(self._conn_counter))
        self._conns.append(conn)
        self._every_conn[conn.index] = conn  # strict mode judges frames of closed ones too
        self._selector.register(sock, selectors.EVENT_READ, conn)
        self._record(ConnectRecord(conn.index))

    def _run_commands(self) -> None:
        while True:
            with self._cond:
                if not self._commands:
                    return
                fn, future = self._commands.popleft()
            try:
                future.set_result(fn())
            except Exception as e:
                future.set_exception(e)

    def _fail_pending_commands(self) -> None:
        with self._cond:
            commands, self._commands = list(self._commands), deque()
        for _fn, future in commands:
            future.set_exception(RuntimeError("scripted peer stopped"))
