"""Tree lines too long for the tree are cut with `…`, the name first, so the status, approvals,
phase and time stay in view; at 80 columns the approvals' wait and the turn's time give way
(never a time without its word) and the phase word stays, short (`exec`) where the line needs it
to keep what an agent (and its tree) spent and its budget mark; a line that cannot keep them is
cut at its end.

Read as painted at 80x24 (the narrow tree), from the fixture dashboard and the workbench.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support_workbench import Log, at, recorded_app, settle
from textual.pilot import Pilot
from textual.widgets import Static

from agent_tui.events import Event, payload_from
from agent_tui.reducer import apply_event
from agent_tui.replay.sources import replay_all
from agent_tui.tui.app import AgentTuiApp

SAMPLES = Path(__file__).parent / "sample-logs"

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("home_in_tmp")]


async def tree_lines(pilot: Pilot) -> dict[str, str]:
    """Session name → its tree line as painted (guides included, trailing blanks dropped)."""
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, AgentTuiApp)
    tree = app.dashboard.session_tree
    sessions = app.dashboard.state.sessions
    lines = {}
    for y in range(tree.last_line + 1):
        node = tree.get_node_at_line(y)
        if node is not None and node.data in sessions:
            lines[sessions[node.data].display_name] = tree.render_line(y).text.rstrip()
    assert all(len(line) <= tree.scrollable_content_region.width for line in lines.values())
    return lines


async def test_the_tree_takes_three_eighths_of_a_narrow_screen() -> None:
    for width, tree in ((80, 30), (96, 36)):
        app = AgentTuiApp(events=list(replay_all(SAMPLES / "live")), live=False)
        async with app.run_test(size=(width, 24)) as pilot:
            await pilot.pause()
            assert app.screen.query_one("#tree-pane").size.width + 2 == tree, width  # with its border


async def test_a_long_name_is_cut_and_the_phase_and_time_stay() -> None:
    app = AgentTuiApp(events=list(replay_all(SAMPLES / "live")), live=False)
    async with app.run_test(size=(96, 24)) as pilot:
        line = (await tree_lines(pilot))["grep-helper"]
        assert "● grep-he… ⚑" in line
        assert line.endswith("executing 5s"), line


async def test_at_80_columns_the_phase_word_and_what_was_spent_stay_and_the_times_give_way(
    tmp_path: Path,
) -> None:
    app = recorded_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        lines = await tree_lines(pilot)
        assert lines["lint"] == "├─ ● lint executing $0.01"  # the turn's time left out for the cost
        assert lines["fix-login"] == "├─ ▼ ● fix-lo… ⚑ exec Σ$0.42", lines["fix-login"]  # its tree's
        assert lines["explorer"] == "│  └─ ● explor… ⚑ exec $0.08"  # no unlabelled `9m23s` after ⚑
        assert lines["docs"] == "├─ ✗ docs end 20s"  # its only model call failed: nothing spent
        assert lines["add-tests"] == "└─ ✓ add-te… end 3m04s $0.03"


async def test_wide_the_tree_total_stays_and_the_days_total_their_trees(tmp_path: Path) -> None:
    app = recorded_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        lines = await tree_lines(pilot)
        assert lines["fix-login"].endswith("executing 9m59s Σ$0.42"), lines["fix-login"]
        assert lines["lint"].endswith("executing 59s $0.01")
        assert _day_lines(app) == ["Today · $0.45", "Yesterday · $0.02"]


async def test_with_room_a_parent_shows_its_own_spend_and_its_trees() -> None:
    lead = Log("sess_1111111111aa", at(9, 0), cwd="/tmp", agentName="lead", billed="claude-sonnet-4")
    lead.start("turn_a", "Fan out")
    lead.step("turn_a", 1, "Spawning a helper.")
    helper = Log(
        "sess_1111111111bb",
        at(9, 1),
        cwd="/tmp",
        agentName="helper",
        parentSessionId=lead.session_id,
        billed="claude-sonnet-4",
    )
    helper.start("turn_b", "Help")
    helper.step("turn_b", 1, "Done.")
    helper.step("turn_b", 2, "Really done.")
    helper.end("turn_b", after=5)
    lead.end("turn_a", after=100)
    app = AgentTuiApp(events=sorted([*lead.events, *helper.events], key=lambda e: e.ts), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        lines = await tree_lines(pilot)
        assert lines["lead"] == "▼ ✓ lead end 1m41s $0.08 (tree $0.28)", lines["lead"]
        assert lines["helper"] == "└─ ✓ helper end 7s $0.19"


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_near_its_budget_an_agent_is_marked_in_words(tmp_path: Path, size: tuple[int, int]) -> None:
    app = recorded_app(tmp_path, budgets="near")
    async with app.run_test(size=size) as pilot:
        lines = await tree_lines(pilot)
        assert lines["fix-login"].endswith("▲ 83%"), lines["fix-login"]
        assert "▲" not in lines["explorer"]  # the budget is its parent's: the parent is marked


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_over_its_budget_an_agent_is_marked_and_says_why(tmp_path: Path, size: tuple[int, int]) -> None:
    app = recorded_app(tmp_path, budgets="over")
    async with app.run_test(size=size) as pilot:
        lines = await tree_lines(pilot)
        assert "$0.03 ▲ over" in lines["lint"], lines["lint"]
        if size[0] == 200:  # and the turn's message, which says what was spent of what
            assert lines["lint"].endswith("▲ over budget exceede…"), lines["lint"]


async def test_what_was_spent_moves_as_each_model_call_ends(tmp_path: Path) -> None:
    app = recorded_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        assert (await tree_lines(pilot))["lint"].endswith("$0.01")
        screen = app.dashboard
        lint = next(s for s in screen.state.sessions.values() if s.display_name == "lint")
        usage = {"step": 2, "promptTokens": 600_000, "completionTokens": 20_000, "costUsd": 0.272}
        apply_event(screen.state, _event(lint.session_id, "turn_n1", lint.last_sequence + 1, usage))
        screen.show_state(screen.state)
        assert (await tree_lines(pilot))["lint"].endswith("$0.28")
        assert " · $0.75 · " in str(screen.summary.query_one("#summary-counts", Static).content)


def _event(session_id: str, turn_id: str, sequence: int, usage: dict[str, Any]) -> Event:
    return Event(
        id=f"evt_x{sequence}",
        session_id=session_id,
        turn_id=turn_id,
        sequence=sequence,
        ts="2026-11-30T14:20:01.000Z",
        type="model.usage",
        payload=payload_from("model.usage", usage),
    )


def _day_lines(app: AgentTuiApp) -> list[str]:
    tree = app.dashboard.session_tree
    return [str(node.label) for node in tree.root.children]


async def test_wide_the_lines_are_whole() -> None:
    app = AgentTuiApp(events=list(replay_all(SAMPLES / "live")), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        lines = await tree_lines(pilot)
        assert "…" not in "".join(lines.values())
        assert "grep-helper ⚑ 0s executing 5s" in lines["grep-helper"]
