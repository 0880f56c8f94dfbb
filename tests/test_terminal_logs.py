"""Terminal agents' logs and questions: a simulated CLI writes its transcript (lines of the real
fixtures, appended as the CLI would) and sends its hook events through the handler, as the hook
socket does; the engine stores the log and its listeners (the reducer here) see each event."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from support_engine import make_engine

from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest
from agent_tui.engine.questions import Questions
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.reducer import DashboardState, apply_event
from agent_tui.store import JsonlFileEventStore
from agent_tui.terminal.hook_socket import NO_DECISION, Reply
from agent_tui.terminal.logs import TerminalLogs, TranscriptRefused
from agent_tui.terminal.questions import HANDED_BACK, IN_TERMINAL, STOPPED, TerminalHooks

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude_code" / "v2.1-subagents-dir"
CLAUDE_ID = "c4d5e6f7-8a9b-4c0d-9e1f-2a3b4c5d6e23"
MAIN = f"sess_{CLAUDE_ID}"
CHILD = f"{MAIN}_agent-a7f3c2"
EDIT_ID = "toolu_03EditLog"
EDIT_INPUT = {
    "file_path": "/home/dev/shop-api/CHANGELOG.md",
    "old_string": "## Unreleased\n",
    "new_string": "## Unreleased\n- Shipped orders can no longer be cancelled.\n",
}

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FakeClaude:
    """Claude Code as the tests play it: its session directory, a transcript it appends to line
    by line (the fixture's), its sub-agent's file, and its hook events."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "claude" / "projects"
        self.project = self.root / "-home-dev-shop-api"
        self.project.mkdir(parents=True)
        self.transcript = self.project / f"{CLAUDE_ID}.jsonl"
        self.lines = (CLAUDE / f"{CLAUDE_ID}.jsonl").read_bytes().splitlines(keepends=True)
        self.sub_lines = (
            (CLAUDE / CLAUDE_ID / "subagents" / "agent-a7f3c2.jsonl").read_bytes().splitlines(keepends=True)
        )
        self.written = 0

    def write(self, upto: int) -> None:
        """Append the fixture's lines up to line `upto` (0-based, excluded)."""
        with self.transcript.open("ab") as handle:
            for line in self.lines[self.written : upto]:
                handle.write(line)
        self.written = max(self.written, upto)

    def write_subagent(self) -> None:
        folder = self.project / CLAUDE_ID / "subagents"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "agent-a7f3c2.jsonl").write_bytes(b"".join(self.sub_lines))
        shutil.copy(CLAUDE / CLAUDE_ID / "subagents" / "agent-a7f3c2.meta.json", folder)

    def hook(self, name: str, **fields: Any) -> dict[str, Any]:
        return {
            "session_id": CLAUDE_ID,
            "transcript_path": str(self.transcript),
            "cwd": "/home/dev/shop-api",
            "hook_event_name": name,
            **fields,
        }

    def edit_hook(self, name: str) -> dict[str, Any]:
        extra: dict[str, Any] = {"tool_name": "Edit", "tool_input": dict(EDIT_INPUT)}
        if name == "PreToolUse":
            extra["tool_use_id"] = EDIT_ID
        return self.hook(name, **extra)


class Harness:
    """An engine whose questions people answer, a reducer fed by its listener, the handler."""

    def __init__(
        self, engine: SessionEngine, cli: FakeClaude, *, watched: bool = True, hand_back: float = 30
    ) -> None:
        self.engine = engine
        self.cli = cli
        self.state = DashboardState()
        self.events: list[Event] = []
        self.watching = watched
        engine.subscribe(self._heard)
        self.logs = TerminalLogs(engine, roots={"claude-code": cli.root, "codex": cli.root.parent / "codex"})
        self.hooks = TerminalHooks(
            engine, self.logs, watched=lambda: self.watching, hand_back_after=hand_back
        )

    def _heard(self, event: Event) -> None:
        self.events.append(event)
        apply_event(self.state, event)

    def types(self, session_id: str = MAIN) -> list[str]:
        return [event.type for event in self.events if event.session_id == session_id]


def new_engine(tmp_path: Path) -> SessionEngine:
    """An engine whose questions people answer (no answerer of its own)."""
    return SessionEngine(
        JsonlFileEventStore(tmp_path / "sessions"), ScriptedProvider(), questions=Questions(None)
    )


async def wait_for_question(engine: SessionEngine) -> PermissionRequest:
    while not engine.questions.waiting():
        await anyio.sleep(0.005)
    return engine.questions.waiting()[0]


def stored(tmp_path: Path, session_id: str) -> list[Event]:
    return list(JsonlFileEventStore(tmp_path / "sessions").replay(session_id))


class TestFollowing:
    async def test_the_session_appears_with_its_subagent_through_the_engines_listeners(
        self, tmp_path: Path
    ) -> None:
        cli = FakeClaude(tmp_path)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            cli.write(6)
            cli.write_subagent()
            assert await h.hooks.handle("claude-code", cli.hook("SessionStart")) == NO_DECISION
            assert MAIN in h.state.sessions and CHILD in h.state.sessions
            assert h.state.sessions[CHILD].parent_session_id == MAIN
            assert h.state.sessions[MAIN].client == "claude-code"
            # A turn in progress is running, never failed.
            assert h.state.sessions[MAIN].status == "running"
            assert "turn.completed" not in h.types()
            last = engine.session(MAIN).last_sequence
            before = len(h.events)
            cli.write(9)
            assert await h.logs.catch_up() > 0
            added = [e.sequence for e in h.events[before:] if e.session_id == MAIN]
            assert added == list(range(last + 1, last + 1 + len(added)))
            # the sub-agent ends: its turn is closed as its transcript's end closes it
            sub = cli.project / CLAUDE_ID / "subagents" / "agent-a7f3c2.jsonl"
            await h.hooks.handle("claude-code", cli.hook("SubagentStop", agent_transcript_path=str(sub)))
            assert h.state.sessions[CHILD].status != "running"
        assert chain_violations(stored(tmp_path, MAIN), complete=False) == []
        assert chain_violations(stored(tmp_path, CHILD)) == []

    async def test_only_appended_lines_are_read(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            cli.write(3)
            await h.logs.follow("claude-code", cli.transcript)
            first = len(h.events)
            assert await h.logs.catch_up() == 0  # nothing new: nothing stored
            # half a line waits for its end
            with cli.transcript.open("ab") as handle:
                handle.write(cli.lines[3][:50])
            assert await h.logs.catch_up() == 0
            with cli.transcript.open("ab") as handle:
                handle.write(cli.lines[3][50:])
            cli.written = 4
            assert await h.logs.catch_up() > 0
            assert len({e.id for e in h.events}) == len(h.events) > first

    async def test_a_hostile_transcript_path_is_refused(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        outside = tmp_path / "elsewhere.jsonl"
        outside.write_bytes(b"".join(cli.lines[:6]))
        link = cli.project / "link.jsonl"
        os.symlink(outside, link)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            for path in (outside, link, cli.project / ".." / ".." / ".." / "elsewhere.jsonl", cli.project):
                with pytest.raises(TranscriptRefused):
                    await h.logs.follow("claude-code", path)
            hostile = cli.hook("SessionStart")
            hostile["transcript_path"] = str(link)
            assert await h.hooks.handle("claude-code", hostile) == NO_DECISION
            assert h.events == []
            assert any("not under" in warning for warning in h.hooks.warnings)

    async def test_a_second_process_cannot_write_the_same_log(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        cli.write(6)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            await h.logs.follow("claude-code", cli.transcript)
            assert h.logs.builder(MAIN) is not None
            other_dir = tmp_path / "other"
            other_dir.mkdir()
            async with new_engine(tmp_path) as second:  # the same sessions directory
                h2 = Harness(second, cli)
                await h2.logs.follow("claude-code", cli.transcript)
                assert h2.logs.builder(MAIN) is None
                assert h2.types() == []
                assert any("shown by that process" in warning for warning in h2.logs.warnings)
                # its hooks get no decision from the second one
                reply = await h2.hooks.handle("claude-code", cli.edit_hook("PermissionRequest"))
                assert reply == NO_DECISION and second.questions.waiting() == []


class TestQuestions:
    async def test_allow_reaches_the_queue_first_then_the_hook_and_the_log(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            cli.write(6)
            cli.write_subagent()
            await h.hooks.handle("claude-code", cli.hook("UserPromptSubmit"))
            # The hook tells of the call before the transcript does.
            assert await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse")) == NO_DECISION
            assert h.state.sessions[MAIN]  # the call is in the log
            replies: list[Reply] = []
            pending_when_asked: list[str] = []

            async def permission() -> None:
                replies.append(await h.hooks.handle("claude-code", cli.edit_hook("PermissionRequest")))

            async with anyio.create_task_group() as group:
                group.start_soon(permission)
                request = await wait_for_question(engine)
                pending_when_asked = [view.request_id for view in h.state.pending_permissions()]
                assert engine.questions.answer(MAIN, request.request_id, PermissionAnswer("allow")) is None
            assert pending_when_asked == [request.request_id]
            assert request.tool_call_id == EDIT_ID and request.risk == "write"
            assert "+- Shipped orders can no longer be cancelled." in request.args_preview
            assert replies == [Reply("allow", remember=False)]
            assert h.state.pending_permissions() == []
            # the transcript then shows the call and its result: written once
            cli.write(11)
            await h.logs.catch_up()
        events = stored(tmp_path, MAIN)
        assert chain_violations(events, complete=False) == []
        requested = [
            e for e in events if e.type == "model.tool_call_requested" and e.payload["toolCallId"] == EDIT_ID
        ]
        assert len(requested) == 1 and requested[0].id.endswith("_hook")
        resolved = [e.payload for e in events if e.type == "permission.resolved"]
        assert [(r["decision"], r["actor"]) for r in resolved] == [("ask", "policy"), ("allow", "user")]
        assert "remember" not in resolved[1]
        assert [e.type for e in events if e.payload.get("toolCallId") == EDIT_ID][-2:] == [
            "tool.started",
            "tool.completed",
        ]

    async def _one_question(
        self,
        tmp_path: Path,
        answer: PermissionAnswer | None,
        *,
        cli_name: str = "claude-code",
        hand_back: float = 30,
    ) -> tuple[Harness, list[Reply], PermissionRequest | None]:
        cli = FakeClaude(tmp_path)
        engine = new_engine(tmp_path)
        replies: list[Reply] = []
        request: PermissionRequest | None = None
        async with engine:
            h = Harness(engine, cli, hand_back=hand_back)
            cli.write(6)
            await h.hooks.handle("claude-code", cli.hook("SessionStart"))
            await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse"))

            async def permission() -> None:
                replies.append(await h.hooks.handle(cli_name, cli.edit_hook("PermissionRequest")))  # type: ignore[arg-type]

            async with anyio.create_task_group() as group:
                group.start_soon(permission)
                request = await wait_for_question(engine)
                if answer is not None:
                    engine.questions.answer(MAIN, request.request_id, answer)
            h.logs.release()
        return h, replies, request

    async def test_deny(self, tmp_path: Path) -> None:
        h, replies, _ = await self._one_question(tmp_path, PermissionAnswer("deny", reason="not now"))
        assert replies == [Reply("deny", message="not now")]
        h.cli.write(11)  # the CLI reports the call denied: it fails permission_denied
        async with new_engine(tmp_path) as engine:
            again = Harness(engine, h.cli)
            await again.logs.follow("claude-code", h.cli.transcript)
            assert again.logs.warnings == []
        events = stored(tmp_path, MAIN)
        assert chain_violations(events, complete=False) == []
        ends = [e for e in events if e.payload.get("toolCallId") == EDIT_ID and e.type.startswith("tool.")]
        assert [(e.type, e.payload.get("errorCode")) for e in ends] == [("tool.failed", "permission_denied")]

    async def test_always_is_remembered_only_when_chosen(self, tmp_path: Path) -> None:
        _, replies, _ = await self._one_question(tmp_path, PermissionAnswer("allow", remember="always"))
        assert replies == [Reply("allow", remember=True)]
        resolved = [e.payload for e in stored(tmp_path, MAIN) if e.type == "permission.resolved"]
        assert resolved[-1]["remember"] == "always"
        _, replies, _ = await self._one_question(
            tmp_path / "b", PermissionAnswer("allow", remember="session")
        )
        assert replies == [Reply("allow", remember=False)]

    async def test_codex_hands_the_question_back_after_the_configured_time(self, tmp_path: Path) -> None:
        h, replies, request = await self._one_question(tmp_path, None, cli_name="codex", hand_back=0.05)
        assert replies == [NO_DECISION]
        resolved = [e.payload for e in stored(tmp_path, MAIN) if e.type == "permission.resolved"]
        assert (resolved[-1]["decision"], resolved[-1]["reason"]) == ("withdrawn", HANDED_BACK)
        assert h.state.pending_permissions() == []
        assert request is not None
        first = h.engine.questions.answer(MAIN, request.request_id, PermissionAnswer("allow"))
        assert first is not None and first.actor == "system"

    async def test_a_question_that_comes_before_its_transcript_is_asked_once_the_call_is_written(
        self, tmp_path: Path
    ) -> None:
        # The real Claude Code may write a new session's first lines after its first call's hooks.
        cli = FakeClaude(tmp_path)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            h.hooks.transcript_wait = 60.0
            assert await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse")) == NO_DECISION
            replies: list[Reply] = []

            async def permission() -> None:
                replies.append(await h.hooks.handle("claude-code", cli.edit_hook("PermissionRequest")))

            async with anyio.create_task_group() as group:
                group.start_soon(permission)
                await anyio.wait_all_tasks_blocked()
                assert engine.questions.waiting() == [] and replies == []  # waiting for the transcript
                cli.write(7)  # the session and the call, no result yet
                request = await wait_for_question(engine)
                assert request.tool_call_id == EDIT_ID
                engine.questions.answer(MAIN, request.request_id, PermissionAnswer("allow"))
            assert replies == [Reply("allow", remember=False)]

    async def test_a_stop_before_the_transcript_shows_the_call_ran_waits_for_it(self, tmp_path: Path) -> None:
        # Allowed in the terminal: the real Claude Code's Stop hook may come before the call's result.
        cli = FakeClaude(tmp_path)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            h.hooks.transcript_wait = 60.0
            cli.write(7)
            await h.hooks.handle("claude-code", cli.hook("SessionStart"))
            await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse"))
            async with anyio.create_task_group() as group:
                group.start_soon(h.hooks.handle, "claude-code", cli.edit_hook("PermissionRequest"))
                await wait_for_question(engine)
                stopped: list[Reply] = []

                async def stop() -> None:
                    stopped.append(await h.hooks.handle("claude-code", cli.hook("Stop")))

                group.start_soon(stop)
                await anyio.wait_all_tasks_blocked()
                assert stopped == [] and "turn.completed" not in h.types()
                cli.write(11)  # the call's result
                while not stopped:
                    await h.logs.catch_up()
                    await anyio.wait_all_tasks_blocked()
                group.cancel_scope.cancel()  # the held PermissionRequest hook (Claude ends it at its timeout)
        resolved = [e.payload for e in stored(tmp_path, MAIN) if e.payload.get("toolCallId") == EDIT_ID]
        decisions = [(r["decision"], r.get("reason")) for r in resolved if "decision" in r]
        assert decisions == [("ask", None), ("withdrawn", IN_TERMINAL)]

    async def test_the_hook_disconnecting_withdraws_the_request_at_once(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            cli.write(6)
            await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse"))
            async with anyio.create_task_group() as group:
                group.start_soon(h.hooks.handle, "claude-code", cli.edit_hook("PermissionRequest"))
                await wait_for_question(engine)
                assert len(h.state.pending_permissions()) == 1
                group.cancel_scope.cancel()  # what the socket does when the hook's connection closes
            assert h.state.pending_permissions() == []
            assert engine.questions.waiting() == []
            # then the transcript shows the call ran (allowed in the terminal)
            cli.write(11)
            await h.logs.catch_up()
        events = stored(tmp_path, MAIN)
        assert chain_violations(events, complete=False) == []
        resolved = [e.payload for e in events if e.type == "permission.resolved"]
        assert (resolved[-1]["decision"], resolved[-1]["reason"]) == ("withdrawn", IN_TERMINAL)

    async def test_no_one_watching_gets_no_decision_and_nothing_is_asked(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli, watched=False)
            cli.write(6)
            await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse"))
            assert await h.hooks.handle("claude-code", cli.edit_hook("PermissionRequest")) == NO_DECISION
            assert "permission.requested" not in h.types()
        # an engine whose questions an answerer answers (--approve) never answers a terminal agent
        async with make_engine(tmp_path / "b", approve="allow") as engine:
            h = Harness(engine, FakeClaude(tmp_path / "b"))
            h.cli.write(6)
            await h.hooks.handle("claude-code", h.cli.edit_hook("PreToolUse"))
            assert await h.hooks.handle("claude-code", h.cli.edit_hook("PermissionRequest")) == NO_DECISION
            assert "permission.requested" not in h.types()

    async def test_two_matching_calls_the_request_says_it_cannot_tell(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            cli.write(6)
            await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse"))
            twin = cli.edit_hook("PreToolUse")
            twin["tool_use_id"] = "toolu_twin"
            await h.hooks.handle("claude-code", twin)
            async with anyio.create_task_group() as group:
                group.start_soon(h.hooks.handle, "claude-code", cli.edit_hook("PermissionRequest"))
                request = await wait_for_question(engine)
                engine.questions.answer(MAIN, request.request_id, PermissionAnswer("deny"))
        assert request.warning is not None and "cannot tell" in request.warning
        asked = [e.payload for e in stored(tmp_path, MAIN) if e.type == "permission.requested"]
        assert "cannot tell" in asked[0]["warning"]


class TestStop:
    async def test_stop_denies_every_further_tool_call_until_the_turn_ends(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            cli.write(6)
            await h.hooks.handle("claude-code", cli.hook("UserPromptSubmit"))
            assert await h.hooks.stop(MAIN) == 1
            reply = await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse"))
            assert reply == Reply("deny", message=STOPPED)
            reply = await h.hooks.handle("claude-code", cli.edit_hook("PermissionRequest"))
            assert reply == Reply("deny", message=STOPPED, interrupt=True)
            records = [e.payload for e in h.events if e.type == "source.record"]
            assert any(r["recordType"] == "agent-tui.stop" for r in records)
            await h.hooks.handle("claude-code", cli.hook("Stop"))
            assert h.state.sessions[MAIN].status != "running"
            assert await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse")) == NO_DECISION
        assert chain_violations(stored(tmp_path, MAIN)) == []

    async def test_claude_a_waiting_question_is_denied_with_interrupt(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            cli.write(6)
            await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse"))
            replies: list[Reply] = []

            async def permission() -> None:
                replies.append(await h.hooks.handle("claude-code", cli.edit_hook("PermissionRequest")))

            async with anyio.create_task_group() as group:
                group.start_soon(permission)
                await wait_for_question(engine)
                assert await h.hooks.stop(MAIN) == 1
            assert replies == [Reply("deny", message=STOPPED, interrupt=True)]
