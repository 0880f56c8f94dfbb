"""A log holds the session it is named after: a line of another session is a corrupt line named
`FILE:LINE` (in the store, the replay timeline, `--dump`, the listing), two copies of one
session's log are read once with a warning naming both, and `import` refuses a corrupt log of
ours before copying anything (docs/event-log.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import orjson
import pytest
from support_events import build_session

from agent_tui.replay.logfile import LogFile
from agent_tui.runtime.session_dirs import list_stored_sessions
from agent_tui.store import EventLogDecodeError, JsonlEventLog

SAMPLES = Path(__file__).resolve().parent / "sample-logs" / "complete"


def agent_tui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    """A copy of the sample run's sessions directory."""
    directory = tmp_path / "sessions"
    shutil.copytree(SAMPLES, directory)
    return directory


def a_log(directory: Path) -> Path:
    return sorted(directory.glob("*.jsonl"))[0]


def stray_line(path: Path, session_id: str = "sess_ghost") -> int:
    """Append a valid-looking line of `session_id` after the last line of `path`; its number."""
    lines = path.read_bytes().splitlines()
    data = orjson.loads(lines[-1])
    data.update(sessionId=session_id, sequence=data["sequence"] + 1, id="evt_ghost")
    data.update(type="turn.started", turnId="turn_ghost", payload={"promptPreview": "boo"})
    with open(path, "ab") as handle:
        handle.write(orjson.dumps(data) + b"\n")
    return len(lines) + 1


def test_a_line_of_another_session_is_a_file_line_error_in_the_store(tmp_path: Path) -> None:
    path = tmp_path / "sess_test.jsonl"
    path.write_bytes(b"".join(event.to_json() + b"\n" for event in build_session(6)))
    line = stray_line(path)
    with pytest.raises(EventLogDecodeError) as caught:
        list(JsonlEventLog(path).replay())
    assert (caught.value.path, caught.value.line_number) == (path, line)
    assert "sessionId 'sess_ghost' is not this log's session 'sess_test'" in str(caught.value)
    with pytest.raises(EventLogDecodeError):
        JsonlEventLog(path).read(line - 1)
    renamed = tmp_path / "sess_other.jsonl"  # a whole log under another session's name
    shutil.copy(tmp_path / "sess_test.jsonl", renamed)
    with pytest.raises(EventLogDecodeError) as caught:
        list(JsonlEventLog(renamed).replay())
    assert caught.value.line_number == 1


def test_the_store_never_writes_an_event_into_another_sessions_log(tmp_path: Path) -> None:
    log = JsonlEventLog(tmp_path / "sess_test.jsonl")
    with pytest.raises(ValueError, match="an event of session 'sess_other' does not go in this log"):
        log.append(build_session(1, session_id="sess_other")[0])
    assert not (tmp_path / "sess_test.jsonl").exists()


def test_a_line_of_another_session_is_corrupt_in_the_timeline_not_a_session(logs: Path) -> None:
    path = a_log(logs)
    line = stray_line(path)
    file = LogFile(path, 0)
    entries = []
    while batch := file.read_entries():
        entries += batch
    assert len(entries) == line
    *_, last = entries
    assert last[4] is None
    assert last[5] == (
        f"{path}:{line}: sessionId 'sess_ghost' is not this log's session '{path.stem}' "
        "(a log is named <sessionId>.jsonl)"
    )
    assert all(entry[4].session_id == path.stem for entry in entries[:-1])  # type: ignore[union-attr]


def test_dump_stops_at_a_line_of_another_session_with_file_and_line(logs: Path) -> None:
    path = a_log(logs)
    line = stray_line(path)
    for target in (path, logs):
        result = agent_tui("replay", str(target), "--dump", "state")
        assert result.returncode == 3, result.stderr
        assert result.stderr.startswith(
            f"agent-tui: {path}:{line}: sessionId 'sess_ghost' is not this log's session"
        )
        assert "sess_ghost" not in result.stdout  # no phantom session in what was dumped
        assert "Traceback" not in result.stderr


def test_two_copies_of_one_log_are_read_once_with_a_warning_naming_both(logs: Path) -> None:
    original = a_log(logs)
    copy = logs / f"{original.stem} (copy).jsonl"
    shutil.copy(original, copy)
    result = agent_tui("replay", str(logs), "--dump", "events")
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        f"agent-tui: {copy}: session {original.stem} is also in {original} (this copy left out)\n"
    )
    seen = Counter(
        (line["sessionId"], line["sequence"]) for line in map(orjson.loads, result.stdout.splitlines())
    )
    assert max(seen.values()) == 1
    expected = sum(path.read_bytes().count(b"\n") for path in SAMPLES.glob("*.jsonl"))
    assert sum(seen.values()) == expected

    two_folders = logs.parent / "backups"  # the same log in two folders under one PATH
    for name in ("monday", "tuesday"):
        (two_folders / name).mkdir(parents=True)
        shutil.copy(original, two_folders / name / original.name)
    result = agent_tui("replay", str(two_folders), "--dump", "events")
    assert result.returncode == 0, result.stderr
    kept, left = two_folders / "monday" / original.name, two_folders / "tuesday" / original.name
    assert (
        result.stderr
        == f"agent-tui: {left}: session {original.stem} is also in {kept} (this copy left out)\n"
    )
    assert len(result.stdout.splitlines()) == original.read_bytes().count(b"\n")


def test_the_listing_names_a_copy_and_a_log_of_another_session(logs: Path) -> None:
    original = a_log(logs)
    copy = logs / "copied.jsonl"
    shutil.copy(original, copy)
    lines = original.read_bytes().splitlines()
    stray = orjson.loads(lines[0])
    stray["sessionId"] = "sess_nowhere"
    (logs / "sess_elsewhere.jsonl").write_bytes(orjson.dumps(stray) + b"\n")
    listed = {session.path.name: session for session in list_stored_sessions(logs)}
    assert listed["copied.jsonl"].status == "unreadable"
    assert listed["copied.jsonl"].session_id == "copied"
    assert listed["copied.jsonl"].problem == (
        f"a copy of session {original.stem}, which is in {original} (this copy left out)"
    )
    assert listed["sess_elsewhere.jsonl"].problem == (
        "line 1: sessionId 'sess_nowhere' is not this log's session 'sess_elsewhere' "
        "(a log is named <sessionId>.jsonl)"
    )
    assert [s.session_id for s in listed.values()].count(original.stem) == 1


def test_import_refuses_a_corrupt_log_of_ours_and_copies_nothing(logs: Path, tmp_path: Path) -> None:
    path = a_log(logs)
    lines = path.read_bytes().splitlines()
    lines[3] = b"{not json"
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "imported"
    result = agent_tui("import", str(logs), "--out", str(out))
    assert result.returncode == 3
    assert result.stderr.startswith(f"agent-tui: {path}:4: not JSON")
    assert "nothing was imported" in result.stderr and "Traceback" not in result.stderr
    assert "copied" not in result.stdout
    assert not out.exists()

    shutil.copy(SAMPLES / path.name, path)
    line = stray_line(path)
    result = agent_tui("import", str(path), "--out", str(out))
    assert result.returncode == 3
    assert result.stderr.startswith(f"agent-tui: {path}:{line}: sessionId 'sess_ghost'")
    assert not out.exists()


def test_import_copies_a_log_with_a_torn_tail_without_it_and_says_so(logs: Path, tmp_path: Path) -> None:
    path = a_log(logs)
    whole = path.read_bytes()
    with open(path, "ab") as handle:
        handle.write(b'{"v":1,"id":"ev')
    out = tmp_path / "imported"
    result = agent_tui("import", str(logs), "--out", str(out))
    assert result.returncode == 0, result.stderr
    count = whole.count(b"\n")
    assert (
        result.stderr
        == f"agent-tui: {path}:{count + 1}: a torn final line (15 bytes without a newline) was left out\n"
    )
    assert (out / path.name).read_bytes() == whole
    assert "copied 7 agent-tui logs" in result.stdout
