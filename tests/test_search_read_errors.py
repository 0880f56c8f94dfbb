"""A log that cannot be read to its end leaves the search index as it was.

The index writes no savepoint per log (FTS5 would write a segment at each), so what keeps a failed
read from leaving half a log behind is the order of its work: every read of a log comes before
its rows and record are written (a log longer than one read chunk is written as read, in a
savepoint). The read error here is a real file's: `open` in the index's module gives the file
opened for real, whose `read` raises EIO at its n-th call, for every n at which a clean sync
reads (the first line's hash, the tail before the resume point, each chunk of new lines, the
tail recorded). After each, the index is compared with what it was, row for row and record for
record, through a connection of its own; then a sync without the fault must give what an index
made in one go gives.
"""

from __future__ import annotations

import errno
import io
import os
import random
import sqlite3
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from test_search_index import event, history

import agent_tui.search.index as index_module
import agent_tui.search.reading as reading_module
from agent_tui.search import SearchIndex

Dump = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]


class _FailingReads:
    """A file opened for real whose `read` raises EIO at its `fail_at`-th call (0: never)."""

    def __init__(self, file: BinaryIO, fail_at: int, calls: list[int]) -> None:
        self._file, self._fail_at, self._calls = file, fail_at, calls

    def read(self, size: int = -1) -> bytes:
        self._calls.append(size)
        if len(self._calls) == self._fail_at:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return self._file.read(size)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def fileno(self) -> int:
        return self._file.fileno()

    def __enter__(self) -> _FailingReads:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()


def fail_reads(monkeypatch: pytest.MonkeyPatch, log: Path, fail_at: int) -> list[int]:
    """Make the `fail_at`-th read of `log` by the index fail (0: none); the reads made, as made."""
    calls: list[int] = []
    inode = log.stat().st_ino

    def opener(descriptor: int, mode: str) -> Any:
        assert mode == "rb"
        file = io.open(descriptor, "rb")  # noqa: SIM115, UP020 (closed by the index; `open` is replaced)
        if os.fstat(descriptor).st_ino != inode:
            return file
        return _FailingReads(file, fail_at, calls)

    monkeypatch.setattr(index_module, "open", opener, raising=False)
    return calls


def dump(path: Path) -> Dump:
    """Every row (by log and line) and every log's record, read by a connection of its own."""
    with sqlite3.connect(path) as connection:
        rows = connection.execute(
            "SELECT f.path, h.rowid & 0xffffffff, h.kind, h.turn, h.sequence, h.text"
            " FROM hits h JOIN files f ON f.id = h.rowid >> 32 ORDER BY f.path, h.rowid"
        ).fetchall()
        orphans = connection.execute(
            "SELECT count(*) FROM hits WHERE rowid >> 32 NOT IN (SELECT id FROM files)"
        ).fetchone()[0]
        files = connection.execute(
            "SELECT path, size, offset, lines, resume_offset, resume_line, resume_tail, corrupt, spend"
            " FROM files ORDER BY path"
        ).fetchall()
    connection.close()
    assert orphans == 0
    return rows, files


def made_in_one_go(tmp_path: Path, logs: list[Path]) -> Dump:
    path = tmp_path / "one-go.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with SearchIndex.open(path) as index:
        index.sync(logs)
    return dump(path)


def write_log(path: Path, seed: int, turns: int) -> list[bytes]:
    lines, _ = history(random.Random(seed), path.stem, turns)
    path.write_bytes(b"".join(lines))
    return lines


@pytest.fixture(params=["one read", "read in chunks"])
def chunks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A log read whole before it is written, or one longer than a read chunk (then written as
    read, in a savepoint)."""
    if request.param == "read in chunks":
        monkeypatch.setattr(reading_module, "READ_CHUNK", 300)
    return str(request.param)


def test_a_read_error_in_a_new_log_leaves_no_row_of_it_and_the_next_sync_indexes_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: str
) -> None:
    first, second = tmp_path / "sess_first.jsonl", tmp_path / "sess_second.jsonl"
    write_log(first, 1, 3)
    write_log(second, 2, 4)
    os.utime(second, ns=(first.stat().st_mtime_ns + 10**9,) * 2)  # indexed after the first
    reads = fail_reads(monkeypatch, second, 0)
    with SearchIndex.open(tmp_path / "clean.sqlite3") as clean:
        clean.sync([first, second])
    total = len(reads)
    assert total >= (3 if chunks == "one read" else 6)  # a hash, the lines, the tail recorded
    for fail_at in range(1, total + 1):
        path = tmp_path / f"failed-at-{fail_at}.sqlite3"
        fail_reads(monkeypatch, second, fail_at)
        with SearchIndex.open(path) as index:
            report = index.sync([first, second])  # one transaction: the second fails after the first
            assert report.unreadable == [(second, os.strerror(errno.EIO))], fail_at
            assert dump(path) == made_in_one_go(tmp_path, [first]), fail_at
            fail_reads(monkeypatch, second, 0)
            again = index.sync([first, second])
            assert (again.unreadable, again.indexed) == ([], 1), fail_at
            assert dump(path) == made_in_one_go(tmp_path, [first, second]), fail_at


def test_a_read_error_in_what_a_log_appended_leaves_its_open_answer_and_resume_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunks: str
) -> None:
    log = tmp_path / "sess_grown.jsonl"
    head = event("sess_grown", 1, "session.created", {"cwd": "/w", "client": "t"}, None)
    open_answer = event("sess_grown", 2, "model.delta", {"text": "deploy sta"})
    rest = write_log(tmp_path / "rest.jsonl", 3, 4)[1:]
    log.write_bytes(head + open_answer)
    path = tmp_path / "kept.sqlite3"
    with SearchIndex.open(path) as index:
        index.sync([log])
        before = dump(path)
        assert [row[2] for row in before[0]] == ["answer"]  # the open answer, indexed as it is
        with log.open("ab") as handle:
            handle.write(event("sess_grown", 3, "model.delta", {"text": "ging now"}) + b"".join(rest))
        copy = tmp_path / "copy.sqlite3"
        with sqlite3.connect(path) as source, sqlite3.connect(copy) as target:
            source.backup(target)
        source.close()
        target.close()
        reads = fail_reads(monkeypatch, log, 0)
        with SearchIndex.open(copy) as clean:  # the same sync, counted
            assert clean.sync([log]).indexed == 1
        total = len(reads)
        assert total >= (4 if chunks == "one read" else 7)  # two hashes, the lines, the tail recorded
        for fail_at in range(1, total + 1):
            fail_reads(monkeypatch, log, fail_at)
            report = index.sync([log])
            assert report.unreadable == [(log, os.strerror(errno.EIO))], fail_at
            assert dump(path) == before, fail_at
        fail_reads(monkeypatch, log, 0)
        index.sync([log])
        assert dump(path) == made_in_one_go(tmp_path, [log])
        (hit,) = index.search('"deploy staging now"').hits
        assert (hit.line, hit.kind) == (1, "answer")
