"""RabbitMQ 3.x from the distribution's ``rabbitmq-server`` package, run as a private node.

Debian bookworm ships RabbitMQ 3.10.8 with the ``rabbitmq_amqp1_0`` plugin. The system
service is never used: every :class:`RabbitMQBroker` is a node of its own, run as the
current user (root included) straight from the package's ``sbin/rabbitmq-server`` script
(not the ``/usr/sbin`` wrapper, which switches to the ``rabbitmq`` user and the system's
directories), with

* its own temporary directory for the database, logs, config and Erlang cookie (``HOME``);
* three free local ports: AMQP (0-9-1 *and* 1.0: the 3.x plugin detects the protocol from
  the header on the same listener), Erlang distribution, and a private ``epmd`` that this
  module starts first (``ERL_EPMD_PORT``) so neither the node nor ``rabbitmqctl`` touches
  a system epmd on 4369; epmd and the node share one process group, stopped together;
* the configuration in classic Erlang-term form (no cuttlefish run at boot) and everything
  else from a definitions file imported at boot: the user (``admin``/``admin`` by default,
  tagged administrator, all permissions on vhost ``/``), the dead-letter exchange
  ``jmspy.dlx`` (fanout) bound to the durable queue ``jmspy.dlq``, the policy
  ``jmspy-dead-letter`` that dead-letters every queue matching ``^jmspy\\.dl\\.`` to
  ``jmspy.dlx``, and any queues passed as ``queues=`` (with arguments, e.g.
  ``x-max-priority``, which a policy cannot set in 3.x). ``loopback_users`` is empty and
  the plugin's SASL ANONYMOUS user is disabled, so a connection needs the credentials.

Queues with arguments can also be added to a running node with :meth:`declare_queue`,
which imports a one-queue definitions document through ``rabbitmqctl`` (about a second per
call: the CLI boots an Erlang VM; a queue that already exists keeps its arguments, silently).
:meth:`set_policy`, :meth:`queue_depth`, :meth:`purge_queue` and :meth:`delete_queue` work
the same way.

RabbitMQ 3.10.8 over AMQP 1.0, as observed with python-qpid-proton 0.40 against such a node
(tests/broker/test_rabbitmq_provisioning.py re-checks the rows marked *):

=========================== ================================================================
Open frame *                container-id ``<node>@<host>``; properties ``product="RabbitMQ"``,
                            ``version="3.10.8"``, ``platform="Erlang/OTP 25.2.3"``,
                            ``cluster_name``, ``copyright``, ``information``; **no offered
                            capabilities at all** (no DELAYED_DELIVERY, ANONYMOUS-RELAY,
                            SHARED-SUBS); idle-time-out 60 s.
SASL *                      offers PLAIN and AMQPLAIN (ANONYMOUS only if the plugin's
                            ``default_user`` is set; off here). A wrong password fails at
                            SASL: ``amqp:unauthorized-access``, after a deliberate ~3 s delay.
Refusals                    A refused attach (and each unsupported feature below) ends the
                            whole **session** with an ``end`` frame carrying the error, not a
                            detach; every link of that session is gone, its unsettled
                            deliveries go back to their queues. The connection survives.
Link close                  a ``detach(closed=true)`` is answered with a detach *without*
                            ``closed``: proton raises LINK_REMOTE_DETACH, not
                            LINK_REMOTE_CLOSE (``BlockingLink.close()`` waits in vain).
``/queue/NAME`` *           send and consume; **declares** a classic queue NAME first, durable
                            only if the terminus is (proton's default: not durable). A queue
                            that exists with another durability or with any arguments
                            (``x-max-priority``...) makes that declare fail:
                            ``amqp:precondition-failed``, session ended.
``/amq/queue/NAME`` *       never declares. Consume: NAME must exist (``amqp:not-found``).
                            Send: default exchange, key NAME; no such queue means the message
                            is **accepted and dropped**. The form for jmspy.dlq (durable) and
                            for queues declared with arguments.
bare ``NAME`` *             same as ``/queue/NAME`` (declares, non-durable), send and consume.
``/exchange/X/KEY`` *       send: exchange X (must exist, else ``amqp:not-found``) with KEY;
                            unroutable messages are accepted and dropped. Consume: a new
                            server-named queue ``amq.gen-*`` bound to X with KEY. Without
                            /KEY neither ``subject`` nor ``to`` becomes the routing key.
``/topic/KEY`` *            = ``/exchange/amq.topic/KEY`` (each reaches the other's
                            subscribers); KEY is a topic pattern for consumers (``*``, ``#``).
                            The ``amq.gen-*`` subscription queue is neither exclusive nor
                            auto-delete and **stays behind** after detach and connection close.
Other addresses             ``/queue`` (send: accepted, dropped; consume: invalid-field),
                            ``/queue/``, ``/exchange/``, names with ``/``: invalid-field;
                            ``/temp-queue/...`` crashes the session.
Anonymous relay *           null target: ``amqp:invalid-field`` ("Attach rejected:
                            address_not_utf8_string"): one sender link per destination.
Dynamic nodes *             dynamic source or target: ``amqp:not-implemented`` (no temporary
                            queues that way).
``x-opt-delivery-time`` *   ignored: delivered at once, annotation passed through unchanged.
``header.priority`` *       plain queue: FIFO, value passed through. Queue declared with
                            ``x-max-priority`` (only possible via arguments, not a policy or an
                            AMQP 1.0 attach): highest first; an absent priority (proton omits
                            the default 4) ranks as **0**.
``header.ttl`` *            honoured: expired messages are not delivered; ttl passed through.
Round trip                  properties (message-id as uuid/ulong/string/binary, correlation-id,
                            subject, reply-to, content-type, user-id, group fields,
                            creation-time), application properties of every type, message
                            annotations (``x-opt-jms-*``), durable, and amqp-value (string,
                            binary, map), amqp-sequence and data bodies arrive unchanged; no
                            body section arrives as an empty data section; a 300 kB message is
                            fine. **Crash the session**: an amqp-value holding a *list*, and
                            any delivery-annotations (the send is never settled).
accepted                    removes the message.
rejected *                  dead-letters through the queue's dead-letter exchange (here:
                            ``jmspy.dl.*`` to ``jmspy.dlq``), else drops; the dead-lettered
                            copy shows no reason/x-death to an AMQP 1.0 consumer.
released *                  requeued at once; redelivered with ``first-acquirer=false`` and
                            ``delivery-count`` still 0.
modified *                  any modified (failed and/or undeliverable-here, annotations):
                            ``amqp:invalid-field`` "Unrecognised state", session ended, the
                            message requeued as after released.
delivery-count *            always 0; a redelivery shows only as ``first-acquirer=false``.
Drain *                     a flow with ``drain=true`` ends the session with
                            ``amqp:internal-error`` (function_clause in rabbit_classic_queue),
                            even on an empty queue: never drain, expire credit locally.
Settle modes *              rcv-settle-mode second: ``amqp:not-implemented``. Pre-settled sends
                            and at-most-once consumers (snd-settle-mode settled) work.
Selectors *                 the ``apache.org:selector-filter:string`` filter is echoed in the
                            attach's source but **not applied**: every message is delivered.
Browse                      distribution-mode copy is echoed, but deliveries are ordinary
                            unsettled ones and accepting them removes the messages.
Durable subscriptions       durable source and expiry-policy are echoed, but the queue is a
                            fresh ``amq.gen-*`` per attach: nothing sent while away survives;
                            re-attaching the link name after detach(closed=false) on the same
                            connection closes it ("link name already attached").
Transactions *              coordinator target: ``amqp:not-implemented``.
=========================== ================================================================
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import hashlib
import json
import os
import re
import secrets
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Unpack

from ._process import (
    PORT_TAKEN,
    LocalBroker,
    LocalBrokerOptions,
    LogWindow,
    Wait,
    failure_report,
    tail,
)
from .base import BrokerProvisioningError, free_port, port_accepts
from .rabbitmq_install import (
    PACKAGE,
    RABBITMQ_MISSING_MESSAGE,
    RabbitMQInstallation,
    ensure_installation,
    find_epmd,
    find_installation,
    install_with_apt,
    neutralize_system_service,
)

__all__ = [
    "DEAD_LETTER_EXCHANGE",
    "DEAD_LETTER_POLICY_PATTERN",
    "DEAD_LETTER_QUEUE",
    "RABBITMQ_MISSING_MESSAGE",
    "PACKAGE",
    "QueueSpec",
    "RabbitMQBroker",
    "RabbitMQInstallation",
    "ensure_installation",
    "find_epmd",
    "find_installation",
    "install_with_apt",
    "neutralize_system_service",
]

#: Provisioned on every node: a fanout exchange, the queue bound to it, and the policy
#: that makes queues named ``jmspy.dl.*`` dead-letter into it.
DEAD_LETTER_EXCHANGE = "jmspy.dlx"
DEAD_LETTER_QUEUE = "jmspy.dlq"
DEAD_LETTER_POLICY = "jmspy-dead-letter"
DEAD_LETTER_POLICY_PATTERN = r"^jmspy\.dl\."

#: Variables the start scripts read that would point our node elsewhere. Everything named
#: RABBITMQ_* is dropped as well before ours are set.
_SCRUBBED_ENV = ("CONF_ENV_FILE", "ERL_FLAGS", "ERL_AFLAGS", "ERL_ZFLAGS", "ERL_EPMD_ADDRESS")

_READY_LINE = "Server startup complete"
_EPMD_FAILED = 97

#: Run with ``sh -c``: start the private epmd in the background (in the node's process
#: group), wait until it answers, then become the node's start script. Without an epmd on
#: ``$ERL_EPMD_PORT`` the VM would start a daemonized one that outlives the node.
_LAUNCHER = """
epmd="$1"; port="$2"; server="$3"
"$epmd" -port "$port" -address 127.0.0.1 &
epmd_pid=$!
tries=0
until "$epmd" -port "$port" -names >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -gt 200 ] || ! kill -0 "$epmd_pid" 2>/dev/null; then
    echo "jmspy: the private epmd did not start on port $port" >&2
    exit 97
  fi
  sleep 0.05
done
exec "$server"
"""
_BOOT_LINE = "Starting RabbitMQ "
# Log lines of a node that could not bring durable state back after a crash (RabbitMQ 3.x).
_RECOVERY_TROUBLE = re.compile(
    r"unable to recover vhost|failed to initialise|restarting crashed|crashed and failed"
    r"|failed to start message store|\[error\]",
    re.I,
)
_BIND_FAILED = re.compile(
    r"eaddrinuse|address already in use|in use by another Erlang node|could not start listener",
    re.I,
)


# --------------------------------------------------------------------------- definitions


@dataclasses.dataclass(frozen=True)
class QueueSpec:
    """A classic queue to declare, e.g. ``QueueSpec("jmspy.prio.q", {"x-max-priority": 10})``."""

    name: str
    arguments: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    durable: bool = True

    def definition(self, vhost: str = "/") -> dict[str, Any]:
        return {
            "name": self.name,
            "vhost": vhost,
            "durable": self.durable,
            "auto_delete": False,
            "arguments": dict(self.arguments),
        }


def password_hash(password: str, salt: bytes | None = None) -> str:
    """The ``rabbit_password_hashing_sha256`` form definitions files carry."""
    salt = secrets.token_bytes(4) if salt is None else salt
    digest = hashlib.sha256(salt + password.encode("utf-8")).digest()
    return base64.b64encode(salt + digest).decode("ascii")


def boot_definitions(
    username: str, password: str, queues: Iterable[QueueSpec] = ()
) -> dict[str, Any]:
    """Everything the node is seeded with (a node importing definitions seeds nothing else)."""
    return {
        "users": [
            {
                "name": username,
                "password_hash": password_hash(password),
                "hashing_algorithm": "rabbit_password_hashing_sha256",
                "tags": ["administrator"],
            }
        ],
        "vhosts": [{"name": "/"}],
        "permissions": [
            {"user": username, "vhost": "/", "configure": ".*", "write": ".*", "read": ".*"}
        ],
        "exchanges": [
            {
                "name": DEAD_LETTER_EXCHANGE,
                "vhost": "/",
                "type": "fanout",
                "durable": True,
                "auto_delete": False,
                "internal": False,
                "arguments": {},
            }
        ],
        "queues": [q.definition() for q in (QueueSpec(DEAD_LETTER_QUEUE), *queues)],
        "bindings": [
            {
                "source": DEAD_LETTER_EXCHANGE,
                "vhost": "/",
                "destination": DEAD_LETTER_QUEUE,
                "destination_type": "queue",
                "routing_key": "",
                "arguments": {},
            }
        ],
        "policies": [
            {
                "vhost": "/",
                "name": DEAD_LETTER_POLICY,
                "pattern": DEAD_LETTER_POLICY_PATTERN,
                "apply-to": "queues",
                "definition": {"dead-letter-exchange": DEAD_LETTER_EXCHANGE},
                "priority": 0,
            }
        ],
    }


def _erl_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def node_config(definitions: Path) -> str:
    """The classic-format ``rabbitmq.config``: no cuttlefish schema run at boot."""
    return (
        "%% written by jmspy.conformance.brokers.rabbitmq\n"
        "[\n"
        " {rabbit, [\n"
        "   {loopback_users, []},\n"
        f"   {{load_definitions, {_erl_string(str(definitions))}}},\n"
        # A test machine with little free disk must not block publishers silently.
        "   {disk_free_limit, 1000000},\n"
        "   {collect_statistics_interval, 60000}\n"
        " ]},\n"
        # No SASL ANONYMOUS login as 'guest': every AMQP 1.0 connection authenticates.
        ' {rabbitmq_amqp1_0, [{default_user, none}, {default_vhost, <<"/">>}]}\n'
        "].\n"
    )


# --------------------------------------------------------------------------- the broker


class RabbitMQBroker(LocalBroker[RabbitMQInstallation]):
    """One private RabbitMQ node with the AMQP 1.0 plugin, on free local ports.

    >>> with RabbitMQBroker() as rabbit:
    ...     connect(rabbit.url, rabbit.username, rabbit.password)

    ``port=None`` picks a free port and retries with other ports if one is taken between the
    pick and the bind. ``queues`` are declared at boot (see :class:`QueueSpec`). AMQP 1.0
    and 0-9-1 clients share :attr:`port`.
    """

    kind = "rabbitmq"

    def __init__(
        self,
        *,
        base_dir: str | os.PathLike[str] | None = None,
        queues: Iterable[QueueSpec] = (),
        installation: RabbitMQInstallation | None = None,
        keep_dir: bool = False,
        **common: Unpack[LocalBrokerOptions],
    ) -> None:
        super().__init__(directory=base_dir, keep_dir=keep_dir, release=installation, **common)
        self._dist_port = 0
        self._epmd_port = 0
        self._queues = list(queues)

    # ------------------------------------------------------------------ properties

    @property
    def installation(self) -> RabbitMQInstallation | None:
        return self._release

    @property
    def node_name(self) -> str:
        return f"jmspy-{self._port}@localhost"

    @property
    def dist_port(self) -> int:
        return self._dist_port

    @property
    def epmd_port(self) -> int:
        return self._epmd_port

    @property
    def base_dir(self) -> Path:
        return self._directory("node", "start()")

    @property
    def log_path(self) -> Path:
        """The node's main log file."""
        return self.base_dir / "log" / "rabbit.log"

    @property
    def console_log_path(self) -> Path:
        """stdout and stderr of the start script (the banner, and crashes before logging)."""
        return self.base_dir / "log" / "console.log"

    # ------------------------------------------------------------------ management

    def rabbitmqctl(
        self, *args: str, timeout: float = 60.0, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run ``rabbitmqctl -n <node> <args>`` against this node (about 1 s per call)."""
        if not self.running:
            raise BrokerProvisioningError("rabbitmqctl needs a running node")
        ctl = self.fetch().ctl_script
        return self._run_tool(
            [str(ctl), "-n", self.node_name, *args],
            what=f"rabbitmqctl {' '.join(args)}",
            timeout=timeout,
            cwd=self.base_dir,
            check=check,
        )

    def import_definitions(self, definitions: Mapping[str, Any]) -> None:
        """Apply a definitions document (queues, exchanges, bindings, policies...) live."""
        handle, name = tempfile.mkstemp(prefix="defs-", suffix=".json", dir=self.base_dir)
        try:
            with os.fdopen(handle, "w") as out:
                json.dump(dict(definitions), out)
            self.rabbitmqctl("import_definitions", name)
        finally:
            Path(name).unlink(missing_ok=True)

    def declare_queue(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, durable: bool = True
    ) -> None:
        """Declare a classic queue with ``arguments`` (``x-max-priority``, ``x-message-ttl``,
        ``x-dead-letter-exchange``...), which AMQP 1.0 clients cannot pass in 3.x.

        Declaring an existing queue again with the same arguments is a no-op.
        """
        spec = QueueSpec(name, dict(arguments or {}), durable)
        self.import_definitions({"queues": [spec.definition()]})

    def set_policy(
        self,
        name: str,
        pattern: str,
        definition: Mapping[str, Any],
        *,
        apply_to: str = "queues",
        priority: int = 0,
    ) -> None:
        self.rabbitmqctl(
            "set_policy",
            "--apply-to",
            apply_to,
            "--priority",
            str(priority),
            name,
            pattern,
            json.dumps(dict(definition)),
        )

    def queue_states(self) -> dict[str, tuple[str, int | None]]:
        """Every listed queue's state (``running``, or ``flow`` while flow control holds its
        publishers back; ``down`` or ``stopped`` when its process is not running: a queue that
        crashed is not listed at all) and its messages ready plus unacknowledged (None when the
        node cannot count them: the queue's process is not running)."""
        done = self.rabbitmqctl(
            "list_queues", "--no-table-headers", "--quiet", "name", "state", "messages"
        )
        states: dict[str, tuple[str, int | None]] = {}
        for line in done.stdout.splitlines():
            parts = line.rsplit("\t", 2)
            if len(parts) == 3:
                name, state, messages = parts
                states[name] = (state, int(messages) if messages.strip().isdigit() else None)
        return states

    def recovery_trouble(self, limit: int = 5) -> list[str]:
        """The node log's lines on durable state it could not bring back (a vhost it could
        not recover, a queue that failed to start or crashed, a message store that failed):
        evidence for a queue that is not running after a crash. A crashed queue is left out
        of list_queues altogether, so the log is where that shows."""
        try:
            text = self.log_path.read_text(errors="replace")
        except (OSError, BrokerProvisioningError):
            return []
        since_boot = text.rsplit(_BOOT_LINE, 1)[-1]  # the log is appended to across restarts
        found = [line.strip() for line in since_boot.splitlines() if _RECOVERY_TROUBLE.search(line)]
        return found[:limit]

    def queue_state(self, name: str) -> str | None:
        """The state of queue ``name`` (see :meth:`queue_states`), ``flow`` given as
        ``running`` (its process runs); None when it is not listed."""
        found = self.queue_states().get(name)
        if found is None:
            return None
        return "running" if found[0] == "flow" else found[0]

    def queue_depth(self, name: str) -> int | None:
        """Messages ready plus unacknowledged in queue ``name``; None when it does not exist.

        Raises BrokerProvisioningError when the queue exists but its process is not running
        (the node cannot count its messages)."""
        found = self.queue_states().get(name)
        if found is None:
            return None
        state, messages = found
        if messages is None:
            raise BrokerProvisioningError(f"queue {name!r} is {state}: its messages are unknown")
        return messages

    def purge_queue(self, name: str) -> None:
        self.rabbitmqctl("purge_queue", name)

    def delete_queue(self, name: str) -> None:
        self.rabbitmqctl("delete_queue", name)

    def log_tail(self, lines: int = 40) -> str:
        texts = []
        for path in (self.console_log_path, self.log_path):
            with contextlib.suppress(OSError, BrokerProvisioningError):
                texts.append(f"--- {path.name}\n" + tail(path.read_text(errors="replace"), lines))
        return "\n".join(texts) or "(no node log)"

    # ------------------------------------------------------------------ internals

    def _find_release(self) -> RabbitMQInstallation:
        """Locate the installed release (never installs; see :func:`ensure_installation`)."""
        return ensure_installation(install=False)

    def _prepare(self) -> None:
        self.fetch()
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="jmspy-rabbitmq-"))

    def _dir_removed(self) -> None:
        self._dir = None

    def _terminate(self, pgid: int, proc: subprocess.Popen[bytes] | None, timeout: float) -> None:
        """The node first, then its epmd.

        SIGTERM makes the start script and the Erlang VM shut RabbitMQ down cleanly (the
        same as ``rabbitmqctl stop`` without booting a CLI VM); whatever is left of the
        process group after ``timeout`` is killed.
        """
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=timeout)
        super()._terminate(pgid, proc, timeout)

    def _child_env(self) -> dict[str, str]:
        base = self.base_dir
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("RABBITMQ_") and k not in _SCRUBBED_ENV
        }
        env.update(
            {
                # The Erlang cookie is created in and read from $HOME.
                "HOME": str(base / "home"),
                "ERL_EPMD_PORT": str(self._epmd_port),
                "RABBITMQ_NODENAME": self.node_name,
                "RABBITMQ_NODE_IP_ADDRESS": self._host,
                "RABBITMQ_NODE_PORT": str(self._port),
                "RABBITMQ_DIST_PORT": str(self._dist_port),
                "RABBITMQ_MNESIA_BASE": str(base / "mnesia"),
                "RABBITMQ_LOG_BASE": str(base / "log"),
                "RABBITMQ_LOGS": str(self.log_path),
                "RABBITMQ_PID_FILE": str(base / "rabbit.pid"),
                "RABBITMQ_CONFIG_FILE": str(base / "rabbitmq.config"),
                "RABBITMQ_ADVANCED_CONFIG_FILE": str(base / "advanced.config"),
                "RABBITMQ_ENABLED_PLUGINS_FILE": str(base / "enabled_plugins"),
                "RABBITMQ_CONF_ENV_FILE": str(base / "rabbitmq-env.conf"),
                # Distribution only on loopback, like the AMQP listener.
                "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": (
                    "-kernel inet_dist_use_interface {127,0,0,1}"
                ),
            }
        )
        return env

    def _write_files(self) -> None:
        base = self.base_dir
        for sub in ("home", "mnesia", "log"):
            (base / sub).mkdir(parents=True, exist_ok=True)
        definitions = base / "definitions.json"
        definitions.write_text(
            json.dumps(boot_definitions(self._username, self._password, self._queues), indent=2)
        )
        (base / "rabbitmq.config").write_text(node_config(definitions))
        (base / "enabled_plugins").write_text("[rabbitmq_amqp1_0].\n")
        (base / "rabbitmq-env.conf").write_text("# intentionally empty: see the environment\n")

    def _launch_and_wait(self, timeout: float) -> str | None:
        """Start epmd and the node; None when ready, else why not (PORT_TAKEN retries)."""
        self._write_files()
        self._dist_port = free_port(self._host)
        self._epmd_port = free_port(self._host)
        epmd = find_epmd()
        installation = self.fetch()
        log = LogWindow(self.log_path, self.console_log_path)
        proc = self._spawn(
            ["sh", "-c", _LAUNCHER, "jmspy-rabbitmq", str(epmd), str(self._epmd_port)]
            + [str(installation.server_script)],
            log_path=self.console_log_path,
            cwd=self.base_dir,
            env=self._child_env(),
            program=installation.server_script,
        )
        if isinstance(proc, str):
            return proc
        last_error = ""

        def assess(text: str) -> Wait | str:
            nonlocal last_error
            if _READY_LINE in text and port_accepts(self._host, self._port):
                last_error = self._try_amqp10()
                if not last_error:
                    return Wait.READY
            exited = proc.poll() is not None
            if exited and proc.returncode == _EPMD_FAILED:
                if self._fixed_port:
                    return f"could not start a private epmd on port {self._epmd_port}"
                return PORT_TAKEN
            if not (exited or _BIND_FAILED.search(text)):
                return Wait.PENDING
            # Give the logs a moment to receive the rest of the failure.
            time.sleep(0.3)
            text = log.text()
            if _BIND_FAILED.search(text) and not self._fixed_port:
                return PORT_TAKEN
            why = f"exited with status {proc.returncode}" if exited else "could not listen"
            return self._failure(f"RabbitMQ node {self.node_name} {why}", text)

        def timed_out(_seen: str) -> str:
            detail = f"; last AMQP 1.0 attempt: {last_error}" if last_error else ""
            return self._failure(
                f"RabbitMQ was not ready on {self.url} within {timeout:.0f}s{detail}",
                log.text(),  # read again: what the node wrote while it was stopped
            )

        return self._await_ready(timeout, log, assess, timed_out)

    def _try_amqp10(self) -> str:
        """'' when an authenticated AMQP 1.0 connection opens, else the error."""
        try:
            from proton.utils import BlockingConnection
        except ImportError as exc:  # pragma: no cover - proton is a hard dependency
            return f"python-qpid-proton is missing: {exc}"
        try:
            conn = BlockingConnection(
                self.url,
                user=self._username,
                password=self._password,
                allowed_mechs="PLAIN",
                timeout=10,
            )
        except Exception as exc:  # any failure means "not yet"
            return f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(Exception):
            conn.close()
        return ""

    def _failure(self, headline: str, log_text: str) -> str:
        return failure_report(
            headline,
            log_text,
            is_key=lambda line: "[error]" in line or "[critical]" in line or "BOOT FAILED" in line,
            label="node errors",
            where=f"directory {self.base_dir}, log {self.log_path}",
        )
