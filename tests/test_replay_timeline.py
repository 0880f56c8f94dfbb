"""The lazy replay timeline: the state at any cursor, the merge order, bad lines, following.

Real log files in `tmp_path`; the reference is always the plain reducer (`project_state`) over
the same events in the timeline's order, read back one by one from disk.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from replay_logs import SessionLog, turn_events
from support_pipes import returns_without_waiting

from agent_tui.events import Event
from agent_tui.reducer import project_state
from agent_tui.replay.kinds import KIND_NAMES
from agent_tui.replay.logfile import Entry
from agent_tui.replay.timeline import Timeline
from agent_tui.replay.view import FULL_TURNS, TimelineView, end_snapshot

SHAPES = ("tool", "denied", "failed", "compress", "plain")


def index_all(timeline: Timeline, batch: int = 4096) -> None:
    while timeline.index_some(batch):
        pass


def events_of(timeline: Timeline) -> list[Event]:
    events = []
    for index in range(timeline.total):
        event = timeline.event_at(index)
        if event is not None:
            events.append(event)
    return events


def prefix_events(timeline: Timeline, position: int) -> list[Event]:
    return [e for e in (timeline.event_at(i) for i in range(position)) if e is not None]


# -- generated logs ----------------------------------------------------------------------------


@st.composite
def session_logs(draw: Any) -> tuple[list[SessionLog], list[list[bytes]]]:
    """A few sessions (children among them), interleaved in time with ties; some end in a turn
    still running, some carry an event for a turn that ended, some have corrupt lines."""
    count = draw(st.integers(1, 3))
    rng = random.Random(draw(st.integers(0, 2**32)))
    plans: list[list[tuple[str | None, str, dict[str, Any]]]] = []
    for k in range(count):
        events: list[tuple[str | None, str, dict[str, Any]]] = []
        shapes = draw(st.lists(st.sampled_from(SHAPES), max_size=5))
        for turn, shape in enumerate(shapes, 1):
            events += [(f"turn_{k}_{turn}", kind, payload) for kind, payload in turn_events(turn, shape)]
        cut = draw(st.integers(0, 5))
        if cut and events:
            del events[-min(cut, len(events)) :]
        if len(shapes) >= 2 and draw(st.booleans()):  # a late event for the first turn
            events.append((f"turn_{k}_1", "model.delta", {"text": "late"}))
        plans.append(events)
    logs = []
    for k in range(count):
        log = SessionLog(f"sess_{k}")
        parent = f"sess_{rng.randrange(k)}" if k and rng.random() < 0.7 else None
        log.created(0, parent=parent, name=f"agent{k}")
        logs.append(log)
    # Interleave the sessions on one clock that often does not move (same-millisecond ties).
    clock = 0
    pending = [list(plan) for plan in plans]
    while any(pending):
        k = rng.choice([i for i, plan in enumerate(pending) if plan])
        turn_id, kind, payload = pending[k].pop(0)
        clock += rng.choice((0, 0, 1, 3))
        logs[k].add(kind, turn_id, payload, clock)
    corrupted = []
    for log in logs:
        lines = list(log.lines)
        for _ in range(draw(st.integers(0, 2))):
            at = rng.randrange(1, len(lines) + 1)
            bad = rng.choice([b'{"v":1, not json', lines[at - 1], b"[1, 2]"])
            lines.insert(at, bad)
        corrupted.append(lines)
    return logs, corrupted


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(session_logs(), st.integers(2, 9), st.integers(1, 40), st.data())
def test_the_state_at_any_cursor_equals_the_reducer_over_the_prefix(
    logs: tuple[list[SessionLog], list[list[bytes]]], every: int, batch: int, data: st.DataObject
) -> None:
    sessions, files = logs
    # Some of each log is there when indexing starts; the rest is appended and followed.
    cuts = [data.draw(st.integers(0, len(lines))) for lines in files]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for log, lines, cut in zip(sessions, files, cuts, strict=True):
            path = Path(tmp) / f"{log.session_id}.jsonl"
            path.write_bytes(b"".join(line + b"\n" for line in lines[:cut]))
            paths.append(path)
        timeline = Timeline(paths, every=every)
        index_all(timeline, batch)
        for path, lines, cut in zip(paths, files, cuts, strict=True):
            with path.open("ab") as handle:
                handle.write(b"".join(line + b"\n" for line in lines[cut:]))
        timeline.poll()
        assert timeline.total == sum(len(lines) for lines in files)
        view = TimelineView(timeline)
        positions = data.draw(st.lists(st.integers(0, timeline.total), min_size=1, max_size=12))
        for position in [*positions, timeline.total, 0]:
            expected = project_state(prefix_events(timeline, position))
            assert view.seek(position, hydrate_all=True) == expected, position
            # Without hydrating everything, the turns the detail shows whole are whole.
            session_id = data.draw(st.sampled_from([log.session_id for log in sessions]))
            shown = view.seek(position, session_id).sessions.get(session_id)
            if shown is not None:
                assert shown.turns[-FULL_TURNS:] == expected.sessions[session_id].turns[-FULL_TURNS:]
        snapshot = end_snapshot(timeline)
        assert TimelineView(timeline).adopt(snapshot) is not None
        full = TimelineView(timeline)
        full.adopt(snapshot)
        assert full.seek(timeline.total, hydrate_all=True) == project_state(events_of(timeline))
        for file in timeline.files:
            file.close()


# -- order -------------------------------------------------------------------------------------


def test_each_files_lines_keep_their_order_and_time_never_goes_back(tmp_path: Path) -> None:
    rng = random.Random(5)
    logs = [SessionLog(f"sess_{k}") for k in range(4)]
    clock = 0
    for log in logs:
        log.created(clock)
    for turn in range(1, 6):
        for log in rng.sample(logs, len(logs)):
            for kind, payload in turn_events(turn):
                clock += rng.choice((0, 1))
                log.add(kind, f"turn_{turn}", payload, clock)
    timeline = Timeline([log.write(tmp_path) for log in logs], every=16)
    index_all(timeline, 7)
    events = events_of(timeline)
    assert len(events) == sum(log.sequence for log in logs)
    assert [e.ts for e in events] == sorted(e.ts for e in events)
    for log in logs:
        mine = [e.sequence for e in events if e.session_id == log.session_id]
        assert mine == list(range(1, log.sequence + 1))


def test_a_child_created_in_the_same_millisecond_follows_its_parents_spawn_call(tmp_path: Path) -> None:
    # The child's id sorts first, so a tie broken by session id alone would put it first.
    parent = SessionLog("sess_b_parent")
    child = SessionLog("sess_a_child")
    grandchild = SessionLog("sess_0_grandchild")
    parent.created(0, name="lead")
    parent.add("turn.started", "t1", {"promptPreview": "go"}, 5)
    spawn = {"toolCallId": "c1", "tool": "spawn_agent", "argsPreview": "explorer"}
    parent.add("tool.started", "t1", spawn, 10)
    child.created(10, parent="sess_b_parent", name="explorer")
    child.add("turn.started", "t2", {"promptPreview": "look"}, 10)
    child.add("tool.started", "t2", {**spawn, "toolCallId": "c2"}, 10)
    grandchild.created(10, parent="sess_a_child", name="helper")
    parent.add("tool.completed", "t1", {"toolCallId": "c1", "tool": "spawn_agent", "result": "ok"}, 10)
    paths = sorted(log.write(tmp_path) for log in (parent, child, grandchild))
    timeline = Timeline(paths)
    index_all(timeline)
    order = [(e.session_id, e.type) for e in events_of(timeline)]
    assert order.index(("sess_a_child", "session.created")) > order.index(("sess_b_parent", "tool.started"))
    assert order.index(("sess_a_child", "session.created")) > order.index(("sess_b_parent", "tool.completed"))
    assert order.index(("sess_0_grandchild", "session.created")) > order.index(
        ("sess_a_child", "tool.started")
    )


def test_sessions_that_name_each_other_as_parent_still_merge_every_line(tmp_path: Path) -> None:
    # A corrupt pair of logs: each says the other spawned it. A child's rank walks its parents,
    # which must stop at the cycle.
    logs = [SessionLog("sess_a"), SessionLog("sess_b"), SessionLog("sess_c")]
    logs[0].created(10, parent="sess_b", name="a")
    logs[1].created(10, parent="sess_c", name="b")
    logs[2].created(10, parent="sess_a", name="c")
    timeline = Timeline(sorted(log.write(tmp_path) for log in logs))
    index_all(timeline)
    assert sorted(e.session_id for e in events_of(timeline)) == ["sess_a", "sess_b", "sess_c"]


# -- marks, bad input --------------------------------------------------------------------------


def test_marks_and_kinds_name_turns_compressions_approvals_and_failures(tmp_path: Path) -> None:
    log = SessionLog("sess_marks")
    log.created(0)
    for turn, shape in enumerate(("tool", "compress", "denied", "failed"), 1):
        for kind, payload in turn_events(turn, shape):
            log.add(kind, f"turn_{turn}", payload, turn * 100)
    timeline = Timeline([log.write(tmp_path)], every=5)
    index_all(timeline)
    names = [KIND_NAMES[code] for code in timeline.kinds]
    assert [names[i] for i in timeline.marks["turn"]] == ["turn.started"] * 4
    assert [names[i] for i in timeline.marks["compress"]] == ["context.compacted"]
    assert [names[i] for i in timeline.marks["approval"]] == ["permission.resolved:ask"] * 3
    # A denied call is the user's answer, not a failure; a timed-out tool and an error end are.
    assert [names[i] for i in timeline.marks["failure"]] == ["tool.failed", "turn.completed:error"]


def test_a_corrupt_line_is_marked_with_file_and_line_and_the_replay_goes_past_it(tmp_path: Path) -> None:
    log = SessionLog("sess_bad")
    log.created(0)
    for turn in (1, 2):
        for kind, payload in turn_events(turn, "plain"):
            log.add(kind, f"turn_{turn}", payload, turn)
    lines = list(log.lines)
    lines.insert(4, b'{"v":1, this is not json')
    lines.insert(9, lines[8])  # a repeated line: its sequence does not follow
    path = tmp_path / "sess_bad.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    timeline = Timeline([path], every=3)
    index_all(timeline)
    messages = [message for _index, message in timeline.errors]
    assert messages[0].startswith(f"{path}:5: not JSON at column ")
    assert messages[1:] == [f"{path}:10: sequence 8 follows 8 (expected 9)"]
    assert [index for index, _message in timeline.errors] == list(timeline.marks["failure"]) == [4, 9]
    assert timeline.error_at(4) == timeline.errors[0][1]
    end = TimelineView(timeline).seek(timeline.total, hydrate_all=True)
    assert end.sessions["sess_bad"].last_sequence == log.sequence  # every good line replayed
    assert end == project_state(events_of(timeline))
    assert len(events_of(timeline)) == log.sequence


def test_an_unreadable_log_is_named_with_its_reason_and_the_others_replay(tmp_path: Path) -> None:
    good = SessionLog("sess_good")
    good.created(0)
    unreadable = tmp_path / "sess_dir.jsonl"
    unreadable.mkdir()  # reading it fails the way a file without permission does, even for root
    timeline = Timeline([good.write(tmp_path), unreadable])
    index_all(timeline)
    assert timeline.unreadable() == [f"{unreadable}: Is a directory"]
    assert timeline.total == 1


# -- following ---------------------------------------------------------------------------------


def plain_log(session_id: str, turns: int, start_ms: int = 0) -> SessionLog:
    log = SessionLog(session_id)
    log.created(start_ms)
    for turn in range(1, turns + 1):
        for kind, payload in turn_events(turn, "plain"):
            log.add(kind, f"turn_{turn}", payload, start_ms + turn * 10)
    return log


def test_appended_lines_and_new_logs_join_and_a_torn_line_waits(tmp_path: Path) -> None:
    log = plain_log("sess_a", 3)
    path = tmp_path / "sess_a.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in log.lines[:5]))
    timeline = Timeline([path], watch_dir=tmp_path, every=4)
    index_all(timeline)
    assert timeline.total == 5
    with path.open("ab") as handle:
        handle.write(b"".join(line + b"\n" for line in log.lines[5:10]) + log.lines[10][:7])
    result = timeline.poll()
    assert (result.added, timeline.total) == (5, 10)  # the torn line waits for its newline
    with path.open("ab") as handle:
        handle.write(log.lines[10][7:] + b"\n")
    plain_log("sess_b", 1, start_ms=100).write(tmp_path)
    result = timeline.poll()
    assert result.new_files == 1 and timeline.total == 11 + plain_log("sess_b", 1).sequence
    assert TimelineView(timeline).seek(timeline.total, hydrate_all=True) == project_state(events_of(timeline))


def test_a_truncated_and_regrown_log_is_indexed_again_with_a_notice(tmp_path: Path) -> None:
    first = plain_log("sess_a", 4)
    path = first.write(tmp_path)
    other = plain_log("sess_b", 4, start_ms=1).write(tmp_path)
    timeline = Timeline([path, other], watch_dir=tmp_path, every=4)
    index_all(timeline)
    view = TimelineView(timeline)
    before = view.seek(timeline.total, "sess_a").sessions["sess_a"]
    assert len(before.turns) == 4
    # Cut back to two turns: the size shows it.
    path.write_bytes(b"".join(line + b"\n" for line in first.lines[: 1 + 2 * len(turn_events(1, "plain"))]))
    result = timeline.poll()
    assert result.notices == [f"{path}: truncated; indexed again from its start"]
    assert len(view.seek(timeline.total, "sess_a").sessions["sess_a"].turns) == 2
    # Truncate, then regrow past the old size with other content before a poll: the size alone
    # would not show it, the bytes before the read offset do.
    path.write_bytes(b"")
    second = plain_log("sess_a", 6)
    second.lines = [line.replace(b':"prompt ', b':"new prompt ') for line in second.lines]
    path.write_bytes(b"".join(line + b"\n" for line in second.lines))
    result = timeline.poll()
    assert result.notices == [f"{path}: rewritten; indexed again from its start"]
    assert result.rewound_to == 0
    after = view.seek(timeline.total, "sess_a", hydrate_all=True)
    assert after == project_state(events_of(timeline))
    prompts = [turn.prompt_preview for turn in after.sessions["sess_a"].turns]
    assert prompts == [f"new prompt {n}" for n in range(1, 7)]


def test_a_replaced_log_is_noticed_by_its_inode(tmp_path: Path) -> None:
    path = plain_log("sess_a", 2).write(tmp_path)
    timeline = Timeline([path], watch_dir=tmp_path, every=4)
    index_all(timeline)
    fresh = tmp_path / "fresh.tmp"
    fresh.write_bytes(b"".join(line + b"\n" for line in plain_log("sess_a", 1).lines))
    os.replace(fresh, path)
    result = timeline.poll()
    assert result.notices == [f"{path}: replaced; indexed again from its start"]
    assert timeline.total == plain_log("sess_a", 1).sequence


def test_a_replaced_log_is_not_read_on_through_the_descriptor_kept_on_the_old_file(
    tmp_path: Path,
) -> None:
    """Reads go through a descriptor kept open: the old file, replaced and still written to by
    its writer, must not be read on; the new file is indexed from its start."""
    old = plain_log("sess_a", 3)
    path = tmp_path / "sess_a.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in old.lines[:4]))
    timeline = Timeline([path], watch_dir=tmp_path, every=4)
    index_all(timeline)
    assert timeline.total == 4
    with path.open("ab") as writer:  # the old writer keeps the old file open
        fresh = tmp_path / "fresh.tmp"
        fresh.write_bytes(b"".join(line + b"\n" for line in plain_log("sess_a", 1).lines))
        os.replace(fresh, path)
        writer.write(b"".join(line + b"\n" for line in old.lines[4:]))  # past the new one's size
    result = timeline.poll()
    assert result.notices == [f"{path}: replaced; indexed again from its start"]
    assert timeline.total == plain_log("sess_a", 1).sequence
    assert TimelineView(timeline).seek(timeline.total, hydrate_all=True) == project_state(events_of(timeline))
    assert timeline.poll().added == 0  # and the old file's lines never come later


def test_a_log_older_than_what_is_shown_is_put_in_its_place(tmp_path: Path) -> None:
    late = plain_log("sess_a", 2, start_ms=0)
    recent = plain_log("sess_b", 2, start_ms=60_000)
    timeline = Timeline([recent.write(tmp_path)], watch_dir=tmp_path, every=3)
    index_all(timeline)
    late.write(tmp_path)
    result = timeline.poll()
    assert result.rewound_to == 0 and result.new_files == 1
    events = events_of(timeline)
    assert [e.session_id for e in events] == ["sess_a"] * late.sequence + ["sess_b"] * recent.sequence


def test_a_view_left_behind_by_a_rewind_is_not_hydrated_from_the_cut_archive(tmp_path: Path) -> None:
    """Following, the clock redraws the detail while a poll that rewound the timeline (cutting
    back the archive the view's marks share) is still indexing: that redraw must not read the
    archive past where it has grown back to, and the view's next move shows the logs as they are."""
    slow = SessionLog("sess_a")  # a turn every 2 s: a log starting mid-way arrives late
    slow.created(0)
    for turn in range(1, 501):
        for kind, payload in turn_events(turn, "plain"):
            slow.add(kind, f"turn_{turn}", payload, turn * 2_000)
    timeline = Timeline([slow.write(tmp_path)], watch_dir=tmp_path, every=64)
    index_all(timeline)
    view = TimelineView(timeline, full_turns=1)
    assert len(view.seek(timeline.total, "sess_a").sessions["sess_a"].turns) == 500
    plain_log("sess_b", 1, start_ms=100_000).write(tmp_path)
    redraws: list[int] = []

    def redraw() -> None:  # the follow tick, between two of the poll's batches
        if not redraws:
            view.hydrate("sess_a", 500)
        redraws.append(timeline.total)

    assert timeline.poll(redraw).rewound_to not in (None, 0)  # back to a checkpoint inside sess_a
    assert redraws[0] < timeline.total  # the redraw came while indexing was under way
    assert view.seek(timeline.total, "sess_a", hydrate_all=True) == project_state(events_of(timeline))


def test_lines_written_while_a_poll_reads_wait_for_the_next_poll_and_none_is_late(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slow poll (a loaded machine) reads one log, and the writers append to both logs before
    it reads the other: what the second log gained meanwhile (newer than the first log's unread
    line by more than the late slack) waits for the next poll, which then merges both in time
    order without rebuilding the timeline."""
    first, second = SessionLog("sess_a"), SessionLog("sess_b")
    first.created(0)
    second.created(1)
    paths = [first.write(tmp_path), second.write(tmp_path)]
    timeline = Timeline(paths, watch_dir=tmp_path, every=4)
    index_all(timeline)
    for turn, log in enumerate((first, second), start=1):
        log.add("turn.started", f"turn_{turn}", {"promptPreview": "go"}, 1_000)
    with paths[0].open("ab") as handle:
        handle.write(first.lines[-1] + b"\n")
    with paths[1].open("ab") as handle:
        handle.write(second.lines[-1] + b"\n")
    file_b = timeline.files[1]
    read_b = file_b.read_entries

    def meanwhile(budget: int) -> list[Entry]:
        """Reading the second log, after the first: both writers have appended since the look."""
        if len(first.lines) == 2:
            first.add("user.message", "turn_1", {"content": "late?"}, 1_500)
            second.add("user.message", "turn_2", {"content": "newer"}, 5_000)
            for log, path in zip((first, second), paths, strict=True):
                with path.open("ab") as handle:
                    handle.write(log.lines[-1] + b"\n")
        return read_b(budget)

    monkeypatch.setattr(file_b, "read_entries", meanwhile)
    assert timeline.poll().added == 2  # the lines there when the poll looked
    result = timeline.poll()
    assert result.rewound_to is None and result.added == 2
    assert [(e.session_id, e.sequence) for e in events_of(timeline)[-4:]] == [
        ("sess_a", 2),
        ("sess_b", 2),
        ("sess_a", 3),
        ("sess_b", 3),
    ]


def test_a_log_replaced_by_a_fifo_stops_nothing(tmp_path: Path) -> None:
    """A named pipe swapped in for a followed log (after the directory listed it as a plain
    file): opening it for reading would wait for a writer forever. Neither the poll nor a read
    of that log waits; the other log goes on being followed."""
    path = plain_log("sess_a", 2).write(tmp_path)
    other = plain_log("sess_b", 3, start_ms=1)
    first = len(plain_log("sess_b", 2, start_ms=1).lines)
    other_path = tmp_path / "sess_b.jsonl"
    other_path.write_bytes(b"".join(line + b"\n" for line in other.lines[:first]))
    timeline = Timeline([path, other_path], watch_dir=tmp_path, every=4)
    index_all(timeline)
    pipe = tmp_path / "pipe.tmp"
    os.mkfifo(pipe)
    os.replace(pipe, path)
    [result] = returns_without_waiting(timeline.poll, path)
    assert result.notices == [f"{path}: replaced; indexed again from its start"]
    file = timeline.files[0]
    file.horizon = None  # as a read outside a poll (the scrubber's) finds it
    assert returns_without_waiting(file.read_entries, path) == [[]]
    assert file.error == f"{path}: not a plain file"
    with other_path.open("ab") as writer:
        writer.write(b"".join(line + b"\n" for line in other.lines[first:]))
    assert returns_without_waiting(timeline.poll, path)[0].added == len(other.lines) - first
