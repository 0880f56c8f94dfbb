"""The local dashboard's project run follows the project's terminal agents: a Claude Code session
of the project appears in its state, its question is asked in the run's queue, `x` stops it and a
follow-up is refused, all through the run's own command executor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from test_terminal_logs import CLAUDE_ID, MAIN, FakeClaude

from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.ports import FollowUp, ModelChoice, PermissionAnswer
from agent_tui.runtime.commands import Stop
from agent_tui.terminal.hook_socket import Reply
from agent_tui.terminal.questions import STOPPED
from agent_tui.tui.live import LiveRun

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_project_run_follows_its_terminal_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = FakeClaude(tmp_path)
    cli.write(6)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(cli.root.parent))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "run").mkdir(mode=0o700)
    choice = ModelChoice("scripted", "tests", build=ScriptedProvider)
    project = Path("/home/dev/shop-api")  # the fixture's cwd (it need not exist)
    live = LiveRun(None, tmp_path / "sessions", lambda message: None, project=project, models=[choice])
    live.terminal_hand_back = 30.0
    appeared = anyio.Event()

    def heard(event: Event) -> None:
        # (its turn: the workbench lists the session from its transcript's head before it is followed)
        if event.session_id == MAIN and event.type == "turn.started":
            appeared.set()

    live.observers.append(heard)
    following = anyio.Event()  # the run's hooks are told once it follows its terminal agents
    live.on_hydrated.append(following.set)
    async with anyio.create_task_group() as group:
        group.start_soon(live.play)
        with anyio.fail_after(60):
            await appeared.wait()
            await following.wait()
        assert live.terminal is not None and MAIN in live.state.sessions
        terminal = live.terminal
        await terminal.handle("claude-code", cli.edit_hook("PreToolUse"))
        replies: list[Reply] = []

        async def ask() -> None:
            replies.append(await terminal.handle("claude-code", cli.edit_hook("PermissionRequest")))

        group.start_soon(ask)
        with anyio.fail_after(60):
            while not live.questions.waiting():
                await anyio.sleep(0.01)
        (request,) = live.questions.waiting()
        assert [view.request_id for view in live.state.pending_permissions()] == [request.request_id]
        refused = await live.commands.send(FollowUp(sessionId=MAIN, text="go on"))
        assert not refused.ok and (refused.message or "").endswith(
            "is a terminal agent: drive it from its own terminal"
        )
        stopped: Any = await live.commands.send(Stop(sessionId=MAIN))
        assert stopped.ok and stopped.detail == {"stopped": 1}
        with anyio.fail_after(60):
            while not replies:
                await anyio.sleep(0.01)
        assert replies == [Reply("deny", message=STOPPED, interrupt=True)]
        assert live.questions.answer(MAIN, request.request_id, PermissionAnswer("allow")) is not None
        await live.shutdown()
    assert CLAUDE_ID in MAIN
