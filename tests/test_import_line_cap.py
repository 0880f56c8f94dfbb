"""Import holds no line past its cap: a line of a foreign log longer than `MAX_LINE_BYTES` is
read in bounded memory (measured, never held whole) and becomes a `source.record` saying how long
it was and where (FILE:LINE); the lines after it are imported as they would be without it, with
their own numbers. The cap is lowered here (1 MB) so a line many times past it stays small."""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from support_importers import FIXTURES, events_of

from agent_tui.importers import import_path, source_lines
from agent_tui.importers.convert import SessionLogWriter, SourceFile
from agent_tui.importers.follow import ForeignTail

CAP = 1 << 20
LONG = 20 << 20  # twenty times the cap


@pytest.fixture(autouse=True)
def lowered_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source_lines, "MAX_LINE_BYTES", CAP)


def write_with_long_line(source: Path, target: Path, after: int, *, as_is: bool = False) -> int:
    """`source`'s lines (each given a newline, unless `as_is`) with a JSON line of about `LONG`
    bytes after line `after`, written in pieces (the test never holds it); returns the long
    line's length without its newline."""
    lines = source.read_bytes().splitlines(keepends=True) if as_is else whole_lines(source)
    head = b'{"type":"assistant","message":{"content":[{"type":"text","text":"'
    tail = b'"}]}}'
    with target.open("wb") as out:
        out.writelines(lines[:after])
        out.write(head)
        piece = b"x" * (1 << 20)
        for _ in range(LONG // len(piece)):
            out.write(piece)
        out.write(tail + b"\n")
        out.writelines(lines[after:])
    return len(head) + LONG + len(tail)


def whole_lines(path: Path) -> list[bytes]:
    """The lines of a fixture log, each with its newline (the last one may have none)."""
    return [line.rstrip(b"\n") + b"\n" for line in path.read_bytes().splitlines()]


def said(events: list[Any]) -> list[tuple[str, Any]]:
    """What the import made, without ids and sequences (which a record in between moves)."""
    kept = []
    for event in events:
        if event.type == "source.record" and event.payload["recordType"] == "line-too-long":
            continue
        kept.append((event.type, event.payload.get("text") or event.payload.get("content")))
    return kept


def one_log(kind: str, fixture: str) -> Path:
    return sorted((FIXTURES / kind / fixture).rglob("*.jsonl"))[0]


@pytest.mark.parametrize(
    ("kind", "fixture"), [("claude_code", "v1.0-inline-sidechain"), ("codex", "mid-0.39")]
)
def test_a_line_past_the_cap_is_a_record_of_its_length_in_bounded_memory(
    tmp_path: Path, kind: str, fixture: str
) -> None:
    source = one_log(kind, fixture)
    plain_dir, long_dir = tmp_path / "plain", tmp_path / "long"
    plain_dir.mkdir()
    long_dir.mkdir()
    (plain_dir / source.name).write_bytes(b"".join(whole_lines(source)))
    long_log = long_dir / source.name
    length = write_with_long_line(source, long_log, after=3)
    with long_log.open("ab") as out:
        out.write(b"{not json\n")  # its number says whether the lines after the long one kept theirs
    bad_line = len(source.read_bytes().splitlines()) + 2

    expected = import_path(plain_dir, tmp_path / "plain-out")
    tracemalloc.start()
    try:
        report = import_path(long_dir, tmp_path / "long-out")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert peak < 4 * CAP, f"peak {peak:,} bytes for a {length:,}-byte line"
    assert (
        f"{long_log}:4: a line of {length:,} bytes, longer than the {CAP:,} bytes read of a line"
        in "\n".join(report.warnings)
    )
    assert any(warning.startswith(f"{long_log}:{bad_line}: not valid JSON") for warning in report.warnings)
    events = events_of(tmp_path / "long-out")
    (record,) = [
        e for e in events if e.type == "source.record" and e.payload["recordType"] == "line-too-long"
    ]
    assert (record.payload["data"]["bytes"], record.payload["data"]["where"]) == (length, f"{long_log}:4")
    (bad,) = [e for e in events if e.type == "source.record" and "{not json" in str(e.payload["data"])]
    assert said([e for e in events if e is not bad]) == said(events_of(tmp_path / "plain-out"))
    assert expected.counts.source_records + 2 == report.counts.source_records


def test_a_torn_final_line_past_the_cap_is_measured_too(tmp_path: Path) -> None:
    source = one_log("claude_code", "v1.0-inline-sidechain")
    (tmp_path / "in").mkdir()
    log = tmp_path / "in" / source.name
    log.write_bytes(b"".join(whole_lines(source)))
    lines = len(whole_lines(source))
    with log.open("ab") as out:
        out.write(b'{"type":"user","message":"' + b"y" * (3 * CAP))  # no end, no newline
    tracemalloc.start()
    try:
        report = import_path(tmp_path / "in", tmp_path / "out")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * CAP
    length = 26 + 3 * CAP
    assert any(w.startswith(f"{log}:{lines + 1}: a line of {length:,} bytes") for w in report.warnings)


def test_following_a_log_reads_a_long_line_in_bounded_memory_and_goes_on(tmp_path: Path) -> None:
    """The replay's follower reads appended lines the same way; a long line still being written
    waits (it is measured again at the next poll) and is recorded once it ends."""
    source = one_log("claude_code", "v1.0-inline-sidechain")
    (tmp_path / "in").mkdir()
    log = tmp_path / "in" / source.name
    lines = whole_lines(source)
    log.write_bytes(b"".join(lines[:3]))
    (tmp_path / "out").mkdir()
    tail = ForeignTail(SourceFile(log, "claude-code"), SessionLogWriter(tmp_path / "out"))
    assert tail.poll() > 0
    with log.open("ab") as out:
        out.write(b'{"type":"assistant","message":"' + b"z" * (5 * CAP))  # being written
    tracemalloc.start()
    try:
        assert tail.poll() == 0
        with log.open("ab") as out:
            out.write(b'"}\n' + b"".join(lines[3:]))
        assert tail.poll() > 0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * CAP
    tail.writer.close()
    events = events_of(tmp_path / "out")
    (record,) = [
        e for e in events if e.type == "source.record" and e.payload["recordType"] == "line-too-long"
    ]
    data = record.payload["data"]
    assert (data["bytes"], data["where"]) == (31 + 5 * CAP + 2, f"{log}:4")
    assert tail.lines == len(lines) + 1


def test_a_long_line_in_a_session_s_log_does_not_hide_its_sub_agents(tmp_path: Path) -> None:
    """Sub-agents' types are read from their session's log line by line, within the cap too."""
    folder = FIXTURES / "claude_code" / "v2.0-agent-files"
    copy = tmp_path / "in"
    shutil.copytree(folder, copy)
    expected = said(events_of(_imported(folder, tmp_path / "plain")))
    main = next(path for path in sorted(copy.rglob("*.jsonl")) if not path.name.startswith("agent-"))
    original = tmp_path / "main.jsonl"
    shutil.copy(main, original)
    write_with_long_line(original, main, after=1, as_is=True)
    tracemalloc.start()
    try:
        out = _imported(copy, tmp_path / "long")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * CAP
    assert said(events_of(out)) == expected


def _imported(folder: Path, out: Path) -> Path:
    import_path(folder, out)
    return out
