"""`LockHolder`: who holds a session log's lock, as its lock file says, and how that is said.

The lock (`lock.py`) writes one; the error of a refused lock (`errors.SessionLockedError`) names
one. Invariant: `describe` names the program, pid, since when (the time alone when it is today)
and the host only when it is another machine.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from datetime import datetime

import orjson

PROGRAM = "agent-tui"


@dataclass(frozen=True)
class LockHolder:
    """Who holds a session's lock, as its lock file says."""

    pid: int
    host: str
    since: str  # ISO 8601, UTC
    program: str = PROGRAM

    def describe(self) -> str:
        """`agent-tui pid 4242 since 10:02` (with the host when it is another machine, and the
        day when it is not today)."""
        where = f" on {self.host}" if self.host and self.host != socket.gethostname() else ""
        return f"{self.program or PROGRAM} pid {self.pid}{where} since {_local_time(self.since)}"

    def to_json(self) -> bytes:
        return orjson.dumps(
            {"program": self.program, "pid": self.pid, "host": self.host, "since": self.since}
        )


def _local_time(since: str) -> str:
    try:
        moment = datetime.fromisoformat(since).astimezone()
    except ValueError:
        return since or "an unknown time"
    if moment.date() == datetime.now().astimezone().date():
        return moment.strftime("%H:%M")
    return moment.strftime("%Y-%m-%d %H:%M")
