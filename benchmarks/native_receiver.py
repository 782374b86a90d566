"""The receive ceiling: ``benchmarks/native/receive.c``, a consumer in C on Apache Qpid Proton's
proactor (no Python, no JMS layer), built with the C compiler on first use and cached by a hash
of its source. It shows how fast the broker hands one consumer its messages on this machine when
the client costs next to nothing, so a Python client's figures can be read against the broker's
own ceiling rather than only against another client.

It needs a C compiler and Proton's C library with its headers (Debian and Ubuntu:
``apt-get install libqpid-proton11-dev``); without them :func:`build` says what is missing and
the benchmarks leave the row out.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from _common import BenchmarkError, BrokerInfo

SOURCE = Path(__file__).parent / "native" / "receive.c"
HEADER = "proton/proactor.h"
INSTALL_HINT = "apt-get install libqpid-proton11-dev (Debian, Ubuntu)"


@dataclass(frozen=True)
class NativeReceiver:
    """The built program (``path``) or why there is none (``missing``)."""

    path: Path | None
    missing: str = ""
    cached: bool = False

    def receive(
        self,
        info: BrokerInfo,
        address: str,
        warmup: int,
        count: int,
        window: int,
        body_size: int,
        timeout_s: float,
    ) -> tuple[float, float]:
        """Receive ``warmup + count`` messages from ``address``; the seconds and the process
        CPU seconds the ``count`` after the warm-up took. BenchmarkError when it fails."""
        if self.path is None:
            raise BenchmarkError(f"the native receiver is not built: {self.missing}")
        url = urllib.parse.urlsplit(info.url)
        if url.scheme != "amqp" or not url.hostname:
            raise BenchmarkError(f"the native receiver speaks plain amqp://, not {info.url}")
        argv = [str(self.path), url.hostname, str(url.port or 5672), address]
        argv += [str(warmup), str(count), str(window), str(body_size)]
        try:
            done = subprocess.run(
                argv,
                input=f"{info.username}\n{info.password}\n",  # never on the command line
                capture_output=True,
                text=True,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise BenchmarkError(
                f"the native receiver did not finish {warmup + count} messages from {address} "
                f"within {timeout_s:.0f} s"
            ) from exc
        if done.returncode != 0:
            raise BenchmarkError(
                f"the native receiver failed on {address} (exit status {done.returncode}): "
                f"{done.stderr.strip() or '(nothing on stderr)'}"
            )
        result = json.loads(done.stdout)
        if result["count"] != count:
            raise BenchmarkError(f"the native receiver timed {result['count']} of {count}")
        return float(result["seconds"]), float(result["cpu_s"])


def build() -> NativeReceiver:
    """The receiver, compiled into jmspy's cache directory when its source changed; a
    NativeReceiver with ``missing`` set when there is no compiler or no Proton C library."""
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        return NativeReceiver(None, f"no C compiler (cc) on the PATH; {INSTALL_HINT}")
    from jmspy.conformance.brokers import cache_dir

    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    target = Path(cache_dir()) / "native" / f"receive-{digest}"
    if target.is_file():
        return NativeReceiver(target, cached=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        built = Path(work) / "receive"
        done = subprocess.run(
            [compiler, "-O2", "-o", str(built), str(SOURCE), "-lqpid-proton"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            reason = done.stderr.strip().splitlines()
            if any(HEADER in line or "qpid-proton" in line for line in reason):
                return NativeReceiver(None, f"no Proton C library or headers; {INSTALL_HINT}")
            return NativeReceiver(None, f"{compiler} failed: {' / '.join(reason[-3:])}")
        built.replace(target)  # same directory: atomic, so a concurrent run sees all or nothing
    return NativeReceiver(target)
