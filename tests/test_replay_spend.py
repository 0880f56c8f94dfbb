"""The replay's list of many logs counts what each whole log spent: after the list is drawn, a
thread asks the search index what each log spent and tells the list what the earlier turns spent.

Real generated logs on disk (more than the list's threshold, each with earlier turns that spent
money, some written before `model.usage` existed, some with sub-agents, budgets raised in an
earlier turn); the list is checked against `agent-tui replay DIR --dump state` and the full fold.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from replay_logs import SessionLog
from support_workbench import wait_for
from textual.widgets import Static

import agent_tui.ports
from agent_tui.reducer import DashboardState, project_state
from agent_tui.replay import Catalog, ListSpend, read_catalog
from agent_tui.replay.catalog import MAX_TAIL_BYTES, TAIL_BYTES
from agent_tui.replay.sources import replay_files
from agent_tui.search import SearchIndex, index_path, logs_spend
from agent_tui.tui.replay_app import ReplayApp
from agent_tui.tui.screens.replay import ReplayScreen
from agent_tui.tui.screens.replay_view import LIST_FROM
from agent_tui.tui.spend_text import cost_brief

LOGS = LIST_FROM + 16
TURNS = 4
PAD = "x" * (TAIL_BYTES // 3)  # a turn of about a third of the first tail: earlier turns lie before it
DAY_MS = 86_400_000


def _turn(log: SessionLog, turn: int, millis: int, *, k: int, old: bool) -> int:
    """One whole turn that spent money; an `old` log has only the turn's total."""
    tid = f"turn_{turn}"
    log.add("turn.started", tid, {"promptPreview": f"prompt {turn}"}, millis)
    log.add("user.message", tid, {"content": f"task {turn}"}, millis)
    calls = [
        {
            "step": step,
            "promptTokens": 1000 * turn + k,
            "completionTokens": 10 * step,
            "costUsd": 0.01 * turn + step * 0.001 + k * 0.0001,
        }
        for step in (1, 2)
    ]
    for call in calls:
        millis += 1
        log.add("model.delta", tid, {"text": PAD}, millis)
        if not old:
            log.add("model.usage", tid, call, millis)
    total = {
        "promptTokens": sum(c["promptTokens"] for c in calls),
        "completionTokens": sum(c["completionTokens"] for c in calls),
        "costUsd": sum(c["costUsd"] for c in calls),
    }
    log.add("turn.completed", tid, {"stopReason": "final", "usage": total}, millis + 1)
    return millis + 2


def _write(directory: Path, count: int = LOGS) -> list[Path]:
    """`count` logs of `TURNS` turns each; every fifth is old, sessions 0..3 each have a
    sub-agent (the last four logs), and session 1 raises its budget after its first turn (and
    session 2 again in its last turn). The second half of the logs ran a day later."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(count):
        sid = f"sess_{k:04d}"
        log = SessionLog(sid)
        millis = k * 100 + (DAY_MS if k >= count // 2 else 0)
        payload: dict[str, Any] = {"cwd": "/w", "client": "tests", "agentName": f"agent-{k}"}
        if k >= count - 4:
            payload["parentSessionId"] = f"sess_{k - (count - 4):04d}"
        if k in (1, 2):
            payload["budget"] = {"usd": 0.01}
        log.add("session.created", None, payload, millis)
        for turn in range(1, TURNS + 1):
            millis = _turn(log, turn, millis + 1, k=k, old=k % 5 == 0)
            if k in (1, 2) and turn == 1:
                log.add("session.budget", None, {"usd": 7.5, "by": "ana"}, millis)
            if k == 2 and turn == TURNS - 1:
                log.add("turn.started", f"turn_{TURNS}b", {"promptPreview": "last"}, millis)
                log.add("session.budget", f"turn_{TURNS}b", {"usd": 9.0, "by": "ana"}, millis)
                log.add("turn.completed", f"turn_{TURNS}b", {"stopReason": "final"}, millis)
        paths.append(log.write(directory))
    return paths


def _dump(directory: Path) -> dict[str, Any]:
    """`agent-tui replay DIR --dump state`, run as a user runs it."""
    agent_tui = Path(sys.executable).with_name("agent-tui")
    done = subprocess.run(
        [str(agent_tui), "replay", str(directory), "--dump", "state"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {session["sessionId"]: session for session in json.loads(done.stdout)["sessions"]}


def _same_spend(state: DashboardState, dumped: dict[str, Any]) -> None:
    assert set(dumped) == set(state.sessions)
    for sid, session in dumped.items():
        view, tree = state.sessions[sid].spend, state.tree_spend(sid)
        assert view.cost_usd == pytest.approx(session["costUsd"], abs=1e-6), sid
        assert (view.prompt_tokens, view.completion_tokens) == tuple(session["tokens"].values()), sid
        assert tree.cost_usd == pytest.approx(session["treeCostUsd"], abs=1e-6), sid
        assert (tree.prompt_tokens, tree.completion_tokens) == tuple(session["treeTokens"].values()), sid


def _ask(spend: ListSpend, catalog: Catalog, paths: list[Path], data: Path) -> None:
    """What the replay's thread does: ask the index what the logs spent, for the list."""
    spend.take(spend.to_ask(catalog), logs_spend(paths, data))


def test_the_index_gives_what_the_turns_before_the_tail_spent(tmp_path: Path) -> None:
    paths = _write(tmp_path / "sessions")
    catalog = read_catalog(paths)
    full = project_state(replay_files(paths))
    spend = ListSpend()
    entries = spend.to_ask(catalog)
    assert {e.session_id for e in entries} == set(catalog.entries)  # every log has earlier turns
    assert spend.partial(catalog) == set(catalog.entries)
    listed = catalog.state.sessions["sess_0003"].spend
    assert listed.cost_usd < full.sessions["sess_0003"].spend.cost_usd  # the last turn alone
    spend.take(entries, logs_spend(paths, tmp_path / "data"))
    spend.apply(catalog)
    spend.apply(catalog)  # a second time adds nothing
    assert spend.partial(catalog) == set()
    for sid, session in full.sessions.items():
        view = catalog.state.sessions[sid]
        assert view.spend.cost_usd == pytest.approx(session.spend.cost_usd), sid
        assert view.spend.tokens == session.spend.tokens, sid
        assert (view.budget_usd, view.budget_tokens) == (session.budget_usd, session.budget_tokens), sid
    assert catalog.state.sessions["sess_0001"].budget_usd == 7.5  # raised in an earlier turn
    assert catalog.state.sessions["sess_0002"].budget_usd == 9.0  # raised again in the tail
    assert set(catalog.state.spend_by_day) == set(full.spend_by_day) and len(full.spend_by_day) == 2
    for day, total in full.spend_by_day.items():
        assert catalog.state.spend_by_day[day].cost_usd == pytest.approx(total.cost_usd), day
        assert catalog.state.spend_by_day[day].tokens == total.tokens, day


def test_a_tail_that_starts_inside_a_long_turn_counts_that_turn_once(tmp_path: Path) -> None:
    log = SessionLog("sess_long")
    log.created(0, name="long")
    _turn(log, 1, 1, k=0, old=False)
    tid = "turn_2"
    log.add("turn.started", tid, {"promptPreview": "long"}, 10)
    first = {"step": 1, "promptTokens": 10, "completionTokens": 1, "costUsd": 0.5}
    log.add("model.usage", tid, first, 11)
    for _line in range(4 * MAX_TAIL_BYTES // len(PAD)):  # longer than the longest tail
        log.add("model.delta", tid, {"text": PAD}, 12)
    log.add("model.usage", tid, {"step": 2, "promptTokens": 10, "completionTokens": 1, "costUsd": 0.25}, 13)
    total = {"promptTokens": 20, "completionTokens": 2, "costUsd": 0.75}
    log.add("turn.completed", tid, {"stopReason": "final", "usage": total}, 14)
    path = log.write(tmp_path)
    catalog = read_catalog([path])
    entry = catalog.entries["sess_long"]
    assert entry.tail_from is not None and entry.tail_from > 6  # the tail starts inside turn 2
    spend = ListSpend()
    _ask(spend, catalog, [path], tmp_path / "data")
    spend.apply(catalog)
    whole = project_state(replay_files([path])).sessions["sess_long"].spend
    listed = catalog.state.sessions["sess_long"].spend
    assert (listed.tokens, listed.cost_usd) == (whole.tokens, pytest.approx(whole.cost_usd))


def test_a_corrupt_spend_line_is_counted_by_the_index_and_the_other_logs_are_whole(tmp_path: Path) -> None:
    paths = _write(tmp_path / "sessions")
    broken = paths[7]
    lines = broken.read_bytes().split(b"\n")
    at = next(n for n, line in enumerate(lines) if b'"model.usage"' in line)
    lines[at] = lines[at][:-9]  # cut short: its type is still on it
    lines.insert(1, b'{"type":"model.usage","x":"' + b"y" * (16 << 20) + b'"}')  # a line of any length
    broken.write_bytes(b"\n".join(lines))
    being_written = paths[8]  # its last line is still being written: the catalog's to tell
    with open(being_written, "ab") as handle:
        handle.write(b'{"v":1,"type":"model.usage","payl')
    catalog = read_catalog(paths)
    spend = ListSpend()
    _ask(spend, catalog, paths, tmp_path / "data")
    spend.apply(catalog)
    with SearchIndex.open(index_path(tmp_path / "sessions", tmp_path / "data")) as index:
        corrupt = [
            (status.path, status.corrupt, status.first_corrupt) for status in index.files() if status.corrupt
        ]
    assert corrupt == [(broken, 2, 2)]  # the long line and the cut one, passed over
    assert spend.partial(catalog) == set()
    full = project_state(replay_files([p for p in paths if p not in (broken, being_written)]))
    for sid, session in full.sessions.items():
        assert catalog.state.sessions[sid].spend.cost_usd == pytest.approx(session.spend.cost_usd), sid


def _summary(screen: ReplayScreen) -> str:
    return str(screen.summary.query_one("#summary-counts", Static).content)


def _tree_line(screen: ReplayScreen, sid: str) -> str:
    tree = screen.session_tree
    node = tree._session_nodes[sid]
    tree.scroll_to_node(node, animate=False)
    return tree.render_line(node.line - tree.scroll_offset.y).text


@pytest.mark.anyio
async def test_the_list_shows_partial_figures_then_the_whole_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "sessions"
    paths = _write(directory)
    dumped = _dump(directory)
    gate = threading.Event()
    scanning = threading.Event()

    def held(files: Any) -> Any:
        scanning.set()
        gate.wait(60)
        return logs_spend(files, tmp_path / "data")

    monkeypatch.setattr(agent_tui.ports, "logs_spend", held)  # what the list asks, on its thread
    app = ReplayApp(paths)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.replay
        await wait_for(pilot, scanning.is_set, "the scan under way", seconds=60)
        await pilot.pause()
        # Before the scan: a root with a sub-agent not chosen, its figures its last turns' only.
        assert screen.session_tree.selected_id != "sess_0003"
        listed = screen.state.sessions["sess_0003"]
        assert "sess_0003" in screen.session_tree.partial_spend
        line = _tree_line(screen, "sess_0003")
        assert f"{cost_brief(listed.spend, partial=True)} (tree ≥" in line, line
        assert listed.spend.cost_usd < dumped["sess_0003"]["costUsd"]
        assert screen.state.sessions["sess_0001"].budget_usd == 0.01  # the head's, until scanned
        assert cost_brief(screen.state.total_spend(), partial=True) in _summary(screen)
        gate.set()
        await wait_for(pilot, lambda: not screen.feed.partial, "the scan done", seconds=60)
        await pilot.pause()
        assert not screen.session_tree.partial_spend
        _same_spend(screen.state, dumped)
        whole = screen.state.sessions["sess_0003"]
        line = _tree_line(screen, "sess_0003")
        tree = screen.state.tree_spend("sess_0003")
        assert f"{cost_brief(whole.spend)} (tree {cost_brief(tree)})" in line and "≥" not in line, line
        assert screen.state.sessions["sess_0001"].budget_usd == 7.5  # raised in an earlier turn
        total = _summary(screen)
        assert cost_brief(screen.state.total_spend()) in total and "≥" not in total, total
        assert dumped["sess_0001"]["budget"]["usd"] == 7.5


def _grow(path: Path, turn: int, millis: int, *, whole: bool = True) -> None:
    """Append turn `turn` to a log (its first call alone unless `whole`)."""
    count = len(path.read_bytes().splitlines())
    log = SessionLog(path.stem, sequence=count)
    if whole:
        _turn(log, turn, millis, k=0, old=False)
    else:
        tid = f"turn_{turn}"
        log.add("turn.started", tid, {"promptPreview": "more"}, millis)
        log.add(
            "model.usage", tid, {"step": 1, "promptTokens": 5, "completionTokens": 5, "costUsd": 0.5}, millis
        )
    with open(path, "ab") as handle:
        handle.write(b"".join(line + b"\n" for line in log.lines))


def _finish(path: Path, turn: int, millis: int) -> None:
    count = len(path.read_bytes().splitlines())
    log = SessionLog(path.stem, sequence=count)
    tid = f"turn_{turn}"
    log.add(
        "model.usage", tid, {"step": 2, "promptTokens": 5, "completionTokens": 5, "costUsd": 0.25}, millis
    )
    total = {"promptTokens": 10, "completionTokens": 10, "costUsd": 0.75}
    log.add("turn.completed", tid, {"stopReason": "final", "usage": total}, millis)
    with open(path, "ab") as handle:
        handle.write(b"".join(line + b"\n" for line in log.lines))


@pytest.mark.anyio
async def test_following_a_grown_log_counts_each_turn_once(tmp_path: Path) -> None:
    directory = tmp_path / "sessions"
    paths = _write(directory)
    grown = directory / "sess_0009.jsonl"
    app = ReplayApp(paths, follow=True, watch_dir=directory)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.replay
        await wait_for(
            pilot,
            lambda: (
                screen.feed.catalog is not None and screen.feed.catalog.complete and not screen.feed.partial
            ),
            "the list scanned",
            seconds=60,
        )
        assert screen.session_tree.selected_id != "sess_0009"

        def listed_equals_whole() -> bool:
            """Every listed session's spend is its whole log's (the grown one's and the others')."""
            whole = project_state(replay_files(paths))
            for sid, session in whole.sessions.items():
                listed = screen.state.sessions[sid].spend
                if listed.tokens != session.spend.tokens or listed.cost_usd != pytest.approx(
                    session.spend.cost_usd
                ):
                    return False
            return True

        # A new turn's first call: the tail moves on, the turn before it is scanned as earlier.
        _grow(grown, TURNS + 1, 5 * DAY_MS, whole=False)
        await wait_for(
            pilot,
            lambda: screen.state.sessions["sess_0009"].turns[-1].turn_id == f"turn_{TURNS + 1}",
            "the new turn listed",
            seconds=20,
        )
        await wait_for(pilot, lambda: not screen.feed.partial, "the grown log scanned", seconds=20)
        assert listed_equals_whole()
        # The same turn goes on and ends: its tail is read again, the earlier turns' spend is
        # added to the new view once (not again, and not lost).
        _finish(grown, TURNS + 1, 5 * DAY_MS + 10)
        await wait_for(
            pilot,
            lambda: screen.state.sessions["sess_0009"].status == "completed",
            "the turn's end listed",
            seconds=20,
        )
        await pilot.pause()
        assert not screen.feed.partial
        assert listed_equals_whole()
        # A whole further turn: scanned again, still each turn once.
        _grow(grown, TURNS + 2, 6 * DAY_MS)
        await wait_for(
            pilot,
            lambda: (
                screen.state.sessions["sess_0009"].turns[-1].turn_id == f"turn_{TURNS + 2}"
                and not screen.feed.partial
            ),
            "the further turn scanned",
            seconds=20,
        )
        assert listed_equals_whole()
