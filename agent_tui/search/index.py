"""The search index: an SQLite FTS5 table over the searchable text of a directory of logs.

The logs stay the source of truth; the index is a cache of what they say, in one SQLite file
(`index_path`), kept current by `SearchIndex.sync` and read by `SearchIndex.search` (and, for
what each log spent, `SearchIndex.spend`).

Invariants:
- per log file the index remembers its size, mtime, inode, a hash of its first line and the byte
  offset indexed through (always the end of a complete line); `sync` reads only what was
  appended after that offset. A log that shrank below it, has another inode or another first
  line (truncated, replaced, rewritten) is indexed again from its start; a log that is gone
  leaves the index;
- per log it also keeps what the log spent (`search.spend.LogSpend`, asked by `spend` and
  `logs_spend`), folded from the lines read, never one line twice: a log indexed again from its
  start folds again from nothing;
- a row's rowid is `file id << 32 | line`, so a file's rows are one rowid range (dropped in one
  statement) and results come out grouped by file, newest file first;
- an answer still open at the end of a log (its deltas may go on) is indexed, and on the next
  `sync` indexed again from its first line together with what followed, so the index equals
  one made from the whole log at once;
- a line that is not JSON or not an event is skipped and counted (`FileStatus.corrupt`, the
  first one's line number); a torn last line (no newline yet) waits for its newline. Nothing
  in a log makes `sync` raise; an unreadable file is reported in `SyncReport.unreadable`;
- files are brought up to date in `BEGIN IMMEDIATE` transactions (a batch of files each) in
  which each file's record is read again first, so two processes syncing one index never index
  a line twice;
- a log that cannot be read (an OSError at any read) leaves the index as it was, and the next
  sync reads it from the same place: what is new in it is read whole before its rows are
  written (more than one read chunk: written as read, in a savepoint of its own), and its
  record (a new log's row in `files`) is written last;
- the index file is made 0600 before SQLite opens it (SQLite gives its `-wal`/`-shm` the same
  mode), its folders 0700 when made here (`private_files`): it holds what the logs say;
- an index of another schema version, or a file SQLite cannot read as a database, is deleted
  and built again from the logs (`SearchIndex.open`).
- `sync_unchanged` says what a sync would report when it has nothing to do, from the index's
  records and one `stat` per log, and writes nothing; otherwise it says None.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, field, fields
from pathlib import Path

from agent_tui.private_files import make_private_dirs, private_sqlite_file
from agent_tui.search.query import Query, parse_query

TYPE_CHECKING = False  # `typing` costs a search's start-up
if TYPE_CHECKING:  # the reading of new lines (and orjson) is imported by a sync that reads some
    from typing import BinaryIO

    from agent_tui.reducer.earlier_spend import EarlierSpend
    from agent_tui.search.extract import Row
    from agent_tui.search.reading import LogReading

SCHEMA_VERSION = 3
LINE_BITS = 32
HEAD_BYTES = 4096
"""How much of a file's first line is hashed to tell a replaced file from a grown one."""
TAIL_BYTES = 256
"""How much before the place indexing resumes from is hashed, to tell a log rewritten in place
(same first line, as long or longer) from one that grew."""
BATCH_BYTES = 16 << 20
"""Logs are indexed in transactions of about this many bytes read: FTS5 writes its pending terms
as a segment at each commit (and when they outgrow its hash), so many small transactions would
repeat both the commits and the merging of small segments."""
COUNT_CAP = 10_000
"""Matches are counted up to this many (a count beyond it is said as `10000+`)."""

_SCHEMA = """
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    head TEXT NOT NULL,
    offset INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    resume_offset INTEGER NOT NULL,
    resume_line INTEGER NOT NULL,
    resume_corrupt INTEGER NOT NULL,
    resume_tail TEXT NOT NULL,
    corrupt INTEGER NOT NULL,
    first_corrupt INTEGER,
    session_id TEXT,
    agent_name TEXT,
    title TEXT,
    spend TEXT
);
CREATE VIRTUAL TABLE hits USING fts5(
    text, kind UNINDEXED, turn UNINDEXED, sequence UNINDEXED,
    columnsize = 0,
    tokenize = 'unicode61 remove_diacritics 2'
);
"""


class SearchError(Exception):
    """The index cannot be used (its file cannot be opened or written); one sentence."""


@dataclass(frozen=True)
class FileStatus:
    """What the index knows of one log."""

    path: Path
    session_id: str | None
    lines: int
    corrupt: int
    first_corrupt: int | None
    """The 1-based line number of the first corrupt line, if any."""


@dataclass
class SyncReport:
    """What one `sync` did."""

    files: int = 0
    indexed: int = 0
    """Files that had something new (or were indexed again from their start)."""
    reindexed: list[Path] = field(default_factory=list)
    """Files found truncated or replaced, indexed again from their start."""
    removed: int = 0
    rows: int = 0
    bytes: int = 0
    corrupt: list[FileStatus] = field(default_factory=list)
    """Every log with corrupt lines (all of them, not only the ones read this time)."""
    unreadable: list[tuple[Path, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Progress:
    """How far a `sync` is: bytes read of those to read, files looked at of all."""

    done_bytes: int
    total_bytes: int
    done_files: int
    total_files: int


@dataclass(frozen=True)
class Hit:
    """One searchable text that matched."""

    path: Path
    session_id: str
    agent_name: str | None
    title: str | None
    turn_id: str
    sequence: int
    line: int
    kind: str
    text: str

    @property
    def session_name(self) -> str:
        from agent_tui.events.session_tree import session_label  # (and `typing`) when printed

        return session_label(self.agent_name, self.title, self.session_id)


@dataclass(frozen=True)
class SearchResults:
    """The hits of one query, newest log first and in log order within a log."""

    query: Query
    hits: tuple[Hit, ...]
    total: int
    """How many texts matched (up to `COUNT_CAP`; see `more`)."""
    more: bool = False
    """More than `COUNT_CAP` matched."""


@dataclass
class _Known:
    id: int
    size: int
    mtime_ns: int
    inode: int
    head: str
    offset: int
    lines: int
    resume_offset: int
    resume_line: int
    resume_corrupt: int
    resume_tail: str
    corrupt: int
    first_corrupt: int | None
    session_id: str | None
    agent_name: str | None
    title: str | None
    spend: str | None


_KNOWN_COLUMNS = [column.name for column in fields(_Known)]
_KNOWN = ", ".join(_KNOWN_COLUMNS)
"""The columns of `files` a `_Known` holds, in its order: `id`, then what `_record` writes."""
_RECORD = f"UPDATE files SET {' = ?, '.join(_KNOWN_COLUMNS[1:])} = ? WHERE id = ?"
_INSERT = f"INSERT INTO files (path, {_KNOWN}) VALUES (?{', ?' * len(_KNOWN_COLUMNS)})"


_Planned = tuple[Path, os.stat_result, int, _Known | None]
"""A log to look at in a sync: its path, its status, where its reading would resume, and what the
index knew of it when the sync began (None: nothing)."""


def _head_hash(handle: BinaryIO, size: int) -> str:
    import hashlib  # only for a log read: a search with nothing changed hashes nothing

    handle.seek(0)
    first = handle.read(min(size, HEAD_BYTES))
    newline = first.find(b"\n")
    if newline >= 0:
        first = first[: newline + 1]
    return hashlib.sha256(first).hexdigest()[:32]


def _unchanged(known: _Known, status: os.stat_result) -> bool:
    """Whether a log is as it was indexed (then it is not even opened)."""
    return _same(known.inode, known.size, known.mtime_ns, known.offset, status)


def _same(inode: int, size: int, mtime_ns: int, offset: int, status: os.stat_result) -> bool:
    """Whether a log indexed with this inode, size and modification time, through `offset`, is
    as it was (`_unchanged`)."""
    return inode == status.st_ino and size == status.st_size == offset and mtime_ns == status.st_mtime_ns


def _replaced(handle: BinaryIO, known: _Known, fresh: os.stat_result, head: str) -> bool:
    """Whether a log is other than the one indexed, grown (truncated, replaced, rewritten in
    place): then it is indexed again from its start."""
    return (
        known.inode != fresh.st_ino
        or known.head != head
        or fresh.st_size < known.offset
        or _tail_hash(handle, known.resume_offset) != known.resume_tail
    )


def _tail_hash(handle: BinaryIO, offset: int) -> str:
    import hashlib

    start = max(0, offset - TAIL_BYTES)
    handle.seek(start)
    return hashlib.sha256(handle.read(offset - start)).hexdigest()[:32]


class SearchIndex:
    """The index of one directory of logs, in the SQLite file `path` (see the module docstring).

    One instance belongs to one thread (SQLite connections do); another thread or process opens
    its own on the same file.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._db = connection
        self.path = path

    @classmethod
    def open(cls, path: Path) -> SearchIndex:
        """Open (or create, or rebuild when stale or unreadable) the index in `path`.

        Raises:
            SearchError: its directory cannot be made, or the file cannot be opened.
        """
        try:
            make_private_dirs(path.parent)
        except OSError as error:
            raise SearchError(f"{path.parent}: {error.strerror or error}") from None
        for attempt in (1, 2):
            try:
                private_sqlite_file(path)
            except OSError as error:
                raise SearchError(f"{path}: {error.strerror or error}") from None
            try:
                connection = cls._connect(path)
                return cls(connection, path)
            except sqlite3.DatabaseError as error:
                if attempt == 2:
                    raise SearchError(f"{path}: cannot be used as a search index ({error})") from None
                cls._remove(path)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _remove(path: Path) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(f"{path}{suffix}")
            except FileNotFoundError:
                pass
            except OSError as error:
                raise SearchError(f"{path}{suffix}: {error.strerror or error}") from None

    @classmethod
    def _connect(cls, path: Path) -> sqlite3.Connection:
        connection = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version == SCHEMA_VERSION:
                connection.execute("SELECT count(*) FROM files").fetchone()
                return connection
            connection.execute("BEGIN IMMEDIATE")
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:  # another process may have made it meanwhile
                connection.execute("DROP TABLE IF EXISTS hits")
                connection.execute("DROP TABLE IF EXISTS files")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        connection.execute(statement)
                # Merge eight segments at a time, not four: about a tenth less work while building,
                # and no slower to query.
                connection.execute("INSERT INTO hits (hits, rank) VALUES ('automerge', 8)")
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            connection.close()
            raise
        return connection

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- keeping it current ----------------------------------------------------------------------
    def sync(
        self,
        files: Sequence[Path],
        progress: Callable[[Progress], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> SyncReport:
        """Bring the index up to date with `files` (every log of the directory: one not listed
        leaves the index). `progress` is called now and then; `stop` returning True ends the
        sync early (what was indexed stays).

        Raises:
            SearchError: the index cannot be written (a full disk, a lock held for too long).
        """
        try:
            return self._sync(files, progress, stop)
        except sqlite3.Error as error:
            raise SearchError(f"{self.path}: {error}") from None

    def _sync(
        self,
        files: Sequence[Path],
        progress: Callable[[Progress], None] | None,
        stop: Callable[[], bool] | None,
    ) -> SyncReport:
        report = SyncReport(files=len(files))
        plan = self._plan(files, report)
        total = sum(max(0, status.st_size - resume) for _path, status, resume, _known in plan)
        done = batch = 0
        db = self._db
        in_transaction = False
        try:
            for number, (path, status, _resume, known) in enumerate(plan):
                if stop is not None and stop():
                    break
                if known is not None and _unchanged(known, status):
                    known_now: _Known | None = known  # as it was read: no need to ask the file again
                else:  # asked again: another process may have indexed it since the plan
                    known_now = self._load(str(path.absolute()))
                if known_now is None or not _unchanged(known_now, status):
                    if not in_transaction:
                        db.execute("BEGIN IMMEDIATE")
                        in_transaction = True
                    read = self._sync_one(path, report)
                    done += read
                    batch += read
                    if batch >= BATCH_BYTES:
                        db.execute("COMMIT")
                        in_transaction, batch = False, 0
                if progress is not None:
                    progress(Progress(min(done, total), total, number + 1, len(plan)))
        except BaseException:
            if in_transaction:
                db.execute("ROLLBACK")
            raise
        if in_transaction:
            db.execute("COMMIT")
        report.corrupt = self._statuses("WHERE corrupt > 0")
        return report

    def sync_unchanged(self, files: Sequence[Path | str]) -> SyncReport | None:
        """The report of `sync(files)` when it would find nothing to do, without doing it: every
        log of `files` in the index as it was last read (its inode, size and modification time,
        read through its end) and no other log in it. None when a sync has something to do (or
        for no files). Such logs are the very ones a sync took before, so a caller may also skip
        finding out again what they are (`agent-tui search` a second time). A log given as a
        `str` is taken as the key the index keeps it by, `str(path.absolute())`: it spares making
        and printing a `Path` of each."""
        try:
            rows = self._db.execute("SELECT path, inode, size, mtime_ns, offset FROM files").fetchall()
        except sqlite3.Error:
            return None
        known: dict[str, tuple[int, int, int, int]] = {
            path: (inode, size, mtime, offset) for path, inode, size, mtime, offset in rows
        }
        if not files or len(known) != len(files):
            return None
        stat_of = os.stat
        for file in files:
            key = file if isinstance(file, str) else str(file.absolute())
            was = known.get(key)
            try:
                if was is None or not _same(*was, stat_of(key)):
                    return None
            except OSError:
                return None
        try:
            return SyncReport(files=len(files), corrupt=self._statuses("WHERE corrupt > 0"))
        except sqlite3.Error as error:
            raise SearchError(f"{self.path}: {error}") from None

    def _plan(self, files: Sequence[Path], report: SyncReport) -> list[_Planned]:
        """The logs to look at, oldest first (the newest get the highest ids), each with where
        its reading would resume and what the index knew of it; the index lets go of the logs
        gone or unreadable."""
        wanted = {str(path.absolute()): path for path in files}
        known = self._known()
        for gone in set(known) - set(wanted):
            self._drop(known[gone].id)
            report.removed += 1
        plan: list[_Planned] = []
        for key, path in wanted.items():
            try:
                status = os.stat(path)
                if not stat.S_ISREG(status.st_mode):  # a FIFO or a device would block or never end
                    raise OSError(0, "not a regular file")
            except OSError as error:
                report.unreadable.append((path, error.strerror or str(error)))
                if key in known:
                    self._drop(known[key].id)
                continue
            was = known.get(key)
            plan.append((path, status, 0 if was is None else was.resume_offset, was))
        plan.sort(key=lambda item: (item[1].st_mtime_ns, str(item[0])))
        return plan

    def _sync_one(self, path: Path, report: SyncReport) -> int:
        """Index one log in the caller's transaction (an unreadable one is reported and leaves the
        index as it was: see `_index_from`); the bytes read."""
        try:
            return self._sync_file(path, report)
        except OSError as error:
            report.unreadable.append((path, error.strerror or str(error)))
            return 0

    def _drop(self, file_id: int) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            low = file_id << LINE_BITS
            db.execute("DELETE FROM hits WHERE rowid >= ? AND rowid < ?", (low, low + (1 << LINE_BITS)))
            db.execute("DELETE FROM files WHERE id = ?", (file_id,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _known(self) -> dict[str, _Known]:
        """What the index knows of every log, by its absolute path."""
        rows = self._db.execute(f"SELECT path, {_KNOWN} FROM files").fetchall()
        return {path: _Known(*row) for path, *row in rows}

    def _load(self, key: str) -> _Known | None:
        row = self._db.execute(f"SELECT {_KNOWN} FROM files WHERE path = ?", (key,)).fetchone()
        return _Known(*row) if row is not None else None

    def _sync_file(self, path: Path, report: SyncReport) -> int:
        """Index what is new in one log (inside the caller's transaction); the bytes read."""
        key = str(path.absolute())
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO put in its place must not block
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.close(descriptor)
            raise OSError(0, "not a regular file")
        with open(descriptor, "rb") as handle:
            fresh = os.fstat(handle.fileno())
            known = self._load(key)  # again, inside the transaction: another process may have run
            if known is not None and _unchanged(known, fresh):
                return 0
            head = _head_hash(handle, fresh.st_size)
            start = (0, 0, 0)
            if known is not None and _replaced(handle, known, fresh, head):
                report.reindexed.append(path)
            elif known is not None:
                start = (known.resume_offset, known.resume_line, known.resume_corrupt)
            return self._index_from(handle, path, self._reading(known, start), fresh, head, report)

    def _index_from(
        self,
        handle: BinaryIO,
        path: Path,
        reading: LogReading,
        fresh: os.stat_result,
        head: str,
        report: SyncReport,
    ) -> int:
        """Index one log from where `reading` starts (its resume point, or its start) to its last
        complete line, and record where it is now; the bytes read.

        What is new in a log of one read chunk is read whole before anything is written, so an
        OSError leaves the index as it was without a savepoint: FTS5 writes its pending terms as
        a new segment at every savepoint (and at every statement that needs a statement journal,
        such as a range DELETE), and one segment per log is what it would then merge again and
        again. A larger log is written as it is read, in a savepoint of its own.
        """
        from agent_tui.search.extract import RowBuilder
        from agent_tui.search.reading import READ_CHUNK

        builder, start = RowBuilder(reading.file_id << LINE_BITS), reading.line
        if fresh.st_size - reading.offset <= READ_CHUNK:
            rows: list[Row] = []
            count, read = reading.read(handle, fresh.st_size, builder, rows.extend)
            tail = _tail_hash(handle, reading.pending[0])
            self._clear_from(reading.file_id, start)
            self._insert(rows)
        else:
            self._db.execute("SAVEPOINT one_log")
            try:
                self._clear_from(reading.file_id, start)
                count, read = reading.read(handle, fresh.st_size, builder, self._insert)
                tail = _tail_hash(handle, reading.pending[0])
            except OSError:
                self._db.execute("ROLLBACK TO one_log")
                raise
            finally:
                self._db.execute("RELEASE one_log")
        report.rows += count
        report.bytes += read
        report.indexed += 1
        self._record(reading, path, fresh, head, tail)
        return read

    def _clear_from(self, file_id: int, line: int) -> None:
        """Drop a log's rows from `line` on (an answer that was open, or the whole log read
        again); asked first, as a DELETE ends FTS5's pending segment."""
        bounds = ((file_id << LINE_BITS) + line, (file_id + 1) << LINE_BITS)
        if self._db.execute("SELECT 1 FROM hits WHERE rowid >= ? AND rowid < ? LIMIT 1", bounds).fetchone():
            self._db.execute("DELETE FROM hits WHERE rowid >= ? AND rowid < ?", bounds)

    def _reading(self, known: _Known | None, start: tuple[int, int, int]) -> LogReading:
        """Where the reading of a log starts: its id (the next free one for a new log, whose row
        `_record` makes), what its lines before `start` said, and from where its spend goes on."""
        from agent_tui.search.reading import LogReading
        from agent_tui.search.spend import LogSpend

        offset, line, corrupt = start
        if known is None:  # (the transaction holds the write lock: no one else takes this id)
            (free,) = self._db.execute("SELECT coalesce(max(id), 0) + 1 FROM files").fetchone()
            return LogReading(free, offset, line, corrupt)
        return LogReading(
            known.id,
            offset,
            line,
            corrupt,
            known.first_corrupt if offset else None,
            (known.session_id, known.agent_name, known.title),
            LogSpend.loads(known.spend) if offset else LogSpend(),
            known.offset if offset else 0,
        )

    def _record(self, reading: LogReading, path: Path, fresh: os.stat_result, head: str, tail: str) -> None:
        """Remember where a log was read through, where to resume (`tail`: the hash of what
        precedes it), and what it said; a new log's row is made here."""
        session_id, agent_name, title = reading.names
        pending_offset, pending_line, pending_corrupt = reading.pending
        record = _Known(
            reading.file_id,
            fresh.st_size,
            fresh.st_mtime_ns,
            fresh.st_ino,
            head,
            reading.offset,
            reading.line,
            pending_offset,
            pending_line,
            pending_corrupt,
            tail,
            reading.corrupt,
            reading.first_corrupt,
            session_id if isinstance(session_id, str) else path.stem,
            agent_name if isinstance(agent_name, str) else None,
            title if isinstance(title, str) else None,
            reading.spend.dumps(),
        )
        values = astuple(record)
        if self._db.execute(_RECORD, (*values[1:], record.id)).rowcount == 0:
            self._db.execute(_INSERT, (str(path.absolute()), *values))

    def _insert(self, rows: list[Row]) -> None:
        if rows:
            self._db.executemany(
                "INSERT INTO hits (rowid, sequence, turn, kind, text) VALUES (?, ?, ?, ?, ?)", rows
            )

    def files(self) -> list[FileStatus]:
        """Every log the index knows, in path order."""
        return self._statuses("")

    def _statuses(self, where: str) -> list[FileStatus]:
        """The logs `where` (an SQL condition on `files`, or nothing) picks, in path order."""
        return [
            FileStatus(Path(path), session_id, lines, corrupt, first_corrupt)
            for path, session_id, lines, corrupt, first_corrupt in self._db.execute(
                f"SELECT path, session_id, lines, corrupt, first_corrupt FROM files {where} ORDER BY path"
            )
        ]

    def spend(self) -> dict[str, EarlierSpend]:
        """What each indexed log spent, in all, per day, and the latest budget it set after its
        head, by its session id (see `agent_tui.search.spend`)."""
        from agent_tui.search.spend import LogSpend

        return {
            session_id: LogSpend.loads(spend).as_earlier()
            for session_id, spend in self._db.execute("SELECT session_id, spend FROM files ORDER BY id")
        }

    # -- asking it ---------------------------------------------------------------------------------
    def search(self, query: str | Query, limit: int = 200) -> SearchResults:
        """The texts matching `query` (see `agent_tui.search.query`), at most `limit` of them.

        Raises:
            QueryError: the query cannot be read.
            SearchError: the index cannot be read.
        """
        parsed = parse_query(query) if isinstance(query, str) else query
        try:
            return self._search(parsed, limit)
        except sqlite3.Error as error:  # our own expressions are quoted: the index's trouble, not the query's
            raise SearchError(f"{self.path}: {error}") from None

    def _search(self, parsed: Query, limit: int) -> SearchResults:
        expression = parsed.fts_expression()
        found = self._db.execute(
            "SELECT rowid, kind, turn, sequence, text FROM hits WHERE hits MATCH ? ORDER BY rowid DESC LIMIT ?",
            (expression, limit),
        ).fetchall()
        counted = self._db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM hits WHERE hits MATCH ? LIMIT ?)",
            (expression, COUNT_CAP + 1),
        ).fetchone()[0]
        files: dict[int, tuple[str, str | None, str | None, str | None]] = {}
        by_file: dict[int, list[Hit]] = {}
        for rowid, kind, turn, sequence, text in found:
            file_id, line = rowid >> LINE_BITS, rowid & ((1 << LINE_BITS) - 1)
            if file_id not in files:
                row = self._db.execute(
                    "SELECT path, session_id, agent_name, title FROM files WHERE id = ?", (file_id,)
                ).fetchone()
                if row is None:
                    continue
                files[file_id] = row
            path, session_id, agent_name, title = files[file_id]
            by_file.setdefault(file_id, []).append(
                Hit(Path(path), session_id or "", agent_name, title, turn, int(sequence), line, kind, text)
            )
        hits = tuple(hit for file_id in by_file for hit in reversed(by_file[file_id]))
        return SearchResults(parsed, hits, min(counted, COUNT_CAP), more=counted > COUNT_CAP)
