"""ActiveMQ Classic fetched from Maven Central and run as a local process.

The binary distribution ``org.apache.activemq:apache-activemq:<version>:tar.gz:bin`` is
resolved with ``mvn`` when it is installed, else over HTTPS with a checksum check (the same
fetch rules as Artemis: ``$JMSPY_FETCH_METHOD``, ``$JMSPY_MAVEN_REPO``), unpacked once into
``<cache>/activemq``. Every broker gets a directory of its own with ``conf/`` (the
distribution's files plus a generated ``activemq.xml``), ``data/`` (KahaDB, logs) and
``tmp/``, and runs the JVM directly (``java -jar bin/activemq.jar start``), so the process
group leader is the broker itself and ``kill()`` / ``restart()`` behave as for Artemis.

The generated configuration (5.18.3 accepts all of it; measured):

* ``schedulerSupport="true"``: ``x-opt-delivery-time`` is honoured only with the scheduler;
* ``simpleAuthenticationPlugin`` with anonymous access off and one user (admin/admin by
  default) in the groups ``admins,users``;
* a single transport connector, AMQP on ``127.0.0.1:PORT`` with ``transport.transformer=jms``
  (the JMS mapping Qpid JMS expects); no OpenWire, STOMP, MQTT, WS, no Jetty web console, no
  JMX connector;
* ``prioritizedMessages="true"`` on every queue (broker-side priority ordering is off by
  default) and ``useCache="false"`` so the ordering also holds for a backlog that was
  written to the store before the consumer came;
* dead letters: the shared strategy (``ActiveMQ.DLQ``) also for non-persistent messages;
  expired messages are discarded rather than dead-lettered (``processExpired="false"``), so
  the DLQ only holds messages a client rejected.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Unpack
from xml.sax.saxutils import quoteattr

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
from .artemis import MAVEN_CENTRAL, require_java
from .base import BrokerProvisioningError, cache_dir, file_lock, port_accepts

__all__ = [
    "DEFAULT_VERSION",
    "DEAD_LETTER_QUEUE",
    "ActiveMQBroker",
    "ActiveMQDistribution",
    "activemq_xml",
    "ensure_activemq",
]

#: The release that resolves from Maven Central here (6.x is not published as tar.gz:bin).
DEFAULT_VERSION = "5.18.3"
GROUP_ID = "org.apache.activemq"
ARTIFACT_ID = "apache-activemq"

#: Where the shared dead-letter strategy puts what a client settled ``rejected``.
DEAD_LETTER_QUEUE = "ActiveMQ.DLQ"

#: Log lines of a broker that is up (5.18: "Apache ActiveMQ 5.18.3 (localhost, ID:...) started").
_STARTED = re.compile(r"Apache ActiveMQ [\d.]+ \([^)]*\) started")
_CONNECTOR = "Connector amqp started"

# Options the launch script passes to Java 9+; without them the broker logs reflective-access
# failures (JMX, the scheduler's store).
_JAVA_OPENS = (
    "--add-reads=java.xml=java.logging",
    "--add-opens=java.base/java.security=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.naming/javax.naming.spi=ALL-UNNAMED",
    "--add-opens=java.rmi/sun.rmi.transport.tcp=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
)


@dataclasses.dataclass(frozen=True)
class ActiveMQDistribution:
    """An unpacked ActiveMQ Classic release in the cache."""

    version: str
    home: Path

    @property
    def launcher(self) -> Path:
        return self.home / "bin" / "activemq.jar"


def archive_name(version: str) -> str:
    return maven_archive.archive_name(ARTIFACT_ID, version)


def archive_url(version: str, repo: str = MAVEN_CENTRAL) -> str:
    return maven_archive.archive_url(GROUP_ID, ARTIFACT_ID, version, repo)


def _fetch(version: str, dest: Path, env: Mapping[str, str]) -> Path:
    """mvn when installed (it honours settings.xml mirrors), HTTPS otherwise or when it fails."""
    return maven_archive.fetch_bin_archive(GROUP_ID, ARTIFACT_ID, version, dest, env)


def _extract(archive: Path, into: Path, version: str) -> Path:
    """Unpack into ``into/apache-activemq-<version>``, refusing members outside it."""
    top = f"{ARTIFACT_ID}-{version}"
    staging = Path(tempfile.mkdtemp(prefix=f".{top}-", dir=into))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar.getmembers():
                parts = PurePosixPath(member.name).parts
                if not parts or parts[0] != top or ".." in parts or member.name.startswith("/"):
                    raise BrokerProvisioningError(f"refusing archive member {member.name}")
            tar.extractall(staging, filter="data")
        unpacked = staging / top
        if not (unpacked / "bin" / "activemq.jar").is_file():
            raise BrokerProvisioningError(f"{archive} does not contain {top}/bin/activemq.jar")
        final = into / top
        if final.exists():
            shutil.rmtree(final)
        unpacked.rename(final)
        return final
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BrokerProvisioningError(f"could not unpack {archive}: {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def ensure_activemq(
    version: str | None = None,
    *,
    root: Path | None = None,
    log: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> ActiveMQDistribution:
    """Return an unpacked ActiveMQ Classic, downloading it on first use.

    ``$JMSPY_ACTIVEMQ_VERSION`` pins another release than :data:`DEFAULT_VERSION`.
    """
    env = os.environ if env is None else env
    version = version or env.get("JMSPY_ACTIVEMQ_VERSION", "").strip() or DEFAULT_VERSION
    base = (root or cache_dir(env)) / "activemq"
    say = log or (lambda _msg: None)
    with file_lock(base / ".lock", what="the ActiveMQ download cache"):
        home = base / f"{ARTIFACT_ID}-{version}"
        if (home / "bin" / "activemq.jar").is_file():
            return ActiveMQDistribution(version, home)
        say(f"fetching ActiveMQ Classic {version} from Maven Central ...")
        started = time.monotonic()
        archive = _fetch(version, base / "downloads", env)
        say(f"fetched ActiveMQ {version} in {time.monotonic() - started:.1f}s")
        home = _extract(archive, base, version)
        archive.unlink(missing_ok=True)
        return ActiveMQDistribution(version, home)


def activemq_xml(*, host: str, port: int, username: str, password: str) -> str:
    """The broker configuration every provisioned ActiveMQ runs with (see the module doc)."""
    uri = (
        f"amqp://{host}:{port}?transport.transformer=jms&maximumConnections=1000"
        "&wireFormat.maxFrameSize=104857600"
    )
    dead_letters = (
        "<deadLetterStrategy>"
        '<sharedDeadLetterStrategy processNonPersistent="true" processExpired="false"/>'
        "</deadLetterStrategy>"
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- written by jmspy.conformance.brokers.activemq -->
<beans xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans
  http://www.springframework.org/schema/beans/spring-beans.xsd
  http://activemq.apache.org/schema/core
  http://activemq.apache.org/schema/core/activemq-core.xsd">
  <!-- without it ${{activemq.data}} is taken literally as a directory name -->
  <bean class="org.springframework.beans.factory.config.PropertyPlaceholderConfigurer">
    <property name="locations">
      <value>file:${{activemq.conf}}/credentials.properties</value>
    </property>
  </bean>
  <broker xmlns="http://activemq.apache.org/schema/core" brokerName="localhost"
          dataDirectory="${{activemq.data}}" schedulerSupport="true" useJmx="false">
    <destinationPolicy>
      <policyMap>
        <policyEntries>
          <policyEntry queue="&gt;" prioritizedMessages="true" useCache="false">
            {dead_letters}
          </policyEntry>
          <policyEntry topic="&gt;">{dead_letters}</policyEntry>
        </policyEntries>
      </policyMap>
    </destinationPolicy>
    <persistenceAdapter><kahaDB directory="${{activemq.data}}/kahadb"/></persistenceAdapter>
    <plugins>
      <simpleAuthenticationPlugin anonymousAccessAllowed="false">
        <users>
          <authenticationUser username={quoteattr(username)} password={quoteattr(password)}
                              groups="admins,users"/>
        </users>
      </simpleAuthenticationPlugin>
    </plugins>
    <transportConnectors>
      <transportConnector name="amqp" uri={quoteattr(uri)}/>
    </transportConnectors>
  </broker>
</beans>
"""


class ActiveMQBroker(LocalBroker[ActiveMQDistribution]):
    """One local ActiveMQ Classic with a single AMQP connector.

    >>> with ActiveMQBroker() as broker:          # fetches, configures and starts
    ...     connect(broker.url, broker.username, broker.password)

    stop() sends SIGTERM to the JVM, which runs the broker's shutdown hook.
    """

    kind = "activemq"

    def __init__(
        self,
        *,
        instance_dir: str | os.PathLike[str] | None = None,
        java_memory: str = "512M",
        version: str | None = None,
        cache_root: str | os.PathLike[str] | None = None,
        distribution: ActiveMQDistribution | None = None,
        keep_instance: bool = False,
        **common: Unpack[LocalBrokerOptions],
    ) -> None:
        super().__init__(
            directory=instance_dir, keep_dir=keep_instance, release=distribution, **common
        )
        self._java_memory = java_memory
        self._wanted_version = version
        self._cache_root = Path(cache_root) if cache_root else None
        self._java: Path | None = None

    @property
    def distribution(self) -> ActiveMQDistribution | None:
        return self._release

    @property
    def instance_dir(self) -> Path:
        return self._directory("instance", "start()")

    @property
    def log_path(self) -> Path:
        """The JVM's console output (the broker's log lines and any stack trace)."""
        return self.instance_dir / "data" / "console.log"

    @property
    def dead_letter_queue(self) -> str:
        return DEAD_LETTER_QUEUE

    def log_tail(self, lines: int = 40) -> str:
        try:
            return tail(self.log_path.read_text(errors="replace"), lines)
        except OSError:
            return "(no broker log)"

    # ------------------------------------------------------------------ internals

    def _find_release(self) -> ActiveMQDistribution:
        return ensure_activemq(self._wanted_version, root=self._cache_root, log=self._log)

    def _prepare(self) -> None:
        dist = self.fetch()
        self._java = require_java()
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="jmspy-activemq-"))
        conf = self._dir / "conf"
        if not conf.is_dir():
            shutil.copytree(dist.home / "conf", conf)
        for sub in ("data", "tmp"):
            (self._dir / sub).mkdir(parents=True, exist_ok=True)
        self._write_config()

    def _port_changed(self) -> None:
        self._write_config()

    def _write_config(self) -> None:
        xml = activemq_xml(
            host=self._host, port=self._port, username=self._username, password=self._password
        )
        (self.instance_dir / "conf" / "activemq.xml").write_text(xml)

    def _command(self) -> list[str]:
        dist = self.fetch()
        inst = self.instance_dir
        conf = inst / "conf"
        return [
            str(self._java or require_java()),
            f"-Xmx{self._java_memory}",
            "-Djava.util.logging.config.file=logging.properties",
            f"-Djava.security.auth.login.config={conf / 'login.config'}",
            *_JAVA_OPENS,
            f"-Dactivemq.classpath={conf}:{dist.home / 'lib'}/",
            f"-Dactivemq.home={dist.home}",
            f"-Dactivemq.base={inst}",
            f"-Dactivemq.conf={conf}",
            f"-Dactivemq.data={inst / 'data'}",
            f"-Djava.io.tmpdir={inst / 'tmp'}",
            "-jar",
            str(dist.launcher),
            "start",
            f"xbean:file:{conf / 'activemq.xml'}",
        ]

    def _launch_and_wait(self, timeout: float) -> str | None:
        log = LogWindow(self.log_path)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACTIVEMQ_")}
        proc = self._spawn(
            self._command(),
            log_path=self.log_path,
            cwd=self.instance_dir,
            env=env,
            program=self._java,
        )
        if isinstance(proc, str):
            return proc

        def assess(seen: str) -> Wait | str:
            if _STARTED.search(seen) and _CONNECTOR in seen:
                if port_accepts(self._host, self._port):
                    return Wait.READY
            exited = proc.poll() is not None
            bind_failed = "Address already in use" in seen or "BindException" in seen
            if not (exited or bind_failed):
                return Wait.PENDING
            time.sleep(0.2)
            if bind_failed and not self._fixed_port:
                return PORT_TAKEN
            why = f"exited with status {proc.returncode}" if exited else "could not bind"
            return self._failure(f"ActiveMQ {why}", log.text())

        def timed_out(seen: str) -> str:
            headline = f"ActiveMQ was not ready on {self.url} within {timeout:.0f}s"
            return self._failure(headline, seen)

        return self._await_ready(timeout, log, assess, timed_out)

    def _failure(self, headline: str, log_text: str) -> str:
        return failure_report(
            headline,
            log_text,
            is_key=lambda line: (
                "ERROR" in line or re.match(r"^(Caused by: )?[\w.$]+(Exception|Error): ", line)
            ),
            label="broker errors",
            where=f"instance {self._dir}, log {self.log_path}",
        )
