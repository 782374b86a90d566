"""Strict mode of the scripted peer: the frames a client sent that nobody expected.

Qpid JMS's TestAmqpPeer fails a test on any frame the test did not script. Scripting every
flow and disposition would make the wire tests longer than the client, so the scripted peer
takes what a well-mannered client sends (open, begin, attach, flow, detach, end, close, and
transfers and dispositions where they belong) as expected, and reports:

* a transfer on a link the test scripted with ``credit=0``: the peer granted nothing there, so
  the test said no message may come (on links with credit, transfers are what credit invites);
* a disposition naming a delivery the other side never sent, or settling a delivery that an
  earlier disposition already settled (a message acknowledged twice);
* a flow or transfer on a handle that is not attached (never, or no longer), and an attach on
  a handle that is;
* a second open, or any frame after the client's close, on one connection.

A test that provokes one of these on purpose declares it with ``ScriptedPeer(strict=True,
allow=...)``, a predicate over records. ``unexpected_frames`` is a pure function of the
records, so ``check()`` and ``close()`` can run it at any time and the self-test can feed it
records directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

#: Record class name -> frame kind, for the records that stand for a performative.
_KINDS = {
    "OpenRecord": "open",
    "BeginRecord": "begin",
    "AttachRecord": "attach",
    "FlowRecord": "flow",
    "TransferRecord": "transfer",
    "DispositionRecord": "disposition",
    "DetachRecord": "detach",
    "EndRecord": "end",
    "CloseRecord": "close",
}

# Disposition ranges longer than this are not checked id by id (the peer does not resolve
# them to tags either); no test acknowledges that many messages in one frame.
_MAX_CHECKED_RANGE = 10_000

#: (conn, link name) -> the credit the test scripted for the peer's receiving end, or None.
CreditOf = Callable[[int, str], int | None]


def unexpected_frames(
    records: Sequence[Any],
    credit_of: CreditOf,
    peer_sent: Callable[[int, int, int], bool] | None = None,
    allow: Callable[[Any], bool] | None = None,
) -> list[str]:
    """One line per frame nobody expected, in arrival order (empty when all is well).

    ``credit_of(conn, link_name)`` is the credit the test scripted for a client sender's link;
    ``peer_sent(conn, channel, delivery_id)`` tells whether the peer sent that delivery (the
    client's receiver dispositions must name one; ``None`` skips that check); records for which
    ``allow`` is true are never reported.
    """
    problems: list[str] = []
    opened: set[int] = set()
    closed: set[int] = set()
    attached: set[tuple[int, int, int]] = set()  # (conn, channel, handle)
    settled: set[tuple[int, int, str, int]] = set()  # (conn, channel, role, delivery id)

    def report(record: Any, why: str) -> None:
        if allow is not None and allow(record):
            return
        text = repr(record)
        problems.append(f"{why}: {text if len(text) <= 300 else text[:297] + '...'}")

    for record in records:
        kind = _KINDS.get(type(record).__name__)
        if kind is None:
            continue  # connects, disconnects and SASL are not performatives
        conn = record.conn
        if conn in closed:
            report(record, f"{kind} after the client's close")
            continue
        if kind == "open":
            if conn in opened:
                report(record, "a second open on one connection")
            opened.add(conn)
        elif kind == "close":
            closed.add(conn)
        elif kind == "attach":
            key = (conn, record.channel, record.handle)
            if key in attached:
                report(record, "an attach on a handle that is already attached")
            attached.add(key)
        elif kind == "detach":
            attached.discard((conn, record.channel, record.handle))
        elif kind == "end":
            attached = {k for k in attached if k[:2] != (conn, record.channel)}
        elif kind in ("flow", "transfer"):
            handle = record.handle
            if handle is not None and (conn, record.channel, handle) not in attached:
                report(record, f"a {kind} on handle {int(handle)}, which is not attached")
            elif kind == "transfer" and record.link_name is not None:
                if credit_of(conn, record.link_name) == 0:
                    report(record, "a transfer on a link the test scripted with credit=0")
        elif kind == "disposition":
            _check_disposition(record, settled, peer_sent, report)
    return problems


def _check_disposition(
    record: Any,
    settled: set[tuple[int, int, str, int]],
    peer_sent: Callable[[int, int, int], bool] | None,
    report: Callable[[Any, str], None],
) -> None:
    first, last = int(record.first), int(record.last)
    if last - first > _MAX_CHECKED_RANGE:
        return
    ids = range(first, last + 1)
    # The client as receiver settles what the peer sent; as sender it answers the peer's
    # outcomes for its own transfers, whose tags the peer resolved when it recorded them.
    if record.role == "receiver" and peer_sent is not None:
        unknown = [i for i in ids if not peer_sent(record.conn, record.channel, i)]
        if unknown:
            report(record, f"a disposition for deliveries {unknown} the peer never sent")
            return
    elif record.role == "sender" and not record.delivery_tags:
        report(record, f"a disposition for deliveries {first}..{last} the client never sent")
        return
    if not record.settled:
        return
    again = [i for i in ids if (record.conn, record.channel, record.role, i) in settled]
    if again:
        report(record, f"deliveries {again} settled a second time")
    settled.update((record.conn, record.channel, record.role, i) for i in ids)
