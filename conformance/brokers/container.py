"""Apache Artemis in a Docker container, for machines that have a Docker engine.

The local-process broker in :mod:`.artemis` is the default everywhere; this is the
alternative selected with ``pytest --broker=container``. Testcontainers is imported lazily
so the rest of the package works without it.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import urllib.parse
from collections.abc import Mapping
from typing import Any, Self

from .base import BrokerProvisioningError, Endpoint

__all__ = ["DEFAULT_IMAGE", "ArtemisContainerBroker", "docker_available"]

#: The image the Artemis project documents (``apache/artemis``, formerly
#: ``apache/activemq-artemis``); ``$JMSPY_ARTEMIS_IMAGE`` pins another tag.
DEFAULT_IMAGE = "apache/artemis:latest-alpine"
AMQP_PORT = 5672
_DEFAULT_SOCKET = "/var/run/docker.sock"


def docker_available(
    timeout: float = 1.5, env: Mapping[str, str] | None = None
) -> tuple[bool, str]:
    """Whether a Docker engine answers, as (ok, one-line reason), within about ``timeout``.

    Pings the engine's ``/_ping`` endpoint directly rather than through the Docker SDK,
    whose client construction alone can hang for much longer when nothing is listening.
    """
    env = os.environ if env is None else env
    host = env.get("DOCKER_HOST", "").strip() or f"unix://{_DEFAULT_SOCKET}"
    parsed = urllib.parse.urlparse(host)
    try:
        if parsed.scheme == "unix":
            path = parsed.path or _DEFAULT_SOCKET
            if not os.path.exists(path):
                origin = "from DOCKER_HOST" if env.get("DOCKER_HOST") else "the default socket"
                return False, f"no Docker engine: {path} ({origin}) does not exist"
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(path)
            where = path
        elif parsed.scheme in ("tcp", "http", "https"):
            if not parsed.hostname:
                return False, f"no Docker engine: cannot parse DOCKER_HOST={host}"
            port = parsed.port or (2376 if env.get("DOCKER_TLS_VERIFY") else 2375)
            sock = socket.create_connection((parsed.hostname, port), timeout=timeout)
            where = f"{parsed.hostname}:{port}"
            if env.get("DOCKER_TLS_VERIFY") or parsed.scheme == "https":
                # A TLS engine cannot be pinged without its client certificates; the open
                # port is the best cheap evidence there is.
                sock.close()
                return True, f"Docker engine port open at {where} (TLS, not pinged)"
        else:
            return True, f"DOCKER_HOST={host} (scheme {parsed.scheme!r} not checked)"
    except PermissionError:
        return False, f"cannot use the Docker engine at {host}: permission denied"
    except OSError as exc:
        return False, f"no Docker engine answering at {host}: {exc.strerror or exc}"
    with sock:
        try:
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            reply = sock.recv(256).decode("latin-1", errors="replace")
        except OSError as exc:
            return False, f"Docker engine at {where} did not answer /_ping: {exc}"
    status = reply.split("\r\n", 1)[0]
    if re.match(r"HTTP/\d(\.\d)? 200\b", status):
        return True, f"Docker engine at {where}"
    return False, f"Docker engine at {where} answered /_ping with {status or 'nothing'!r}"


class ArtemisContainerBroker(Endpoint):
    """Artemis from the official image, its AMQP acceptor (5672) mapped to a host port."""

    kind = "artemis"

    def __init__(
        self,
        image: str | None = None,
        *,
        username: str = "admin",
        password: str = "admin",
        startup_timeout: float = 120.0,
    ) -> None:
        self._image = image or os.environ.get("JMSPY_ARTEMIS_IMAGE", "").strip() or DEFAULT_IMAGE
        self._username = username
        self._password = password
        self._timeout = startup_timeout
        self._container: Any = None
        self._host = ""
        self._port = 0
        self._version = ""

    @property
    def image(self) -> str:
        return self._image

    @property
    def version(self) -> str:
        """Release reported in the broker log, or the image tag before start."""
        return self._version or self._image.rpartition(":")[2]

    def start(self) -> Self:
        ok, reason = docker_available()
        if not ok:
            raise BrokerProvisioningError(reason)
        try:
            from testcontainers.core.container import DockerContainer
        except ImportError as exc:
            raise BrokerProvisioningError(
                "the container broker needs testcontainers (pip install 'jmspy[dev]')"
            ) from exc
        container = (
            DockerContainer(self._image)
            .with_env("ARTEMIS_USER", self._username)
            .with_env("ARTEMIS_PASSWORD", self._password)
            .with_env("ANONYMOUS_LOGIN", "false")
            .with_exposed_ports(AMQP_PORT)
        )
        strategy = _log_wait_strategy("AMQ221007", self._timeout)
        if strategy is not None:
            container = container.waiting_for(strategy)
        try:
            container.start()
            if strategy is None:
                from testcontainers.core.waiting_utils import wait_for_logs

                wait_for_logs(container, "AMQ221007", timeout=self._timeout)
            self._container = container
            self._host = container.get_container_host_ip()
            self._port = int(container.get_exposed_port(AMQP_PORT))
            stdout, stderr = container.get_logs()
            text = (stdout + stderr).decode("utf-8", errors="replace")
            match = re.search(r"Message Broker version (\d+\.\d+\.\d+)", text)
            self._version = match.group(1) if match else ""
        except BrokerProvisioningError:
            raise
        except Exception as exc:
            # The start failure is the error worth reporting, not a failed cleanup.
            with contextlib.suppress(Exception):
                container.stop()
            raise BrokerProvisioningError(
                f"could not start container {self._image}: {exc}"
            ) from exc
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Remove the container; safe to call more than once."""
        container, self._container = self._container, None
        if container is not None:
            container.stop()


def _log_wait_strategy(message: str, timeout: float) -> Any:
    """The structured log wait of newer testcontainers releases, or None on older ones."""
    try:
        from testcontainers.core.wait_strategies import LogMessageWaitStrategy
    except ImportError:
        return None
    return LogMessageWaitStrategy(message).with_startup_timeout(int(timeout))
