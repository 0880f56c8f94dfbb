"""Errors of the event log, each naming the file (and line) where the cause is known."""

from __future__ import annotations

from pathlib import Path


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
