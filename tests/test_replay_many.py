"""The replay over a history of thousands of logs: the list from heads and tails, a timeline per
chosen family, a bounded cache of them.

Real generated logs (3,000 sessions, a few turns each, some with sub-agents, some failed, some
cut mid-turn, one torn, one with a corrupt line near its end) on disk; the list is checked
against the full fold of every log, the cache's bound while walking through many sessions.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

import pytest
from replay_logs import SessionLog, turn_events
from rich.text import Text
from support_workbench import wait_for
from textual.pilot import Pilot

from agent_tui.reducer import DashboardState, project_state
from agent_tui.replay import read_catalog
from agent_tui.replay.catalog import FAMILY_LOGS, TAIL_BYTES, read_entry
from agent_tui.replay.sources import replay_files
from agent_tui.tui.formatting import STATUS_GLYPH
from agent_tui.tui.replay_app import ReplayApp
from agent_tui.tui.run_collector import RunCollector
from agent_tui.tui.screens.replay import ReplayScreen
from agent_tui.tui.screens.replay_view import LIST_FROM

SESSIONS = 3_000
ROOTS_WITH_CHILDREN = 20  # sessions 0..19 each have two sub-agents (sessions 2980..3019 - 20)
TORN = "sess_2000"
CORRUPT = "sess_2001"


def _write_history(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    shapes = ("tool", "plain", "failed", "denied", "compress")
    for k in range(SESSIONS):
        sid = f"sess_{k:04d}"
        log = SessionLog(sid)
        millis = k * 10
        parent = None
        if k >= SESSIONS - 2 * ROOTS_WITH_CHILDREN:
            parent = f"sess_{(k - (SESSIONS - 2 * ROOTS_WITH_CHILDREN)) // 2:04d}"
        log.created(millis, parent=parent, name=f"agent-{k}")
        turns = 1 + k % 3
        for turn in range(1, turns + 1):
            events = turn_events(turn, shapes[(k + turn) % len(shapes)])
            if k % 7 == 0 and turn == turns:
                events = events[:4]  # cut mid-turn: still running at the end of its log
            for kind, payload in events:
                millis += 1
                log.add(kind, f"turn_{turn}", payload, millis)
        path = log.write(directory)
        paths.append(path)
    with open(directory / f"{TORN}.jsonl", "ab") as handle:
        handle.write(b'{"v":1,"id":"evt_torn","sessionId":"' + TORN.encode() + b'","seq')
    corrupt = directory / f"{CORRUPT}.jsonl"
    lines = corrupt.read_bytes().splitlines(keepends=True)
    lines.insert(len(lines) - 1, b"this is not json\n")
    corrupt.write_bytes(b"".join(lines))
    return sorted(paths, key=lambda p: p.stem)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _write_history(tmp_path_factory.mktemp("history") / "sessions")


def test_the_list_of_every_log_is_what_the_whole_logs_fold_to(history: list[Path]) -> None:
    catalog = read_catalog(history)
    # The brute force: every whole log folded (the corrupt one is read up to its corrupt line).
    full = project_state(replay_files([p for p in history if p.stem != CORRUPT]))
    assert len(history) > LIST_FROM
    assert len(catalog.state.sessions) == SESSIONS
    for sid, session in full.sessions.items():
        listed = catalog.state.sessions[sid]
        assert (listed.display_name, listed.parent_session_id) == (
            session.display_name,
            session.parent_session_id,
        )
        assert listed.status == session.status, sid
        assert listed.phase == session.phase, sid
        assert set(listed.pending) == set(session.pending), sid
        assert listed.turns[-1].turn_id == session.turns[-1].turn_id, sid
    statuses = {s.status for s in catalog.state.sessions.values()}
    assert {"running", "failed", "completed"} <= statuses
    assert catalog.state.children("sess_0000") == ["sess_2960", "sess_2961"]


def test_a_torn_or_corrupt_tail_still_lists_the_session_with_a_mark(history: list[Path]) -> None:
    catalog = read_catalog(history)
    assert set(catalog.marks()) == {TORN, CORRUPT}
    assert catalog.marks()[TORN] == "✗ torn tail"
    assert catalog.marks()[CORRUPT] == "✗ corrupt tail"
    torn = catalog.entries[TORN].problem
    assert torn is not None and torn.startswith(f"{history[2000]}: torn final line")
    corrupt = catalog.entries[CORRUPT].problem
    assert corrupt is not None and "not JSON" in corrupt and str(history[2001]) in corrupt
    assert catalog.state.sessions[TORN].display_name == "agent-2000"  # listed, named, with a status


def test_a_log_is_read_at_its_head_and_tail_only(tmp_path: Path) -> None:
    log = SessionLog("sess_big")
    log.created(0, name="big")
    for turn in range(1, 400):
        for kind, payload in turn_events(turn, "plain"):
            log.add(kind, f"turn_{turn}", payload, turn)
    path = log.write(tmp_path)
    size = path.stat().st_size
    assert size > 20 * TAIL_BYTES
    entry, events = read_entry(path)
    assert entry.problem is None
    assert [e.type for e in events[:2]] == ["session.created", "turn.started"]
    assert {e.turn_id for e in events[1:]} == {"turn_399"}  # the head, then the last turn only
    # The bytes it decoded are a small part of the file: its head and the last turn's lines.
    decoded = sum(len(log.lines[e.sequence - 1]) + 1 for e in events)
    assert decoded < TAIL_BYTES


def test_an_unreadable_or_headless_log_is_listed_by_its_file_name(tmp_path: Path) -> None:
    (tmp_path / "sess_empty.jsonl").write_bytes(b"")
    headless = tmp_path / "sess_headless.jsonl"
    headless.write_bytes(b"garbage\n")
    locked = tmp_path / "sess_locked.jsonl"
    locked.write_bytes(b"x\n")
    os.chmod(locked, 0)
    try:
        catalog = read_catalog(sorted(tmp_path.glob("*.jsonl")))
    finally:
        os.chmod(locked, 0o600)
    assert set(catalog.state.sessions) == {"sess_empty", "sess_headless", "sess_locked"}
    assert catalog.state.sessions["sess_headless"].display_name == "sess_headless.jsonl"
    problem = catalog.entries["sess_headless"].problem
    assert problem == f"{headless}:1: not the session's session.created line"
    if os.geteuid() != 0:  # root reads a file whatever its mode
        assert catalog.entries["sess_locked"].problem == f"{locked}: unreadable: Permission denied"


def _family_state(paths: tuple[Path, ...]) -> DashboardState:
    return project_state(replay_files(list(paths)))


async def _listed(pilot: Pilot[Any], screen: ReplayScreen) -> None:
    await wait_for(
        pilot,
        lambda: (
            screen.feed.catalog is not None and len(screen.feed.catalog.entries) == SESSIONS and screen.loaded
        ),
        "the list and a first family",
        seconds=60,
    )
    await wait_for(
        pilot,
        lambda: screen.feed.catalog is not None and screen.feed.catalog.complete,
        "the tails",
        seconds=60,
    )


async def _on_family(pilot: Pilot[Any], screen: ReplayScreen) -> None:
    def ready() -> bool:
        catalog = screen.feed.catalog
        selected = screen.session_tree.selected_id
        return (
            catalog is not None
            and selected is not None
            and catalog.entries[selected].path in screen.source.family
            and screen.loaded
            and not screen.cursor.indexing
        )

    await wait_for(pilot, ready, "the chosen session's timeline", seconds=30)


@pytest.mark.anyio
async def test_the_replay_opens_on_the_list_and_scrubs_the_chosen_family(history: list[Path]) -> None:
    app = ReplayApp(history)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        await _listed(pilot, screen)
        assert screen.source.many
        assert len(screen.session_tree.visible_ids) == SESSIONS
        assert len(screen.state.sessions) == SESSIONS
        # A root with two sub-agents: its timeline covers the three logs, and only them.
        screen.select_session("sess_0003")
        await _on_family(pilot, screen)
        family = screen.source.family
        assert [p.stem for p in family] == ["sess_0003", "sess_2966", "sess_2967"]
        timeline = screen.timeline
        assert timeline is not None and [f.path for f in timeline.files] == list(family)
        whole = _family_state(family)
        assert timeline.total == sum(s.event_count for s in whole.sessions.values())
        assert (
            screen.cursor.view is not None and screen.cursor.view.position == timeline.total
        )  # opened at the end
        for sid in ("sess_0003", "sess_2966", "sess_2967"):
            assert screen.state.sessions[sid].status == whole.sessions[sid].status
        # The scrubber moves through that family's events; the rest of the list stays listed.
        await pilot.press("home")
        await wait_for(pilot, lambda: screen.position == 0, "the start")
        assert len(screen.state.sessions) == SESSIONS
        await pilot.press("right")
        await wait_for(pilot, lambda: screen.position == 1, "one event in")
        assert screen.cursor.view.event is not None and screen.cursor.view.event.session_id in {
            p.stem for p in family
        }
        # A sub-agent of the same family keeps the same timeline.
        screen.select_session("sess_2966")
        await pilot.pause()
        assert screen.timeline is timeline


@pytest.mark.anyio
async def test_what_existed_stays_out_of_the_collector_while_the_list_is_open(history: list[Path]) -> None:
    gc.unfreeze()  # (whatever an earlier test in this process left frozen)
    app = ReplayApp(history)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        await _listed(pilot, screen)
        # The app and its modules are out of the collector's full passes; it still runs.
        assert gc.get_freeze_count() > 0
        assert gc.isenabled()
        # So is the list read from the tails (it holds no cycles): no pass scans its views and
        # events, the generations the collector walks do not hold them.
        catalog = screen.feed.catalog
        assert catalog is not None and catalog.complete
        listed = [catalog.state.sessions[sid] for sid in sorted(catalog.entries)[:50]]
        assert all(gc.is_tracked(view) for view in listed)
        walked = {id(thing) for thing in gc.get_objects()}
        assert not any(id(view) in walked for view in listed)
    # The screen closed: everything may be collected again.
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()


@pytest.mark.anyio
async def test_a_list_closed_inside_a_live_run_leaves_what_the_run_keeps_out(history: list[Path]) -> None:
    gc.unfreeze()  # (whatever an earlier test in this process left frozen)
    live = RunCollector()  # the live dashboard's run, which a replay opened from search sits in
    live.keep_out()
    try:
        app = ReplayApp(history)
        async with app.run_test(size=(120, 40)) as pilot:
            await _listed(pilot, app.replay)
        assert gc.get_freeze_count() > 0  # the replay closed; the live run is still up
    finally:
        live.restore()
    assert gc.get_freeze_count() == 0


@pytest.mark.anyio
async def test_walking_through_many_sessions_keeps_the_cache_bounded(history: list[Path]) -> None:
    app = ReplayApp(history)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        await _listed(pilot, screen)
        cache = screen.feed.timelines
        seen: list[int] = []
        screen.select_session("sess_0100")
        await _on_family(pilot, screen)
        first = screen.timeline
        for _step in range(3 * cache.bound):
            await pilot.press("down")
            await _on_family(pilot, screen)
            seen.append(len(cache))
            assert len(cache) <= cache.bound
            assert screen.timeline is not None and len(screen.timeline.files) <= FAMILY_LOGS
        assert max(seen) == cache.bound and cache.dropped >= 2 * cache.bound - 1
        # A session chosen a moment ago is shown again without reading its logs again.
        recent = screen.session_tree.selected_id
        assert recent is not None
        held = screen.timeline
        await pilot.press("up")
        await _on_family(pilot, screen)
        screen.select_session(recent)
        await _on_family(pilot, screen)
        assert screen.timeline is held
        # One chosen long ago was dropped: choosing it again indexes it again.
        screen.select_session("sess_0100")
        await _on_family(pilot, screen)
        assert screen.timeline is not first


@pytest.mark.anyio
async def test_the_torn_tail_is_marked_in_the_tree(history: list[Path]) -> None:
    app = ReplayApp(history)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        await _listed(pilot, screen)
        tree = screen.session_tree
        screen.select_session(TORN)
        await _on_family(pilot, screen)
        label = tree._session_nodes[TORN].label
        assert isinstance(label, Text)
        assert "agent-2000" in label.plain and "✗ torn tail" in label.plain
        assert "torn final line" in screen.summary_error or screen.cursor.errors
        assert any(TORN in error and "torn" in error for error in screen.cursor.errors)


@pytest.mark.anyio
async def test_lines_far_down_the_list_are_drawn_as_their_sessions_are(history: list[Path]) -> None:
    """Only the lines in view are built: those scrolled to later (never drawn before, or drawn
    from the heads alone and scrolled away) show their sessions as listed from the tails."""
    app = ReplayApp(history)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        await _listed(pilot, screen)
        tree = screen.session_tree
        order = tree.visible_ids
        for wanted in ("failed", "running", "completed"):
            sid = next(s for s in reversed(order) if screen.state.sessions[s].status == wanted)
            screen.select_session(sid)
            await _on_family(pilot, screen)
            await pilot.pause()
            session = screen.state.sessions[sid]
            line = tree.render_line(tree._session_nodes[sid].line - tree.scroll_offset.y).text
            assert f"{STATUS_GLYPH[session.status]} {session.display_name}" in line, (sid, line)
        screen.select_session(order[0])
        await _on_family(pilot, screen)
        await pilot.pause()
        first = screen.state.sessions[order[0]]
        line = tree.render_line(tree._session_nodes[order[0]].line - tree.scroll_offset.y).text
        assert f"{STATUS_GLYPH[first.status]} {first.display_name}" in line, line


def _small_history(directory: Path, count: int) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(count):
        log = SessionLog(f"sess_{k:04d}")
        log.created(k * 10, name=f"agent-{k}")
        for kind, payload in turn_events(1, "plain"):
            log.add(kind, "turn_1", payload, k * 10 + 1)
        paths.append(log.write(directory))
    return paths


@pytest.mark.anyio
async def test_following_many_logs_lists_new_ones_and_reads_grown_tails(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    paths = _small_history(directory, LIST_FROM + 6)
    app = ReplayApp(paths, follow=True, watch_dir=directory)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        await wait_for(
            pilot, lambda: screen.feed.catalog is not None and screen.feed.catalog.complete, "the list"
        )
        screen.select_session("sess_0003")
        await _on_family(pilot, screen)
        # A new log joins the list.
        new = SessionLog("sess_new")
        new.created(5_000, name="newcomer")
        new.write(directory)
        await wait_for(pilot, lambda: "sess_new" in screen.state.sessions, "the new log listed", seconds=20)
        assert screen.state.sessions["sess_new"].display_name == "newcomer"
        assert len(screen.source.files) == LIST_FROM + 7
        # Another session's log grows: its line in the list follows its tail.
        other = directory / "sess_0010.jsonl"
        grown = SessionLog("sess_0010", sequence=len(other.read_bytes().splitlines()))
        for kind, payload in turn_events(2, "failed"):
            grown.add(kind, "turn_2", payload, 9_000)
        with open(other, "ab") as handle:
            handle.write(b"".join(line + b"\n" for line in grown.lines))
        await wait_for(
            pilot, lambda: screen.state.sessions["sess_0010"].status == "failed", "the grown tail", seconds=20
        )
        # The chosen session's timeline follows its own log.
        before = screen.position
        chosen = directory / "sess_0003.jsonl"
        more = SessionLog("sess_0003", sequence=len(chosen.read_bytes().splitlines()))
        for kind, payload in turn_events(2, "plain"):
            more.add(kind, "turn_2", payload, 9_500)
        with open(chosen, "ab") as handle:
            handle.write(b"".join(line + b"\n" for line in more.lines))
        await wait_for(pilot, lambda: screen.position == before + len(more.lines), "the followed family")
        assert screen.state.sessions["sess_0003"].turns[-1].turn_id == "turn_2"


@pytest.mark.anyio
async def test_a_filter_matches_again_over_the_next_family(history: list[Path]) -> None:
    app = ReplayApp(history)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        await _listed(pilot, screen)
        screen.select_session("sess_0003")
        await _on_family(pilot, screen)
        await pilot.press("slash", *"type:turn.started", "enter")
        await wait_for(pilot, lambda: screen.cursor.matches is not None, "the filter")
        first = _family_state(screen.source.family)
        assert screen.cursor.matches is not None
        assert len(screen.cursor.matches) == sum(len(s.turns) for s in first.sessions.values())
        screen.select_session("sess_0004")
        await _on_family(pilot, screen)
        await wait_for(pilot, lambda: screen.cursor.matches is not None, "the filter over the next family")
        timeline = screen.timeline
        assert timeline is not None and [f.path.stem for f in timeline.files] == [
            "sess_0004",
            "sess_2968",
            "sess_2969",
        ]
        whole = _family_state(screen.source.family)
        assert len(screen.cursor.matches) == sum(len(s.turns) for s in whole.sessions.values())
        assert screen.cursor.filter is not None and screen.cursor.filter.query == "type:turn.started"
