"""The hook events and transcripts Claude Code 2.1.332 really wrote (tests/fixtures/cli-hooks/,
one session whose background sub-agent asks to run `touch`), played back in the order the CLI
wrote them: the sub-agent's question reaches the queue with its agent's path and is answered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from test_terminal_logs import new_engine, stored, wait_for_question

from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.reducer import DashboardState, apply_event
from agent_tui.terminal.agents import TerminalAgents
from agent_tui.terminal.hook_socket import NO_DECISION, Reply
from agent_tui.terminal.questions import STOPPED

HOOKS = Path(__file__).parent / "fixtures" / "cli-hooks" / "claude-code"
SESSION = "00000000-0000-4000-8000-000000000001"
AGENT = "a0000000000000001"
MAIN = f"sess_{SESSION}"
CHILD = f"{MAIN}_agent-{AGENT}"

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class RecordedClaude:
    """The recorded session, its placeholders (`/work/claude-config`, `/work/ws`) put in `tmp_path`."""

    def __init__(self, tmp_path: Path) -> None:
        self.config = tmp_path / "claude-config"
        self.ws = tmp_path / "ws"
        self.project = self.config / "projects" / "-work-ws"
        self.main = self.project / f"{SESSION}.jsonl"
        self.sub = self.project / SESSION / "subagents" / f"agent-{AGENT}.jsonl"
        self.sub.parent.mkdir(parents=True)
        (self.sub.parent / f"agent-{AGENT}.meta.json").write_text(self._text("transcript-subagent.meta.json"))
        self.main_lines = self._text("transcript.jsonl").splitlines(keepends=True)
        self.sub_lines = self._text("transcript-subagent.jsonl").splitlines(keepends=True)

    def _text(self, name: str) -> str:
        text = (HOOKS / name).read_text()
        return text.replace("/work/claude-config", str(self.config)).replace("/work/ws", str(self.ws))

    def hook(self, name: str) -> dict[str, Any]:
        event: dict[str, Any] = orjson.loads(self._text(f"{name}.json"))
        return event

    @staticmethod
    def append(path: Path, lines: list[str]) -> None:
        with path.open("a") as handle:
            handle.writelines(lines)


async def test_a_real_sessions_sub_agent_question_is_answered_from_the_queue(tmp_path: Path) -> None:
    cli = RecordedClaude(tmp_path)
    state = DashboardState()
    async with new_engine(tmp_path) as engine:

        def fold(event: Event) -> None:
            apply_event(state, event)

        engine.subscribe(fold)
        agents = TerminalAgents(engine, watched=lambda: True, roots={"claude-code": cli.config / "projects"})
        # The transcript does not exist at the first turn's start.
        assert await agents.handle("claude-code", cli.hook("SessionStart")) == NO_DECISION
        assert await agents.handle("claude-code", cli.hook("UserPromptSubmit")) == NO_DECISION
        assert agents.warnings == []
        cli.append(cli.main, cli.main_lines[:21])  # up to the Agent call
        assert await agents.handle("claude-code", cli.hook("PreToolUse")) == NO_DECISION
        assert await agents.handle("claude-code", cli.hook("SubagentStart")) == NO_DECISION
        cli.append(cli.main, cli.main_lines[21:34])  # launched in the background; the main turn answers
        assert await agents.handle("claude-code", cli.hook("Stop")) == NO_DECISION
        cli.append(cli.sub, cli.sub_lines[:15])  # the sub-agent's Bash call
        assert await agents.handle("claude-code", cli.hook("PreToolUse.subagent")) == NO_DECISION
        replies: list[Reply] = []
        queued: list[Any] = []

        async def ask() -> None:
            replies.append(await agents.handle("claude-code", cli.hook("PermissionRequest.subagent")))

        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            request = await wait_for_question(engine)
            queued = state.pending_permissions()
            engine.questions.answer(request.session_id, request.request_id, PermissionAnswer("allow"))
        assert replies == [Reply("allow")]
        assert (request.session_id, request.tool_call_id, request.risk) == (CHILD, "toolu_sub0001", "write")
        assert request.agent_path[-1] == "general-purpose"
        assert [view.request_id for view in queued] == [request.request_id]
        cli.append(cli.sub, cli.sub_lines[15:])
        assert await agents.handle("claude-code", cli.hook("SubagentStop")) == NO_DECISION
        cli.append(cli.main, cli.main_lines[34:])
        assert await agents.handle("claude-code", cli.hook("Stop")) == NO_DECISION
        assert await agents.handle("claude-code", cli.hook("SessionEnd")) == NO_DECISION
        assert agents.warnings == []
        assert state.sessions[CHILD].parent_session_id == MAIN
        assert state.sessions[MAIN].status != "running" and state.sessions[CHILD].status != "running"
        agents.logs.release()
    child: list[Event] = stored(tmp_path, CHILD)
    assert chain_violations(stored(tmp_path, MAIN)) == [] and chain_violations(child) == []
    resolved = [(e.payload["decision"], e.payload["actor"]) for e in child if e.type == "permission.resolved"]
    assert resolved == [("ask", "policy"), ("allow", "user")]
    assert [e.type for e in child if e.payload.get("toolCallId") == "toolu_sub0001"][-2:] == [
        "tool.started",
        "tool.completed",
    ]


async def test_x_stops_a_background_sub_agent_after_its_parents_turn_ended(tmp_path: Path) -> None:
    cli = RecordedClaude(tmp_path)
    async with new_engine(tmp_path) as engine:
        agents = TerminalAgents(engine, watched=lambda: True, roots={"claude-code": cli.config / "projects"})
        cli.append(cli.main, cli.main_lines[:34])
        cli.append(cli.sub, cli.sub_lines[:14])
        await agents.handle("claude-code", cli.hook("SubagentStart"))
        await agents.handle("claude-code", cli.hook("Stop"))  # the main turn ended; the sub-agent runs
        assert await agents.stop(MAIN) == 1
        stopped = [e for e in stored(tmp_path, CHILD) if e.type == "source.record"]
        assert stopped[-1].payload["recordType"] == "agent-tui.stop"
        reply = await agents.handle("claude-code", cli.hook("PreToolUse.subagent"))
        assert reply == Reply("deny", message=STOPPED)
        reply = await agents.handle("claude-code", cli.hook("PermissionRequest.subagent"))
        assert reply == Reply("deny", message=STOPPED, interrupt=True)
        # the sub-agent's turn ends: the stop ends with it
        cli.append(cli.sub, cli.sub_lines[14:])
        await agents.handle("claude-code", cli.hook("SubagentStop"))
        assert await agents.handle("claude-code", cli.hook("PreToolUse.subagent")) == NO_DECISION
        agents.logs.release()
    assert chain_violations(stored(tmp_path, CHILD)) == []


CODEX_HOOKS = HOOKS.parent / "codex"
PARENT = "00000000-0000-7000-8000-000000000001"
SUB = "00000000-0000-7000-8000-00000000000a"


class RecordedCodex:
    """The recorded Codex 0.171.0 session (a sub-agent asks to run `touch`), its placeholders
    (`/work/codex-home`, `/work/ws`) put in `tmp_path`."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "codex-home"
        self.ws = tmp_path / "ws"
        day = self.home / "sessions" / "2026" / "12" / "06"
        day.mkdir(parents=True)
        self.parent = day / f"rollout-2026-12-06T13-18-40-{PARENT}.jsonl"
        self.sub = day / f"rollout-2026-12-06T13-23-18-{SUB}.jsonl"
        self.parent_lines = self._text("transcript.jsonl").splitlines(keepends=True)
        self.sub_lines = self._text("transcript-subagent.jsonl").splitlines(keepends=True)

    def _text(self, name: str) -> str:
        text = (CODEX_HOOKS / name).read_text()
        return text.replace("/work/codex-home", str(self.home)).replace("/work/ws", str(self.ws))

    def hook(self, name: str) -> dict[str, Any]:
        event: dict[str, Any] = orjson.loads(self._text(f"{name}.json"))
        return event


async def test_a_real_codex_sub_agents_question_is_denied_from_the_queue(tmp_path: Path) -> None:
    cli = RecordedCodex(tmp_path)
    child = f"sess_{SUB}"
    async with new_engine(tmp_path) as engine:
        agents = TerminalAgents(engine, watched=lambda: True, roots={"codex": cli.home / "sessions"})
        RecordedClaude.append(cli.parent, cli.parent_lines[:12])  # up to the spawn
        assert await agents.handle("codex", cli.hook("SessionStart")) == NO_DECISION
        RecordedClaude.append(cli.sub, cli.sub_lines[:10])  # up to the sub-agent's exec_command
        assert await agents.handle("codex", cli.hook("SubagentStart")) == NO_DECISION
        assert engine.budgets.index.parent_of(child) == f"sess_{PARENT}"
        assert await agents.handle("codex", cli.hook("PreToolUse.subagent")) == NO_DECISION
        replies: list[Reply] = []

        async def ask() -> None:
            replies.append(await agents.handle("codex", cli.hook("PermissionRequest.subagent")))

        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            request = await wait_for_question(engine)
            engine.questions.answer(
                request.session_id, request.request_id, PermissionAnswer("deny", reason="no")
            )
        assert replies == [Reply("deny", message="no")]
        assert (request.session_id, request.tool_call_id) == (child, "call_sub1")
        assert request.args_preview == "touch /work/ws/submarker".replace("/work/ws", str(cli.ws))
        RecordedClaude.append(cli.sub, cli.sub_lines[10:])
        RecordedClaude.append(cli.parent, cli.parent_lines[12:])
        assert await agents.handle("codex", cli.hook("Stop")) == NO_DECISION
        assert agents.warnings == []
        agents.logs.release()
    events = stored(tmp_path, child)
    assert chain_violations(events) == [] and chain_violations(stored(tmp_path, f"sess_{PARENT}")) == []
    ends = [
        (e.type, e.payload.get("errorCode")) for e in events if e.payload.get("toolCallId") == "call_sub1"
    ]
    assert ends[-1] == ("tool.failed", "permission_denied")
