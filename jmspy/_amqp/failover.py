"""Failover: reconnect a lost AMQP connection and re-create everything on it.

The failover layer wraps the AMQP provider the way Qpid JMS's ``FailoverProvider`` wraps its
``AmqpProvider``: the JMS objects keep talking to the same :class:`AmqpConnection`,
``AmqpSession`` and link handles, and when the transport under them is lost the
:class:`Reconnector` opens a new one (to the same server or the next of the pool), begins every
session again and re-attaches every link with the same name and terminus, so durable and shared
subscriptions resume. Work the application submitted meanwhile is held and runs afterwards.

What happens to in-flight work is decided where the work lives (``provider.py``):

* unsettled sends go back to the head of the sender's outbox and are resent (at-least-once;
  Artemis drops the copies it already had when duplicate detection is on);
* prefetched, undelivered messages are dropped locally (the broker redelivers them) and the
  consumer remembers what it had handed out, to flag those messages ``JMSRedelivered``;
* deliveries of the old transport can no longer be settled (``epoch``);
* a transaction dies with the transport: ``commit()`` then raises
  TransactionRolledBackException, and a discharge that was in flight TransactionInDoubtException.

Threads: one reconnect thread per interruption, never the engine thread; it ends once the
connection is restored or failover gives up. The delay schedule is Qpid JMS's
(:func:`jmspy.failover_options.reconnect_delay_ms`), driven by ``tenacity``.
"""
# Shares underscore members with the other modules of one provider (see jmspy/_amqp/__init__.py).

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_any,
    stop_before_delay,
    stop_never,
)

from ..errors import JMSException, JMSSecurityException
from ..failover_options import FailoverOptions, reconnect_delay_ms
from .completion import Completion
from .engine import TransportBound
from .engine_errors import EngineStopped

if TYPE_CHECKING:
    from ..options import ConnectionOptions, Endpoint
    from .links import _LinkBase
    from .provider import AmqpConnection
    from .session import AmqpSession

log = logging.getLogger("jmspy.failover")


class _Cancelled(Exception):
    """The connection was closed while reconnecting."""


def _retryable(exc: BaseException) -> bool:
    # Security failures stop reconnecting at once (Qpid JMS's isStoppageCause).
    return not isinstance(exc, JMSSecurityException | _Cancelled)


def merge_server_list(
    pool: list[tuple[Endpoint, ConnectionOptions]],
    current: int,
    advertised: Any,
    action: str,
) -> tuple[list[tuple[Endpoint, ConnectionOptions]], int]:
    """Apply a broker's ``failover-server-list`` open property to the pool, as Qpid JMS's
    ``failover.amqpOpenServerListAction`` says: REPLACE keeps the current server and the
    advertised ones, ADD appends the advertised ones, IGNORE leaves the pool alone. Entries need
    ``network-host`` and ``port``; ``scheme`` defaults to the current server's. Returns the new
    pool and the index of the current server in it."""
    from ..options import Endpoint

    if action == "IGNORE" or not isinstance(advertised, list | tuple) or not advertised:
        return pool, current
    endpoint, options = pool[current]
    found: list[tuple[Endpoint, ConnectionOptions]] = []
    for entry in advertised:
        if not isinstance(entry, dict):
            continue
        fields = {str(key): value for key, value in entry.items()}
        host, port = fields.get("network-host"), fields.get("port")
        scheme = str(fields.get("scheme") or endpoint.scheme)
        try:
            if not host or scheme not in ("amqp", "amqps"):
                raise ValueError
            found.append((Endpoint(scheme=scheme, host=str(host), port=int(str(port))), options))
        except (TypeError, ValueError):
            log.debug("ignoring an invalid failover-server-list entry %r", entry)
    if not found:
        return pool, current
    if action == "REPLACE":
        merged = [pool[current]]
    else:
        merged = list(pool)
    for candidate in found:
        if all(candidate[0] != known[0] for known in merged):
            merged.append(candidate)
    index = next(i for i, known in enumerate(merged) if known[0] == endpoint)
    return merged, index


def recover(conn: AmqpConnection, timeout_s: float) -> list[tuple[_LinkBase, BaseException]]:
    """Re-create every open session and link on the new transport and wait for the peer.

    Returns the links the peer refused (the caller fails them); raises when the transport
    is lost again or the peer does not answer within ``timeout_s``."""
    done: Completion[list[tuple[_LinkBase, BaseException]]] = Completion()
    conn._recovery = done

    def work() -> None:
        pending: list[tuple[_LinkBase | None, Completion[None]]] = []
        recovered: list[AmqpSession] = []
        for session in list(conn._sessions):
            if session.closed:
                conn._sessions.discard(session)
                continue
            session._do_recover(pending)
            recovered.append(session)
        refused: list[tuple[_LinkBase, BaseException]] = []
        remaining = [len(pending)]

        def finish() -> None:
            # A session the peer ended during the recovery takes every link of it along,
            # those it had re-attached too: all are refused (see AmqpSession._on_remote_close).
            for session in recovered:
                session.recovering = False
                error = session.ended_in_recovery
                if error is None:
                    continue
                seen = {link for link, _ in refused}
                refused.extend((link, error) for link in session._links if link not in seen)
            done.succeed(refused)

        def one_done(link: _LinkBase | None, completion: Completion[None]) -> None:
            if completion.error is not None and link is not None:
                refused.append((link, completion.error))
            remaining[0] -= 1
            if remaining[0] == 0:
                finish()

        if not pending:
            finish()
        for link, completion in pending:
            completion.add_callback(partial(one_done, link))

    lost = JMSException(f"connection to {conn.endpoint.display()} was lost")
    try:
        if conn._live_gen != conn._gen:
            raise lost  # before _recovery was set, so its _fail had no recovery to fail
        try:
            # Bound to this transport: if it is lost first, the work must not run on the next.
            conn.engine.submit(TransportBound(work))
        except EngineStopped as exc:
            raise lost from exc
        return done.wait(
            timeout_s,
            lambda: JMSException(
                f"{conn.endpoint.display()} did not re-create the sessions and links within "
                f"{timeout_s:g} s"
            ),
        )
    finally:
        conn._recovery = None


class Reconnector:
    """Owns the reconnect loop of one failover connection."""

    def __init__(self, connection: AmqpConnection, options: FailoverOptions) -> None:
        self.connection = connection
        self.options = options
        self._pool: list[tuple[Endpoint, ConnectionOptions]] = list(connection.servers)
        if options.randomize:
            random.shuffle(self._pool)
        self._current = 0
        self._cancelled = threading.Event()
        self._thread: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self._deadline: float | None = None  # of the first connect (see _run_attempts)
        self._attempts = 0
        self._refused_recoveries = 0  # recoveries the peer refused links of, this reconnect

    # ---- API side ---------------------------------------------------------------------------

    def connect_first(self) -> None:
        """The first connect: every server of the pool, with the startup attempt limit."""
        self._run_attempts(first=True)

    def start(self, error: JMSException) -> None:
        """Engine thread: the transport was lost; reconnect on a thread of our own."""
        old_engine = self.connection.engine
        thread = threading.Thread(
            target=self._reconnect,
            args=(error, old_engine),
            name=f"jmspy-failover-{self.connection.endpoint.host}",
            daemon=True,
        )
        # Started before it is published: a close on another thread that found it not yet
        # started could not join it (RuntimeError out of Connection.close).
        with self._thread_lock:
            if self._cancelled.is_set():
                return  # the connection is closing: nothing to reconnect
            thread.start()
            self._thread = thread

    def cancel(self, timeout_s: float) -> None:
        """The connection is closing: stop reconnecting (waits up to ``timeout_s``)."""
        with self._thread_lock:
            self._cancelled.set()
            thread = self._thread
        # A reconnect thread may be waiting for a transport to open (up to jms.connectTimeout):
        # stopping its engine ends that wait now, instead of the join below waiting it out. An
        # engine the thread creates after this finds the connection closing and is stopped
        # there (AmqpConnection.connect_transport). Only while reconnecting: the engine of an
        # open connection is left to the close, which sends the AMQP close on it.
        conn = self.connection
        reconnecting = thread is not None and thread.is_alive() and conn.interrupted
        if reconnecting and conn.engine is not None:
            conn.engine.stop()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)

    # ---- the reconnect thread ---------------------------------------------------------------

    def _reconnect(self, error: JMSException, old_engine: Any) -> None:
        try:
            self._reconnect_until_restored(old_engine)
        except _Cancelled:
            return
        except JMSException as exc:
            final = exc
            if _retryable(exc):
                final = JMSException(
                    f"failover gave up reconnecting to {self._pool_display()} after "
                    f"{self._attempts} attempt(s) (failover.maxReconnectAttempts="
                    f"{self.options.max_reconnect_attempts}): {exc.reason}",
                    linked=exc,
                )
            self._give_up(final)
        except BaseException as exc:  # noqa: BLE001 - a reconnect thread never dies silently
            log.exception("failover thread failed")
            self._give_up(JMSException(f"failover failed: {exc!r}", linked=exc))

    def _give_up(self, final: JMSException) -> None:
        conn = self.connection
        try:
            conn.fail_permanently(final)
        except BaseException:  # noqa: BLE001 - still tell the application below
            log.exception("failing the connection for good raised")
        conn.notify("failure", final)

    def _reconnect_until_restored(self, old_engine: Any) -> None:
        conn = self.connection
        lost = conn.endpoint.display()
        began = time.monotonic()
        # The old engine thread is on its way out (stop was requested); wait for it so that
        # nothing of the old transport runs while the new one is set up.
        old_engine.join(conn.timeout_s("close_timeout"))
        if self.options.attempt_limit(False) == 0:
            # failover.maxReconnectAttempts=0 allows no attempt after a drop: Qpid JMS checks
            # the limit before reconnecting and fails the connection at once, without telling
            # listeners of an interruption it will not recover from.
            self._attempts = 0
            raise JMSException(f"connection to {lost} was lost")
        conn.notify("interrupted", lost)
        self._sleep(reconnect_delay_ms(self.options, 1, first_connect=False) / 1000.0)
        self._run_attempts(first=False)
        if self._cancelled.is_set():
            return
        log.info(
            "connection restored to %s after %.3f s (was %s)",
            conn.endpoint.display(),
            time.monotonic() - began,
            lost,
        )
        conn.notify("restored", conn.endpoint.display())

    def _run_attempts(self, first: bool) -> None:
        options = self.options
        limit = options.attempt_limit(first)
        conditions: list[Any] = []
        if limit >= 0:
            conditions.append(stop_after_attempt(max(1, limit)))
        elif first:
            # No startup limit: the first connect is still bounded, by jms.connectTimeout.
            # stop_before_delay: no back-off sleep (and attempt after it) that would end past
            # the deadline; stop_after_delay looked only before each sleep, so a refusing
            # server pool could take well over jms.connectTimeout (5.1 s against 3).
            conditions.append(stop_before_delay(self.connection.timeout_s("connect_timeout")))
        self._attempts = 0
        self._refused_recoveries = 0
        # The first connect without a startup limit ends at jms.connectTimeout as a whole:
        # each server gets what is left of it, not a full jms.connectTimeout each.
        self._deadline = None
        if first and limit < 0:
            self._deadline = time.monotonic() + self.connection.timeout_s("connect_timeout")
        retrying = Retrying(
            stop=stop_any(*conditions) if conditions else stop_never,
            wait=lambda state: (
                reconnect_delay_ms(options, state.attempt_number + 1, first) / 1000.0
            ),
            retry=retry_if_exception(_retryable),
            sleep=self._sleep,
            before_sleep=self._before_sleep,
            reraise=True,
        )
        retrying(self._attempt if first else self._attempt_and_restore, first)

    def _before_sleep(self, state: RetryCallState) -> None:
        warn_every = self.options.warn_after_reconnect_attempts
        number = state.attempt_number
        error = state.outcome.exception() if state.outcome is not None else None
        reason = error.reason if isinstance(error, JMSException) else repr(error)
        if warn_every > 0 and number % warn_every == 0:
            log.warning(
                "failed to connect to %s after %d attempt(s), still trying: %s",
                self._pool_display(),
                number,
                reason,
            )
        else:
            log.debug("connect attempt %d failed: %s", number, reason)

    def _sleep(self, seconds: float) -> None:
        if self._cancelled.wait(max(0.0, seconds)) or self.connection._closing:
            raise _Cancelled()

    def _attempt_and_restore(self, first: bool) -> None:
        """A reconnect attempt counts until the connection is OPEN again: a transport lost
        while restoring is one more failed attempt (failover.maxReconnectAttempts bounds them
        all, as Qpid JMS counts until its connection is re-established), never a fresh count."""
        self._attempt(first)
        conn = self.connection
        if self._cancelled.is_set() or conn._closing:
            raise _Cancelled()
        if conn.restored():
            return
        # The new transport was lost before the connection was OPEN again: its _fail left the
        # reconnect to us. Reconnect once its engine is done, as after any loss.
        log.warning("connection to %s lost again while restoring", conn.endpoint.display())
        conn.engine.join(conn.timeout_s("close_timeout"))
        raise JMSException(f"connection to {conn.endpoint.display()} lost again while restoring")

    def _attempt(self, first: bool) -> None:
        """One attempt: every server of the pool, back to back (after a drop, the next server
        first, as Qpid JMS rotates its pool)."""
        self._attempts += 1
        conn = self.connection
        count = len(self._pool)
        start = self._current if first else (self._current + 1) % count
        last: JMSException | None = None
        for step in range(count):
            if self._cancelled.is_set() or conn._closing:
                raise _Cancelled()
            index = (start + step) % count
            endpoint, options = self._pool[index]
            within_s = None
            if self._deadline is not None:
                within_s = self._deadline - time.monotonic()
                if within_s <= 0.0 and last is not None:
                    raise last
            try:
                conn.connect_transport(endpoint, options, within_s)
            except JMSSecurityException:
                raise
            except JMSException as exc:
                last = exc
                continue
            if self._cancelled.is_set() or conn._closing:
                conn.engine.stop()
                raise _Cancelled()
            if not first:
                try:
                    refused = recover(conn, conn.timeout_s("request_timeout"))
                except JMSException as exc:
                    last = exc
                    self._drop_transport(exc)
                    continue
                retried = self._refusals_to_retry(refused)
                for link, why in refused:
                    if link not in retried:
                        self._fail_link(link, why)
                if retried:
                    last = self._reconnect_after_refusals(endpoint, retried, refused)
                    continue
            self._current = index
            self._pool, self._current = merge_server_list(
                self._pool,
                index,
                conn.remote_properties.get("failover-server-list"),
                self.options.amqp_open_server_list_action,
            )
            return
        assert last is not None
        raise last

    def _refusals_to_retry(self, refused: list[tuple[_LinkBase, BaseException]]) -> set[_LinkBase]:
        """The refused links worth another reconnect (Qpid JMS reconnects on any failure of
        its recovery): those the application already had, refused for a reason other than
        security, while neither failover.maxRecoveryRefusals nor the attempt limit is spent.
        The others are failed at once (a create in flight gets the broker's answer)."""
        if not refused:
            return set()
        bound = self.options.max_recovery_refusals
        if bound >= 0 and self._refused_recoveries >= bound:
            return set()
        limit = self.options.attempt_limit(False)
        if limit >= 0 and self._attempts >= limit:
            return set()  # the last attempt: restore what the peer allows
        return {
            link
            for link, why in refused
            if link.ever_attached and not isinstance(why, JMSSecurityException)
        }

    def _reconnect_after_refusals(
        self,
        endpoint: Endpoint,
        retried: set[_LinkBase],
        refused: list[tuple[_LinkBase, BaseException]],
    ) -> JMSException:
        """The server took the connection but refused links the application has (a broker
        node back before its durable queues are): drop this transport and reconnect, as a
        failed attempt, with those links back in their sessions to be re-created again."""
        self._refused_recoveries += 1
        first = next(why for link, why in refused if link in retried)
        reason = first.reason if isinstance(first, JMSException) else repr(first)
        bound = self.options.max_recovery_refusals
        error = JMSException(
            f"{endpoint.display()} refused re-creating {len(retried)} consumer or producer "
            f"link(s) after reconnecting ({reason}); reconnecting again (refused recovery "
            f"{self._refused_recoveries} of at most "
            f"{'unbounded' if bound < 0 else bound}, failover.maxRecoveryRefusals)"
        )
        log.warning("%s", error.reason)

        def back_into_sessions() -> None:
            for link in retried:
                if not link.closed and link.failure is None:
                    link.session._links.add(link)

        self._drop_transport(error, before=back_into_sessions)
        return error

    def _drop_transport(
        self, error: JMSException, before: Callable[[], None] | None = None
    ) -> None:
        """A recovery that failed on a live transport: declare it lost and close it.

        ``before`` runs first, on its engine thread while it runs (the engine drops work still
        queued when it stops), else here once that thread is done."""
        conn = self.connection
        engine = conn.engine
        ran = threading.Event()

        def fail() -> None:
            try:
                if before is not None:
                    before()
                    ran.set()
            finally:
                conn._fail(error)

        try:
            engine.submit(TransportBound(fail))
        except Exception:  # the engine is already gone: nothing to declare
            pass
        else:
            # Until it ran, or the engine stopped (the transport lost meanwhile) or hangs.
            deadline = time.monotonic() + conn.timeout_s("close_timeout")
            while before is not None and not ran.wait(0.05):
                if not engine.running or time.monotonic() >= deadline:
                    break
        engine.stop()
        engine.join(conn.timeout_s("close_timeout"))
        if before is not None and not ran.is_set():
            before()

    def _fail_link(self, link: Any, why: BaseException) -> None:
        error = (
            why
            if isinstance(why, JMSException)
            else JMSException(f"re-creating the link to {link.spec.address!r} failed: {why!r}")
        )
        log.warning("link %r could not be re-created after reconnecting: %s", link.spec.name, why)
        try:
            self.connection.engine.submit(lambda: link._end_for_good(error))
        except Exception:
            link._end_for_good(error)

    def _pool_display(self) -> str:
        return ", ".join(endpoint.display() for endpoint, _ in self._pool)
