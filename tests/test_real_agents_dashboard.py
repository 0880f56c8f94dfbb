"""Each real agent in the dashboard under Pilot, answered and stopped with the user's keys.

The dashboard starts the agent (`--agent NAME --prompt …`, an `[acp.NAME]` table in a config file
of its own, `$HOME` a fresh directory, the model a fake one on 127.0.0.1), and its question waits
in the queue. `A` opens it and `y` allows it: the command runs and the agent's answer shows; `n`
denies it: the command never runs and the call is the user's denial; `x` stops the agent while
it asks, and the composer prompts it again. After each, the dashboard's state, as its own dump,
equals what `agent-tui replay DIR --dump state` prints for the logs it wrote: the live view and
the recorded one are the same fold of the same events, each call's decision included.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fake_model_server import FakeModelServer
from support_bus import dump_of, replay_dump
from support_real_agents import REAL_AGENTS, write_config
from support_tui import detail_text
from support_workbench import scripted_models, wait_for
from test_acp_dashboard import send
from textual.pilot import Pilot

from agent_tui.acp.config import load_acp_agents
from agent_tui.acp.workbench_agents import AcpWorkbenchAgents
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.screens.approval import ApprovalScreen

pytestmark = [pytest.mark.real_agents, pytest.mark.anyio]

COMMAND = "printf hello > made.txt; echo done"
ANSWER = "The file is there now."
AGENT_START = 180.0
"""Seconds a wait on an agent's process may take (a loaded 2-core machine starts Node slowly);
each wait ends as soon as its state is there."""


def _state(app: AgentTuiApp) -> Any:
    assert app.live is not None
    return app.live.state


@asynccontextmanager
async def dashboard(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[AgentTuiApp, Pilot, FakeModelServer, ModuleType, Path]]:
    """The dashboard started as `agent-tui --agent NAME --prompt "Make the file"`, the model set
    to have the agent run `COMMAND`, once the agent's question waits; it quits as a user does
    (every agent closed and reaped) when the block ends."""
    adapter = importlib.import_module(f"real_agent_{name}")
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    with FakeModelServer() as model:
        agent = adapter.setup(home, model)
        adapter.shell_call(model, COMMAND, then=ANSWER)
        config = write_config(tmp_path / "config.toml", agent)
        monkeypatch.setenv("AGENT_TUI_CONFIG", str(config))
        for variable, value in agent.env.items():
            monkeypatch.setenv(variable, value)
        app = AgentTuiApp(
            sessions_dir=tmp_path / "sessions",
            project=project,
            models=scripted_models(ScriptedProvider()),
            external=AcpWorkbenchAgents(load_acp_agents(config), start_timeout=AGENT_START),
            agent=name,
            prompt="Make the file",
        )
        async with app.run_test(size=(120, 40)) as pilot:
            live = app.live
            assert live is not None
            waiting = lambda: len(live.questions.waiting()) == 1  # noqa: E731
            await wait_for(pilot, waiting, f"{name}'s question", AGENT_START)
            yield app, pilot, model, adapter, project
            await pilot.press("ctrl+q")
            await wait_for(pilot, lambda: live.finished, "the dashboard to close", AGENT_START)


def the_session(app: AgentTuiApp, name: str) -> Any:
    [session] = [s for s in _state(app).sessions.values() if s.agent_name == name]
    return session


@pytest.mark.parametrize("name", REAL_AGENTS)
async def test_the_dashboard_shows_what_the_replay_dumps(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with dashboard(name, tmp_path, monkeypatch) as (app, pilot, _model, _adapter, project):
        await pilot.press("A")
        assert isinstance(app.screen, ApprovalScreen)
        await pilot.press("y")
        await wait_for(
            pilot, lambda: the_session(app, name).status == "completed", f"{name}'s turn", AGENT_START
        )
        assert (project / "made.txt").read_text() == "hello"
        await wait_for(pilot, lambda: ANSWER in detail_text(app), f"{name}'s answer", AGENT_START)
        shown = dump_of(_state(app))
    assert shown == replay_dump(sorted((tmp_path / "sessions").glob("*.jsonl")))
    assert "allow" in _decisions(shown), "the dump names no call's decision"


@pytest.mark.parametrize("name", REAL_AGENTS)
async def test_n_denies_the_command_and_the_dump_says_the_user_did(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with dashboard(name, tmp_path, monkeypatch) as (app, pilot, _model, _adapter, project):
        await pilot.press("A")
        assert isinstance(app.screen, ApprovalScreen)
        await pilot.press("n")
        await wait_for(
            pilot, lambda: the_session(app, name).status != "running", f"{name}'s turn", AGENT_START
        )
        shown = dump_of(_state(app))
    assert not (project / "made.txt").exists()
    assert shown == replay_dump(sorted((tmp_path / "sessions").glob("*.jsonl")))
    [call] = [c for s in shown["sessions"] for t in s["turns"] for c in t["toolCalls"]]  # type: ignore[index]
    assert (call["status"], call["decision"], call["decidedBy"]) == ("denied", "deny", "user")


@pytest.mark.parametrize("name", REAL_AGENTS)
async def test_x_stops_it_while_it_asks_and_the_composer_prompts_it_again(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with dashboard(name, tmp_path, monkeypatch) as (app, pilot, model, adapter, project):
        await pilot.press("x")
        await wait_for(
            pilot, lambda: the_session(app, name).status == "cancelled", f"{name} to stop", AGENT_START
        )
        assert app.live is not None and app.live.questions.waiting() == []  # the question withdrawn
        adapter.answer(model, "Hello again.")
        await send(pilot, "Hello again")
        await wait_for(
            pilot, lambda: the_session(app, name).status == "completed", f"{name}'s turn 2", AGENT_START
        )
        await wait_for(pilot, lambda: "Hello again." in detail_text(app), f"{name}'s answer", AGENT_START)
        assert [t.stop_reason for t in the_session(app, name).turns] == ["cancelled", "final"]
    assert not (project / "made.txt").exists()


def _decisions(value: Any) -> list[Any]:
    """Every `decision` field anywhere in a dump (the decision of each tool call)."""
    if isinstance(value, dict):
        found = [value["decision"]] if "decision" in value else []
        return found + [d for item in value.values() for d in _decisions(item)]
    if isinstance(value, list):
        return [d for item in value for d in _decisions(item)]
    return []
