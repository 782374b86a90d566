"""Apache Qpid Broker-J fetched from Maven Central and run as a local process.

The binary distribution ``org.apache.qpid:apache-qpid-broker-j:<version>:tar.gz:bin`` is
resolved with ``mvn`` when it is installed, else over HTTPS with a checksum check (the same
fetchers as Artemis), and unpacked once into ``<cache>/qpid-broker-j/``. Every broker gets a
fresh work directory (``QPID_WORK``) and an initial configuration written by
:func:`initial_config`:

* authentication provider ``plain`` (type Plain) with the user (``admin``/``admin`` by
  default) and a second user ``scram``/``scram`` for SCRAM tests; ``secureOnlyMechanisms``
  empty, so PLAIN is allowed over plain TCP (the built-in default allows it only over TLS and
  a PLAIN login then fails at SASL) unless ``plain_over_tcp=False``; SCRAM-SHA-256 and
  SCRAM-SHA-1 work either way;
* ``virtualhost.housekeepingCheckPeriod`` 250 ms (default 30 s): held (delayed) messages are
  released at that check, so with the default they come up to 30 s late;
* one AMQP port, AMQP 1.0 only, bound to 127.0.0.1 on a free port; the HTTP management port
  (REST API, basic authentication) on another free local port;
* virtual host ``default``: a DERBY store (the Memory store refuses persistent messages:
  "Non-durable message store cannot accept durable message"), a queue ``DLQ`` and a node
  auto-creation policy that creates any other name (not containing ``/`` and not under
  ``jmspy.noauto.``) as a durable queue on publish and on consume, with
  ``holdOnPublishEnabled`` (needed for delayed delivery), ``maximumDeliveryAttempts``
  (:data:`MAX_DELIVERY_ATTEMPTS` by default; 2 and 3 under ``jmspy.rd.limit2.`` and
  ``jmspy.rd.limit3.``, see jmspy.conformance.settings) and the alternate binding ``DLQ``.
  Topics use the ``amq.topic`` exchange (``amq.topic/<name>`` addresses; the adapter's topic
  prefix).

Readiness is the operational log lines ``BRK-1004`` (Qpid Broker Ready) and ``MST-1006``
(the message store's recovery complete) plus the AMQP port accepting. ``qpid-server``
``exec``s the JVM, so the process group is the broker's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Self, Unpack

from ..settings import NO_AUTO_CREATE_PREFIX, RD_LIMIT2_PREFIX, RD_LIMIT3_PREFIX
from . import artemis as _maven
from . import maven_archive
from ._process import (
    PORT_TAKEN,
    LocalBroker,
    LocalBrokerOptions,
    LogWindow,
    Wait,
    failure_report,
    tail,
)
from .base import BrokerProvisioningError, cache_dir, file_lock, free_port, port_accepts

__all__ = [
    "DEFAULT_VERSION",
    "DLQ",
    "MAX_DELIVERY_ATTEMPTS",
    "QpidBrokerJ",
    "QpidBrokerJDistribution",
    "ensure_distribution",
    "initial_config",
]

#: The release provisioned. 9.2.1 is the newest that resolves on Maven Central (10.0.x does
#: not publish the binary distribution there).
DEFAULT_VERSION = "9.2.1"
GROUP_ID = "org.apache.qpid"
ARTIFACT_ID = "apache-qpid-broker-j"
#: The queue dead letters go to (the alternate binding of every auto-created queue).
DLQ = "DLQ"
#: maximumDeliveryAttempts of auto-created queues: the jmspy qpid_broker_j profile's default
#: client attempt limit, so a message a listener always fails on ends in DLQ (see the README).
MAX_DELIVERY_ATTEMPTS = 5
#: The second user, for SCRAM tests (the Plain provider answers SCRAM for every user).
SCRAM_USER = ("scram", "scram")

#: virtualhost.housekeepingCheckPeriod of the provisioned broker (Broker-J's default: 30000).
HOUSEKEEPING_PERIOD_MS = 250

READY_ID = "BRK-1004"  # Qpid Broker Ready
#: The message store's recovery is complete. Broker-J recovers queue entries asynchronously and
#: may say "Ready" before that: a consumer attached after a restart then finds its queue empty
#: for a while (observed under load: a crash test read 0 of 200 persistent messages).
RECOVERED_ID = "MST-1006"
#: Environment the launch script reads that would override what is configured here.
_SCRUBBED_ENV = ("QPID_HOME", "QPID_OPTS", "QPID_JAVA_MEM", "QPID_JAVA_GC", "JAVA_OPTS")


# --------------------------------------------------------------------------- distribution


@dataclasses.dataclass(frozen=True)
class QpidBrokerJDistribution:
    """An unpacked Broker-J release in the cache."""

    version: str
    home: Path

    @property
    def server_script(self) -> Path:
        return self.home / "bin" / "qpid-server"


def _archive_name(version: str) -> str:
    return maven_archive.archive_name(ARTIFACT_ID, version)


def _fetch(version: str, dest: Path, env: Mapping[str, str] | None = None) -> Path:
    """Download the distribution into ``dest``: mvn when installed, else HTTPS with the
    published checksum (``$JMSPY_FETCH_METHOD`` forces one, ``$JMSPY_MAVEN_REPO`` another
    repository), as for Artemis."""
    env = os.environ if env is None else env
    return maven_archive.fetch_bin_archive(GROUP_ID, ARTIFACT_ID, version, dest, env)


def _extract(archive: Path, into: Path, version: str) -> Path:
    """Unpack ``qpid-broker/<version>/`` of the archive to ``into/qpid-broker-j-<version>``,
    refusing members outside it, links leaving it and special files; renamed in whole, so a
    crash never leaves a half-unpacked home."""
    top = ("qpid-broker", version)
    final = into / f"qpid-broker-j-{version}"
    staging = Path(tempfile.mkdtemp(prefix=".qpid-broker-j-", dir=into))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = tar.getmembers()
            for member in members:
                parts = PurePosixPath(member.name).parts
                if PurePosixPath(member.name).is_absolute() or ".." in parts:
                    raise BrokerProvisioningError(f"refusing archive member {member.name}")
                if member.issym() or member.islnk():
                    raise BrokerProvisioningError(f"refusing link {member.name} in {archive}")
                if not (member.isfile() or member.isdir()):
                    raise BrokerProvisioningError(f"refusing special file {member.name}")
            tar.extractall(staging, members=members, filter="data")
        unpacked = staging.joinpath(*top)
        script = unpacked / "bin" / "qpid-server"
        if not script.is_file():
            raise BrokerProvisioningError(f"{archive} has no {'/'.join(top)}/bin/qpid-server")
        for name in ("qpid-server", "qpid-run"):
            path = unpacked / "bin" / name
            if path.exists():
                path.chmod(path.stat().st_mode | 0o755)
        if final.exists():
            shutil.rmtree(final)
        unpacked.rename(final)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BrokerProvisioningError(f"could not unpack {archive}: {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def ensure_distribution(
    version: str | None = None,
    *,
    root: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> QpidBrokerJDistribution:
    """Return an unpacked Broker-J (``$JMSPY_QPID_BROKER_J_VERSION`` or
    :data:`DEFAULT_VERSION`), downloading it first when the cache does not have it."""
    version = version or os.environ.get("JMSPY_QPID_BROKER_J_VERSION", "").strip()
    version = version or DEFAULT_VERSION
    base = (root or cache_dir()) / "qpid-broker-j"
    say = log or (lambda _msg: None)
    with file_lock(base / ".lock", what="the Broker-J download cache"):
        home = base / f"qpid-broker-j-{version}"
        if (home / "bin" / "qpid-server").is_file():
            return QpidBrokerJDistribution(version, home)
        archive = base / "downloads" / _archive_name(version)
        if not archive.is_file():
            say(f"fetching Apache Qpid Broker-J {version} from Maven Central ...")
            started = time.monotonic()
            archive = _fetch(version, base / "downloads")
            say(f"fetched Broker-J {version} in {time.monotonic() - started:.1f}s")
        home = _extract(archive, base, version)
        archive.unlink(missing_ok=True)
        return QpidBrokerJDistribution(version, home)


# --------------------------------------------------------------------------- configuration


def initial_config(
    *,
    amqp_port: int,
    http_port: int,
    username: str,
    password: str,
    host: str = "127.0.0.1",
    plain_over_tcp: bool = True,
    max_delivery_attempts: int = MAX_DELIVERY_ATTEMPTS,
) -> dict[str, Any]:
    """The broker's initial configuration as a JSON document (model version 8.0, as the
    distribution's built-in one)."""
    queue_attributes = {
        "durable": True,
        # Delayed delivery (x-opt-delivery-time) is only honoured by queues holding on publish.
        "holdOnPublishEnabled": True,
        # Broker-J answers rejected and modified(delivery-failed) by redelivering; only this
        # limit moves a message to the alternate binding (0, the default, never does).
        "maximumDeliveryAttempts": max_delivery_attempts,
        "alternateBinding": {"destination": DLQ},
    }
    virtual_host = {
        "type": "DERBY",
        "nodeAutoCreationPolicies": [
            # The conformance suite's queues whose limit matches a client limit (rules RD-9,
            # RD-10); the first matching policy applies.
            *(
                {
                    "pattern": f"{re.escape(prefix)}[^/]+",
                    "createdOnPublish": True,
                    "createdOnConsume": True,
                    "nodeType": "Queue",
                    "attributes": {**queue_attributes, "maximumDeliveryAttempts": limit},
                }
                for prefix, limit in ((RD_LIMIT2_PREFIX, 2), (RD_LIMIT3_PREFIX, 3))
            ),
            {
                # Java regex, matched against the whole name: no '/' (exchange/key
                # addresses such as amq.topic/news) and not under jmspy.noauto.
                "pattern": f"(?!{re.escape(NO_AUTO_CREATE_PREFIX)})[^/]+",
                "createdOnPublish": True,
                "createdOnConsume": True,
                "nodeType": "Queue",
                "attributes": queue_attributes,
            },
        ],
        "queues": [{"name": DLQ, "durable": True}],
    }
    provider: dict[str, Any] = {
        "name": "plain",
        "type": "Plain",
        "users": [
            {"name": username, "type": "managed", "password": password},
            {"name": SCRAM_USER[0], "type": "managed", "password": SCRAM_USER[1]},
        ],
    }
    if plain_over_tcp:
        provider["secureOnlyMechanisms"] = []
    rules = [
        {"name": "Root", "type": "NameAndLevel", "level": "WARN", "loggerName": "ROOT"},
        {
            "name": "Qpid",
            "type": "NameAndLevel",
            "level": "INFO",
            "loggerName": "org.apache.qpid.*",
        },
        {
            "name": "Operational",
            "type": "NameAndLevel",
            "level": "INFO",
            "loggerName": "qpid.message.*",
        },
    ]
    return {
        "name": "jmspy",
        "modelVersion": "8.0",
        # Held (delayed) messages are released by the virtual host's housekeeping check, every
        # 30 s by default: a delayed message then comes up to 30 s late (8-30 s measured) and
        # one with a shorter time to live expires unseen. Broker-J's own delivery-delay tests
        # shorten the period the same way.
        "context": {"virtualhost.housekeepingCheckPeriod": str(HOUSEKEEPING_PERIOD_MS)},
        "authenticationproviders": [provider],
        "brokerloggers": [{"name": "console", "type": "Console", "brokerloginclusionrules": rules}],
        "ports": [
            {
                "name": "AMQP",
                "type": "AMQP",
                "port": amqp_port,
                "bindingAddress": host,
                "protocols": ["AMQP_1_0"],
                "authenticationProvider": "plain",
                "virtualhostaliases": [
                    {"name": "nameAlias", "type": "nameAlias"},
                    {"name": "defaultAlias", "type": "defaultAlias"},
                    {"name": "hostnameAlias", "type": "hostnameAlias"},
                ],
            },
            {
                "name": "HTTP",
                "type": "HTTP",
                "port": http_port,
                "bindingAddress": host,
                "protocols": ["HTTP"],
                "authenticationProvider": "plain",
            },
        ],
        "virtualhostnodes": [
            {
                "name": "default",
                "type": "JSON",
                "defaultVirtualHostNode": True,
                "virtualHostInitialConfiguration": json.dumps(virtual_host),
            }
        ],
        "plugins": [
            {
                "type": "MANAGEMENT-HTTP",
                "name": "httpManagement",
                "httpBasicAuthenticationEnabled": True,
            }
        ],
    }


# --------------------------------------------------------------------------- the broker


class QpidBrokerJ(LocalBroker[QpidBrokerJDistribution]):
    """One local Broker-J with an AMQP 1.0 port and an HTTP management port.

    >>> with QpidBrokerJ() as broker:            # fetches, configures and starts
    ...     connect(broker.url, broker.username, broker.password)

    ``plain_over_tcp=False`` keeps Broker-J's default of PLAIN over TLS only (SCRAM still
    works); ``max_delivery_attempts`` is the limit of auto-created queues (0: none).
    """

    kind = "qpid-broker-j"

    def __init__(
        self,
        *,
        work_dir: str | os.PathLike[str] | None = None,
        plain_over_tcp: bool = True,
        max_delivery_attempts: int = MAX_DELIVERY_ATTEMPTS,
        java_memory: str = "512m",
        version: str | None = None,
        cache_root: str | os.PathLike[str] | None = None,
        distribution: QpidBrokerJDistribution | None = None,
        keep_work_dir: bool = False,
        **common: Unpack[LocalBrokerOptions],
    ) -> None:
        super().__init__(directory=work_dir, keep_dir=keep_work_dir, release=distribution, **common)
        self._plain_over_tcp = plain_over_tcp
        self._max_attempts = max_delivery_attempts
        self._java_memory = java_memory
        self._version = version
        self._cache_root = Path(cache_root) if cache_root else None
        self._http_port = free_port(self._host)
        self._java: Path | None = None

    # ------------------------------------------------------------------ properties

    @property
    def distribution(self) -> QpidBrokerJDistribution | None:
        return self._release

    @property
    def work_dir(self) -> Path:
        return self._directory("work", "start()")

    @property
    def instance_dir(self) -> Path:
        """The work directory (``QPID_WORK``), named as for the other brokers."""
        return self.work_dir

    @property
    def log_path(self) -> Path:
        """The broker's console output (its operational log goes there too)."""
        return self.work_dir / "console.log"

    @property
    def management_url(self) -> str:
        """The HTTP management (REST) base URL; basic authentication with the user."""
        return f"http://{self._host}:{self._http_port}"

    @property
    def dead_letter_queue(self) -> str:
        return DLQ

    @property
    def max_delivery_attempts(self) -> int:
        return self._max_attempts

    def log_tail(self, lines: int = 40) -> str:
        try:
            return tail(self.log_path.read_text(errors="replace"), lines)
        except OSError:
            return "(no broker log)"

    def management(self, method: str, path: str, body: Any = None) -> Any:
        """Call the REST API (``/api/latest/...``); the decoded JSON answer, or None."""
        import base64
        import urllib.request

        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.management_url}/api/latest/{path.lstrip('/')}", data=data, method=method
        )
        token = base64.b64encode(f"{self._username}:{self._password}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode() or "null"
        return json.loads(text)

    def add_secure_only_port(self, username: str = "strict", password: str = "strict") -> str:
        """Open another AMQP port (at run time, through the REST API) whose authentication
        provider keeps Broker-J's default: PLAIN only over TLS, so over plain TCP the server
        offers CRAM-MD5, SCRAM-SHA-1 and SCRAM-SHA-256. Returns its URL; ``username`` /
        ``password`` is a user of that provider."""
        provider = f"strict-{free_port(self._host)}"
        self.management("POST", "authenticationprovider", {"name": provider, "type": "Plain"})
        self.management("POST", f"user/{provider}", {"name": username, "password": password})
        port = free_port(self._host)
        self.management(
            "POST",
            "port",
            {
                "name": provider.upper(),
                "type": "AMQP",
                "port": port,
                "bindingAddress": self._host,
                "protocols": ["AMQP_1_0"],
                "authenticationProvider": provider,
            },
        )
        return f"amqp://{self._host}:{port}"

    def create_queue(self, name: str, **attributes: Any) -> None:
        """Create a durable queue with Broker-J queue ``attributes`` (e.g.
        ``maximumDeliveryAttempts=0`` for a queue without a limit) through the REST API."""
        self.management("POST", "queue/default/default", {"name": name, **attributes})

    def queue_depth(self, name: str) -> int:
        """Messages on queue ``name`` of the default virtual host (REST statistics)."""
        data = self.management("GET", f"queue/default/default/{name}")
        stats = data.get("statistics", {}) if isinstance(data, dict) else {}
        return int(stats.get("queueDepthMessages", 0))

    def start(self, timeout: float = 180.0) -> Self:
        """As :meth:`LocalBroker.start`; the default wait is longer because Broker-J takes
        8-16 s to get ready on an idle 2-core machine and several times that under load."""
        return super().start(timeout)

    # ------------------------------------------------------------------ internals

    def _find_release(self) -> QpidBrokerJDistribution:
        return ensure_distribution(self._version, root=self._cache_root, log=self._log)

    def _prepare(self) -> None:
        self.fetch()
        self._java = _maven.require_java()
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="jmspy-qpid-broker-j-"))
        self._dir.mkdir(parents=True, exist_ok=True)
        self._write_config()

    def _write_config(self) -> None:
        config = initial_config(
            amqp_port=self._port,
            http_port=self._http_port,
            username=self._username,
            password=self._password,
            host=self._host,
            plain_over_tcp=self._plain_over_tcp,
            max_delivery_attempts=self._max_attempts,
        )
        (self.work_dir / "initial-config.json").write_text(json.dumps(config, indent=2) + "\n")

    def _port_changed(self) -> None:
        # The initial configuration is read only when the work directory has no stored
        # configuration yet: wipe what the failed attempt left, keep nothing else.
        for entry in self.work_dir.iterdir():
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            elif entry.name != "console.log":
                entry.unlink(missing_ok=True)
        self._http_port = free_port(self._host)
        self._write_config()

    def _child_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
        if self._java is not None:
            env["JAVA_HOME"] = str(self._java.resolve().parent.parent)
            env["PATH"] = f"{self._java.resolve().parent}{os.pathsep}{env.get('PATH', '')}"
        env["QPID_WORK"] = str(self.work_dir)
        env["QPID_JAVA_MEM"] = f"-Xmx{self._java_memory} -XX:MaxDirectMemorySize=512m"
        return env

    def _launch_and_wait(self, timeout: float) -> str | None:
        """Run ``qpid-server``; None when ready, else why not (PORT_TAKEN is retryable)."""
        log = LogWindow(self.log_path)
        dist = self.fetch()
        proc = self._spawn(
            [str(dist.server_script), "-icp", str(self.work_dir / "initial-config.json")],
            log_path=self.log_path,
            cwd=self.work_dir,
            env=self._child_env(),
            program=dist.server_script,
        )
        if isinstance(proc, str):
            return proc

        def assess(seen: str) -> Wait | str:
            ready = READY_ID in seen and RECOVERED_ID in seen
            if ready and port_accepts(self._host, self._port):
                return Wait.READY
            exited = proc.poll() is not None
            bind_failed = "Address already in use" in seen or "BindException" in seen
            if not (exited or bind_failed):
                return Wait.PENDING
            time.sleep(0.2)
            seen = log.text()
            if bind_failed and not self._fixed_port:
                return PORT_TAKEN
            why = f"exited with status {proc.returncode}" if exited else "could not bind a port"
            return self._failure(f"Broker-J {why}", seen)

        def timed_out(seen: str) -> str:
            why = f"Broker-J was not ready on {self.url} within {timeout:.0f}s"
            return self._failure(why, seen)

        return self._await_ready(timeout, log, assess, timed_out)

    def _failure(self, headline: str, log_text: str) -> str:
        return failure_report(
            headline,
            log_text,
            is_key=lambda line: (
                " ERROR " in line
                or "BRK-1016" in line  # fatal error
                or re.match(r"^(Caused by: )?[\w.$]+(Exception|Error): ", line)
            ),
            label="broker errors",
            where=f"work directory {self._dir}, log {self.log_path}",
        )
