"""Ends a local broker whose owning process died without stopping it.

A broker runs in a process group of its own so that it can be signalled as a whole and is not
hit by a Ctrl-C meant for its owner; the owner stops it on stop(), on interpreter exit and
from its fixtures. An owner killed outright (SIGKILL, the SIGTERM of ``timeout`` or ``pkill``,
which skip ``atexit``) left the broker running for good, holding its port, memory and data
directory. So each launch gets this watchdog, started in a session of its own, reading a pipe
whose other end only the owner holds: ``done`` before the end of the pipe means the owner took
care of the broker (stopped, killed for a fault test, detached); an end without it means the
owner is gone, and the watchdog stops the group (SIGTERM, then SIGKILL) and deletes the
broker's directory when the broker made it for itself.

    python -m jmspy.conformance.brokers._watchdog <process group> [<directory to delete>]
"""

from __future__ import annotations

import shutil
import sys

from ._process import _WATCHDOG_DONE, stop_process_group


def main(argv: list[str]) -> int:
    group = int(argv[1])
    directory = argv[2] if len(argv) > 2 else ""
    try:
        told = sys.stdin.buffer.read()  # until the owner closes its end, or dies
    except OSError:
        told = b""
    if told.endswith(_WATCHDOG_DONE):
        return 0
    stop_process_group(group, timeout=10.0)
    if directory:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
