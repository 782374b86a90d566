"""Apache Artemis fetched from Maven Central and run as a local process.

The broker for the broker tests and the conformance suite is a real Artemis: the binary
distribution is resolved from Maven Central (with ``mvn`` when it is installed, else over
HTTPS with a checksum check), unpacked once into the user's cache, and every broker gets a
fresh instance directory whose single acceptor speaks AMQP on a free local port.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, Unpack

from ._process import (
    PORT_TAKEN,
    LocalBroker,
    LocalBrokerOptions,
    LogWindow,
    Wait,
    failure_report,
    process_group_alive,
    stop_process_group,
    tail,
)
from .base import BrokerProvisioningError, cache_dir, file_lock, port_accepts

__all__ = [
    "DEFAULT_VERSIONS",
    "JAVA_MISSING_MESSAGE",
    "ArtemisBroker",
    "ArtemisDistribution",
    "ensure_distribution",
    "find_java",
    "process_group_alive",
    "require_java",
    "stop_process_group",
]

#: Candidate releases, newest first; the first one Maven Central serves is used and remembered.
#: 2.57.0 is announced but not yet on Central, so 2.56.0 is what resolves today.
DEFAULT_VERSIONS: tuple[str, ...] = ("2.57.0", "2.56.0")

#: From 2.50.0 on the distribution is published under the new group id.
GROUP_ID = "org.apache.artemis"
ARTIFACT_ID = "apache-artemis"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

JAVA_MISSING_MESSAGE = (
    "Java 17+ is required to run Apache Artemis; install a JDK "
    "(e.g. apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
)
MIN_JAVA = 17

#: Log ids the readiness check looks for (stable across releases; the text around them is not).
ACTIVE_ID = "AMQ221007"  # Server is now active
ACCEPTOR_ID = "AMQ221020"  # Started <EPOLL|NIO> Acceptor at host:port

#: Environment the launch scripts read that would silently override what we configure:
#: an exported JAVA_ARGS replaces the whole JVM option set (heap size included) and the
#: ARTEMIS_* ones would point the script at another home or instance.
_SCRUBBED_ENV = ("JAVA_ARGS", "ARTEMIS_PROFILE", "ARTEMIS_INSTANCE", "ARTEMIS_HOME")

MvnRunner = Callable[[Sequence[str], float], "subprocess.CompletedProcess[str]"]
"""Runs an ``mvn`` argument list with a timeout; swapped out by unit tests."""

Fetcher = Callable[[str, Path], Path]
"""Downloads the ``bin.tar.gz`` of a version into a directory and returns the file."""


# --------------------------------------------------------------------------- Java


def find_java(env: Mapping[str, str] | None = None) -> Path:
    """Locate the ``java`` launcher the Artemis scripts would use, or fail with one clear line."""
    env = os.environ if env is None else env
    java_home = env.get("JAVA_HOME", "").strip()
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("java", path=env.get("PATH", ""))
    if found:
        return Path(found)
    raise BrokerProvisioningError(JAVA_MISSING_MESSAGE)


def java_major_version(java: Path) -> int | None:
    """The feature release of ``java`` (8, 11, 17, ...) or None if it cannot be told."""
    try:
        out = subprocess.run(
            [str(java), "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return None
    major = int(match.group(1))
    # Java 8 and older report themselves as 1.x.
    if major == 1 and match.group(2):
        major = int(match.group(2))
    return major


def require_java(env: Mapping[str, str] | None = None) -> Path:
    """Like :func:`find_java`, and also refuse a Java older than Artemis supports."""
    java = find_java(env)
    major = java_major_version(java)
    if major is not None and major < MIN_JAVA:
        raise BrokerProvisioningError(f"{JAVA_MISSING_MESSAGE} (found Java {major} at {java})")
    return java


# --------------------------------------------------------------------------- distribution


@dataclasses.dataclass(frozen=True)
class ArtemisDistribution:
    """An unpacked Artemis release in the cache."""

    version: str
    home: Path

    @property
    def artemis_script(self) -> Path:
        return self.home / "bin" / "artemis"


def artemis_cache(root: Path | None = None) -> Path:
    return (root or cache_dir()) / "artemis"


def candidate_versions(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """``$JMSPY_ARTEMIS_VERSION`` pins one release; otherwise the built-in candidate list."""
    env = os.environ if env is None else env
    pinned = env.get("JMSPY_ARTEMIS_VERSION", "").strip()
    return (pinned,) if pinned else DEFAULT_VERSIONS


def archive_name(version: str) -> str:
    return f"{ARTIFACT_ID}-{version}-bin.tar.gz"


def archive_url(version: str, repo: str = MAVEN_CENTRAL) -> str:
    group_path = GROUP_ID.replace(".", "/")
    return f"{repo.rstrip('/')}/{group_path}/{ARTIFACT_ID}/{version}/{archive_name(version)}"


def _default_mvn_runner(args: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def mvn_fetcher(
    runner: MvnRunner | None = None, mvn: str = "mvn", timeout: float = 900.0
) -> Fetcher:
    """A fetcher that asks Maven to copy the archive out of the local/Central repository.

    Maven is preferred because it honours the machine's ``settings.xml`` (mirrors, proxies)
    and its local repository may already hold the archive.
    """
    run = runner or _default_mvn_runner

    def fetch(version: str, dest: Path) -> Path:
        dest.mkdir(parents=True, exist_ok=True)
        args = [
            mvn,
            "-B",
            "-q",
            f"{DEPENDENCY_PLUGIN}:copy",
            f"-Dartifact={GROUP_ID}:{ARTIFACT_ID}:{version}:tar.gz:bin",
            f"-DoutputDirectory={dest}",
        ]
        try:
            done = run(args, timeout)
        except subprocess.TimeoutExpired as exc:
            raise BrokerProvisioningError(
                f"mvn did not fetch Artemis {version} within {timeout:.0f}s"
            ) from exc
        except OSError as exc:
            raise BrokerProvisioningError(f"could not run {mvn}: {exc}") from exc
        archive = dest / archive_name(version)
        if done.returncode != 0 or not archive.is_file():
            output = tail((done.stdout or "") + (done.stderr or ""), 15)
            raise BrokerProvisioningError(
                f"mvn could not fetch {GROUP_ID}:{ARTIFACT_ID}:{version}:tar.gz:bin "
                f"(exit {done.returncode}):\n{output}"
            )
        return archive

    return fetch


def https_fetcher(
    repo: str = MAVEN_CENTRAL,
    opener: Callable[..., Any] | None = None,
    timeout: float = 60.0,
) -> Fetcher:
    """A fetcher that downloads straight from the repository and checks its published digest.

    The ``.sha512`` file is used when the release has one, else the ``.sha1`` that every
    Maven Central artifact carries; an archive with neither is refused.
    """
    open_url = opener or urllib.request.urlopen

    def fetch(version: str, dest: Path) -> Path:
        dest.mkdir(parents=True, exist_ok=True)
        url = archive_url(version, repo)
        expected: tuple[str, str] | None = None
        for algo in ("sha512", "sha1"):
            text = _read_optional(open_url, f"{url}.{algo}", timeout)
            if text is not None:
                digest = text.strip().split()[0].lower() if text.strip() else ""
                expected = (algo, digest)
                break
        if expected is None:
            raise BrokerProvisioningError(
                f"no .sha512 or .sha1 checksum published for {url}; it is either not released "
                "or the repository is unreachable"
            )
        algo, digest = expected
        hasher = hashlib.new(algo)
        target = dest / archive_name(version)
        partial = target.with_name(target.name + ".part")
        try:
            with open_url(url, timeout=timeout) as response, partial.open("wb") as out:
                while chunk := response.read(1 << 20):
                    hasher.update(chunk)
                    out.write(chunk)
        except (urllib.error.URLError, OSError) as exc:
            partial.unlink(missing_ok=True)
            raise BrokerProvisioningError(f"download of {url} failed: {exc}") from exc
        if hasher.hexdigest() != digest:
            partial.unlink(missing_ok=True)
            raise BrokerProvisioningError(
                f"{algo} of {url} is {hasher.hexdigest()}, but the published {algo} is {digest}"
            )
        partial.replace(target)
        return target

    return fetch


def _read_optional(open_url: Callable[..., Any], url: str, timeout: float) -> str | None:
    """Text at ``url``, or None when the repository answers 404."""
    try:
        with open_url(url, timeout=timeout) as response:
            data: bytes = response.read()
            return data.decode("ascii", errors="replace")
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise BrokerProvisioningError(f"GET {url} failed: HTTP {exc.code}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise BrokerProvisioningError(f"GET {url} failed: {exc}") from exc


def default_fetcher(env: Mapping[str, str] | None = None) -> Fetcher:
    """mvn when it is installed, HTTPS otherwise; ``$JMSPY_FETCH_METHOD`` forces one."""
    env = os.environ if env is None else env
    method = env.get("JMSPY_FETCH_METHOD", "").strip().lower()
    repo = env.get("JMSPY_MAVEN_REPO", "").strip() or MAVEN_CENTRAL
    if method not in ("", "mvn", "https"):
        raise BrokerProvisioningError(
            f"JMSPY_FETCH_METHOD must be 'mvn' or 'https', not {method!r}"
        )
    mvn = shutil.which("mvn", path=env.get("PATH", ""))
    if method == "https" or (method == "" and mvn is None):
        return https_fetcher(repo)
    if mvn is None:
        raise BrokerProvisioningError("JMSPY_FETCH_METHOD=mvn but mvn is not on PATH")
    return mvn_fetcher(mvn=mvn)


def safe_extract(archive: Path, into: Path, version: str) -> Path:
    """Unpack ``archive`` into ``into`` and return the release's top directory.

    Every member must stay inside ``apache-artemis-<version>/``; links must not point out of
    it. The archive is unpacked next to its final place and renamed in, so a crash never
    leaves a half-extracted home that looks complete.
    """
    top = f"{ARTIFACT_ID}-{version}"
    final = into / top
    into.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{top}-", dir=into))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = tar.getmembers()
            for member in members:
                _check_member(member, top)
            if hasattr(tarfile, "data_filter"):
                tar.extractall(staging, members=members, filter="data")
            else:  # Python < 3.11.4: the checks above are the whole defence.
                tar.extractall(staging, members=members)
        unpacked = staging / top
        script = unpacked / "bin" / "artemis"
        if not script.is_file():
            raise BrokerProvisioningError(f"{archive} does not contain {top}/bin/artemis")
        script.chmod(script.stat().st_mode | 0o755)
        if final.exists():
            shutil.rmtree(final)
        unpacked.rename(final)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BrokerProvisioningError(f"could not unpack {archive}: {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def _check_member(member: tarfile.TarInfo, top: str) -> None:
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts or not path.parts or path.parts[0] != top:
        raise BrokerProvisioningError(f"refusing archive member outside {top}/: {member.name}")
    if member.islnk() or member.issym():
        target = PurePosixPath(member.linkname)
        # Hard link names are archive paths; symlink targets are relative to the link.
        resolved = target if member.islnk() else path.parent / target
        parts = PurePosixPath(os.path.normpath(str(resolved))).parts
        if target.is_absolute() or not parts or parts[0] != top or ".." in parts:
            raise BrokerProvisioningError(
                f"refusing link {member.name} -> {member.linkname} leaving {top}/"
            )
    elif not (member.isfile() or member.isdir()):
        raise BrokerProvisioningError(f"refusing special file {member.name} in archive")


def ensure_distribution(
    versions: Sequence[str] | None = None,
    *,
    root: Path | None = None,
    fetcher: Fetcher | None = None,
    log: Callable[[str], None] | None = None,
) -> ArtemisDistribution:
    """Return an unpacked Artemis, downloading the first candidate version that resolves.

    The choice is remembered in ``resolved.json`` so later runs go straight to it without
    asking the network about newer candidates again; changing the candidate list (or
    ``$JMSPY_ARTEMIS_VERSION``) makes it resolve afresh.
    """
    versions = tuple(versions) if versions else candidate_versions()
    base = artemis_cache(root)
    say = log or (lambda _msg: None)
    with file_lock(base / ".lock", what="the Artemis download cache"):
        remembered = _read_choice(base, versions)
        if remembered is not None:
            return remembered
        errors: list[str] = []
        get = fetcher
        for version in versions:
            home = base / f"{ARTIFACT_ID}-{version}"
            if (home / "bin" / "artemis").is_file():
                return _remember(base, versions, ArtemisDistribution(version, home))
            archive = base / "downloads" / archive_name(version)
            if not archive.is_file():
                get = get or default_fetcher()
                say(f"fetching Apache Artemis {version} from Maven Central ...")
                started = time.monotonic()
                try:
                    archive = get(version, base / "downloads")
                except BrokerProvisioningError as exc:
                    errors.append(f"{version}: {exc}")
                    say(f"Artemis {version} is not available: {str(exc).splitlines()[0]}")
                    continue
                say(f"fetched Artemis {version} in {time.monotonic() - started:.1f}s")
            home = safe_extract(archive, base, version)
            # The unpacked tree is all we need; keeping the tarball would double the cache.
            archive.unlink(missing_ok=True)
            return _remember(base, versions, ArtemisDistribution(version, home))
    detail = "\n".join(errors)
    raise BrokerProvisioningError(
        f"could not fetch Apache Artemis (tried {', '.join(versions)}):\n{detail}"
    )


def _choice_file(base: Path) -> Path:
    return base / "resolved.json"


def _read_choice(base: Path, versions: Sequence[str]) -> ArtemisDistribution | None:
    try:
        data = json.loads(_choice_file(base).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("candidates") != list(versions):
        return None
    version = data.get("version")
    if not isinstance(version, str):
        return None
    home = base / f"{ARTIFACT_ID}-{version}"
    if not (home / "bin" / "artemis").is_file():
        return None
    return ArtemisDistribution(version, home)


def _remember(
    base: Path, versions: Sequence[str], dist: ArtemisDistribution
) -> ArtemisDistribution:
    payload = {"candidates": list(versions), "version": dist.version}
    tmp = _choice_file(base).with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    tmp.replace(_choice_file(base))
    return dist


# --------------------------------------------------------------------------- the broker


class ArtemisBroker(LocalBroker[ArtemisDistribution]):
    """One local Artemis instance with a single AMQP-capable acceptor.

    >>> with ArtemisBroker() as broker:          # fetches, creates and starts
    ...     connect(broker.url, broker.username, broker.password)

    ``port=None`` picks a free port (and retries with another one if it is taken between
    the pick and the broker binding it). ``broker_properties`` are lines for
    ``etc/broker.properties``, which Artemis applies on top of ``broker.xml`` at start,
    e.g. ``'addressSettings."redelivery.#".redeliveryDelay=100'``.

    stop() sends SIGTERM to the broker's process group, which runs the same shutdown hook as
    ``artemis stop`` without launching a second JVM just to drop a STOP_ME file.
    """

    kind = "artemis"

    def __init__(
        self,
        *,
        instance_dir: str | os.PathLike[str] | None = None,
        broker_properties: Iterable[str] = (),
        java_memory: str = "512M",
        java_options: str = "",
        versions: Sequence[str] | None = None,
        cache_root: str | os.PathLike[str] | None = None,
        distribution: ArtemisDistribution | None = None,
        keep_instance: bool = False,
        **common: Unpack[LocalBrokerOptions],
    ) -> None:
        super().__init__(
            directory=instance_dir, keep_dir=keep_instance, release=distribution, **common
        )
        self._properties = list(broker_properties)
        self._java_memory = java_memory
        self._java_options = java_options
        self._versions = tuple(versions) if versions else None
        self._cache_root = Path(cache_root) if cache_root else None
        self._created = False
        self._java: Path | None = None
        # Steps run on the instance directory after 'artemis create' (see add_setup).
        self._setup: list[Callable[[Path], None]] = []

    # ------------------------------------------------------------------ properties

    @property
    def distribution(self) -> ArtemisDistribution | None:
        return self._release

    @property
    def instance_dir(self) -> Path:
        return self._directory("instance", "create()")

    @property
    def log_path(self) -> Path:
        """The broker's console output (stdout and stderr of ``artemis run``)."""
        return self.instance_dir / "log" / "console.log"

    # ------------------------------------------------------------------ lifecycle

    def add_broker_properties(self, lines: Iterable[str]) -> None:
        """More ``broker.properties`` lines; only before start()."""
        if self.running:
            raise BrokerProvisioningError("broker.properties cannot change on a running broker")
        self._properties.extend(lines)
        if self._created:
            self._write_properties()

    def add_setup(self, step: Callable[[Path], None]) -> None:
        """A step that edits the created instance (e.g. adds an acceptor); before start() only.

        Used by :mod:`.artemis_security` for TLS acceptors and JAAS login modules.
        """
        if self.running:
            raise BrokerProvisioningError("the instance cannot change on a running broker")
        self._setup.append(step)
        if self._created:
            step(self.instance_dir)

    def create(self) -> Path:
        """Create the instance directory (``artemis create``); start() calls this if needed."""
        if self._created:
            return self.instance_dir
        dist = self.fetch()
        self._java = require_java()
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="jmspy-artemis-"))
        args = [
            str(dist.artemis_script),
            "create",
            str(self._dir),
            "--silent",
            "--force",
            "--user",
            self._username,
            "--password",
            self._password,
            "--require-login",
            "--host",
            self._host,
            "--default-port",
            str(self._port),
            # One acceptor (the main one, which also speaks AMQP) on the chosen port; the
            # extra protocol acceptors and the web console would need more free ports.
            "--no-amqp-acceptor",
            "--no-stomp-acceptor",
            "--no-hornetq-acceptor",
            "--no-mqtt-acceptor",
            "--no-web",
            # The journal disk benchmark adds seconds and only tunes throughput.
            "--no-autotune",
            "--nio",
            "--java-memory",
            self._java_memory,
        ]
        started = time.monotonic()
        self._run_tool(args, what=f"'artemis create' in {self._dir}", timeout=180, tail_lines=30)
        self.timings["create"] = time.monotonic() - started
        self._created = True
        self._write_properties()
        for step in self._setup:
            step(self._dir)
        return self._dir

    def log_tail(self, lines: int = 40) -> str:
        try:
            return tail(self.log_path.read_text(errors="replace"), lines)
        except OSError:
            return "(no broker log)"

    # ------------------------------------------------------------------ internals

    def _find_release(self) -> ArtemisDistribution:
        """Resolve (and if needed download) the distribution."""
        return ensure_distribution(self._versions, root=self._cache_root, log=self._log)

    def _prepare(self) -> None:
        self.create()

    def _port_changed(self) -> None:
        self._retarget_acceptor(self._port)

    def _dir_removed(self) -> None:
        # The path is kept: a later start() creates the instance there again.
        self._created = False

    def _child_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
        if self._java is not None:
            # The scripts honour JAVACMD before JAVA_HOME/PATH, so the Java we checked is
            # the Java that runs.
            env["JAVACMD"] = str(self._java)
        if self._java_options:
            env["JAVA_ARGS_APPEND"] = (
                env.get("JAVA_ARGS_APPEND", "") + " " + self._java_options
            ).strip()
        return env

    def _write_properties(self) -> None:
        if not self._properties:
            return
        path = self.instance_dir / "etc" / "broker.properties"
        header = "# written by jmspy.conformance.brokers.artemis; applied over broker.xml\n"
        path.write_text(header + "\n".join(self._properties) + "\n")

    def _retarget_acceptor(self, port: int) -> None:
        broker_xml = self.instance_dir / "etc" / "broker.xml"
        text = broker_xml.read_text()
        new, count = re.subn(r'(<acceptor name="artemis">tcp://[^:<]+:)\d+', rf"\g<1>{port}", text)
        if count != 1:
            raise BrokerProvisioningError(f"could not find the acceptor port in {broker_xml}")
        broker_xml.write_text(new)

    def _launch_and_wait(self, timeout: float) -> str | None:
        """Start ``artemis run``; None when ready, else why not (PORT_TAKEN is retryable)."""
        log = LogWindow(self.log_path)
        script = self.instance_dir / "bin" / "artemis"
        proc = self._spawn(
            [str(script), "run"],
            log_path=self.log_path,
            cwd=self.instance_dir,
            env=self._child_env(),
            program=script,
        )
        if isinstance(proc, str):
            return proc
        acceptor = re.compile(rf"{ACCEPTOR_ID}: Started \w+ Acceptor at [^\s:]+:{self._port}\b")

        def assess(seen: str) -> Wait | str:
            active = ACTIVE_ID in seen
            if active and acceptor.search(seen) and port_accepts(self._host, self._port):
                return Wait.READY
            exited = proc.poll() is not None
            bind_failed = "Address already in use" in seen or "BindException" in seen
            if not (exited or bind_failed or (active and not acceptor.search(seen))):
                return Wait.PENDING
            # Give the log a moment to receive the rest of the failure.
            time.sleep(0.2)
            seen = log.text()
            if not exited and active and not bind_failed and acceptor.search(seen):
                return assess(log.text())  # the acceptor line was on its way: look again now
            if bind_failed and not self._fixed_port:
                return PORT_TAKEN
            why = (
                f"exited with status {proc.returncode}"
                if exited
                else f"did not open its acceptor on {self._host}:{self._port}"
            )
            return self._failure(f"Artemis {why}", seen)

        def timed_out(seen: str) -> str:
            return self._failure(f"Artemis was not ready on {self.url} within {timeout:.0f}s", seen)

        return self._await_ready(timeout, log, assess, timed_out)

    def _failure(self, headline: str, log_text: str) -> str:
        # Java stack traces push the useful line out of any short tail, so the broker's own
        # ERROR lines and the exception messages come first.
        return failure_report(
            headline,
            log_text,
            is_key=lambda line: (
                " ERROR " in line or re.match(r"^(Caused by: )?[\w.$]+(Exception|Error): ", line)
            ),
            label="broker errors",
            where=f"instance {self._dir}, log {self.log_path}",
        )
