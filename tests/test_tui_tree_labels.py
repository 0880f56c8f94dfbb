"""Tree lines too long for the tree are cut with `…`, the name first, so the status, approvals,
phase and time stay in view; a line that cannot keep them is cut at its end.

Read as painted at 80x24 (the narrow tree), from the fixture dashboard and the workbench.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support_workbench import recorded_app, settle
from textual.pilot import Pilot

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


async def test_a_line_that_cannot_keep_its_tail_ends_in_an_ellipsis(tmp_path: Path) -> None:
    app = recorded_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        lines = await tree_lines(pilot)
        assert lines["fix-login"].endswith("…"), lines["fix-login"]
        assert "fix-login ⎇ ⚑" in lines["fix-login"]
        assert lines["lint"].endswith("executing 59s")  # it fits: unchanged


async def test_wide_the_lines_are_whole() -> None:
    app = AgentTuiApp(events=list(replay_all(SAMPLES / "live")), live=False)
    async with app.run_test(size=(200, 50)) as pilot:
        lines = await tree_lines(pilot)
        assert "…" not in "".join(lines.values())
        assert "grep-helper ⚑ 0s executing 5s" in lines["grep-helper"]
