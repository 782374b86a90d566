"""Seeded fuzz of received messages: valid-but-odd and mutated transfers into one consumer.

The scripted peer sends thousands of transfers per connection: sections holding the wrong
AMQP types, arrays, described values, symbol and non-string keys, 64 KB strings, deep
nesting, random bytes, truncated and bit-flipped encodings. For every one the client must
stay up (no engine failure, no hang), every getter of whatever message comes out must either
answer or raise a JMS exception, and every transfer must be settled accepted (handed to the
application) or modified (undecodable).

``JMSPY_FUZZ_SEED`` and ``JMSPY_FUZZ_COUNT`` replay or widen a run; a failure names the seed,
the transfer index and the payload in hex.
"""

from __future__ import annotations

import os
import random
import struct
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from proton import (
    Array,
    Data,
    Described,
    byte,
    char,
    decimal32,
    decimal64,
    decimal128,
    float32,
    int32,
    short,
    symbol,
    timestamp,
    ubyte,
    uint,
    ulong,
    ushort,
)

from jmspy import (
    AUTO_ACKNOWLEDGE,
    BytesMessage,
    MapMessage,
    Message,
    ObjectMessage,
    StreamMessage,
    TextMessage,
)
from jmspy.errors import (
    JMSException,
    JMSRuntimeException,
    MessageEOFException,
    NumberFormatException,
)

from .client_support import Clients, clients_fixture
from .peer import ScriptedPeer, _Queued

SEED = int(os.environ.get("JMSPY_FUZZ_SEED", "20261123"))
COUNT = int(os.environ.get("JMSPY_FUZZ_COUNT", "10000"))
BATCHES = 4  # connections; each gets COUNT / BATCHES transfers

HEADER, DELIVERY_ANNOTATIONS, MESSAGE_ANNOTATIONS, PROPERTIES = 0x70, 0x71, 0x72, 0x73
APPLICATION_PROPERTIES, DATA, AMQP_SEQUENCE, AMQP_VALUE, FOOTER = 0x74, 0x75, 0x76, 0x77, 0x78

JMS_ANNOTATIONS = [
    "x-opt-jms-msg-type",
    "x-opt-jms-dest",
    "x-opt-jms-reply-to",
    "x-opt-delivery-time",
    "x-opt-to-type",
    "x-opt-reply-type",
    "x-opt-ORIG-ADDRESS",
    "x-opt-ACTUAL-EXPIRY",
]
CONTENT_TYPES = [
    "text/plain",
    "text/plain; charset=utf-8",
    "text/plain; charset=nonsense",
    "application/json",
    "application/x-java-serialized-object",
    "application/x-python-serialized-object",
    "application/octet-stream",
    "",
]


@pytest.fixture
def clients() -> Iterator[Clients]:
    yield from clients_fixture()


# ---- value generation ----------------------------------------------------------------------


class Values:
    """Random AMQP values of every type the codec may meet."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def text(self) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.005:
            return "x" * 65536  # 64 KB string
        if roll < 0.1:
            return "".join(chr(rng.choice([0, 0x7F, 0xE9, 0x4E2D, 0x1F600])) for _ in range(5))
        return "".join(rng.choice("abcXYZ_.$:-09 ") for _ in range(rng.randint(0, 12)))

    def scalar(self) -> Any:
        rng = self.rng
        makers: list[Callable[[], Any]] = [
            lambda: None,
            lambda: rng.choice([True, False]),
            lambda: ubyte(rng.randint(0, 255)),
            lambda: ushort(rng.randint(0, 65535)),
            lambda: uint(rng.choice([0, 1, 2**31, 2**32 - 1])),
            lambda: ulong(rng.choice([0, 1, 2**63, 2**64 - 1])),
            lambda: byte(rng.randint(-128, 127)),
            lambda: short(rng.randint(-(2**15), 2**15 - 1)),
            lambda: int32(rng.randint(-(2**31), 2**31 - 1)),
            lambda: rng.choice([0, -1, 2**63 - 1, -(2**63), rng.randint(-(2**40), 2**40)]),
            lambda: float32(rng.choice([0.0, 1.5, float("nan"), float("inf"), -0.0])),
            lambda: rng.choice([0.1, float("nan"), float("-inf"), 1e308]),
            lambda: decimal32(rng.randint(0, 2**32 - 1)),
            lambda: decimal64(rng.randint(0, 2**64 - 1)),
            lambda: decimal128(bytes(rng.randint(0, 255) for _ in range(16))),
            lambda: char(chr(rng.choice([0x41, 0xE9, 0x1F600]))),
            lambda: timestamp(rng.choice([0, -1, 2**63 - 1, -(2**63), 1_700_000_000_000])),
            lambda: uuid.UUID(int=rng.getrandbits(128)),
            lambda: bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 20))),
            self.text,
            lambda: symbol(rng.choice(["s", "x-opt-jms-msg-type", "", "ID:sym"])),
        ]
        return rng.choice(makers)()

    def array(self) -> Array:
        rng = self.rng
        kind = rng.choice(["int", "sym", "str", "described"])
        n = rng.randint(0, 5)
        if kind == "int":
            return Array(Data.INT, Data.INT, *[rng.randint(-5, 5) for _ in range(n)])
        if kind == "sym":
            return Array(Data.NULL, Data.SYMBOL, *[symbol(f"s{i}") for i in range(n)])
        if kind == "str":
            return Array(Data.NULL, Data.STRING, *[f"v{i}" for i in range(n)])
        return Array(ulong(rng.randint(0, 300)), Data.STRING, *[f"d{i}" for i in range(n)])

    def key(self) -> Any:
        rng = self.rng
        roll = rng.random()
        if roll < 0.6:
            return self.text()
        if roll < 0.8:
            return symbol(self.text().encode("ascii", "replace").decode()[:200])
        return self.scalar()

    def value(self, depth: int = 0) -> Any:
        rng = self.rng
        roll = rng.random()
        if depth > 60 or roll < 0.55:
            return self.scalar()
        if roll < 0.65:
            return self.array()
        if roll < 0.75:
            return Described(
                rng.choice([ulong(rng.randint(0, 0x80)), symbol("com.example:odd")]),
                self.value(depth + 1),
            )
        if roll < 0.87:
            return [self.value(depth + 1) for _ in range(rng.randint(0, 4))]
        if roll < 0.97:
            return {self.key(): self.value(depth + 1) for _ in range(rng.randint(0, 4))}
        # deep nesting: a chain of single-element lists or maps
        nested: Any = self.scalar()
        for _ in range(rng.randint(20, 80)):
            nested = [nested] if rng.random() < 0.5 else {"k": nested}
        return nested


# ---- payload generation --------------------------------------------------------------------


def _section(code: int, value: Any) -> bytes:
    d = Data()
    d.put_described()
    d.enter()
    d.put_ulong(code)
    d.put_object(value)
    d.exit()
    return bytes(d.encode())


POOL = 300  # encoded sections of each kind; payloads combine them (encoding is the slow part)


def _nested(depth: int, maps: bool, inner: bytes = b"\x40") -> bytes:
    """``depth`` levels of list32 [x] (or map32 {"k": x}) around ``inner``."""
    for _ in range(depth):
        if maps:
            body = b"\xa1\x01k" + inner
            inner = b"\xd1" + struct.pack(">II", len(body) + 4, 2) + body
        else:
            inner = b"\xd0" + struct.pack(">II", len(inner) + 4, 1) + inner
    return inner


class Payloads:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.values = Values(rng)
        self._pools: dict[str, list[bytes]] = {}

    def _pooled(self, kind: str, make: Callable[[], bytes]) -> bytes:
        """A section of ``kind``: freshly encoded until the pool is full, then one from it.
        Random combinations of pooled sections keep payloads varied at a fraction of the cost
        of encoding every section anew."""
        pool = self._pools.setdefault(kind, [])
        if len(pool) < POOL:
            pool.append(make())
            return pool[-1]
        return self.rng.choice(pool)

    def _odd_field(self, plausible: Callable[[], Any]) -> Any:
        return plausible() if self.rng.random() < 0.6 else self.values.value(1)

    def header(self) -> Any:
        rng, v = self.rng, self.values
        if rng.random() < 0.1:
            return v.value()
        return [
            self._odd_field(lambda: rng.choice([True, False])),
            self._odd_field(lambda: ubyte(rng.randint(0, 255))),
            self._odd_field(lambda: uint(rng.choice([0, 1000, 2**32 - 1]))),
            self._odd_field(lambda: rng.choice([True, False])),
            self._odd_field(lambda: uint(rng.choice([0, 1, 2**32 - 1]))),
        ][: rng.randint(0, 5)]

    def properties(self) -> Any:
        rng, v = self.rng, self.values
        if rng.random() < 0.1:
            return v.value()
        ts = lambda: timestamp(rng.choice([0, 1_700_000_000_000, 2**63 - 1, -(2**63)]))  # noqa: E731
        plausible: list[Callable[[], Any]] = [
            lambda: rng.choice(
                ["ID:abc", "AMQP_ULONG:5", uuid.UUID(int=5), ulong(7), b"\x00\x01", "ID:AMQP_NO"]
            ),
            lambda: b"user",
            lambda: rng.choice(["queue://q", "topic://t", "q", ""]),
            v.text,
            lambda: rng.choice(["queue://r", "r", "temp-queue://x"]),
            lambda: rng.choice(["ID:corr", b"\x01", ulong(1), uuid.UUID(int=9)]),
            lambda: symbol(rng.choice(CONTENT_TYPES)),
            lambda: symbol("gzip"),
            ts,
            ts,
            v.text,
            lambda: uint(rng.choice([0, 1, 2**31, 2**32 - 1])),
            v.text,
        ]
        return [self._odd_field(make) for make in plausible[: rng.randint(0, 13)]]

    def annotations(self) -> Any:
        rng, v = self.rng, self.values
        if rng.random() < 0.1:
            return v.value()
        out: dict[Any, Any] = {}
        for _ in range(rng.randint(0, 4)):
            key = symbol(rng.choice(JMS_ANNOTATIONS)) if rng.random() < 0.8 else v.key()
            if key == "x-opt-jms-msg-type" and rng.random() < 0.7:
                out[key] = byte(rng.randint(-1, 7))
            elif key in ("x-opt-jms-dest", "x-opt-jms-reply-to") and rng.random() < 0.7:
                out[key] = byte(rng.randint(-1, 4))
            else:
                out[key] = v.value(1)
        return out

    def app_properties(self) -> Any:
        rng, v = self.rng, self.values
        if rng.random() < 0.1:
            return v.value()
        names = ["a", "JMSXGroupID", "JMSXGroupSeq", "JMS_AMQP_TTL", "JMSXDeliveryCount", "1bad"]
        return {
            (rng.choice(names) if rng.random() < 0.7 else v.key()): v.value(1)
            for _ in range(rng.randint(0, 5))
        }

    def body(self) -> list[bytes]:
        rng, v = self.rng, self.values
        roll = rng.random()
        if roll < 0.3:
            return [_section(AMQP_VALUE, v.value())]
        if roll < 0.55:
            parts = [
                bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40)))
                for _ in range(rng.randint(1, 3))
            ]
            if rng.random() < 0.3:
                import pickle

                parts = [pickle.dumps(rng.choice([{"a": 1}, [1, 2], "s", 3.5]))]
            return [_section(DATA, p) for p in parts]
        if roll < 0.7:
            return [_section(AMQP_SEQUENCE, v.value()) for _ in range(rng.randint(1, 2))]
        if roll < 0.8:
            return []
        # a body section holding the wrong type, or mixed / repeated body sections
        return [
            _section(rng.choice([DATA, AMQP_SEQUENCE, AMQP_VALUE]), v.value())
            for _ in range(rng.randint(1, 3))
        ]

    def valid_but_odd(self) -> bytes:
        rng = self.rng
        sections: list[bytes] = []
        pooled = self._pooled
        if rng.random() < 0.7:
            sections.append(pooled("header", lambda: _section(HEADER, self.header())))
        if rng.random() < 0.2:
            sections.append(
                pooled("da", lambda: _section(DELIVERY_ANNOTATIONS, self.annotations()))
            )
        if rng.random() < 0.7:
            sections.append(pooled("ma", lambda: _section(MESSAGE_ANNOTATIONS, self.annotations())))
        if rng.random() < 0.8:
            sections.append(pooled("props", lambda: _section(PROPERTIES, self.properties())))
        if rng.random() < 0.6:
            sections.append(
                pooled("app", lambda: _section(APPLICATION_PROPERTIES, self.app_properties()))
            )
        sections.append(pooled("body", lambda: b"".join(self.body())))
        if rng.random() < 0.1:
            sections.append(pooled("footer", lambda: _section(FOOTER, self.annotations())))
        if rng.random() < 0.05:
            rng.shuffle(sections)
        if rng.random() < 0.03:
            sections.append(_section(rng.randint(0, 0x100), self.values.value()))
        return b"".join(sections)

    def mutated(self) -> bytes:
        rng = self.rng
        payload = bytearray(self.valid_but_odd())
        if not payload:
            return b"\x00"
        kind = rng.random()
        if kind < 0.35:  # truncated
            del payload[rng.randint(0, len(payload) - 1) :]
        elif kind < 0.7:  # bytes flipped (format codes, sizes, counts)
            for _ in range(rng.randint(1, 4)):
                payload[rng.randrange(len(payload))] = rng.getrandbits(8)
        elif kind < 0.85:  # random bytes inserted
            at = rng.randint(0, len(payload))
            payload[at:at] = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 8)))
        else:  # a huge size or count in a compound header
            at = rng.randrange(len(payload))
            payload[at : at + 4] = b"\xff\xff\xff\xf0"
        return bytes(payload) or b"\x00"

    def random_bytes(self) -> bytes:
        rng = self.rng
        head = rng.choice([b"", b"\x00\x53\x77", b"\x00\x53\x73\xd0", b"\x00\xa3\x03abc"])
        return head + bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 64)))

    def deeply_nested(self) -> bytes:
        """A list/map chain hundreds of levels deep, written as raw bytes (proton's put_object
        recurses in Python and cannot build it), in a body or an application property."""
        rng = self.rng
        inner = _nested(rng.randint(300, 1200), maps=rng.random() < 0.5)
        where = rng.random()
        if where < 0.4:
            return b"\x00\x53\x77" + inner
        if where < 0.7:
            return b"\x00\x53\x76" + _nested(1, maps=False, inner=inner)
        entry = b"\xa1\x01a" + inner
        props = b"\xd1" + struct.pack(">II", len(entry) + 4, 2) + entry
        return b"\x00\x53\x74" + props + _section(AMQP_VALUE, "x")

    def next(self) -> bytes:
        roll = self.rng.random()
        if roll < 0.02:
            return self.deeply_nested()
        if roll < 0.5:
            return self.valid_but_odd()
        if roll < 0.9:
            return self.mutated()
        return self.random_bytes()


# ---- reading every getter ------------------------------------------------------------------

# NumberFormatException is what JMS documents for a numeric getter on a non-numeric string.
JMS_ERRORS = (JMSException, JMSRuntimeException, NumberFormatException)


def _call(problems: list[str], label: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except JMS_ERRORS:
        return None
    except Exception as exc:  # the point of the test: nothing but JMS exceptions
        problems.append(f"{label}: {type(exc).__name__}: {exc}"[:300])
        return None


def read_everything(message: Message, problems: list[str]) -> None:
    for name in dir(message):
        if name.startswith("getJMS"):
            _call(problems, name, getattr(message, name))
    _call(problems, "getBody(object)", lambda: message.getBody(object))
    _call(problems, "isBodyAssignableTo(str)", lambda: message.isBodyAssignableTo(str))
    _call(problems, "repr", lambda: repr(message))
    names = _call(problems, "getPropertyNames", lambda: list(message.getPropertyNames())) or []
    for prop in names:
        _call(problems, f"getObjectProperty({prop!r})", lambda p=prop: message.getObjectProperty(p))
        _call(problems, f"getStringProperty({prop!r})", lambda p=prop: message.getStringProperty(p))
        _call(problems, f"getLongProperty({prop!r})", lambda p=prop: message.getLongProperty(p))
    for prop in ("JMSXDeliveryCount", "JMSXGroupID", "JMSXGroupSeq", "JMSXUserID"):
        _call(problems, f"getObjectProperty({prop})", lambda p=prop: message.getObjectProperty(p))
    if isinstance(message, TextMessage):
        _call(problems, "getText", message.getText)
    elif isinstance(message, ObjectMessage):
        _call(problems, "getObject", message.getObject)
    elif isinstance(message, MapMessage):
        keys = _call(problems, "getMapNames", lambda: list(message.getMapNames())) or []
        for key in keys:
            _call(problems, f"getObject({key!r})", lambda k=key: message.getObject(k))
            _call(problems, f"getString({key!r})", lambda k=key: message.getString(k))
    elif isinstance(message, BytesMessage):
        _call(problems, "getBodyLength", message.getBodyLength)
        _call(problems, "readBytes", lambda: message.readBytes(bytearray(16)))
    elif isinstance(message, StreamMessage):
        for _ in range(64):
            try:
                message.readObject()
            except MessageEOFException:
                break
            except JMS_ERRORS:
                break
            except Exception as exc:
                problems.append(f"readObject: {type(exc).__name__}: {exc}")
                break


# ---- the test ------------------------------------------------------------------------------


def _enqueue_all(peer: ScriptedPeer, address: str, items: list[tuple[bytes, bytes]]) -> None:
    """Queue many transfers in one call to the peer thread (one call per transfer would
    dominate the run time)."""

    def run() -> None:
        queue = peer._queues.setdefault(address, deque())
        for tag, payload in items:
            queue.append(_Queued(payload, tag, None))
        peer._pump_all()

    peer._call(run, timeout=30.0)


def test_fuzzed_transfers_never_break_the_consumer(
    make_peer: Callable[..., ScriptedPeer], clients: Clients
) -> None:
    rng = random.Random(SEED)
    payloads = Payloads(rng)
    per_batch = max(1, COUNT // BATCHES)
    total_seen = 0
    started = time.monotonic()
    for batch in range(BATCHES):
        peer = make_peer()
        items = [(f"b{batch}-{i}".encode(), payloads.next()) for i in range(per_batch)]
        by_tag = dict(items)
        connection = clients.connect(peer, queue_prefetch=1000, receive_local_only=True)
        failures: list[JMSException] = []
        connection.setExceptionListener(failures.append)
        connection.start()
        session = connection.createSession(AUTO_ACKNOWLEDGE)
        consumer = session.createConsumer(session.createQueue("fuzz"))
        _enqueue_all(peer, "fuzz", items)

        # Receive until every transfer is settled: a decodable one is handed over (and
        # accepted), an undecodable one is settled modified by the client without a receive.
        settled: dict[bytes, str] = {}
        problems: list[str] = []
        deadline = time.monotonic() + 120
        while len(settled) < len(items):
            assert time.monotonic() < deadline, (
                f"seed {SEED} batch {batch}: {len(items) - len(settled)} transfers never "
                f"settled, e.g. {sorted(set(by_tag) - set(settled))[:5]}"
            )
            message = consumer.receive(50)
            if message is not None:
                before = len(problems)
                read_everything(message, problems)
                if len(problems) > before:
                    tag_hint = message.getJMSMessageID()
                    problems[before:] = [
                        f"{p} (message id {tag_hint!r})" for p in problems[before:]
                    ]
            if message is None:  # idle: look at what the peer has been told so far
                for disposition in peer.dispositions:
                    for tag in disposition.delivery_tags:
                        if disposition.settled:
                            settled[tag] = disposition.kind or "?"
            assert not failures, f"seed {SEED} batch {batch}: connection failed: {failures[0]}"
        assert not problems, f"seed {SEED} batch {batch}: non-JMS errors:\n" + "\n".join(
            problems[:20]
        )
        odd = {tag: kind for tag, kind in settled.items() if kind not in ("accepted", "modified")}
        assert not odd, f"seed {SEED}: unexpected outcomes {list(odd.items())[:5]}" + "".join(
            f"\n{tag!r}: {by_tag[tag].hex()}" for tag in list(odd)[:3]
        )
        assert all(t.is_alive() for t in threading.enumerate() if "jmspy-engine" in t.name)
        total_seen += len(settled)
        connection.close()
    elapsed = time.monotonic() - started
    assert total_seen == per_batch * BATCHES
    print(f"fuzz: {total_seen} transfers, seed {SEED}, {elapsed:.1f} s")


# ---- regressions the fuzz found --------------------------------------------------------------


def test_non_binary_user_id_is_ignored_not_expanded() -> None:
    """properties.user-id holding a uint made the decoder call bytes(n): n zero bytes, up to
    4 GB for uint(2**32 - 1). A non-binary user-id is now ignored."""
    from jmspy._amqp.codec import decode_message

    payload = _section(PROPERTIES, [None, uint(2**20)]) + _section(AMQP_VALUE, "body")
    message = decode_message(payload, None)
    assert isinstance(message, TextMessage)
    assert message.getText() == "body"
    assert message.getStringProperty("JMSXUserID") is None
    binary = _section(PROPERTIES, [None, b"alice"]) + _section(AMQP_VALUE, "body")
    assert decode_message(binary, None).getStringProperty("JMSXUserID") == "alice"


@pytest.mark.parametrize("depth", [600, 900])
@pytest.mark.parametrize("maps", [False, True])
def test_deeply_nested_values_give_jms_exceptions(depth: int, maps: bool) -> None:
    """getObject/getBody/getObjectProperty copied such values with deepcopy, which raised
    RecursionError a few hundred levels down."""
    from jmspy._amqp.codec import decode_message

    for payload in (
        b"\x00\x53\x77" + _nested(depth, maps),
        b"\x00\x53\x74"
        + _nested(1, maps=True, inner=_nested(depth, maps))
        + _section(AMQP_VALUE, "x"),
    ):
        try:
            message = decode_message(payload, None)
        except JMSException:
            continue  # refusing it at decode is fine too
        problems: list[str] = []
        read_everything(message, problems)
        assert not problems, problems
