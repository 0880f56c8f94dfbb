"""A Codex or Claude Code session this host drives through ACP is not a terminal session too: its
CLI's transcript (a real rollout or transcript file in the CLI's folder) is neither followed nor
listed, a transcript followed before the ACP session's id was recorded is let go, a later
dashboard keeps it out from the stored ACP log, and the CLI's hook about it gets no decision
through the real hook socket (the ACP permission request is the question)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.streams.buffered
import pytest
from acp_support import script_agent_config
from support_terminal import event_line
from test_terminal_logs import CLAUDE_ID, EDIT_ID, FakeClaude

from agent_tui.acp.agents import AcpAgents
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.questions import Questions
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.importers.ids import session_id_for
from agent_tui.reducer import DashboardState, apply_event
from agent_tui.runtime.acp_sessions import recorded_acp_sessions
from agent_tui.runtime.workbench import Workbench
from agent_tui.store import JsonlFileEventStore
from agent_tui.terminal.agents import TerminalAgents
from agent_tui.terminal.discovery import discover
from agent_tui.terminal.hook_socket import NO_DECISION, HookSocket
from agent_tui.terminal.hook_wire import MAX_LINE, Cli

pytestmark = pytest.mark.anyio
ROLLOUT = (
    Path(__file__).parent
    / "fixtures/codex/multi-agent-0.58/2026/01/15/rollout-2026-01-15T16-00-00-019c0d1e-2f3a-7b4c-8d5e-6f7a8b9c0d73.jsonl"
)
FIXTURE_ID = "019c0d1e-2f3a-7b4c-8d5e-6f7a8b9c0d73"
ACP_ID = "019c0d1e-aaaa-7b4c-8d5e-6f7a8b9c0d99"
OURS = session_id_for(ACP_ID)
CHILD_ID = "019c0d1e-5a6b-7c8d-9e0f-1a2b3c4d5e84"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Host:
    """The project, the CLIs' folders, our sessions directory, and an engine with ACP agents."""

    def __init__(self, tmp_path: Path) -> None:
        self.project = tmp_path / "project"
        self.project.mkdir()
        self.codex = tmp_path / "codex" / "sessions"
        self.claude = tmp_path / "claude" / "projects"
        self.sessions = tmp_path / "sessions"

    def rollout(self, agent_id: str = ACP_ID, lines: int | None = None) -> Path:
        """Codex's rollout of session `agent_id` in the project (the fixture's first `lines`,
        re-addressed)."""
        day = self.codex / "2026" / "01" / "15"
        day.mkdir(parents=True, exist_ok=True)
        text = (
            ROLLOUT.read_text().replace(FIXTURE_ID, agent_id).replace("/home/dev/shop-api", str(self.project))
        )
        path = day / f"rollout-2026-01-15T16-00-00-{agent_id}.jsonl"
        path.write_text("".join(text.splitlines(keepends=True)[:lines]))
        return path

    def sub_agent_rollout(self) -> Path:
        """Codex's rollout of a sub-agent whose parent thread is the ACP session `ACP_ID`."""
        day = self.codex / "2026" / "01" / "15"
        day.mkdir(parents=True, exist_ok=True)
        source = ROLLOUT.parent / f"rollout-2026-01-15T16-00-05-{CHILD_ID}.jsonl"
        text = source.read_text().replace(FIXTURE_ID, ACP_ID).replace("/home/dev/shop-api", str(self.project))
        path = day / source.name
        path.write_text(text)
        return path

    def terminal(self, engine: SessionEngine, **options: Any) -> TerminalAgents:
        roots: dict[Cli, Path] = {"codex": self.codex, "claude-code": self.claude}
        return TerminalAgents(engine, watched=lambda: True, roots=roots, **options)

    @asynccontextmanager
    async def engine(self) -> AsyncIterator[tuple[SessionEngine, AcpAgents]]:
        store = JsonlFileEventStore(self.sessions)
        engine = SessionEngine(store, ScriptedProvider(), questions=Questions(None))
        try:
            async with engine, AcpAgents(engine) as agents:
                yield engine, agents
        finally:
            store.close()

    async def drive(self, agents: AcpAgents, agent_id: str = ACP_ID) -> str:
        """One ACP turn of an agent whose `session/new` answers `agent_id`; our session's id."""
        config = script_agent_config("--session-id", agent_id)
        session = await agents.start(config, self.project, prompt="first")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        return session.session_id


class TestFollower:
    async def test_a_transcript_of_an_acp_session_is_not_followed(self, tmp_path: Path) -> None:
        host = Host(tmp_path)
        async with host.engine() as (engine, agents):
            terminal = host.terminal(engine)
            ours = await host.drive(agents)
            host.rollout()
            host.rollout("019c0d1e-bbbb-7b4c-8d5e-6f7a8b9c0d11")  # a session run in a terminal
            assert await terminal.follow_project(host.project) == 1
            assert not terminal.runs(OURS)
            assert terminal.runs(session_id_for("019c0d1e-bbbb-7b4c-8d5e-6f7a8b9c0d11"))
            assert sorted(path.stem for path in host.sessions.glob("*.jsonl")) == sorted(
                [ours, session_id_for("019c0d1e-bbbb-7b4c-8d5e-6f7a8b9c0d11")]
            )
            terminal.logs.release()

    async def test_a_transcript_followed_before_the_acp_id_is_let_go(self, tmp_path: Path) -> None:
        host = Host(tmp_path)
        dropped: list[list[str]] = []
        state = DashboardState()  # the dashboard's, fed by the engine and told what is let go

        def fold(event: Event) -> None:
            apply_event(state, event)

        def let_go(session_ids: list[str]) -> None:
            dropped.append(session_ids)
            state.forget(session_ids)

        async with host.engine() as (engine, agents):
            engine.subscribe(fold)
            terminal = host.terminal(engine, on_dropped=let_go)
            host.rollout(lines=8)  # the rollout appears before `session/new` answers, its turn open
            assert await terminal.follow_project(host.project) == 1
            assert terminal.runs(OURS) and OURS in state.sessions and state.running_count() == 1
            ours = await host.drive(agents)
            await terminal.logs.catch_up()
            assert dropped == [[OURS]]
            assert not terminal.runs(OURS)
            assert list(state.sessions) == [ours] and state.roots() == [ours]
            assert state.running_count() == 0  # (the copy's turn stayed open: it no longer counts)
            assert await terminal.follow_project(host.project) == 0  # and not followed again
            with host.rollout().open("a") as grown:
                grown.write('{"timestamp":"2026-01-15T16:09:00.000Z","type":"event_msg","payload":{}}\n')
            assert await terminal.logs.catch_up() == 0
            terminal.logs.release()
        # the next start: the copy's log (stored before the id came) is not shown either
        store = JsonlFileEventStore(host.sessions)
        bench = Workbench(
            SessionEngine(store, ScriptedProvider()),
            project=host.project,
            sessions_dir=host.sessions,
            models=[],
        )
        folded: list[Event] = []
        await bench.hydrate(folded.append, lazy=True)
        store.close()
        assert {event.session_id for event in folded} == {ours}

    async def test_a_sub_agent_of_an_acp_session_is_not_followed_either(self, tmp_path: Path) -> None:
        host = Host(tmp_path)
        async with host.engine() as (engine, agents):
            terminal = host.terminal(engine)
            await host.drive(agents)
            child = host.sub_agent_rollout()
            assert await terminal.follow_project(host.project) == 0  # left out at its head
            # a hook naming it (Codex's sub-agent has a session id of its own) is not followed
            start = {"session_id": CHILD_ID, "transcript_path": str(child), "hook_event_name": "SessionStart"}
            assert await terminal.handle("codex", {**start, "cwd": str(host.project)}) == NO_DECISION
            assert terminal.logs.left_out(child.resolve())
            assert not terminal.runs(session_id_for(CHILD_ID))
            assert not (host.sessions / f"{session_id_for(CHILD_ID)}.jsonl").exists()
            terminal.logs.release()


class TestRestart:
    async def test_a_stored_acp_log_keeps_its_transcript_out(self, tmp_path: Path) -> None:
        host = Host(tmp_path)
        async with host.engine() as (_, agents):
            await host.drive(agents)
        host.rollout()
        assert recorded_acp_sessions(host.sessions) == {ACP_ID}
        async with (
            host.engine() as (engine, _),
            host.terminal(engine).serving(project=host.project) as terminal,
        ):
            assert not terminal.runs(OURS)
            assert terminal.acp.ids() == {ACP_ID}

    async def test_the_workbench_does_not_list_the_transcript_of_a_stored_acp_session(
        self, tmp_path: Path
    ) -> None:
        host = Host(tmp_path)
        async with host.engine() as (_, agents):
            await host.drive(agents)
        host.rollout()
        other = "019c0d1e-bbbb-7b4c-8d5e-6f7a8b9c0d11"
        host.rollout(other)

        def find(all_projects: bool, warn: Any) -> Any:
            return discover(host.project, codex_root=host.codex, claude_root=host.claude, warn=warn)

        store = JsonlFileEventStore(host.sessions)
        engine = SessionEngine(store, ScriptedProvider())
        bench = Workbench(
            engine, project=host.project, sessions_dir=host.sessions, models=[], find_terminal=find
        )
        folded: list[Any] = []
        await bench.list_terminal(folded.append)
        store.close()
        assert [event.session_id for event in folded] == [session_id_for(other)]


class TestCache:
    async def test_the_ids_heard_live_are_those_the_logs_record(self, tmp_path: Path) -> None:
        host = Host(tmp_path)
        async with host.engine() as (engine, agents):
            terminal = host.terminal(engine)
            await host.drive(agents)
            await host.drive(agents, "claude-transcript-id")
            assert (
                terminal.acp.ids() == recorded_acp_sessions(host.sessions) == {ACP_ID, "claude-transcript-id"}
            )


class TestHooks:
    async def test_a_hook_of_an_acp_session_gets_no_decision_over_the_socket(self, tmp_path: Path) -> None:
        host = Host(tmp_path)
        cli = FakeClaude(tmp_path)  # its folder is `host.claude`
        cli.write(6)  # the transcript shows the edit call the hook asks about
        folder = tmp_path / "run"
        folder.mkdir(mode=0o700)
        path = folder / "hooks.sock"
        async with host.engine() as (engine, agents):
            terminal = host.terminal(engine)
            await host.drive(agents, CLAUDE_ID)
            async with HookSocket(terminal.handle, lambda: True, path=path):

                async def send(event: dict[str, Any]) -> bytes:
                    async with await anyio.connect_unix(path) as hook:
                        await hook.send(event_line("claude-code", event))
                        reply = anyio.streams.buffered.BufferedByteReceiveStream(hook)
                        return await reply.receive_until(b"\n", MAX_LINE)

                with anyio.fail_after(10):  # asked, it would wait for a person
                    assert await send(cli.hook("SessionStart")) == b""
                    assert await send(cli.edit_hook("PreToolUse")) == b""
                    assert await send(cli.edit_hook("PermissionRequest")) == b""
            assert engine.questions.waiting() == []
            assert not terminal.runs(session_id_for(CLAUDE_ID))
            assert not (host.sessions / f"{session_id_for(CLAUDE_ID)}.jsonl").exists()
            # answered before anything was read: the transcript was not even opened to be left out
            assert not terminal.logs.left_out(cli.transcript.resolve())
            assert EDIT_ID  # (the call of `cli.edit_hook`)
