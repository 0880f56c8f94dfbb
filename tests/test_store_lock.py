"""One writer per session, with real processes: two writers racing on one stored session never
both append (the loser is refused, naming the holder), the lock dies with its holder (SIGKILL),
the tail is read again when the lock is taken, and a full disk is said in plain words without
losing what was written (docs/event-log.md, "One writer per session")."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from store_writer import Writer
from support_events import build_event, build_session

from agent_tui.store import (
    EventLogSequenceError,
    EventLogWriteError,
    JsonlEventLog,
    JsonlFileEventStore,
    SessionLockedError,
)
from agent_tui.store.lock import lock_path

REPO = Path(__file__).resolve().parent.parent
SESSION = "sess_test"


@pytest.fixture
def writers(tmp_path: Path):
    made: list[Writer] = []

    def make(root: Path) -> Writer:
        made.append(Writer(root))
        return made[-1]

    yield make
    for writer in made:
        writer.close()


def sequences(path: Path) -> list[int]:
    return [event.sequence for event in JsonlEventLog(path).replay("strict")]


def start_log(root: Path, count: int = 1) -> Path:
    path = root / f"{SESSION}.jsonl"
    with JsonlEventLog(path) as log:
        for event in build_session(count):
            log.append(event)
    return path


def test_two_processes_racing_on_one_session_never_both_append(tmp_path: Path, writers) -> None:
    root = tmp_path / "sessions"
    path = start_log(root)
    one, two = writers(root), writers(root)
    by_pid = {one.pid: one, two.pid: two}
    wins = {one.pid: 0, two.pid: 0}
    for _trial in range(30):
        last = sequences(path)[-1]
        assert one.ask("read") == two.ask("read") == f"last {last}"
        one.send("append 5")  # both at once: whoever takes the session's lock first writes
        two.send("append 5")
        answers = {one.pid: one.answer(), two.pid: two.answer()}
        won = [pid for pid, answer in answers.items() if answer.startswith("wrote")]
        assert len(won) == 1, answers
        winner = won[0]
        loser = next(pid for pid in answers if pid != winner)
        assert answers[winner] == f"wrote {last + 1} {last + 5}"
        refusal = answers[loser]
        assert refusal.startswith(
            f"refused {path}: session {SESSION} is open in agent-tui pid {winner} since "
        )
        wins[winner] += 1
        for pid in (winner, loser):
            assert by_pid[pid].ask("release") == "released"
        assert not lock_path(path).exists()  # the holder removed its lock file when it let go
    assert sequences(path) == list(range(1, 2 + 5 * 30))  # no duplicate, no gap


def assert_refused(answer: str, *, expected: int, got: int) -> None:
    """`answer` is a writer's report of an append refused for its sequence."""
    assert answer.startswith("error EventLogSequenceError"), answer
    assert f"expected sequence {expected}, refused an append of {got}" in answer, answer


def test_a_writer_that_read_the_log_before_another_wrote_is_refused_after_it(tmp_path: Path, writers) -> None:
    root = tmp_path / "sessions"
    path = start_log(root)
    early, other = writers(root), writers(root)
    assert early.ask("read") == other.ask("read") == "last 1"
    assert other.ask("append 3") == "wrote 2 4"
    assert other.ask("release") == "released"
    # The lock is free now, but the log grew since `early` read it: the tail is read again when
    # the lock is taken, so its append of #2 is refused instead of duplicating #2.
    assert_refused(early.ask("append 1"), expected=5, got=2)
    assert early.ask("read") == "last 4"
    assert early.ask("append 2") == "wrote 5 6"
    assert sequences(path) == [1, 2, 3, 4, 5, 6]


def test_a_writer_that_appended_and_let_go_reads_the_tail_again_before_its_next_append(
    tmp_path: Path, writers
) -> None:
    root = tmp_path / "sessions"
    path = start_log(root)
    early, other = writers(root), writers(root)
    # `early` appended under the lock: it knows the last sequence without reading the file...
    assert early.ask("read") == "last 1"
    assert early.ask("append 2") == "wrote 2 3"
    assert early.ask("release") == "released"  # (the same log object appends next time)
    assert other.ask("read") == "last 3"
    assert other.ask("append 3") == "wrote 4 6"
    assert other.ask("release") == "released"
    # ...until it let go: what it knew then is not trusted at its next append (#4 is refused).
    assert_refused(early.ask("append 1"), expected=7, got=4)
    assert early.ask("read") == "last 6"
    assert early.ask("append 1") == "wrote 7 7"
    assert sequences(path) == [1, 2, 3, 4, 5, 6, 7]


def test_the_lock_dies_with_its_holder_and_the_next_writer_continues_the_chain(
    tmp_path: Path, writers
) -> None:
    root = tmp_path / "sessions"
    path = start_log(root, 3)
    holder = writers(root)
    assert holder.ask("read") == "last 3"
    assert holder.ask("hold") == "wrote 4 4"
    store = JsonlFileEventStore(root)
    with pytest.raises(SessionLockedError) as caught:
        store.claim(SESSION)
    assert f"open in agent-tui pid {holder.pid} since " in str(caught.value)

    os.kill(holder.pid, signal.SIGKILL)
    holder.process.wait(timeout=30)
    assert lock_path(path).exists()  # a dead holder leaves its file; the kernel let go of the lock

    assert store.last_sequence(SESSION) == 4  # read again: the dead writer's #4 is there
    log = store.log(SESSION)
    log.append(build_event(5))
    log.append(build_event(6))
    again = JsonlFileEventStore(root)
    with pytest.raises(SessionLockedError) as caught:
        again.claim(SESSION)
    assert f"pid {os.getpid()}" in str(caught.value)
    store.close()
    assert not lock_path(path).exists()
    again.log(SESSION).append(build_event(7))
    again.close()
    assert sequences(path) == [1, 2, 3, 4, 5, 6, 7]


def test_a_torn_line_of_a_live_writer_is_not_cut_by_another_process(tmp_path: Path, writers) -> None:
    root = tmp_path / "sessions"
    path = start_log(root, 2)
    holder = writers(root)
    assert holder.ask("read") == "last 2"
    assert holder.ask("append 1") == "wrote 3 3"
    with open(path, "ab") as handle:  # as if the holder were half-way through its next write
        handle.write(build_event(4).to_json()[:30])
    before = path.read_bytes()
    log = JsonlEventLog(path)
    with pytest.raises(SessionLockedError):
        log.repair()
    assert path.read_bytes() == before
    assert holder.ask("release") == "released"
    repaired = log.repair()  # now nobody writes it: the torn line is a crash's, and is cut
    assert repaired is not None and repaired.line_number == 4
    log.close()
    assert sequences(path) == [1, 2, 3]


def test_two_processes_on_one_sessions_directory_each_write_their_own_sessions(
    tmp_path: Path, writers
) -> None:
    root = tmp_path / "sessions"
    for session_id in ("sess_a", "sess_b"):
        with JsonlEventLog(root / f"{session_id}.jsonl") as log:
            log.append(build_event(1, "session.created", session_id=session_id))
    first = Writer(root, "sess_a")
    second = Writer(root, "sess_b")
    try:
        assert first.ask("read") == second.ask("read") == "last 1"
        first.send("append 20")
        second.send("append 20")
        assert first.answer() == second.answer() == "wrote 2 21"
    finally:
        first.close()
        second.close()
    for session_id in ("sess_a", "sess_b"):
        assert [e.sequence for e in JsonlEventLog(root / f"{session_id}.jsonl").replay("strict")] == list(
            range(1, 22)
        )


def test_the_lock_is_taken_once_per_session_not_per_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    calls: list[int] = []
    real = fcntl.flock

    def counting(fd: int, operation: int) -> None:
        calls.append(operation)
        real(fd, operation)

    monkeypatch.setattr(fcntl, "flock", counting)
    store = JsonlFileEventStore(tmp_path)
    log = store.log(SESSION)
    for event in build_session(200):
        log.append(event)
    store.close()
    assert calls == [fcntl.LOCK_EX | fcntl.LOCK_NB]


FILL_THE_DISK = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from agent_tui.events import Event, payload_from
    from agent_tui.store import EventLogWriteError, JsonlFileEventStore

    root = Path(sys.argv[1])
    store = JsonlFileEventStore(root)
    log = store.log("sess_full")
    text = "x" * 1500
    sequence = 0
    while True:
        sequence += 1
        kind = "session.created" if sequence == 1 else "model.delta"
        fields = {"cwd": "/", "client": "agent-tui"} if sequence == 1 else {"text": text}
        event = Event(id=f"evt_{sequence}", session_id="sess_full", turn_id=None if sequence == 1 else "t",
                      sequence=sequence, ts="2026-12-01T10:02:00.000Z", type=kind,
                      payload=payload_from(kind, fields))
        try:
            log.append(event)
        except EventLogWriteError as error:
            print(f"{sequence - 1}|{error}|{error.errno}")
            break
    try:
        log.append(event)  # a retry of the same sequence fails the same way, and leaves no trace
    except EventLogWriteError:
        pass
    store.close()
    from agent_tui.store import JsonlEventLog
    print(max(e.sequence for e in JsonlEventLog(root / "sess_full.jsonl").replay("strict")))
    """
)


def test_a_full_disk_is_said_in_words_and_loses_nothing_already_written(tmp_path: Path) -> None:
    unshare = shutil.which("unshare")
    assert unshare is not None, "this test needs unshare (Debian package util-linux)"
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    script = tmp_path / "fill.py"
    script.write_text(FILL_THE_DISK)
    command = (
        f"mount -t tmpfs -o size=64k tmpfs {mount_point} && "
        f"exec {sys.executable} {script} {mount_point}/sessions"
    )
    done = subprocess.run(
        [unshare, "--user", "--map-root-user", "--mount", "sh", "-c", command],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    kept, message, number = first.split("|")
    assert int(number) == 28
    assert message == f"{mount_point}/sessions/sess_full.jsonl: No space left on device"
    assert int(kept) > 10
    assert int(second) == int(kept)  # every event stored before the disk filled replays


def test_a_failed_write_names_the_file_and_the_reason_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from agent_tui.store import jsonl as jsonl_module

    path = tmp_path / f"{SESSION}.jsonl"
    log = JsonlEventLog(path)
    for event in build_session(3):
        log.append(event)
    before = path.read_bytes()
    real = os.write

    def partly(fd: int, data: bytes) -> int:
        if fd != log._fd:
            return real(fd, data)
        if len(data) > 40:
            return real(fd, bytes(data)[:40])  # a short write; the next one says why
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jsonl_module.os, "write", partly)
    with pytest.raises(EventLogWriteError) as caught:
        log.append(build_event(4))
    assert str(caught.value) == f"{path}: No space left on device"
    assert "Errno" not in str(caught.value) and "short write" not in str(caught.value)
    assert path.read_bytes() == before
    monkeypatch.undo()
    log.append(build_event(4))
    log.close()
    assert sequences(path) == [1, 2, 3, 4]


def test_an_undo_never_cuts_bytes_this_append_did_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agent_tui.store import jsonl as jsonl_module

    path = tmp_path / f"{SESSION}.jsonl"
    log = JsonlEventLog(path)
    for event in build_session(3):
        log.append(event)
    foreign = build_event(4, text="another writer's line").to_json() + b"\n"
    real = os.write

    def intruded(fd: int, data: bytes) -> int:
        if fd != log._fd:
            return real(fd, data)
        with open(path, "ab") as handle:  # a writer that ignores the lock got there first
            handle.write(foreign)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(jsonl_module.os, "write", intruded)
    with pytest.raises(EventLogWriteError):
        log.append(build_event(4))
    monkeypatch.undo()
    assert path.read_bytes().endswith(foreign)  # not ours: left where it is
    with pytest.raises(EventLogSequenceError):
        log.append(build_event(4))
    log.close()


def test_a_program_the_holder_started_does_not_keep_the_session_locked(tmp_path: Path, writers) -> None:
    root = tmp_path / "sessions"
    start_log(root)
    holder = writers(root)
    assert holder.ask("claim") == "claimed"
    child = int(holder.ask("spawn").split()[1])
    try:
        os.kill(holder.pid, signal.SIGKILL)
        holder.process.wait(timeout=30)
        os.kill(child, 0)  # the child lives on
        store = JsonlFileEventStore(root)
        store.claim(SESSION)  # but holds no lock: the descriptor closed when it started
        store.close()
    finally:
        os.kill(child, signal.SIGKILL)


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_a_link_planted_at_the_lock_path_is_never_written_through(tmp_path: Path, link: str) -> None:
    root = tmp_path / "sessions"
    path = start_log(root)
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    planted = lock_path(path)
    if link == "symbolic":
        planted.symlink_to(victim)
    else:
        os.link(victim, planted)
    log = JsonlEventLog(path)
    with pytest.raises(EventLogWriteError) as caught:
        log.append(build_event(2))
    assert str(caught.value).startswith(f"{planted}: ")
    assert victim.read_text() == "keep me\n"
    assert sequences(path) == [1]


def test_a_symbolic_link_in_place_of_the_log_is_not_appended_through(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    victim = tmp_path / "empty.txt"  # empty: reads as an empty log, so only the open refuses
    victim.write_text("")
    (root / f"{SESSION}.jsonl").symlink_to(victim)
    log = JsonlEventLog(root / f"{SESSION}.jsonl")
    with pytest.raises(EventLogWriteError) as caught:
        log.append(build_event(1, "session.created"))
    assert str(caught.value) == f"{root / SESSION}.jsonl: Too many levels of symbolic links"
    log.close()
    assert victim.read_text() == ""


def test_two_headless_runs_on_one_sessions_directory_both_finish(tmp_path: Path) -> None:
    import orjson

    scenario = tmp_path / "scenario.json"
    steps = [
        {"text": ["Listing."], "toolCalls": [{"tool": "shell", "args": {"cmd": "echo listed"}}]},
        {"text": ["Done."]},
    ]
    scenario.write_bytes(
        orjson.dumps({"sessions": [{"prompt": "go", "steps": steps}] * 2, "policy": {"default": "allow"}})
    )
    root = tmp_path / "sessions"
    command = [sys.executable, "-m", "agent_tui", "run", str(scenario), "--sessions-dir", str(root)]
    runs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    for run in runs:
        _out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    logs = sorted(root.glob("*.jsonl"))
    assert len(logs) == 4
    for log in logs:
        numbers = sequences(log)
        assert numbers == list(range(1, len(numbers) + 1))
    assert list(root.glob("*.lock")) == []  # each run let go of its sessions when it ended
