"""Each real agent in the dashboard under Pilot: what it shows is what `replay --dump state` says.

The dashboard starts the agent (`--agent NAME --prompt …`, an `[acp.NAME]` table in a config file
of its own, `$HOME` a fresh directory, the model a fake one on 127.0.0.1), its question waits in
the queue, `A` opens it and `y` allows it, the command runs and the agent answers. Then the
dashboard's state, as its own dump, equals what `agent-tui replay DIR --dump state` prints for
the logs it wrote: the live view and the recorded one are the same fold of the same events,
each call's decision included.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from fake_model_server import FakeModelServer
from support_bus import dump_of, replay_dump
from support_real_agents import REAL_AGENTS, write_config
from support_workbench import scripted_models, wait_for

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


@pytest.mark.parametrize("name", REAL_AGENTS)
async def test_the_dashboard_shows_what_the_replay_dumps(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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
            await wait_for(
                pilot, lambda: len(live.questions.waiting()) == 1, f"{name}'s question", AGENT_START
            )
            await pilot.press("A")
            assert isinstance(app.screen, ApprovalScreen)
            await pilot.press("y")
            await wait_for(
                pilot,
                lambda: any(s.status == "completed" for s in _state(app).sessions.values()),
                f"{name}'s turn to end",
                AGENT_START,
            )
            assert (project / "made.txt").read_text() == "hello"
            shown = dump_of(_state(app))
            await pilot.press("ctrl+q")  # quit as a user does: every agent is closed and reaped
            await wait_for(
                pilot, lambda: app.live is None or app.live.finished, "the dashboard to close", AGENT_START
            )
    logs = sorted((tmp_path / "sessions").glob("*.jsonl"))
    assert logs, "the dashboard wrote no log"
    assert shown == replay_dump(logs)
    assert "allow" in _decisions(shown), "the dump names no call's decision"


def _decisions(value: Any) -> list[Any]:
    """Every `decision` field anywhere in a dump (the decision of each tool call)."""
    if isinstance(value, dict):
        found = [value["decision"]] if "decision" in value else []
        return found + [d for item in value.values() for d in _decisions(item)]
    if isinstance(value, list):
        return [d for item in value for d in _decisions(item)]
    return []
