"""Budgets from the dashboard, with a real engine (scripted model), real logs: the new-agent
form's budget lands in the session's `session.created`, `B` changes it through the same control
every dashboard uses (a `session.budget` in the log), and what cannot be a budget is refused in
the dialog with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from support_tui import detail_text, log_of
from support_workbench import agent_script, recorded_app, scripted_models, settle, type_text, wait_for
from textual.pilot import Pilot
from textual.widgets import Input, Static

from agent_tui.engine.scenario import Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.budget import BudgetScreen
from agent_tui.tui.screens.new_agent import NewAgentScreen

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("home_in_tmp")]


def make_app(tmp_path: Path) -> AgentTuiApp:
    provider = ScriptedProvider(agents={"fixer": agent_script(Step(text=["Fixed."]))})
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return AgentTuiApp(sessions_dir=tmp_path / "sessions", project=project, models=scripted_models(provider))


def fixer(app: AgentTuiApp) -> str | None:
    assert app.live is not None
    return next((sid for sid, s in app.live.state.sessions.items() if s.display_name == "fixer"), None)


async def start_fixer(pilot: Pilot, app: AgentTuiApp, usd: str = "", tokens: str = "") -> str:
    live = app.live
    assert live is not None
    await wait_for(pilot, lambda: live.workbench is not None and live.project is not None, "the engine")
    await pilot.press("n")
    form = app.screen
    assert isinstance(form, NewAgentScreen)
    await type_text(pilot, "Fix the flaky test.", newline="enter")
    form.query_one("#new-agent-name", Input).value = "fixer"
    form.query_one("#new-agent-budget-usd", Input).value = usd
    form.query_one("#new-agent-budget-tokens", Input).value = tokens
    await pilot.press("ctrl+s")
    await wait_for(
        pilot,
        lambda: (sid := fixer(app)) is not None and live.state.sessions[sid].status == "completed",
        "the turn",
    )
    session_id = fixer(app)
    assert session_id is not None
    return session_id


async def test_the_new_agent_forms_budget_is_recorded_with_the_session(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        session_id = await start_fixer(pilot, app, usd="2.50", tokens="500k")
        created = log_of(app, session_id)[0]
        assert created["type"] == "session.created"
        assert created["payload"]["budget"] == {"usd": 2.5, "tokens": 500_000}
        await wait_for(
            pilot, lambda: "budget $2.50 or 500k tok" in detail_text(app), "the budget in the header"
        )
        await pilot.press("q")


async def test_a_bad_budget_in_the_form_keeps_it_open_and_says_why(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.live
        assert live is not None
        await wait_for(pilot, lambda: live.workbench is not None and live.project is not None, "the engine")
        await pilot.press("n")
        await type_text(pilot, "Fix it.", newline="enter")
        app.screen.query_one("#new-agent-budget-usd", Input).value = "lots"
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, NewAgentScreen)
        error = str(app.screen.query_one("#new-agent-error", Static).content)
        assert "Budget: 'lots' is not an amount of dollars (like 2.50)." in error
        await pilot.press("escape", "q")


async def test_b_raises_the_budget_through_the_run_and_the_log_says_so(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        session_id = await start_fixer(pilot, app, usd="1")
        await settle(pilot)
        await pilot.press("B")
        dialog = app.screen
        assert isinstance(dialog, BudgetScreen)
        assert dialog.query_one("#budget-usd", Input).value == "1.00"  # the budget now
        dialog.query_one("#budget-usd", Input).value = "5"
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: any(e["type"] == "session.budget" for e in log_of(app, session_id)), "the change"
        )
        changed = [e for e in log_of(app, session_id) if e["type"] == "session.budget"][-1]["payload"]
        assert changed == {"usd": 5.0, "by": "dashboard"}
        await wait_for(pilot, lambda: "budget $5.00" in detail_text(app), "the new budget in the header")
        assert "fixer may spend $5.00." in app.dashboard.summary.notice
        await pilot.press("q")


async def test_a_budget_the_dialog_cannot_read_is_refused_there(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        session_id = await start_fixer(pilot, app)
        await pilot.press("B")
        dialog = app.screen
        assert isinstance(dialog, BudgetScreen)
        dialog.query_one("#budget-tokens", Input).value = "many"
        await pilot.press("enter")
        assert app.screen is dialog
        error = str(dialog.query_one("#budget-error", Static).content)
        assert "'many' is not a number of tokens (like 500k)" in error
        await pilot.press("escape")
        assert not any(e["type"] == "session.budget" for e in log_of(app, session_id))
        await pilot.press("q")


async def test_a_recorded_view_has_no_budget_to_change(tmp_path: Path) -> None:
    app = recorded_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("B")
        await settle(pilot)
        assert not isinstance(app.screen, BudgetScreen)
        assert "nothing is running here" in app.dashboard.summary.notice
