"""Building the project's small Java programs on Apache Qpid JMS (the interop client in
``tests/interop/java``, the benchmark reference in ``benchmarks/java``) with Maven, once per
source version.

A program is built into the user cache (``<cache>/<kind>/<name>-<hash>``, ``<cache>`` being
jmspy's cache directory: ``$JMSPY_CACHE_DIR`` or ``~/.cache/jmspy``), keyed by a hash of its
``pom.xml`` and sources, so later runs do not start Maven at all. Maven runs offline first
(everything in ``~/.m2``), else online.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

BUILD_TIMEOUT_S = 900.0


class JavaBuildError(Exception):
    """A Java program cannot be built or run; the message is one line."""


@dataclasses.dataclass(frozen=True)
class JavaProject:
    """A Maven project producing ``target/<jar_name>`` (with its dependencies in target/lib).

    ``cache_kind`` names the cache directory holding its builds; ``what`` names the program in
    error messages.
    """

    directory: Path
    jar_name: str
    cache_kind: str
    what: str

    @property
    def build_prefix(self) -> str:
        return self.jar_name.removesuffix(".jar")

    def source_files(self) -> list[Path]:
        files = [self.directory / "pom.xml"]
        files += sorted(p for p in (self.directory / "src").rglob("*") if p.is_file())
        return files

    def source_hash(self) -> str:
        """A hash of everything the jar is built from (paths and contents)."""
        digest = hashlib.sha256()
        for path in self.source_files():
            digest.update(path.relative_to(self.directory).as_posix().encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
            digest.update(b"\0")
        return digest.hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class JavaBuild:
    jar: Path
    java: str
    cached: bool
    seconds: float

    @property
    def class_archive(self) -> Path:
        """The AppCDS archive for this jar and this JVM (written by the first command run)."""
        java = Path(self.java).resolve()
        key = hashlib.sha256(f"{java}:{java.stat().st_mtime_ns}".encode()).hexdigest()[:12]
        return self.jar.parent.parent / f"classes-{key}.jsa"


def _cache_root(kind: str) -> Path:
    from jmspy.conformance.brokers import cache_dir

    return Path(cache_dir()) / kind


def tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _run_maven(mvn: str, workdir: Path, project: JavaProject) -> None:
    """``mvn package``: offline first (everything cached in ~/.m2), else online."""
    common = [mvn, "-B", "-q", "-Dstyle.color=never"]
    output = ""
    for extra in (["-o"], []):
        try:
            done = subprocess.run(
                [*common, *extra, "package"],
                cwd=workdir,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise JavaBuildError(
                f"building the {project.what} with Maven took over {BUILD_TIMEOUT_S:.0f}s"
            ) from exc
        if done.returncode == 0:
            return
        output = done.stdout + done.stderr
    errors = [line.strip() for line in output.splitlines() if "[ERROR]" in line]
    # A compiler message names the file and position; prefer it to Maven's summary lines.
    located = [line for line in errors if ".java:[" in line]
    first = (located or errors or [tail(output, 1)])[0]
    raise JavaBuildError(f"mvn package failed for {project.directory}/pom.xml: {first}")


def build(project: JavaProject) -> JavaBuild:
    """The runnable jar, built with Maven on first use and reused while the sources match."""
    started = time.monotonic()
    java = shutil.which("java")
    if java is None:
        raise JavaBuildError(f"java is not on PATH: the {project.what} needs Java 17+")
    root = _cache_root(project.cache_kind) / f"{project.build_prefix}-{project.source_hash()}"
    jar = root / "target" / project.jar_name
    marker = root / "complete"
    if marker.is_file() and jar.is_file():
        marker.touch()  # last use, for _prune_old_builds
        return JavaBuild(jar, java, cached=True, seconds=time.monotonic() - started)
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be building the same jar
        if marker.is_file() and jar.is_file():
            return JavaBuild(jar, java, cached=True, seconds=time.monotonic() - started)
        mvn = shutil.which("mvn")
        if mvn is None:
            raise JavaBuildError(
                f"mvn is not on PATH: Maven is needed to build the {project.what} "
                f"(once per source change; cache {root})"
            )
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        shutil.copy2(project.directory / "pom.xml", root / "pom.xml")
        shutil.copytree(project.directory / "src", root / "src")
        _run_maven(mvn, root, project)
        if not jar.is_file():
            raise JavaBuildError(f"mvn package succeeded but produced no {jar}")
        marker.write_text(f"built {time.strftime('%Y-%m-%dT%H:%M:%S')}\n")
        _prune_old_builds(root, project.build_prefix)
    return JavaBuild(jar, java, cached=False, seconds=time.monotonic() - started)


def _prune_old_builds(keep: Path, prefix: str, max_age_s: float = 7 * 24 * 3600) -> None:
    """Removes builds of other source versions not used for a week (each is ~25 MB)."""
    now = time.time()
    for other in keep.parent.glob(f"{prefix}-*"):
        if other == keep or not other.is_dir():
            continue
        try:
            last_used = (other / "complete").stat().st_mtime
        except OSError:
            last_used = other.stat().st_mtime  # an unfinished build
        if now - last_used > max_age_s:
            shutil.rmtree(other, ignore_errors=True)


# ---- class-data sharing ---------------------------------------------------------------------

# Archives being written by a command of this process (one writer per archive).
_ARCHIVES_IN_PROGRESS: set[Path] = set()
_ARCHIVES_LOCK = threading.Lock()


def class_data_sharing(build: JavaBuild) -> tuple[list[str], Path | None]:
    """JVM options using the class archive, or writing it when there is none yet.

    A JVM started from a class-data-sharing archive of the application's classes (AppCDS)
    starts a Qpid JMS client in about half the time; the archive is written by the first
    command (``-XX:ArchiveClassesAtExit``) and used by every later one. Returns the options and
    the temporary archive path to publish (:func:`publish_archive`) when the command succeeds.
    """
    archive = build.class_archive
    if archive.is_file():
        return [f"-XX:SharedArchiveFile={archive}"], None
    with _ARCHIVES_LOCK:
        if archive in _ARCHIVES_IN_PROGRESS:
            return [], None
        _ARCHIVES_IN_PROGRESS.add(archive)
    pending = archive.with_name(f"{archive.name}.{os.getpid()}.tmp")
    return [f"-XX:ArchiveClassesAtExit={pending}"], pending


def publish_archive(build: JavaBuild, pending: Path, ok: bool) -> None:
    archive = build.class_archive
    try:
        if ok and pending.is_file():
            os.replace(pending, archive)  # atomic: other processes see all of it or nothing
        else:
            pending.unlink(missing_ok=True)
    finally:
        with _ARCHIVES_LOCK:
            _ARCHIVES_IN_PROGRESS.discard(archive)
