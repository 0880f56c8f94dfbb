"""An ACP agent's mode and plan in the session's header, and its own cost where it reports one.

The reducer keeps the latest mode and plan an agent reported per session (`mode`, `plan`:
entries with `content`, `status` and `priority`, as ACP sends them); a session given those
fields shows what the header makes of them (the fold itself: tests/test_agent_reports.py). The
cost is the reducer's `Spend`: an agent-reported cost reads as dollars, never "price unknown".

    .venv/bin/python -m pytest tests/test_acp_plan.py --snapshot-update   # accept new looks
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_acp_looks as looks
from support_tui import Scene, detail_text, pin_scene, snap, snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import at, fake_home, settle
from test_acp_dashboard import tree_line
from textual.pilot import Pilot

from agent_tui.events import Event
from agent_tui.reducer import DashboardState, PlanEntryView, SessionView, project_state
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.formatting import session_header
from agent_tui.tui.widgets.session_detail import SessionDetail

pytestmark = pytest.mark.anyio


def Entry(content: str, priority: str, status: str) -> PlanEntryView:
    """ACP's `PlanEntry` as the reducer keeps it (in the order ACP's schema lists the fields)."""
    return PlanEntryView(content, status, priority)


PLAN = [
    Entry("Read how login compares passwords", "medium", "completed"),
    Entry("Switch to hmac.compare_digest", "high", "in_progress"),
    Entry("Add a test for a wrong password", "medium", "pending"),
]


def reporting(
    state: DashboardState, session_id: str, mode: str | None, plan: list[PlanEntryView]
) -> SessionView:
    """`state`'s session `session_id`, now with a mode and a plan (it replaces the plain one)."""
    session = dataclasses.replace(state.sessions[session_id], mode=mode, plan=tuple(plan))
    state.sessions[session_id] = session
    return session


@pytest.fixture(autouse=True)
def _pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from pin_scene(vars(looks), tmp_path, monkeypatch)


def header_text(state: DashboardState, session: SessionView) -> str:
    return str(session_header(state, session))


class TestTheHeader:
    def test_the_mode_and_each_plan_entry_show_in_the_agents_order(self, tmp_path: Path) -> None:
        state = project_state(looks.side_by_side(tmp_path))
        session = reporting(state, looks.CLAUDE, "acceptEdits", PLAN)
        lines = header_text(state, session).splitlines()
        at = lines.index("mode acceptEdits · plan 1 of 3 done")
        assert lines[at + 1 : at + 4] == [
            "  ✓ Read how login compares passwords",
            "  ▸ ! Switch to hmac.compare_digest",
            "  ○ Add a test for a wrong password",
        ]

    def test_a_long_plan_counts_what_it_does_not_show(self, tmp_path: Path) -> None:
        state = project_state(looks.side_by_side(tmp_path))
        plan = [Entry(f"step {n}", "low", "pending") for n in range(1, 12)]
        text = header_text(state, reporting(state, looks.CLAUDE, None, plan))
        assert "plan 0 of 11 done" in text and "step 8" in text and "step 9" not in text
        assert "… 3 more" in text

    def test_a_session_that_reported_neither_shows_no_line(self, tmp_path: Path) -> None:
        state = project_state(looks.side_by_side(tmp_path))
        plain = header_text(state, state.sessions[looks.CLAUDE])
        assert header_text(state, reporting(state, looks.CLAUDE, None, [])) == plain
        assert "mode" not in plain and "plan" not in plain

    def test_a_plan_sent_as_text_shows_as_the_agent_wrote_it(self, tmp_path: Path) -> None:
        state = project_state(looks.side_by_side(tmp_path))
        text = "1. Read the login code\n2. [b]Fix[/b] the compare\n" + "".join(
            f"{n}. more\n" for n in range(3, 12)
        )
        session = dataclasses.replace(state.sessions[looks.CLAUDE], plan_text=text)
        lines = header_text(state, session).splitlines()
        at = lines.index("plan 1. Read the login code")
        assert lines[at + 1] == "  2. [b]Fix[/b] the compare"
        assert "    … 3 more lines" in lines and "  9. more" not in lines

    def test_the_agents_words_are_text_not_markup(self, tmp_path: Path) -> None:
        state = project_state(looks.side_by_side(tmp_path))
        plan = [Entry("[bold]Ship[/bold] it\x1b[2J", "low", "pending")]
        text = header_text(state, reporting(state, looks.CLAUDE, "[red]x", plan))
        assert "[bold]Ship[/bold]" in text and "[red]x" in text and "\x1b" not in text


def with_plan(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, AgentTuiApp)
    state = app.dashboard.state
    reporting(state, looks.CLAUDE, "acceptEdits", PLAN)
    app.dashboard.show_state(state)
    app.dashboard.select_session(looks.CLAUDE)


async def showing_the_plan(pilot: Pilot) -> None:
    await settle(pilot)
    with_plan(pilot)
    await settle(pilot)


PLAN_SCENE = Scene(looks.acp_app, (100, 30), showing_the_plan)


async def test_the_detail_pane_shows_the_plan_as_the_agent_updates_it() -> None:
    app = looks.acp_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await showing_the_plan(pilot)
        assert "▸ ! Switch to hmac.compare_digest" in detail_text(app)
        state = app.dashboard.state
        session = state.sessions[looks.CLAUDE]
        session.plan = tuple(dataclasses.replace(entry, status="completed") for entry in PLAN)
        session.last_sequence += 1  # as a new `plan` record would move it
        app.dashboard.show_state(state)
        await settle(pilot)
        assert "plan 3 of 3 done" in detail_text(app)
        assert app.dashboard.query_one("#detail", SessionDetail).session_id == looks.CLAUDE


class TestLooks:
    def test_an_acp_agents_plan_in_the_detail(self, snap_compare) -> None:
        assert snap(snap_compare, PLAN_SCENE)


def agent_costed(home: Path, usage: dict[str, Any]) -> list[Event]:
    """A claude session whose one model call the agent reported with `usage` (its own cost)."""
    log = looks.AcpLog(
        looks.CLAUDE, at(14, 12), "claude", cwd=str(home / "shop"), title="Add a logout endpoint"
    )
    log.start("turn_c1", "Add a logout endpoint", after=1)
    log.emit("model.delta", "turn_c1", after=2, text="Done.")
    log.emit("model.usage", "turn_c1", step=1, **usage)
    log.emit("turn.completed", "turn_c1", after=1, stopReason="final")
    return log.events


class TestTheAgentsOwnCost:
    """The agent's cost is the reducer's spend: dollars where it reported them, never a price
    looked up by the dashboard, never "price unknown" beside a reported cost."""

    @pytest.mark.parametrize(
        ("usage", "header", "tree"),
        [
            (
                {"promptTokens": 12000, "completionTokens": 300, "costUsd": 0.42},
                "spent $0.42 · 12.3k tok",
                "$0.42",
            ),
            ({"promptTokens": 0, "completionTokens": 0, "costUsd": 0.42}, "spent $0.42", "$0.42"),
        ],
        ids=["with-tokens", "cost-alone"],
    )
    async def test_a_reported_cost_reads_as_dollars(
        self, tmp_path: Path, usage: dict[str, Any], header: str, tree: str
    ) -> None:
        app = AgentTuiApp(events=agent_costed(fake_home(tmp_path), usage), live=False)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot)
            app.dashboard.select_session(looks.CLAUDE)
            await settle(pilot)
            shown = detail_text(app)
            assert header in shown.splitlines() or any(
                line.startswith(header + " ") for line in shown.splitlines()
            )
            assert "price unknown" not in shown and "0 tok" not in shown
            assert tree in tree_line(app, looks.CLAUDE)

    async def test_tokens_without_a_cost_still_say_price_unknown(self, tmp_path: Path) -> None:
        usage = {"promptTokens": 12000, "completionTokens": 300}
        app = AgentTuiApp(events=agent_costed(fake_home(tmp_path), usage), live=False)
        async with app.run_test(size=(120, 30)) as pilot:
            await settle(pilot)
            app.dashboard.select_session(looks.CLAUDE)
            await settle(pilot)
            assert "spent 12.3k tok · price unknown" in detail_text(app)
