"""Codex (`@zed-industries/codex-acp`) driven through ACP with terminal discovery on shows once.

The real agent, against the fake model, writes its own rollout under `$CODEX_HOME/sessions` while
agent-tui drives it; the terminal follower of the project (`TerminalAgents.serving`, as the
dashboard runs it) and the workbench's listing of the project's transcripts run beside it. The
dashboard's state (folded from the engine's events, told what the follower lets go) holds one
session: the ACP one, not the rollout's copy as a session run in a terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import real_agent_codex as codex
from acp_support import QueuePrompter
from support_real_agents import real_agent

from agent_tui.events import Event
from agent_tui.reducer import DashboardState, apply_event
from agent_tui.runtime.workbench import Workbench
from agent_tui.store import JsonlFileEventStore
from agent_tui.terminal.agents import TerminalAgents
from agent_tui.terminal.discovery import discover

pytestmark = [pytest.mark.anyio, pytest.mark.real_agents]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_codex_session_driven_through_acp_shows_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = DashboardState()

    def fold(event: Event) -> None:
        apply_event(state, event)

    async with real_agent(codex, tmp_path, monkeypatch, QueuePrompter(lambda request: None)) as run:
        rollouts = run.home / ".codex" / "sessions"
        roots: Any = {"codex": rollouts, "claude-code": run.home / ".claude" / "projects"}
        engine = run.harness.engine
        engine.subscribe(fold)
        follower = TerminalAgents(engine, watched=lambda: True, roots=roots, on_dropped=state.forget)
        async with follower.serving(project=run.workspace, poll_every=0.05) as terminal:
            codex.answer(run.model, "Hello from Codex.")
            session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="say hello")
            assert session.turn is not None
            assert await session.turn.wait() == "final"
            await terminal.follow_project(run.workspace)
            await terminal.logs.catch_up()
            # Codex wrote its rollout of this very session: the copy the follower leaves out.
            [rollout] = rollouts.rglob("rollout-*.jsonl")
            meta = orjson.loads(rollout.read_bytes().splitlines()[0])["payload"]
            assert meta["id"] == session.acp_session_id and meta["cwd"] == str(run.workspace)
            assert not terminal.logs.follows(rollout.resolve()) and not terminal.runs(f"sess_{meta['id']}")
        assert list(state.sessions) == [session.session_id]
        assert state.running_count() == 0

    # The dashboard's listing of the project's terminal sessions does not list it either.
    def find(all_projects: bool, warn: Any) -> Any:
        return discover(run.workspace, codex_root=rollouts, claude_root=run.home / ".claude", warn=warn)

    assert [t.cli_id for t in find(False, print)] == [meta["id"]]  # (found as a transcript of the project)
    store = JsonlFileEventStore(run.sessions_dir)
    bench = Workbench(
        engine, project=run.workspace, sessions_dir=run.sessions_dir, models=[], find_terminal=find
    )
    listed: list[Event] = []
    assert await bench.list_terminal(listed.append) == []
    store.close()
    assert listed == []
