"""`python -m interviewer.reaper PGID`: kills a process group once its owner is gone.

Started by the vLLM launcher with a pipe on stdin whose only writer is the launching process.
When that process exits for any reason (a normal exit, Ctrl-C, SIGKILL, a crash), the pipe
closes, and the reaper sends the group SIGTERM, then SIGKILL after a grace period.
"""

from __future__ import annotations

import os
import signal
import sys
import time


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    pgid, grace = int(args[0]), float(args[1]) if len(args) > 1 else 20.0
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the launcher, which stops the server itself
    while sys.stdin.buffer.read(4096):
        pass  # nothing is ever written: this returns at EOF, when the launcher is gone
    if not _alive(pgid):
        return 0
    os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _alive(pgid):
        time.sleep(0.2)
    if _alive(pgid):
        os.killpg(pgid, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
