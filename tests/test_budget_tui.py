"""Budgets from the dashboard, with a real engine (scripted model), real logs: the new-agent
form's budget lands in the session's `session.created`, `B` changes it through the same control
every dashboard uses (a `session.budget` in the log), and what cannot be a budget is refused in
the dialog with a reason. On a real model server: a tree at 80% of its budget is marked and the
user who looked away is told; past it the turn stops, a follow-up is refused with the reason, and
once `B` raises the budget the agent goes on."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from fake_model_server import FakeModelServer, Stream, openai_stream
from replay_logs import SessionLog
from support_providers import (  # noqa: F401 - fake_model_server: the `server` fixture
    FAKE_KEY,
    FAST,
    fake_model_server,
    settings_for,
)
from support_tui import detail_text, log_of
from support_workbench import agent_script, recorded_app, scripted_models, settle, type_text, wait_for
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, Static

from agent_tui.costs.budgets import BudgetLimit
from agent_tui.engine.scenario import Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.providers.config import DEFAULT_KEY_ENV, load_config
from agent_tui.providers.factory import build_provider
from agent_tui.reducer import AttentionPolicy
from agent_tui.runtime.commands import FollowUp, SetBudget
from agent_tui.runtime.model_router import ModelChoice
from agent_tui.runtime.workbench import AgentSpec
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.replay_app import ReplayApp
from agent_tui.tui.run_surface import start_agent
from agent_tui.tui.screens.budget import BudgetScreen
from agent_tui.tui.screens.new_agent import NewAgentScreen
from agent_tui.tui.widgets.composer import Composer
from agent_tui.tui.widgets.spend_chart import SpendChart

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
        for typed, said in [
            ("many", "'many' is not a number of tokens (like 500k)"),
            ("nan", "'nan' is not a number of tokens (like 500k)"),
            ("inf", "'inf' is not a number of tokens (like 500k)"),
            ("1e400", "a token budget is at most 9,007,199,254,740,991 tokens"),
            ("1e308k", "a token budget is at most 9,007,199,254,740,991 tokens"),  # was an OverflowError
            ("9007199254740992", "a token budget is at most 9,007,199,254,740,991 tokens"),
            ("18446744073709551616", "a token budget is at most 9,007,199,254,740,991 tokens"),
        ]:
            dialog.query_one("#budget-tokens", Input).value = typed
            await pilot.press("enter")
            assert app.screen is dialog
            error = str(dialog.query_one("#budget-error", Static).content)
            assert said in error
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


# -- a tree that spends its budget, on a real model server ---------------------------------------
PRICED = (
    '[prices."test-model"]\ninput = 1.0\noutput = 1.0\n[prices."gpt-4.1-mini"]\ninput = 1.0\noutput = 1.0\n'
)
"""A dollar per million tokens, so each figure below is counted by hand."""
LOOK = ("ls", "list_dir", ['{"path": "."}'])


def served_app(tmp_path: Path, server: FakeModelServer) -> AgentTuiApp:
    """The dashboard on a real OpenAI-compatible server, its calls priced from the config file,
    telling what comes while the user is away at once (no gathering)."""
    config = tmp_path / "config.toml"
    config.write_text(PRICED)
    provider = build_provider(
        settings_for("openai", server.openai_url, max_output=1024), {DEFAULT_KEY_ENV["openai"]: FAKE_KEY},
        policy=FAST,
    )  # fmt: skip
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return AgentTuiApp(
        sessions_dir=tmp_path / "sessions",
        project=project,
        models=[ModelChoice("work", "openai · test-model", build=lambda: provider, model="test-model")],
        attention=AttentionPolicy(lambda: time.monotonic_ns() // 1_000_000, gather_ms=0, min_gap_ms=0),
        prices=load_config(config).price_table(),
    )


async def test_a_tree_is_marked_at_80_percent_stopped_at_its_budget_and_goes_on_once_raised(
    tmp_path: Path, server: FakeModelServer
) -> None:
    second_call = threading.Event()
    server.script(
        Stream(openai_stream(["Looking."], [LOOK], usage=(40, 32_960, 0))),  # $0.033 of $0.04: 82%
        Stream(openai_stream(["Again."], [LOOK], usage=(40, 24_960, 0)), gate=second_call),  # $0.058
        Stream(openai_stream(["Done."], usage=(10, 5, 0))),
    )
    app = served_app(tmp_path, server)
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.live
        assert live is not None
        await wait_for(pilot, lambda: live.workbench is not None and live.hydrated, "the engine")
        app.post_message(events.AppBlur())  # the user looks away
        await wait_for(pilot, lambda: not app.app_focus, "the blur")
        await start_agent(
            live,
            app.post_message,
            AgentSpec("Look around", live.project or tmp_path, name="fixer", budget=BudgetLimit(usd=0.04)),
        )
        await wait_for(pilot, lambda: fixer(app) is not None and len(server.requests) == 2, "the second call")
        session_id = fixer(app)
        assert session_id is not None
        await wait_for(pilot, lambda: "▲ 82%" in tree_line(app, "fixer"), "the mark at 82%")
        await wait_for(pilot, lambda: bool(app.attention.sent), "the attention signal")
        assert [n.body for n in app.attention.sent] == ["fixer: spent $0.033 of a $0.04 budget"]
        assert "▲ 82% of a $0.04 budget" in detail_text(app)

        second_call.set()
        await wait_for(pilot, lambda: live.state.sessions[session_id].status == "failed", "the stop")
        spent = "budget exceeded: spent $0.058 of a $0.04 budget"
        end = [e for e in log_of(app, session_id) if e["type"] == "turn.completed"][-1]["payload"]
        assert (end["errorCode"], end["message"]) == ("budget_exceeded", spent)
        await wait_for(pilot, lambda: "▲ over" in tree_line(app, "fixer"), "the over mark")

        app.post_message(events.AppFocus())
        await pilot.press("i")
        await type_text(pilot, "Go on.")
        await pilot.press("enter")
        composer = app.dashboard.query_one("#composer", Composer)
        assert composer.reason == f"B{spent[1:]}. Raise the budget to go on."
        assert composer.text == "Go on."  # kept, to send once the budget allows it

        await pilot.press("escape", "B")
        dialog = app.screen
        assert isinstance(dialog, BudgetScreen)
        dialog.query_one("#budget-usd", Input).value = "1"
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: any(e["type"] == "session.budget" for e in log_of(app, session_id)), "the raise"
        )
        await pilot.press("i", "enter")
        await wait_for(pilot, lambda: len(turns_of(app, session_id)) == 2, "the next turn")
        assert turns_of(app, session_id)[-1] == "final"
        await pilot.press("escape", "q")


async def test_a_dashboard_reopened_over_the_logs_counts_every_turn_and_the_latest_budget(
    tmp_path: Path, server: FakeModelServer
) -> None:
    server.script(
        Stream(openai_stream(["Looking."], [LOOK], usage=(40, 32_960, 0))),  # $0.033
        Stream(openai_stream(["Again."], [LOOK], usage=(40, 24_960, 0))),  # $0.058: over its $0.04
        Stream(openai_stream(["Done."], usage=(10, 5, 0))),  # $0.000015 after B raised it to $1
    )
    first = served_app(tmp_path, server)
    async with first.run_test(size=(120, 40)) as pilot:
        live = first.live
        assert live is not None
        await wait_for(pilot, lambda: live.workbench is not None and live.hydrated, "the engine")
        await start_agent(
            live,
            first.post_message,
            AgentSpec("Look around", live.project or tmp_path, name="fixer", budget=BudgetLimit(usd=0.04)),
        )
        await wait_for(
            pilot, lambda: (sid := fixer(first)) is not None and turns_of(first, sid) != [], "turn 1"
        )
        session_id = fixer(first)
        assert session_id is not None
        assert (await live.commands.send(SetBudget(sessionId=session_id, usd=1.0))).ok
        assert (await live.commands.send(FollowUp(sessionId=session_id, text="Go on."))).ok
        await wait_for(pilot, lambda: len(turns_of(first, session_id)) == 2, "turn 2")
        await pilot.press("q")

    again = served_app(tmp_path, server)  # lists each log from its head and last turn
    async with again.run_test(size=(120, 40)) as pilot:
        reopened = again.live
        assert reopened is not None
        await wait_for(pilot, lambda: reopened.hydrated, "the stored sessions")
        spend = reopened.state.sessions[session_id].spend
        assert spend.cost_usd == pytest.approx((33_000 + 25_000 + 15) / 1e6)  # every turn, not the last
        assert reopened.state.sessions[session_id].budget_usd == 1.0  # raised before the last turn
        assert list(reopened.state.spend_by_day.values()) == [spend]  # the day's total is every turn's
        await wait_for(pilot, lambda: "$0.06" in tree_line(again, "fixer"), "the whole spend on its line")
        assert "▲" not in tree_line(again, "fixer")
        await wait_for(  # the top line's total, every session's every turn: its own redraw
            pilot,
            lambda: (
                " · $0.06 · " in str(again.dashboard.summary.query_one("#summary-counts", Static).render())
            ),
            "the whole spend on the top line",
        )
        await wait_for(pilot, lambda: "budget $1.00, 5% used" in detail_text(again), "the raised budget")
        await pilot.press("q")


def tree_line(app: AgentTuiApp, name: str) -> str:
    """The tree line of the session called `name`, as painted."""
    tree = app.dashboard.session_tree
    sessions = app.dashboard.state.sessions
    for y in range(tree.last_line + 1):
        node = tree.get_node_at_line(y)
        if node is not None and node.data in sessions and sessions[node.data].display_name == name:
            return tree.render_line(y).text
    return ""


def turns_of(app: AgentTuiApp, session_id: str) -> list[str]:
    """How each finished turn of the session ended, from its log."""
    return [e["payload"]["stopReason"] for e in log_of(app, session_id) if e["type"] == "turn.completed"]


async def test_a_replay_shows_the_budget_and_the_spend_chart_at_each_point_of_the_log(tmp_path: Path) -> None:
    log = SessionLog("sess_spent")
    log.add("session.created", None, {"cwd": "/w", "client": "tests", "budget": {"usd": 0.04}}, 0)
    log.add("turn.started", "turn_1", {"promptPreview": "go"}, 1_000)
    log.add("user.message", "turn_1", {"content": "go"}, 1_000)
    log.add("model.delta", "turn_1", {"text": "looking"}, 2_000)
    used = {"promptTokens": 40, "completionTokens": 49_960, "costUsd": 0.05}
    log.add("model.usage", "turn_1", {"step": 1, **used}, 3_000)
    spent = "budget exceeded: spent $0.05 of a $0.04 budget"
    end = {"stopReason": "error", "errorCode": "budget_exceeded", "message": spent, "usage": used}
    log.add("turn.completed", "turn_1", end, 3_000)
    log.add("session.budget", None, {"usd": 1.0, "by": "ana"}, 9_000)
    app = ReplayApp([log.write(tmp_path)])
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(
            pilot, lambda: "budget $1.00, 5% used" in detail_text(app), "the raised budget at the end"
        )
        await pilot.press("g", "6", "enter")  # the turn's end, before the raise: its budget was spent
        await wait_for(
            pilot, lambda: "▲ over budget: spent $0.05 of $0.04" in detail_text(app), "the spent one"
        )
        assert spent in detail_text(app)  # and the stopped turn says why
        chart = app.replay.query_one("#spend-chart", SpendChart)
        assert not chart.display  # a replay charts its spend when asked
        await pilot.press("dollar_sign")
        await wait_for(pilot, lambda: chart.display, "the spend chart")
        lines = str(chart.content).splitlines()
        assert lines[0].startswith("Spend · sess_spent's tree · ") and lines[1].endswith(" $0.05")
        await pilot.press("home")  # at the first event nothing was spent yet
        await wait_for(pilot, lambda: not chart.display, "no chart before any spend")
        await pilot.press("q")
