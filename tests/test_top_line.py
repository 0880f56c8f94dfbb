"""The dashboard's top line on a project: it names the model new agents use, and at 120 columns
the logs' path loses its beginning, never its end (the project's directory), even beside a notice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support_workbench import arm_project, recorded_app, settle, wait_for
from textual.app import App
from textual.widgets import Static

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.widgets.summary_bar import elided_path

pytestmark = pytest.mark.anyio

LOGS = "~/.local/share/agent-tui/projects/shop-5d41402abc4b"


def top_line(app: App[Any]) -> str:
    assert isinstance(app, AgentTuiApp)
    return str(app.dashboard.summary.query_one("#summary-counts", Static).render())


async def test_at_120_columns_the_top_line_names_the_model_and_ends_with_the_project_dir(
    tmp_path: Path,
) -> None:
    app = recorded_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        arm_project(pilot)
        await settle(pilot)
        line = top_line(app)
        assert line.startswith("agent-tui project · ~/shop · gpt-4.1-mini  ")
        assert line.endswith("/shop-5d41402abc4b"), line
        assert len(line) <= 118
        app.notify("Something to read while the line is narrower", title="Note", timeout=30)
        await wait_for(pilot, lambda: top_line(app) != line, "the line to make room for the notice")
        narrower = top_line(app)
        # No piece of the path that does not end it: whole from a `/` to its end, or left out.
        assert narrower.endswith("/shop-5d41402abc4b") or ".local" not in narrower, narrower
        app.dashboard.summary.clear_notice()
        await wait_for(pilot, lambda: top_line(app) == line, "the path to come back")
    async with recorded_app(tmp_path / "wide").run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        arm_project(pilot)
        await settle(pilot)
        assert top_line(pilot.app).endswith(" · " + LOGS)  # room for all of it


def test_a_path_loses_its_beginning_from_a_slash_on() -> None:
    assert elided_path(LOGS, 100) == LOGS
    assert elided_path(LOGS, 30) == "…/projects/shop-5d41402abc4b"
    assert elided_path(LOGS, 19) == "…/shop-5d41402abc4b"
    assert elided_path(LOGS, 18) == ""  # not even its last part: left out
    assert elided_path(LOGS, 0) == ""
