"""The Java side of the interop tests: building JmsInterop and running its commands.

``java/`` holds ``JmsInterop`` (a command-line client on qpid-jms-client, built with Maven). It
is built once per source version into the user cache (``<cache>/interop/jms-interop-<hash>``,
see :mod:`jmspy.conformance.javabuild`), keyed by a hash of ``pom.xml`` and the Java sources, so
later runs do not start Maven at all.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jmspy.conformance import javabuild
from jmspy.conformance.javabuild import JavaBuild, JavaBuildError, tail

INTEROP_DIR = Path(__file__).parent
JAVA_PROJECT = INTEROP_DIR / "java"
JAR_NAME = "jms-interop.jar"
PROJECT = javabuild.JavaProject(JAVA_PROJECT, JAR_NAME, "interop", "Java interop client")
RUN_TIMEOUT_S = 60.0
# Short-lived JVMs start faster with the C1 compiler only and the serial collector. JVM log
# output (e.g. class-data-sharing warnings) goes to stderr: stdout carries only the JSON result.
JVM_OPTIONS = (
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Xlog:disable",
    "-Xlog:all=warning:stderr",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.slf4j.simpleLogger.logFile=System.err",
)

JsonObject = dict[str, Any]
# The interop tests' name for a Java client that cannot be built or run.
InteropSetupError = JavaBuildError


class JavaCommandError(AssertionError):
    """A JmsInterop command failed; carries the Java exception and stderr."""


def source_hash() -> str:
    """A hash of everything the jar is built from (paths and contents)."""
    return PROJECT.source_hash()


def build_java_client() -> JavaBuild:
    """The runnable jar, built with Maven on first use and reused while the sources match."""
    return javabuild.build(PROJECT)


# ---- running it -----------------------------------------------------------------------------


class JavaProcess:
    """A running JmsInterop command."""

    def __init__(
        self,
        command: str,
        process: subprocess.Popen[str],
        on_exit: Callable[[bool], None] | None = None,
    ) -> None:
        self.command = command
        self.process = process
        self._on_exit = on_exit

    def result(self, timeout: float = RUN_TIMEOUT_S) -> JsonObject:
        """Waits for the command; its JSON result, or JavaCommandError with Java's reason."""
        command, process = self.command, self.process
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            process.kill()
            _, stderr = process.communicate()
            self._exited(False)
            raise JavaCommandError(
                f"JmsInterop {command} did not finish within {timeout:.0f}s; stderr:\n"
                f"{tail(stderr)}"
            ) from exc
        self._exited(process.returncode == 0)
        try:
            result: JsonObject = json.loads(stdout)
        except json.JSONDecodeError as exc:
            raise JavaCommandError(
                f"JmsInterop {command} exited {process.returncode} without JSON: "
                f"{stdout[:500]!r}; stderr:\n{tail(stderr)}"
            ) from exc
        if process.returncode != 0 or "error" in result:
            raise JavaCommandError(
                f"JmsInterop {command} failed: {result.get('error')}: {result.get('message')}\n"
                f"{tail(str(result.get('stack', '')), 8)}\nstderr:\n{tail(stderr)}"
            )
        return result

    def _exited(self, ok: bool) -> None:
        on_exit, self._on_exit = self._on_exit, None
        if on_exit is not None:
            on_exit(ok)


@dataclasses.dataclass(frozen=True)
class JavaClient:
    """Runs JmsInterop commands against one broker (see JmsInterop.java for the protocol)."""

    build: JavaBuild
    url: str
    username: str
    password: str

    def start(self, command: str, request: JsonObject) -> JavaProcess:
        """Starts a command in the background; ``result()`` waits for it."""
        payload = {"url": self.url, "user": self.username, "password": self.password, **request}
        build = self.build
        cds, pending = javabuild.class_data_sharing(build)
        args = [build.java, *JVM_OPTIONS, *cds, "-jar", str(build.jar), command]
        on_exit = (
            None
            if pending is None
            else functools.partial(javabuild.publish_archive, build, pending)
        )
        # The request goes in through a file, so starting never blocks on a pipe.
        with tempfile.TemporaryFile("w+", encoding="utf-8") as stdin:
            json.dump(payload, stdin)
            stdin.seek(0)
            try:
                process = subprocess.Popen(
                    args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                )
            except BaseException:
                if on_exit is not None:
                    on_exit(False)
                raise
        return JavaProcess(command, process, on_exit)

    def run(self, command: str, request: JsonObject, timeout: float = RUN_TIMEOUT_S) -> JsonObject:
        return self.start(command, request).result(timeout)

    def send(
        self, destination: JsonObject, messages: list[JsonObject], **options: Any
    ) -> list[JsonObject]:
        """Sends message specs; returns what the Java producer saw for each."""
        result = self.run("send", {"destination": destination, "messages": messages, **options})
        sent: list[JsonObject] = result["sent"]
        return sent

    def receive(
        self, destination: JsonObject, count: int = 1, timeout_ms: int = 5000, **options: Any
    ) -> JsonObject:
        """Receives up to ``count`` messages; returns ``{"messages": [...], ...}``."""
        request = {"destination": destination, "count": count, "timeoutMs": timeout_ms, **options}
        return self.run("receive", request)


def queue(name: str) -> JsonObject:
    return {"kind": "queue", "name": name}


def topic(name: str) -> JsonObject:
    return {"kind": "topic", "name": name}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    return base64.b64decode(text)
