"""Pieces shared by every broker provisioner: errors, cache location, locks, ports."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import random
import socket
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

__all__ = [
    "Broker",
    "BrokerProvisioningError",
    "cache_dir",
    "file_lock",
    "free_port",
    "port_accepts",
    "port_below_ephemeral_range",
]


class BrokerProvisioningError(RuntimeError):
    """A broker could not be fetched, created, started or stopped.

    The message is meant to be shown to a person as is, so it names the cause and, where
    there is one, the fix.
    """


@runtime_checkable
class Broker(Protocol):
    """What the tests and the conformance runner need from any provisioned broker."""

    @property
    def kind(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def url(self) -> str: ...

    @property
    def username(self) -> str: ...

    @property
    def password(self) -> str: ...

    def stop(self, timeout: float = 30.0) -> None: ...


class Endpoint:
    """Where a broker listens and the credentials it wants; ``with`` starts and stops it.

    The broker classes set ``_host``, ``_port``, ``_username`` and ``_password``.
    """

    _host: str
    _port: int
    _username: str
    _password: str

    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        return f"amqp://{self._host}:{self._port}"

    @property
    def username(self) -> str:
        return self._username

    @property
    def password(self) -> str:
        return self._password

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self, timeout: float = 30.0) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where downloaded distributions and the CLI's state live.

    ``$JMSPY_CACHE_DIR`` wins so CI can point the cache at a directory it saves between runs;
    otherwise the XDG base directory rules apply.
    """
    env = os.environ if env is None else env
    explicit = env.get("JMSPY_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = env.get("XDG_CACHE_HOME", "").strip()
    # XDG says relative values are invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "jmspy"
    home = env.get("HOME", "").strip()
    base = Path(home) if home else Path.home()
    return base / ".cache" / "jmspy"


@contextlib.contextmanager
def file_lock(path: Path, timeout: float = 900.0, what: str = "the jmspy cache") -> Iterator[None]:
    """Hold an exclusive ``fcntl`` lock on ``path`` (created if needed).

    Parallel test workers and CI steps share one cache, and two of them downloading and
    unpacking the same archive at once would corrupt it. The timeout is generous because
    the holder may be in the middle of a large download.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise BrokerProvisioningError(
                        f"timed out after {timeout:.0f}s waiting for the lock on {what} ({path}); "
                        "another process is probably still downloading"
                    ) from exc
                time.sleep(0.2)
        yield
    finally:
        # Closing the descriptor releases the lock as well.
        os.close(fd)


def free_port(host: str = "127.0.0.1") -> int:
    """Ask the kernel for a currently unused TCP port on ``host``.

    The port is released before the broker binds it, so another process could take it in
    between; callers that choose ports this way retry on a bind failure.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def port_accepts(host: str, port: int, timeout: float = 0.5) -> bool:
    """True when a TCP connection to ``host:port`` succeeds right now."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def port_below_ephemeral_range(host: str = "127.0.0.1") -> int:
    """A free local port below the kernel's range for outgoing connections.

    For a broker that is crashed and restarted: while it is down, clients reconnect to its
    port in a loop, each attempt from a source port of the ephemeral range; one that equals
    the broker's port connects to itself (TCP simultaneous open) and holds the port, so the
    restart cannot bind it. free_port() picks from that very range.
    """
    low = 32768
    with contextlib.suppress(OSError, ValueError, IndexError):
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    if low - 10000 < 1024:
        return free_port(host)
    for _ in range(100):
        port = random.randrange(low - 10000, low)
        with socket.socket() as probe:
            try:
                probe.bind((host, port))
            except OSError:
                continue
        return port
    return free_port(host)
