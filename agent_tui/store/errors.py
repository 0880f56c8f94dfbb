"""Errors of the event log, each naming the file (and line) where the cause is known."""

from __future__ import annotations

import os
from pathlib import Path

from agent_tui.store.lock_holder import LockHolder


class EventLogError(Exception):
    """Base class: something is wrong with a session log on disk."""


class EventLogDecodeError(EventLogError):
    """A complete line that is not a valid event, or that breaks the sequence chain."""

    def __init__(self, path: Path | str, line_number: int, reason: str) -> None:
        super().__init__(f"{path}:{line_number}: {reason}")
        self.path = Path(path)
        self.line_number = line_number
        self.reason = reason


class EventLogSequenceError(EventLogError):
    """An append whose sequence is not exactly one more than the log's last sequence."""

    def __init__(self, path: Path | str, expected: int, got: int) -> None:
        super().__init__(f"{path}: expected sequence {expected}, refused an append of {got}")
        self.path = Path(path)
        self.expected = expected
        self.got = got


class EventLogTornTailError(EventLogError):
    """The log ends in a partial line (a crash mid-write); appending waits for `repair()`."""

    def __init__(self, path: Path | str, line_number: int, size: int) -> None:
        super().__init__(
            f"{path}:{line_number}: log ends in a torn line ({size} bytes without a newline); "
            "repair it before appending"
        )
        self.path = Path(path)
        self.line_number = line_number
        self.size = size


class EventLogWriteError(EventLogError, OSError):
    """The OS refused to write a log (or its lock file): `FILE: No space left on device`.

    An `OSError` too (`errno`, `strerror`, `filename`), said in plain words rather than as
    `[Errno 28] …`. Nothing of the failed append is left in the log.
    """

    def __init__(self, path: Path | str, error_number: int, reason: str | None = None) -> None:
        OSError.__init__(self, error_number, reason or os.strerror(error_number), str(path))
        self.path = Path(path)

    def __str__(self) -> str:
        return f"{self.path}: {self.strerror}"


class SessionLockedError(EventLogError):
    """Another process writes this session (it holds the session's lock); nothing was written.

    `where` is the holder in words (`open in agent-tui pid 4242 since 10:02`), for a sentence at
    the edge: the dashboard's composer, or the headless run's one line.
    """

    def __init__(self, path: Path | str, holder: LockHolder | None) -> None:
        self.path = Path(path)
        self.holder = holder
        self.where = (
            f"open in {holder.describe()}" if holder is not None else "open in another agent-tui process"
        )
        super().__init__(
            f"{self.path}: session {self.path.stem} is {self.where} (one process writes a session at a time)"
        )
