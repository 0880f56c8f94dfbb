"""One session's JSONL event log, and the store that keeps one log per session.

Invariants:
- a line is written with a single `write` of the whole serialized event plus `\\n` (a short
  write is finished by the next one, or undone), so a reader sees either the whole line or a
  torn tail without a newline (after a crash, or for a moment);
- `append` takes exactly `last_sequence + 1`; anything else raises `EventLogSequenceError` and
  writes nothing; a failed write leaves `last_sequence` unchanged, so a retry reuses it;
- appending after a torn tail is refused until `repair()` cuts it off (and reports what it cut);
- `replay()` yields events in file order, checking that each sequence is exactly one more than
  the line before; a corrupt complete line raises `EventLogDecodeError(path, line, reason)`;
  a torn final line is skipped (`skip-trailing-partial`) or is an error (`strict`);
- a missing file replays as empty;
- one writer per session: the first append (or a `repair` that cuts) takes the session's lock
  (`agent_tui.store.lock`) and reads the tail again under it; a second process gets
  `SessionLockedError` naming the holder and writes nothing; `close()` lets go. Replay and the
  other reads never lock;
- undoing a failed append cuts only bytes this append wrote (checked against them), back to the
  end of this process's last verified append: never another writer's line;
- a log is made 0600 (and one left looser by an earlier version is tightened when opened to
  append), its folder 0700 when made here (`private_files`), whatever the umask;
- a write the OS refuses raises `EventLogWriteError`: `FILE: No space left on device`;
- every line's `sessionId` is the log's (its file name without `.jsonl`): a line of another
  session is a corrupt line (`EventLogDecodeError`), not an event of a session nobody started.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson

from agent_tui.events import Event, EventValidationError, event_from_dict, event_from_json, json_problem
from agent_tui.events.validation import BUILDERS_WITH_V, BUILDERS_WITHOUT_V
from agent_tui.private_files import open_plain, open_private
from agent_tui.store.errors import (
    EventLogDecodeError,
    EventLogSequenceError,
    EventLogTornTailError,
    EventLogWriteError,
)
from agent_tui.store.index import LineIndex, TornLine
from agent_tui.store.lock import SessionLock

ReplayMode = Literal["skip-trailing-partial", "strict"]
_CHUNK = 4 * 1024 * 1024
_BATCH = 128 * 1024  # replay's reads: small enough to stay in the CPU cache while decoded


@dataclass(frozen=True)
class TailRepair:
    """What `repair()` cut off the end of a log."""

    path: Path
    line_number: int
    bytes_removed: int

    def describe(self) -> str:
        return (
            f"{self.path}:{self.line_number}: repaired a torn final line "
            f"({self.bytes_removed} bytes without a newline were cut off)"
        )


def iter_lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """Yield `(offset, line_without_newline, complete)` for every line of `path`.

    Reads in 4 MiB chunks, so memory stays flat for any file size. Only the last line can be
    incomplete (no newline at the end of the file).
    """
    with open_plain(path) as handle:  # a FIFO put in its place: not waited on
        carry = b""
        offset = 0
        while data := handle.read(_CHUNK):
            if carry:
                data = carry + data
            lines = data.split(b"\n")
            carry = lines.pop()
            for line in lines:
                yield offset, line, True
                offset += len(line) + 1
        if carry:
            yield offset, carry, False


def _line_batches(path: Path, start: int) -> Iterator[tuple[list[bytes], bytes]]:
    """Like `iter_lines` from `start` to the end, a chunk's complete lines at a time (for replay's
    inner loop). Yields `(lines, torn)`; `torn` is non-empty only in the last item.

    Chunks are small (`_BATCH`) so that a chunk's lines are still in the CPU cache when they are
    decoded; a line longer than a chunk is collected piecewise and joined once.
    """
    with open_plain(path) as handle:  # a FIFO put in its place: not waited on
        handle.seek(start)
        read = handle.read
        pieces: list[bytes] = []  # the start of a line that no chunk so far has ended
        while True:
            data = read(_BATCH)
            if not data:
                break
            lines = data.split(b"\n")
            rest = lines.pop()
            if pieces and lines:
                pieces.append(lines[0])
                lines[0] = b"".join(pieces)
                pieces = []
            if rest:
                pieces.append(rest)
            if lines:
                yield lines, b""
        if pieces:
            yield [], b"".join(pieces)


class JsonlEventLog:
    """The log of one session: append, replay and random access by line.

    Args:
        path: where the log lives (`<sessions-dir>/<sessionId>.jsonl`: its name says whose
            session it holds); need not exist yet.
        fsync: flush every append to disk, not only to the OS (slower; survives power loss).
    """

    def __init__(self, path: Path | str, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.session_id = self.path.stem
        self.fsync = fsync
        self._fd: int | None = None
        self._line_index: LineIndex | None = None  # built on first use: a replay needs none
        self._last_sequence: int | None = None  # cached only while the lock is held
        self._end = 0  # file size after our last append (valid while `_fd` is open)
        self._lock = SessionLock(self.path)

    # -- reading -----------------------------------------------------------------------------
    @property
    def index(self) -> LineIndex:
        # Indexing reads the whole file; a replay from the start reads it anyway and needs no
        # index, so a log that is only replayed never pays for one.
        if self._line_index is None:
            self._line_index = LineIndex(self.path)
        return self._line_index

    def __len__(self) -> int:
        """Complete lines in the log (as of the last refresh)."""
        return self.index.line_count

    def read(self, n: int) -> Event:
        """Event on line `n` (0-based) without reading the lines before it."""
        line = self.index.read_line(n)
        try:
            event = event_from_json(line)
        except EventValidationError as error:
            raise EventLogDecodeError(self.path, n + 1, error.reason) from None
        if event.session_id != self.session_id:
            raise EventLogDecodeError(self.path, n + 1, foreign_session(event.session_id, self.session_id))
        return event

    def replay(self, mode: ReplayMode = "skip-trailing-partial", *, start_line: int = 0) -> Iterator[Event]:
        """Yield every event in order, checking the sequence chain.

        Args:
            mode: `skip-trailing-partial` ignores a final line without a newline; `strict`
                raises `EventLogDecodeError` for it.
            start_line: begin at this 0-based line (the chain is checked from there on).
        """
        start = self._start_offset(start_line)
        if start is None:
            return
        # `expected` is the sequence the next line must have, an int >= 2 once a first line was
        # accepted. The first line has no `expected` for the fast path (the builders need it >= 2),
        # so it is checked by `_check_line` against `first`: 1, or any sequence when the replay
        # starts mid-log. Each line is either accepted with sequence `expected` or ends the
        # replay, so the next line's number is `expected + offset`: no line counter in the loop.
        expected: int | None = None
        first = None if start_line else 1
        offset = 0
        path = self.path
        session = self.session_id
        loads = orjson.loads
        # One generated function per event type checks a decoded line completely and builds its
        # Event (see `agent_tui.events.model`); whatever it does not accept, a chain break
        # included, raises and goes to `_check_line`, which names the error or, for a valid line
        # the fast path does not take (the first one, one without `v`), returns its event.
        build = BUILDERS_WITH_V
        for lines, torn in _line_batches(path, start):
            for line in lines:
                try:
                    data = loads(line)
                    event = build[data["type"]](data, expected)
                    if event.session_id != session:
                        raise LookupError  # another session's line: `_check_line` names it
                    # The log's own id string in place of the line's equal copy: its hash is
                    # computed once, so a fold's look-up of the session by it compares identities.
                    event.session_id = session
                except Exception:
                    line_number = start_line + 1 if expected is None else expected + offset
                    wanted = first if expected is None else expected
                    event, build = _check_line(path, line, line_number, wanted, session)
                    offset = line_number - event.sequence
                expected = event.sequence + 1  # the builder checked it is `expected` on its path
                yield event
            if torn and mode == "strict":
                line_number = start_line + 1 if expected is None else expected + offset
                raise EventLogDecodeError(path, line_number, "torn final line (no newline)")

    def _start_offset(self, start_line: int) -> int | None:
        """The byte offset of line `start_line` (None when the log or that line does not exist)."""
        if not self.path.exists():
            return None
        if not start_line:
            return 0
        self.index.extend()
        if start_line > self.index.line_count:
            return None
        if start_line == self.index.line_count:
            return self.index.complete_bytes()  # only a torn tail (if any) is left
        return self.index.line_span(start_line)[0]

    # -- writing -----------------------------------------------------------------------------
    @property
    def last_sequence(self) -> int:
        """Sequence of the last complete event (0 for an empty log).

        Read from the file again whenever this log does not hold the session's lock (another
        process may have written since); cached while it does (nobody else can write then).
        """
        if self._last_sequence is None or not self._lock.held:
            self.index.extend()
            count = self.index.line_count
            last = self.read(count - 1).sequence if count else 0
            if not self._lock.held:
                return last
            self._last_sequence = last
        return self._last_sequence

    def claim(self) -> None:
        """Become the session's one writer: take its lock (kept until `close()`) and read the
        tail again, since another process may have written before it let go.

        Raises:
            SessionLockedError: another process holds the lock; it is named.
        """
        if self._lock.held:
            return
        self._lock.acquire()
        self._close_fd()
        self.index.extend()
        self._last_sequence = None

    def torn_line(self) -> TornLine | None:
        """The torn final line, if the log ends in one (what was appended is looked at first)."""
        self.index.extend()
        return self.index.torn_line()

    def repair(self) -> TailRepair | None:
        """Cut off a torn final line. Returns what was removed, or None if the tail was clean.

        Cutting is writing: it takes the session's lock first (`SessionLockedError` when another
        process holds it: that torn line may be its append under way), and looks again under it.
        """
        if self.torn_line() is None:
            return None
        self.claim()
        torn = self.torn_line()
        if torn is None:
            return None
        keep = self.index.complete_bytes()
        self._close_fd()
        try:
            os.truncate(self.path, keep)
        except OSError as error:
            raise EventLogWriteError(self.path, error.errno or errno.EIO) from None
        self._line_index = None
        self._last_sequence = None
        return TailRepair(self.path, torn.line_number, torn.size)

    def append(self, event: Event) -> None:
        """Write one event as one line. See the module invariants for what is refused.

        The first append takes the session's lock (`claim`). If the write fails part-way (a full
        disk) or `fsync` fails, the bytes of this append are cut off again before
        `EventLogWriteError` (the OS's reason in words, naming the file) is raised, so the log
        stays whole and a retry with the same sequence works.
        """
        if event.session_id != self.session_id:
            raise ValueError(f"{self.path}: an event of session {event.session_id!r} does not go in this log")
        data = event.to_json() + b"\n"  # first: an event JSON cannot hold leaves no file, no lock
        last = self._last_sequence
        if last is None or not self._lock.held:  # else what `claim` and `last_sequence` would
            self.claim()  # answer (held, the tail read under it), without their calls per event
            last = self.last_sequence
        expected = last + 1
        if event.sequence != expected:
            raise EventLogSequenceError(self.path, expected, event.sequence)
        if self._fd is None:
            torn = self.torn_line()
            if torn is not None:
                raise EventLogTornTailError(self.path, torn.line_number, torn.size)
            try:
                self._fd = open_private(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            except OSError as error:
                raise EventLogWriteError(self.path, error.errno or errno.EIO) from None
            self._end = os.fstat(self._fd).st_size
        try:
            written = os.write(self._fd, data)
            while written < len(data):  # a short write: the next one says why (or finishes)
                more = os.write(self._fd, data[written:])
                if more <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                written += more
            if self.fsync:
                os.fsync(self._fd)
        except BaseException as error:
            self._undo_append(data)
            if isinstance(error, OSError):
                raise EventLogWriteError(self.path, error.errno or errno.EIO) from None
            raise
        self._end += len(data)
        self._last_sequence = event.sequence

    def _undo_append(self, data: bytes) -> None:
        """Cut the file back to where this process's last verified append ended, but only when
        what lies after that point is a prefix of `data` (what this append wrote): another
        writer's bytes are never cut, whatever happened."""
        fd, end = self._fd, self._end
        self._last_sequence = None  # re-read from the file if the cut below fails too
        if fd is None:
            return
        try:
            size = os.fstat(fd).st_size
            if end < size <= end + len(data):
                with open(self.path, "rb") as handle:
                    handle.seek(end)
                    ours = handle.read(size - end) == data[: size - end]
                if ours:
                    os.ftruncate(fd, end)
        except OSError:
            pass
        finally:
            self._close_fd()

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        """Close the file and let go of the session's lock (another process may write it now)."""
        self._close_fd()
        self._lock.release()
        self._last_sequence = None

    def __enter__(self) -> JsonlEventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_line(
    path: Path, line: bytes, line_number: int, expected: int | None, session: str
) -> tuple[Event, dict[str, Any]]:
    """The slow path of `replay()`: the event on a line the fast path did not accept, and the
    builders for the lines after it; raises `EventLogDecodeError` for a bad line or chain break."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        raise EventLogDecodeError(path, line_number, json_problem(error)) from None
    try:
        event = event_from_dict(data)
    except EventValidationError as error:
        raise EventLogDecodeError(path, line_number, error.reason) from None
    if event.session_id != session:
        raise EventLogDecodeError(path, line_number, foreign_session(event.session_id, session))
    if expected is not None and event.sequence != expected:
        raise EventLogDecodeError(path, line_number, _chain_break(event.sequence, expected))
    # A log without `v` (valid, but not what `append` writes) gets the builders for that shape.
    return event, (BUILDERS_WITH_V if "v" in data else BUILDERS_WITHOUT_V)


def foreign_session(found: str, session: str) -> str:
    """Why a line of session `found` is corrupt in the log of `session` (one short sentence)."""
    return f"sessionId {found!r} is not this log's session {session!r} (a log is named <sessionId>.jsonl)"


def _chain_break(sequence: int, expected: int) -> str:
    if expected == 1:
        return f"sequence {sequence}: a log starts at 1"
    return f"sequence {sequence} follows {expected - 1} (expected {expected})"


class EventStore(Protocol):
    """Where the engine persists events. `append` must raise if the event was not stored."""

    async def append(self, event: Event) -> None: ...

    def last_sequence(self, session_id: str) -> int: ...

    def replay(self, session_id: str) -> Iterator[Event]: ...

    def repair(self, session_id: str) -> TailRepair | None: ...

    def close(self) -> None:
        """Let go of what the store holds (open files, session locks), once the engine is done."""


class JsonlFileEventStore:
    """One `JsonlEventLog` per session under a sessions directory.

    Appends are synchronous writes inside an async method, so appends from tasks on one event
    loop never interleave; appends from other processes are kept out by each session's lock,
    taken at its first append and held until `release` or `close`. Args:
        root: the sessions directory (created on first append).
    """

    def __init__(self, root: Path | str, *, fsync: bool = False) -> None:
        self.root = Path(root)
        self.fsync = fsync
        self._logs: dict[str, JsonlEventLog] = {}

    def path_for(self, session_id: str) -> Path:
        if not session_id or "/" in session_id or session_id.startswith("."):
            raise ValueError(f"not a usable session id: {session_id!r}")
        return self.root / f"{session_id}.jsonl"

    def log(self, session_id: str) -> JsonlEventLog:
        log = self._logs.get(session_id)
        if log is None:
            log = self._logs[session_id] = JsonlEventLog(self.path_for(session_id), fsync=self.fsync)
        return log

    async def append(self, event: Event) -> None:
        # `JsonlEventLog.append` never awaits, so on one event loop appends cannot interleave:
        # no lock is needed (and one would cost a loop checkpoint per event).
        self.log(event.session_id).append(event)

    def last_sequence(self, session_id: str) -> int:
        return self.log(session_id).last_sequence

    def replay(self, session_id: str, mode: ReplayMode = "skip-trailing-partial") -> Iterator[Event]:
        return self.log(session_id).replay(mode)

    def repair(self, session_id: str) -> TailRepair | None:
        return self.log(session_id).repair()

    def claim(self, session_id: str) -> None:
        """Become the session's one writer now (its lock, the tail read again); see
        `JsonlEventLog.claim`. Raises `SessionLockedError` naming the process that holds it."""
        self.log(session_id).claim()

    def release(self, session_id: str) -> None:
        """Let go of the session's lock (and close its file): another process may write it now."""
        log = self._logs.pop(session_id, None)
        if log is not None:
            log.close()

    def close(self) -> None:
        """Close every log and let go of every session's lock."""
        for log in self._logs.values():
            log.close()
