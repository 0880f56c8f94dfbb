"""One session log as the replay timeline reads it: complete lines, in order, decoded leniently.

Invariants:
- only complete lines are read: a torn last line (no newline yet) waits for its newline;
- lines are handed out once each, in file order, numbered from 0, with their byte offsets;
- a line that is not an event, that belongs to another session than the file's name says
  (`<sessionId>.jsonl`), or that breaks the sequence chain, comes out as corrupt with its
  reason, and reading goes on after it: a line is accepted when its sequence is one more than
  the last accepted one, or (after a corrupt line) any sequence above it;
- `changed()` tells whether the file was truncated, replaced or rewritten under the read offset
  since the last read (size, inode, and the bytes just before the offset), so the timeline can
  index it again from the start;
- `changed()` is also a follower's look: its size then is the `horizon` reads stop at until
  `horizon` is cleared, so one poll merges what every log held at one moment (a log read later
  in a slow poll would otherwise bring lines newer than those still unread in a log read earlier,
  which the next poll would find late);
- an unreadable file is not an exception: `error` says `FILE: reason` and it reads as empty.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from agent_tui.events import Event, EventValidationError, event_from_dict, json_problem
from agent_tui.events.validation import BUILDERS_WITH_V
from agent_tui.private_files import plain_descriptor
from agent_tui.store import LineIndex, foreign_session

READ_BYTES = 256 * 1024
"""How much one read takes while indexing or following (a longer line is read whole)."""
_FINGERPRINT = 64


Entry = tuple[int, int, int, str, "Event | None", "str | None"]
"""One complete line: (line number from 0, byte offset, byte offset after its newline, timestamp,
event, reason). A corrupt line has no event and a reason (`FILE:LINE: why`) and takes the
timestamp of the line accepted before it, so it keeps its place in time. Plain tuples: the
indexer makes one per line of every log."""


def decode_trusted(line: bytes) -> Event | None:
    """The event on a line the timeline already validated, without validating it again (about
    half the cost of `decode_line`); None if the line is not even a JSON event any more."""
    try:
        return Event.from_checked(orjson.loads(line))
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return None


@dataclass(frozen=True, slots=True)
class FileCursor:
    """How far a file was read into the timeline: lines, byte offset, and its chain state."""

    lines: int = 0
    offset: int = 0
    last_sequence: int = 0
    resync: bool = False
    last_ts: str = ""


def decode_line(line: bytes) -> Event | str:
    """The event on `line`, or why it is not one (one short sentence)."""
    try:
        return event_from_dict(orjson.loads(line))
    except orjson.JSONDecodeError as error:
        return json_problem(error)
    except EventValidationError as error:
        return error.reason


class LogFile:
    """A log file the timeline indexes and follows.

    Args:
        path: the `.jsonl` file (it may not exist yet).
        file_id: its number in the timeline (the tie-breaker of the merge order).
    """

    def __init__(self, path: Path, file_id: int) -> None:
        self.path = path
        self.stem = path.stem
        """The session id its name says (`path.stem`, kept: every read compares each line to it)."""
        self.file_id = file_id
        self.error: str | None = None
        self.index: LineIndex | None = None
        self._read_fd: int | None = None
        self.horizon: int | None = None
        """Reads stop at this byte (the size at the last `changed()`), or at the end if None."""
        self._reset_reading()

    def _reset_reading(self) -> None:
        self.caught_up = False  # the last read reached the end of the file as it was then
        self.lines = 0  # complete lines handed out
        self.offset = 0  # the byte after them
        self.last_sequence = 0
        self.resync = False  # after a corrupt line, the next sequence need only be larger
        self.last_ts = ""
        self.session_id: str | None = None
        self.parent_id: str | None = None
        self.agent_name: str | None = None
        self.title: str | None = None
        self._identity: tuple[int, int] | None = None
        self._fingerprint = b""
        self._seen: tuple[int, int, int] | None = None  # (size, mtime, inode) at the last check

    def _open_index(self) -> None:
        try:
            self.index = LineIndex(self.path)
            self.error = None
        except OSError as error:
            self.index = None
            self.error = f"{self.path}: {error.strerror or error}"

    @property
    def line_count(self) -> int:
        """Complete lines on disk as of the last `refresh()` (at least the lines read)."""
        return max(self.index.line_count if self.index is not None else 0, self.lines)

    def refresh(self) -> None:
        """Count the file's lines (the first time) or those appended since (newline counting)."""
        if self.index is None:
            self._open_index()
            return
        try:
            self.index.extend()
        except OSError as error:
            self.error = f"{self.path}: {error.strerror or error}"

    def reset(self) -> None:
        """Forget what was read: the file is read again from its first line (and counted again)."""
        self.close()
        self._reset_reading()
        self.index = None

    def changed(self) -> str | None:
        """Why what was read no longer matches the file (`truncated`, `replaced`, …), or None.

        One `stat` when nothing changed; the bytes before the read offset are compared only when
        the file's size or time moved. The size it saw becomes the `horizon`.
        """
        unread = self.lines == 0 and self._identity is None
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            self.horizon = 0
            return None if unread else "removed"
        except OSError:
            self.horizon = None
            return None  # unreadable for now: `error` says so on the next read
        self.horizon = stat.st_size
        if unread:
            return None
        seen = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
        if seen == self._seen:
            return None
        self._seen = seen
        if self._identity is not None and (stat.st_dev, stat.st_ino) != self._identity:
            return "replaced"
        if stat.st_size < self.offset:
            return "truncated"
        if self._fingerprint:
            size = len(self._fingerprint)
            try:  # one pread on the kept descriptor: this runs for every grown log at every poll
                before = os.pread(self._reader(), size, self.offset - size)
            except OSError:
                return None
            if before != self._fingerprint:
                return "rewritten"
        return None

    def read_entries(self, budget: int = READ_BYTES) -> list[Entry]:
        """The next complete lines (about `budget` bytes of them), decoded; [] when none are new."""
        chunk = self._read_complete(budget)
        if not chunk:
            return []
        entries: list[Entry] = []
        append = entries.append
        loads = orjson.loads
        number = self.lines
        offset = self.offset
        last = self.last_sequence
        resync = self.resync
        build = BUILDERS_WITH_V
        session = self.stem
        for line in chunk.split(b"\n")[:-1]:
            end = offset + len(line) + 1
            try:
                # The fast path: one generated check-and-build per type, for the line that comes
                # next in the chain (`expected` >= 2). Anything else takes the full check.
                data = loads(line)
                event = build[data["type"]](data, last + 1)
            except Exception:
                event = None
            if event is not None and event.session_id == session:
                # Plain tuples: this loop runs once per line of every log.
                append((number, offset, end, event.ts, event, None))
                last = event.sequence
                resync = False
            else:
                entry = self._checked(number, offset, end, line, last, resync, entries)
                append(entry)
                if (event := entry[4]) is not None:
                    last = event.sequence
                resync = event is None
            number += 1
            offset = end
        accepted = next((entry[4] for entry in reversed(entries) if entry[4] is not None), None)
        if accepted is not None:
            self.last_ts = accepted.ts
            if self.session_id is None:
                self._learn(next(entry[4] for entry in entries if entry[4] is not None))
        self.last_sequence, self.resync, self.lines, self.offset = last, resync, number, offset
        self._fingerprint = chunk[-_FINGERPRINT:]
        return entries

    def _checked(
        self, number: int, offset: int, end: int, line: bytes, last: int, resync: bool, before: list[Entry]
    ) -> Entry:
        """The entry of a line the fast path did not take, fully checked: its event when it goes
        on the chain after `last` (or any later sequence, to `resync` it), else a corrupt entry."""
        try:
            event = event_from_dict(orjson.loads(line))
        except (orjson.JSONDecodeError, EventValidationError):
            event = None
        if event is not None and event.session_id == self.stem:
            if event.sequence == last + 1 or (resync and event.sequence > last):
                return (number, offset, end, event.ts, event, None)
        self.last_sequence = last
        return self._corrupt(number, offset, end, line, event, before)

    def _corrupt(
        self, number: int, offset: int, end: int, line: bytes, event: Event | None, before: list[Entry]
    ) -> Entry:
        """The entry of a line that is not used: why, in `FILE:LINE: reason` form, and the
        timestamp of the line accepted before it."""
        if event is None:
            reason = decode_line(line)
            assert isinstance(reason, str)
        elif event.session_id != self.path.stem:
            reason = foreign_session(event.session_id, self.path.stem)
        elif self.last_sequence == 0:
            reason = f"sequence {event.sequence}: a log starts at 1"
        else:
            last = self.last_sequence
            reason = f"sequence {event.sequence} follows {last} (expected {last + 1})"
        ts = next((entry[4].ts for entry in reversed(before) if entry[4] is not None), self.last_ts)
        return (number, offset, end, ts, None, f"{self.path}:{number + 1}: {reason}")

    def _learn(self, event: Event) -> None:
        self.session_id = event.session_id
        if event.type == "session.created":
            payload = event.payload
            self.parent_id = payload.get("parentSessionId")
            self.agent_name = payload.get("agentName")
            self.title = payload.get("title")

    def _read_complete(self, budget: int) -> bytes:
        """Bytes from the read offset to the end of the last complete line within `budget` (a
        longer line is read whole; not past the `horizon`); b"" if no complete line is there yet.

        Reads go through the descriptor kept open (`_reader`): a follower reads every grown log
        at every poll, and with the `horizon` known a read is one `pread` (the size needs no
        `fstat`). A log replaced under that descriptor is what `changed()` reports."""
        horizon = self.horizon
        offset = self.offset
        if horizon is not None and horizon <= offset:
            self.caught_up = True
            return b""  # nothing new at the last look (`changed()` just stat'ed it)
        try:
            fd = self._reader()
            size = os.fstat(fd).st_size if horizon is None else horizon
            if size <= offset:
                self.caught_up = True
                return b""  # nothing new
            self.caught_up = size - offset <= budget
            data = os.pread(fd, min(budget, size - offset), offset)
            end = data.rfind(b"\n")
            if end < 0 and data:  # one line longer than the budget: read until its newline
                pieces = [data]
                read = len(data)
                while end < 0 and data:
                    data = os.pread(fd, budget, offset + read)
                    pieces.append(data)
                    end = data.rfind(b"\n")
                    if end >= 0:
                        end += read
                    read += len(data)
                data = b"".join(pieces)
        except FileNotFoundError:
            return b""
        except OSError as error:
            self.error = f"{self.path}: {error.strerror or error}"
            return b""
        self.error = None
        return data[: end + 1] if end >= 0 else b""

    def seek(self, cursor: FileCursor) -> None:
        """Read on from `cursor` (a checkpoint's), as if the lines after it were never read."""
        self.lines = cursor.lines
        self.offset = cursor.offset
        self.last_sequence = cursor.last_sequence
        self.resync = cursor.resync
        self.last_ts = cursor.last_ts
        self._fingerprint = b""

    def iter_lines_at(self, offset: int, count: int) -> Iterator[bytes]:
        """`count` complete lines starting at byte `offset` (fewer if the file has fewer), read a
        chunk at a time."""
        if count <= 0:
            return
        # Guess the size from the average line so far; read on while the guess was short.
        average = self.offset // self.lines + 1 if self.lines else 512
        size = min(READ_BYTES * 4, max(4096, int(average * count * 1.25)))
        fd = self._reader()
        carry = b""
        while count > 0:
            data = os.pread(fd, size, offset)
            if not data:
                return
            offset += len(data)
            lines = (carry + data).split(b"\n") if carry else data.split(b"\n")
            carry = lines.pop()
            if len(lines) > count:
                del lines[count:]
            count -= len(lines)
            yield from lines
            size = max(size, 65536)

    def _reader(self) -> int:
        """The descriptor kept open for reading (`pread` needs no seek, so threads share it);
        the file it was opened on is the `_identity` that `changed()` compares the path with."""
        fd = self._read_fd
        if fd is None:
            fd = plain_descriptor(self.path)  # a pipe swapped in for the log: refused, never waited on
            stat = os.fstat(fd)
            self._identity = (stat.st_dev, stat.st_ino)
            self._read_fd = fd
        return fd

    def close(self) -> None:
        """Close the descriptor kept for reading (it is opened again when needed)."""
        fd, self._read_fd = self._read_fd, None
        if fd is not None:
            os.close(fd)

    def read_tail(self, size: int) -> tuple[bytes, list[bytes]]:
        """The first line, and the complete lines within the last `size` bytes (the first line
        not among them unless the file is that short): a look at the end with no index."""
        fd = self._reader()
        end = os.fstat(fd).st_size
        start = max(0, end - size)
        data = os.pread(fd, end - start, start)
        if start:
            data = data[data.find(b"\n") + 1 :]
        lines = data.split(b"\n")[:-1]
        if not start:
            return (lines[0] if lines else b""), lines[1:]
        head = os.pread(fd, 65536, 0)
        while b"\n" not in head and len(head) < start:
            head += os.pread(fd, 65536, len(head))
        return head.split(b"\n", 1)[0], lines

    def read_line(self, number: int) -> bytes:
        """Line `number` (0-based) through the sparse index: one small read, no scan."""
        if self.index is None or number >= self.index.line_count:
            self.refresh()
        if self.index is None:
            raise OSError(self.error or f"{self.path}: unreadable")
        return self.index.read_line(number)
