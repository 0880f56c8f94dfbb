"""What the workbench looks like: snapshots of the dashboard on a project, the new-agent form,
the composer, a diff approval, the filter, and what agents spent (the tree's costs, the spend
chart, a tree near and over its budget, the budget dialog), at 80x24, 120x40 and 200x50.

The states come from `support_workbench.recorded_project` (fixed ids and times, a project in a
fake home), so the pictures are byte-stable; `scripts/screenshots.py` draws the README's
pictures from these same scenes.

    .venv/bin/python -m pytest tests/test_workbench_looks.py                     # check
    .venv/bin/python -m pytest tests/test_workbench_looks.py --snapshot-update   # accept new looks
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from support_tui import Scene, pin_scene, snap, snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import arm_project, recorded_app, settle, type_text, wait_for
from textual.pilot import Pilot

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.new_agent import NewAgentScreen

SCENE_BASE: Path | None = None
"""Where scenes make their fake home (a test's tmp_path; a fresh temp dir if unset)."""


def project_app(budgets: str = "") -> AgentTuiApp:
    base = SCENE_BASE if SCENE_BASE is not None else Path(tempfile.mkdtemp(prefix="agent-tui-scene-"))
    return recorded_app(base, budgets)


def near_budget_app() -> AgentTuiApp:
    """fix-login's tree has spent 83% of its budget."""
    return project_app("near")


def over_budget_app() -> AgentTuiApp:
    """lint's turn was stopped: it spent more than its budget."""
    return project_app("over")


def session_id(app: AgentTuiApp, name: str) -> str:
    state = app.dashboard.state
    return next(sid for sid, s in state.sessions.items() if s.display_name == name)


def armed(
    select: str | None = None, *keys: str, typed: str = "", newline: str = "shift+enter"
) -> Callable[[Pilot], Awaitable[None]]:
    """Arm the project dashboard, select a session by name, press `keys`, type `typed`."""

    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        arm_project(pilot)
        app = pilot.app
        assert isinstance(app, AgentTuiApp)
        if select is not None:
            app.dashboard.select_session(session_id(app, select))
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        if typed:
            await type_text(pilot, typed, newline=newline)
        if isinstance(app.screen, NewAgentScreen):
            form = app.screen
            await wait_for(pilot, lambda: form.repository is not None, "the repository check")
        await settle(pilot)

    return run_before


SCENES: dict[str, Scene] = {
    "workbench_80x24": Scene(project_app, (80, 24), armed("fix-login")),
    "workbench_120x40": Scene(project_app, (120, 40), armed("fix-login")),
    "workbench_200x50": Scene(project_app, (200, 50), armed("fix-login")),
    "new_agent_form": Scene(
        project_app,
        (120, 40),
        armed(None, "n", typed="Add a logout endpoint.\nWith a test.", newline="enter"),
    ),
    "composer": Scene(project_app, (120, 40), armed("add-tests", "i", typed="Also cover the empty cart")),
    "diff_approval": Scene(project_app, (120, 40), armed("fix-login", "A", "A")),
    "filter": Scene(project_app, (120, 40), armed(None, "slash", typed="login")),
    "spend_chart_80x24": Scene(project_app, (80, 24), armed("fix-login", "dollar_sign")),
    "near_budget_80x24": Scene(near_budget_app, (80, 24), armed("fix-login")),
    "near_budget_120x40": Scene(near_budget_app, (120, 40), armed("fix-login")),
    "over_budget_80x24": Scene(over_budget_app, (80, 24), armed("lint")),
    "over_budget_120x40": Scene(over_budget_app, (120, 40), armed("lint")),
    "budget_dialog_80x24": Scene(near_budget_app, (80, 24), armed("fix-login", "B")),
    "budget_dialog_120x40": Scene(near_budget_app, (120, 40), armed("fix-login", "B")),
    "new_agent_form_80x24": Scene(project_app, (80, 24), armed(None, "n", typed="Add a logout endpoint.")),
}
"""Also read by scripts/screenshots.py."""


@pytest.fixture(autouse=True)
def _pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC (the pictures show clock times) and the fake home is the test's own."""
    yield from pin_scene(globals(), tmp_path, monkeypatch)


class TestWorkbenchLooks:
    def test_80x24_stays_readable(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["workbench_80x24"])

    def test_120x40_groups_by_day_and_shows_times(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["workbench_120x40"])

    def test_200x50(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["workbench_200x50"])


class TestFormsLooks:
    def test_new_agent_form(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["new_agent_form"])

    def test_composer_on_a_finished_session(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["composer"])


class TestSpendLooks:
    def test_the_spend_chart_at_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["spend_chart_80x24"])

    def test_near_its_budget_at_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["near_budget_80x24"])

    def test_near_its_budget_at_120x40(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["near_budget_120x40"])

    def test_over_its_budget_at_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["over_budget_80x24"])

    def test_over_its_budget_at_120x40(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["over_budget_120x40"])

    def test_the_budget_dialog_at_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["budget_dialog_80x24"])

    def test_the_budget_dialog_at_120x40(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["budget_dialog_120x40"])

    def test_the_new_agent_form_at_80x24(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["new_agent_form_80x24"])


class TestApprovalLooks:
    def test_edit_request_shows_its_diff(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["diff_approval"])


class TestFilterLooks:
    def test_filter_by_text(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["filter"])
