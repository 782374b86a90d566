"""Host name lookups that a connect can give up on, one at a time per name.

``getaddrinfo`` can be neither interrupted nor given a time limit, so a name is resolved on a
short-lived thread of its own while the connecting thread waits in ``select`` (see
ConnectPreamble._resolve) and may give up at its deadline or at ``Engine.stop()``. A lookup
given up on still runs until the system resolver answers; a connect that asks for the same
name meanwhile joins it instead of starting another, so during a resolver outage failover's
reconnect attempts (every few milliseconds with a short delay) never pile up threads: one per
name at most, however many connections and attempts wait for it."""

from __future__ import annotations

import copy
import socket
import threading
from typing import Any

_LOCK = threading.Lock()
_IN_FLIGHT: dict[tuple[str, int], NameLookup] = {}


class NameLookup:
    """One ``getaddrinfo(host, port)`` in flight, shared by the connects waiting for it."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.done = threading.Event()
        self._result: list[tuple[Any, ...]] | BaseException | None = None
        # The wake-up sockets of the threads waiting (each waits in select on its pair).
        self._waking: set[socket.socket] = set()

    def result(self) -> list[tuple[Any, ...]]:
        """The addresses, once ``done``; raises the lookup's error (a socket.gaierror, as
        create_connection raised it), a copy per caller since several may raise it."""
        result = self._result
        if isinstance(result, BaseException):
            raise copy.copy(result)
        assert result is not None, "result() before the lookup is done"
        return list(result)

    def leave(self, wake: socket.socket) -> None:
        """A waiter gave up (its deadline, a stop) or got the result: stop waking it."""
        with _LOCK:
            self._waking.discard(wake)

    def _run(self) -> None:
        result: list[tuple[Any, ...]] | BaseException
        try:
            result = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting threads
            result = exc
        with _LOCK:
            if _IN_FLIGHT.get((self.host, self.port)) is self:
                del _IN_FLIGHT[(self.host, self.port)]
            self._result = result
            self.done.set()
            waking, self._waking = self._waking, set()
        for wake in waking:
            try:
                wake.send(b"\0")
            except OSError:
                pass  # that engine is gone (closed its wake-up socket), or already woken


def look_up(host: str, port: int, wake: socket.socket) -> NameLookup:
    """The lookup of ``host:port`` in flight, joined, or a new one started; ``wake`` gets a
    byte when it is done (call ``leave`` when no longer waiting)."""
    with _LOCK:
        lookup = _IN_FLIGHT.get((host, port))
        started = lookup is None
        if lookup is None:
            lookup = _IN_FLIGHT[(host, port)] = NameLookup(host, port)
        lookup._waking.add(wake)
    if started:
        threading.Thread(target=lookup._run, name=f"jmspy-resolve-{host}", daemon=True).start()
    return lookup
