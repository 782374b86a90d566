"""The Java reference of the benchmarks: ``benchmarks/java``, a small Qpid JMS program
(``jmspy.bench.QpidJmsBench``, one method per mode), built with Maven on first use and cached by
a hash of its pom and sources (see :mod:`jmspy.conformance.javabuild`).

:class:`QpidJmsProgram` keeps one JVM serving requests for the whole benchmark run, so its JIT
is as warm in the last round as jmspy's interpreter is in the first; each request is one JSON
line naming its ``mode`` and each answer one JSON line. To add a mode, add a method to
``QpidJmsBench.java`` and register it in its ``MODES`` map; ``request("your-mode", ...)`` then
reaches it.
"""

from __future__ import annotations

import json
import queue
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from _common import BenchmarkError, BrokerInfo
from jmspy.conformance import javabuild

PROJECT = javabuild.JavaProject(
    Path(__file__).parent / "java",
    "qpid-jms-bench.jar",
    "bench",
    "Qpid JMS benchmark program",
)
# Qpid JMS logs through slf4j-simple: warnings and errors only, on stderr.
JVM_OPTIONS = (
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.slf4j.simpleLogger.logFile=System.err",
    "-Xlog:disable",
    "-Xlog:all=warning:stderr",
)

JsonObject = dict[str, Any]


def build() -> javabuild.JavaBuild:
    """The benchmark jar (built with Maven when its sources changed); BenchmarkError when Java
    or Maven is missing or the build fails."""
    try:
        return javabuild.build(PROJECT)
    except javabuild.JavaBuildError as exc:
        raise BenchmarkError(str(exc)) from exc


class QpidJmsProgram:
    """One JVM running ``QpidJmsBench serve`` against one broker."""

    def __init__(self, jar: javabuild.JavaBuild, info: BrokerInfo) -> None:
        self.info = info
        self._stderr: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")
        self._process = subprocess.Popen(
            [jar.java, *JVM_OPTIONS, "-jar", str(jar.jar), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
        )
        self._lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        # A reader thread, so a request can time out; it blocks in read() and costs no CPU
        # while the Python clients are timed.
        self._reader = threading.Thread(target=self._read, name="qpid-jms-reader", daemon=True)
        self._reader.start()
        self.version: JsonObject = self.request("ping", timeout_s=120.0)

    def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        for line in stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _stderr_tail(self, lines: int = 10) -> str:
        self._stderr.seek(0)
        return javabuild.tail(self._stderr.read(), lines)

    def request(self, mode: str, timeout_s: float = 600.0, **fields: Any) -> JsonObject:
        """Runs one request in the JVM; its JSON answer, or BenchmarkError with Java's reason."""
        info = self.info
        payload = {
            "mode": mode,
            "url": info.url,
            "user": info.username,
            "password": info.password,
            **fields,
        }
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(payload) + "\n")
            stdin.flush()
        except OSError as exc:
            raise BenchmarkError(
                f"the Qpid JMS program is gone: {exc}; stderr:\n{self._stderr_tail()}"
            ) from exc
        try:
            line = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            raise BenchmarkError(
                f"Qpid JMS {mode} did not answer within {timeout_s:g} s; stderr:\n"
                f"{self._stderr_tail()}"
            ) from None
        if line is None:
            raise BenchmarkError(
                f"the Qpid JMS program exited during {mode}; stderr:\n{self._stderr_tail()}"
            )
        result: JsonObject = json.loads(line)
        if "error" in result:
            raise BenchmarkError(f"Qpid JMS {mode} failed: {result['error']}: {result['message']}")
        return result

    def close(self) -> None:
        stdin = self._process.stdin
        if stdin is not None:
            try:
                stdin.close()  # serve ends at the end of its input
            except OSError:
                pass
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._stderr.close()

    def __enter__(self) -> QpidJmsProgram:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
