"""Finding, installing and taming the distribution's RabbitMQ: the installed release, its
``epmd``, ``apt-get install`` without a running system service.

The private nodes themselves are :mod:`.rabbitmq`'s (which re-exports these names).
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ._process import tail
from .base import BrokerProvisioningError, port_accepts

__all__ = [
    "PACKAGE",
    "RABBITMQ_MISSING_MESSAGE",
    "RabbitMQInstallation",
    "ensure_installation",
    "find_epmd",
    "find_installation",
    "install_with_apt",
    "neutralize_system_service",
]

PACKAGE = "rabbitmq-server"
RABBITMQ_MISSING_MESSAGE = (
    "RabbitMQ is not installed: run 'apt-get install -y --no-install-recommends "
    "rabbitmq-server' as root (or scripts/setup.sh, or 'jmspy-broker fetch rabbitmq'), "
    "or point JMSPY_RABBITMQ_HOME at an unpacked rabbitmq_server-<version> directory"
)

#: Where Debian/Ubuntu (and the RabbitMQ team's own .deb) put the release.
_SEARCH_GLOBS = (
    "/usr/lib/rabbitmq/lib/rabbitmq_server-*",
    "/usr/local/lib/rabbitmq/lib/rabbitmq_server-*",
)


@dataclasses.dataclass(frozen=True)
class RabbitMQInstallation:
    """An installed RabbitMQ release: ``home`` holds ``sbin/``, ``plugins/``, ``escript/``."""

    version: str
    home: Path

    @property
    def server_script(self) -> Path:
        return self.home / "sbin" / "rabbitmq-server"

    @property
    def ctl_script(self) -> Path:
        return self.home / "sbin" / "rabbitmqctl"

    def has_plugin(self, name: str) -> bool:
        return any((self.home / "plugins").glob(f"{name}-*"))


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path.rsplit("-", 1)[-1]))


def _installation_at(home: Path) -> RabbitMQInstallation | None:
    match = re.fullmatch(r"rabbitmq_server-(\d[\w.+~-]*)", home.name)
    if not (home / "sbin" / "rabbitmq-server").is_file():
        return None
    version = match.group(1) if match else _app_version(home) or "unknown"
    return RabbitMQInstallation(version, home)


def _app_version(home: Path) -> str | None:
    for app in sorted((home / "plugins").glob("rabbit-*/ebin/rabbit.app")):
        found = re.search(r'\{vsn,\s*"([^"]+)"\}', app.read_text(errors="replace"))
        if found:
            return found.group(1)
    return None


def find_installation(env: Mapping[str, str] | None = None) -> RabbitMQInstallation:
    """The RabbitMQ release to run: ``$JMSPY_RABBITMQ_HOME``, else the newest packaged one."""
    env = os.environ if env is None else env
    explicit = env.get("JMSPY_RABBITMQ_HOME", "").strip()
    if explicit:
        found = _installation_at(Path(explicit).expanduser().resolve())
        if found is None:
            raise BrokerProvisioningError(
                f"JMSPY_RABBITMQ_HOME={explicit} has no sbin/rabbitmq-server; it must be a "
                "rabbitmq_server-<version> directory"
            )
        return found
    for pattern in _SEARCH_GLOBS:
        for candidate in sorted(glob.glob(pattern), key=_version_key, reverse=True):
            found = _installation_at(Path(candidate))
            if found is not None:
                return found
    raise BrokerProvisioningError(RABBITMQ_MISSING_MESSAGE)


def find_epmd(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    found = shutil.which("epmd", path=env.get("PATH", "") + os.pathsep + "/usr/lib/erlang/bin")
    if not found:
        raise BrokerProvisioningError(
            "epmd (part of Erlang) is not on PATH; install erlang-base, which the "
            "rabbitmq-server package depends on"
        )
    return Path(found)


def _system_service_running() -> bool:
    """True when something listens on the system node's AMQP or distribution port."""
    return any(port_accepts("127.0.0.1", port, timeout=0.3) for port in (5672, 25672))


def neutralize_system_service(log: Callable[[str], None] | None = None) -> list[str]:
    """Stop and disable the distribution's ``rabbitmq-server`` service; returns what was done.

    Called right after this module installed the package: jmspy never uses the system node,
    and one left running would hold port 5672 and an epmd on 4369.
    """
    say = log or (lambda _msg: None)
    done: list[str] = []

    def run(args: Sequence[str]) -> bool:
        if not shutil.which(args[0]):
            return False
        say("running: " + " ".join(args))
        result = subprocess.run(
            list(args), capture_output=True, text=True, timeout=120, check=False
        )
        if result.returncode == 0:
            done.append(" ".join(args))
        return result.returncode == 0

    # Stopping a service that is not running still boots rabbitmqctl (seconds, and an epmd).
    running = _system_service_running() or Path("/run/rabbitmq/pid").exists()
    if Path("/run/systemd/system").is_dir():
        if running:
            run(["systemctl", "stop", "rabbitmq-server.service"])
        run(["systemctl", "disable", "rabbitmq-server.service"])
    else:
        # Not invoke-rc.d: a policy-rc.d that denies actions makes it exit 0 doing nothing.
        if running and not run(["service", "rabbitmq-server", "stop"]):
            run(["/etc/init.d/rabbitmq-server", "stop"])
        run(["update-rc.d", "rabbitmq-server", "disable"])
    # The service's epmd outlives the node; stop it only when no Erlang node is left on it.
    epmd = shutil.which("epmd")
    if epmd and port_accepts("127.0.0.1", 4369, timeout=0.3):
        names = subprocess.run(
            [epmd, "-names"], capture_output=True, text=True, timeout=30, check=False
        )
        if names.returncode == 0 and "name " not in names.stdout:
            run([epmd, "-kill"])
    if _system_service_running():
        say("warning: a RabbitMQ node still listens on 5672/25672 (jmspy does not use it)")
    return done


def install_with_apt(log: Callable[[str], None] | None = None) -> RabbitMQInstallation:
    """``apt-get install rabbitmq-server`` (root only) without leaving the service running.

    A temporary ``policy-rc.d`` that denies service starts is put in place when the
    machine has none (container images usually have one), so the package's postinst does
    not start the system node; whatever it did start anyway is stopped and disabled.
    """
    say = log or (lambda _msg: None)
    if os.geteuid() != 0:
        raise BrokerProvisioningError(RABBITMQ_MISSING_MESSAGE + " (not root, so not installing)")
    apt = shutil.which("apt-get")
    if apt is None:
        raise BrokerProvisioningError(RABBITMQ_MISSING_MESSAGE + " (no apt-get on this machine)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    policy = Path("/usr/sbin/policy-rc.d")
    placed = False
    if not policy.exists():
        policy.write_text("#!/bin/sh\n# temporary, from jmspy: no service starts\nexit 101\n")
        policy.chmod(0o755)
        placed = True
    try:
        for args in (
            [apt, "update", "-q"],
            [apt, "install", "-y", "-q", "--no-install-recommends", PACKAGE],
        ):
            say("running: " + " ".join(args))
            result = subprocess.run(
                args, capture_output=True, text=True, timeout=900, check=False, env=env
            )
            if result.returncode != 0:
                raise BrokerProvisioningError(
                    f"{' '.join(args)} failed (exit {result.returncode}):\n"
                    + tail(result.stdout + result.stderr, 20)
                )
    finally:
        if placed:
            policy.unlink(missing_ok=True)
    neutralize_system_service(log)
    return find_installation()


def ensure_installation(
    *, install: bool = False, log: Callable[[str], None] | None = None
) -> RabbitMQInstallation:
    """The installed release; with ``install=True`` apt-get installs it when it is missing."""
    try:
        found = find_installation()
    except BrokerProvisioningError:
        if not install:
            raise
        found = install_with_apt(log)
    if not found.has_plugin("rabbitmq_amqp1_0"):
        raise BrokerProvisioningError(
            f"RabbitMQ {found.version} at {found.home} has no rabbitmq_amqp1_0 plugin"
        )
    find_epmd()
    return found
