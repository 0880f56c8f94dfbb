"""Terminal agents as a host serves them: Codex's sessions and sub-agents, a later process that
continues a log, the commands routed to them, the replay of who answered, and the handler behind
a real Unix socket whose closing withdraws the question."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.streams.buffered
import orjson
import pytest
from support_terminal import event_line
from test_terminal_logs import (
    CLAUDE_ID,
    EDIT_ID,
    MAIN,
    FakeClaude,
    Harness,
    new_engine,
    stored,
    wait_for_question,
)

from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events.chains import chain_violations
from agent_tui.runtime import commands as c
from agent_tui.runtime.command_executor import CommandExecutor
from agent_tui.terminal.agents import TerminalAgents, hand_back_after, hook_socket
from agent_tui.terminal.hook_socket import NO_DECISION, Reply
from agent_tui.terminal.hook_wire import MAX_LINE, Cli
from agent_tui.terminal.logs import TranscriptRefused
from agent_tui.terminal.questions import IN_TERMINAL, STOPPED

CODEX = Path(__file__).parent / "fixtures" / "codex" / "multi-agent-0.58" / "2026" / "01" / "15"
PARENT_ID = "019c0d1e-2f3a-7b4c-8d5e-6f7a8b9c0d73"
CHILD_ID = "019c0d1e-5a6b-7c8d-9e0f-1a2b3c4d5e84"
EXEC_INPUT = {"command": "rg -n 'def .*refund' src"}

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FakeCodex:
    """Codex as the tests play it: `sessions/YYYY/MM/DD/rollout-*.jsonl`, appended line by line."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "codex" / "sessions"
        self.day = self.root / "2026" / "01" / "15"
        self.day.mkdir(parents=True)
        self.files: dict[str, tuple[Path, list[bytes]]] = {}
        for source in sorted(CODEX.glob("*.jsonl")):
            lines = source.read_bytes().splitlines(keepends=True)
            self.files[CHILD_ID if CHILD_ID in source.name else PARENT_ID] = (self.day / source.name, lines)
        self.written = {key: 0 for key in self.files}

    def write(self, which: str, upto: int) -> None:
        path, lines = self.files[which]
        with path.open("ab") as handle:
            handle.writelines(lines[self.written[which] : upto])
        self.written[which] = max(self.written[which], upto)

    def hook(self, which: str, name: str, **fields: Any) -> dict[str, Any]:
        return {
            "session_id": which,
            "transcript_path": str(self.files[which][0]),
            "cwd": "/home/dev/shop-api",
            "hook_event_name": name,
            **fields,
        }


def codex_agents(engine: Any, tmp_path: Path, cli: FakeCodex, **options: Any) -> TerminalAgents:
    return TerminalAgents(
        engine,
        watched=lambda: True,
        roots={"codex": cli.root, "claude-code": tmp_path / "claude" / "projects"},
        **options,
    )


class TestCodex:
    async def test_a_codex_sub_agents_question_is_handed_back(self, tmp_path: Path) -> None:
        cli = FakeCodex(tmp_path)
        cli.write(PARENT_ID, 8)
        cli.write(CHILD_ID, 5)  # up to the sub-agent's prompt: its call is not in the transcript yet
        async with new_engine(tmp_path) as engine:
            agents = codex_agents(engine, tmp_path, cli, hand_back_after=0.05)
            heard: list[Any] = []
            engine.subscribe(heard.append)
            await agents.handle("codex", cli.hook(PARENT_ID, "SessionStart"))
            await agents.handle("codex", cli.hook(CHILD_ID, "SessionStart"))
            child = f"sess_{CHILD_ID}"
            assert engine.budgets.index.parent_of(child) == f"sess_{PARENT_ID}"
            # Codex's hooks name the call `Bash` with a `command` (its transcript: `exec_command`,
            # `cmd`), and its question adds the call's justification as `description`.
            pre = cli.hook(
                CHILD_ID, "PreToolUse", tool_name="Bash", tool_input=EXEC_INPUT, tool_use_id="call_ex1"
            )
            assert await agents.handle("codex", pre) == NO_DECISION
            asked_input = {**EXEC_INPUT, "description": "find the refunds"}
            ask = cli.hook(CHILD_ID, "PermissionRequest", tool_name="Bash", tool_input=asked_input)
            assert await agents.handle("codex", ask) == NO_DECISION  # nobody answered in time
            cli.write(CHILD_ID, 11)
            cli.write(PARENT_ID, 14)
            await agents.logs.catch_up()
            agents.logs.release()
        events = stored(tmp_path, child)
        assert chain_violations(events) == []
        calls = [e for e in events if e.type == "model.tool_call_requested"]
        assert [e.payload["toolCallId"] for e in calls] == ["call_ex1"]
        resolved = [
            (e.payload["decision"], e.payload.get("reason"))
            for e in events
            if e.type == "permission.resolved"
        ]
        assert resolved == [("ask", None), ("withdrawn", "handed back to the terminal")]
        asked = next(e for e in events if e.type == "permission.requested")
        assert asked.payload["risk"] == "read"  # the classifier's word on `rg`, shown only


class TestContinuing:
    async def test_a_later_process_continues_the_log_where_it_ends(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        cli.write(6)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse"))
            async with anyio.create_task_group() as group:
                group.start_soon(h.hooks.handle, "claude-code", cli.edit_hook("PermissionRequest"))
                request = await wait_for_question(engine)
                engine.questions.answer(MAIN, request.request_id, PermissionAnswer("allow"))
            h.logs.release()
        first = stored(tmp_path, MAIN)
        cli.write(11)  # the CLI went on while no agent-tui ran
        async with new_engine(tmp_path) as engine:
            again = Harness(engine, cli)
            await again.hooks.handle("claude-code", cli.hook("Stop"))
            assert again.logs.warnings == []
            assert [e.id for e in again.events][:1] != [first[0].id]  # only what is new is told
            again.logs.release()
        events = stored(tmp_path, MAIN)
        assert [e.id for e in events[: len(first)]] == [e.id for e in first]
        assert chain_violations(events) == []
        assert len({e.id for e in events}) == len(events)
        requested = [
            e for e in events if e.type == "model.tool_call_requested" and e.payload["toolCallId"] == EDIT_ID
        ]
        assert len(requested) == 1
        assert events[-1].type == "turn.completed" and events[-1].payload["stopReason"] == "final"

    async def test_a_log_that_does_not_match_its_transcript_is_no_longer_followed(
        self, tmp_path: Path
    ) -> None:
        cli = FakeClaude(tmp_path)
        cli.write(6)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            await h.logs.follow("claude-code", cli.transcript)
            h.logs.release()
        before = stored(tmp_path, MAIN)
        # another transcript now stands at that path (rewritten from another prompt)
        lines = [orjson.loads(line) for line in cli.lines[:6]]
        lines[1]["message"]["content"] = "something else entirely"
        cli.transcript.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
        async with new_engine(tmp_path) as engine:
            again = Harness(engine, cli)
            await again.logs.follow("claude-code", cli.transcript)
            assert any("does not match" in warning for warning in again.logs.warnings)
            again.logs.release()
        assert stored(tmp_path, MAIN) == before


class TestCommands:
    async def test_stop_goes_to_the_terminal_session_and_follow_ups_are_refused(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        cli.write(6)
        async with new_engine(tmp_path) as engine:
            agents = TerminalAgents(engine, watched=lambda: True, roots={"claude-code": cli.root})
            executor = CommandExecutor(engine, terminal=agents)
            await agents.handle("claude-code", cli.hook("UserPromptSubmit"))
            name = engine.session(MAIN).label
            for command in (
                c.FollowUp(sessionId=MAIN, text="more"),
                c.Steer(sessionId=MAIN, text="more"),
                c.SetBudget(sessionId=MAIN, usd=1),
            ):
                reply = await executor.send(command)
                assert (
                    not reply.ok
                    and reply.message
                    == f"claude · {name} is a terminal agent: drive it from its own terminal"
                )
            reply = await executor.send(c.Stop(sessionId=MAIN))
            assert reply.ok and reply.detail == {"stopped": 1}
            assert await agents.handle("claude-code", cli.edit_hook("PreToolUse")) == Reply(
                "deny", message=STOPPED
            )
            # a sub-agent's stop is its CLI session's
            assert (await executor.send(c.StopSubtree(sessionId=MAIN))).detail == {"stopped": 0}
            agents.logs.release()

    def test_hand_back_after_is_read_from_the_config(self, tmp_path: Path) -> None:
        from agent_tui.providers.config import ConfigError, load_config

        path = tmp_path / "config.toml"
        path.write_text("[hooks]\nhand_back_after = 5\n")
        assert hand_back_after(load_config(path)) == 5.0
        path.write_text("[hooks]\n\nhand_back_after = -1\n")
        with pytest.raises(ConfigError, match=r"config.toml:3: \[hooks\] hand_back_after"):
            hand_back_after(load_config(path))
        path.write_text("")
        assert hand_back_after(load_config(path)) == 30.0


class TestReplay:
    async def test_replaying_the_log_shows_who_answered(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        cli.write(6)
        async with new_engine(tmp_path) as engine:
            h = Harness(engine, cli)
            await h.hooks.handle("claude-code", cli.edit_hook("PreToolUse"))
            async with anyio.create_task_group() as group:
                group.start_soon(h.hooks.handle, "claude-code", cli.edit_hook("PermissionRequest"))
                request = await wait_for_question(engine)
                by = {"dashboard": "laptop-dash-1", "user": "ana", "host": "laptop"}
                engine.questions.answer(MAIN, request.request_id, PermissionAnswer("allow"), by=by)
            h.logs.release()
        log = tmp_path / "sessions" / f"{MAIN}.jsonl"
        dumped = subprocess.run(
            [sys.executable, "-m", "agent_tui", "replay", str(log), "--dump", "state"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert dumped.returncode == 0, dumped.stderr
        (session,) = orjson.loads(dumped.stdout)["sessions"]
        calls = {call["toolCallId"]: call for turn in session["turns"] for call in turn["toolCalls"]}
        assert (calls[EDIT_ID]["decision"], calls[EDIT_ID]["decidedBy"]) == ("allow", "user")
        assert session["status"] == "running"  # the CLI's turn goes on: never failed


class _Socket:
    """A minimal hook socket (the real one is `terminal/hook_socket.py`): one line in, the
    handler's reply out; the hook's connection closing cancels the handler."""

    def __init__(self, path: Path, agents: TerminalAgents) -> None:
        self.path = path
        self.agents = agents

    async def serve(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        async with await anyio.create_unix_listener(self.path) as listener:
            os.chmod(self.path, 0o600)
            task_status.started()
            await listener.serve(self._one)

    async def _one(self, stream: Any) -> None:
        async with stream:
            buffered = anyio.streams.buffered.BufferedByteReceiveStream(stream)
            line = await buffered.receive_until(b"\n", MAX_LINE)
            request = orjson.loads(line)
            reply: Reply | None = None
            async with anyio.create_task_group() as group:

                async def closed() -> None:
                    await buffered.receive(1)  # EOF: the hook is gone

                group.start_soon(self._closed_then_cancel, closed, group)
                reply = await self.agents.handle(request["cli"], request["event"])
                group.cancel_scope.cancel()
            if reply is not None:  # (None: the hook hung up, the handler was cancelled)
                await stream.send(orjson.dumps(dataclasses.asdict(reply)) + b"\n")

    @staticmethod
    async def _closed_then_cancel(closed: Any, group: Any) -> None:
        try:
            await closed()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        group.cancel_scope.cancel()


class TestRealSocket:
    async def test_answers_cross_the_socket_and_a_closed_connection_withdraws(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        cli.write(6)
        path = tmp_path / "hooks.sock"
        async with new_engine(tmp_path) as engine:
            agents = TerminalAgents(engine, watched=lambda: True, roots={"claude-code": cli.root})
            async with anyio.create_task_group() as group:
                await group.start(_Socket(path, agents).serve)

                async def connect(event: dict[str, Any]) -> Any:
                    hook = await anyio.connect_unix(path)
                    await hook.send(event_line("claude-code", event))
                    return hook

                async def send(event: dict[str, Any]) -> Reply:
                    async with await connect(event) as hook:
                        reply = anyio.streams.buffered.BufferedByteReceiveStream(hook)
                        return Reply(**orjson.loads(await reply.receive_until(b"\n", MAX_LINE)))

                assert await send(cli.edit_hook("PreToolUse")) == NO_DECISION
                replies: list[Reply] = []

                async def ask() -> None:
                    replies.append(await send(cli.edit_hook("PermissionRequest")))

                group.start_soon(ask)
                request = await wait_for_question(engine)
                engine.questions.answer(MAIN, request.request_id, PermissionAnswer("deny", reason="no"))
                while not replies:
                    await anyio.sleep(0.01)
                assert replies == [Reply("deny", message="no")]
                # a second question, whose hook is killed (its user answered in the terminal)
                twin = cli.edit_hook("PreToolUse")
                twin["tool_use_id"] = "toolu_second"
                await send(twin)
                hook = await connect(cli.edit_hook("PermissionRequest"))
                await wait_for_question(engine)
                await hook.aclose()
                while True:
                    resolved = [e.payload for e in stored(tmp_path, MAIN) if e.type == "permission.resolved"]
                    if resolved[-1]["decision"] == "withdrawn":
                        break
                    await anyio.sleep(0.01)
                assert resolved[-1]["reason"] == IN_TERMINAL
                assert engine.questions.waiting() == []
                group.cancel_scope.cancel()
            agents.logs.release()
        assert chain_violations(stored(tmp_path, MAIN), complete=False) == []
        assert CLAUDE_ID in MAIN


class TestServing:
    async def test_a_second_agent_tui_follows_but_leaves_the_hooks_to_the_first(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
        (tmp_path / "run").mkdir(mode=0o700)
        roots: dict[Cli, Path] = {"claude-code": tmp_path / "claude", "codex": tmp_path / "codex"}
        said: list[str] = []
        async with (
            new_engine(tmp_path / "first") as first,
            new_engine(tmp_path / "second") as second,
            TerminalAgents(first, watched=lambda: True, roots=roots).serving(socket=hook_socket()),
            TerminalAgents(second, watched=lambda: True, roots=roots, on_warning=said.append).serving(
                socket=hook_socket()
            ) as agents,
        ):
            assert agents.warnings == said  # told at once, each once
            agents.tell_warnings()
            assert len(said) == 1 and said[0].startswith("the CLIs' hooks are not answered here: ")
            assert str(os.getpid()) in said[0]  # who answers them instead

    async def test_the_projects_recent_transcripts_are_followed_live(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        cli.write(2)
        elsewhere = cli.root / "-other"
        elsewhere.mkdir()
        other = [orjson.loads(line) for line in cli.lines[:2]]
        for line in other:
            line["sessionId"], line["cwd"] = "other-session", "/somewhere/else"
        (elsewhere / "other-session.jsonl").write_bytes(
            b"".join(orjson.dumps(line) + b"\n" for line in other)
        )
        async with new_engine(tmp_path) as engine:
            heard: list[Any] = []
            grew = anyio.Event()

            def hear(event: Any) -> None:
                heard.append(event)
                if event.type == "model.tool_call_requested":
                    grew.set()

            engine.subscribe(hear)
            async with TerminalAgents(
                engine, watched=lambda: True, roots={"claude-code": cli.root, "codex": tmp_path / "codex"}
            ).serving(project=Path("/home/dev/shop-api"), poll_every=0.01) as agents:
                assert agents.runs(MAIN) and not agents.runs("sess_other-session")
                cli.write(4)  # the CLI goes on: the poll tells the listeners
                with anyio.fail_after(20):
                    await grew.wait()
            assert {event.session_id for event in heard} == {MAIN}
        # leaving lets go of the logs: another process may continue them
        async with new_engine(tmp_path) as engine:
            again = TerminalAgents(engine, watched=lambda: True, roots={"claude-code": cli.root})
            await again.logs.follow("claude-code", cli.transcript)
            assert again.logs.builder(MAIN) is not None
            again.logs.release()


class TestHostileHookEvents:
    @pytest.mark.parametrize(
        "event",
        [
            {},
            {"hook_event_name": "PermissionRequest"},
            {"hook_event_name": 7, "session_id": CLAUDE_ID},
            {"hook_event_name": "PermissionRequest", "session_id": ["x"]},
            {"hook_event_name": "PermissionRequest", "session_id": "../../etc", "tool_input": "rm -rf /"},
            {
                "hook_event_name": "PreToolUse",
                "session_id": CLAUDE_ID,
                "tool_use_id": {"a": 1},
                "tool_name": None,
            },
            {"hook_event_name": "SessionStart", "session_id": CLAUDE_ID, "transcript_path": "/dev/zero"},
            {"hook_event_name": "SessionStart", "session_id": CLAUDE_ID, "transcript_path": 12},
            {"hook_event_name": "Bogus", "session_id": CLAUDE_ID},
        ],
    )
    async def test_a_malformed_event_gets_no_decision_and_writes_nothing(
        self, tmp_path: Path, event: Any
    ) -> None:
        cli = FakeClaude(tmp_path)
        async with new_engine(tmp_path) as engine:
            agents = TerminalAgents(engine, watched=lambda: True, roots={"claude-code": cli.root})
            assert await agents.handle("claude-code", event) == NO_DECISION
            assert engine.sessions() == [] and engine.questions.waiting() == []

    async def test_transcripts_that_are_no_files_of_this_user_are_refused(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        cli = FakeClaude(tmp_path)
        cli.write(6)
        fifo = cli.project / "fifo.jsonl"
        os.mkfifo(fifo)
        async with new_engine(tmp_path) as engine:
            agents = TerminalAgents(engine, watched=lambda: True, roots={"claude-code": cli.root})
            with pytest.raises(TranscriptRefused, match="not a transcript file"):
                await agents.logs.follow("claude-code", fifo)
            me = os.geteuid()
            monkeypatch.setattr(os, "geteuid", lambda: me + 1)  # the transcript is now another user's
            with pytest.raises(TranscriptRefused, match="belongs to another user"):
                await agents.logs.follow("claude-code", cli.transcript)
            assert engine.sessions() == []

    async def test_a_deeply_nested_input_is_neither_woven_nor_asked(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        cli.write(6)
        deep: dict[str, Any] = {}
        inner = deep
        for _ in range(200):
            inner["x"] = {}
            inner = inner["x"]
        async with new_engine(tmp_path) as engine:
            agents = TerminalAgents(engine, watched=lambda: True, roots={"claude-code": cli.root})
            for name in ("PreToolUse", "PermissionRequest"):
                event = cli.hook(name, tool_name="Bash", tool_input=deep, tool_use_id="toolu_deep")
                assert await agents.handle("claude-code", event) == NO_DECISION
            assert engine.questions.waiting() == []
            assert agents.warnings == []
            agents.logs.release()
        assert all(e.payload.get("toolCallId") != "toolu_deep" for e in stored(tmp_path, MAIN))

    async def test_a_huge_edit_is_previewed_by_its_size(self, tmp_path: Path) -> None:
        cli = FakeClaude(tmp_path)
        cli.write(6)
        huge = {"file_path": "/w/big.txt", "old_string": "x\n" * 5000, "new_string": "y"}
        async with new_engine(tmp_path) as engine:
            agents = TerminalAgents(engine, watched=lambda: True, roots={"claude-code": cli.root})
            pre = cli.hook("PreToolUse", tool_name="Edit", tool_input=huge, tool_use_id="toolu_big")
            await agents.handle("claude-code", pre)
            async with anyio.create_task_group() as group:
                group.start_soon(
                    agents.handle,
                    "claude-code",
                    cli.hook("PermissionRequest", tool_name="Edit", tool_input=huge),
                )
                request = await wait_for_question(engine)
                engine.questions.answer(MAIN, request.request_id, PermissionAnswer("deny"))
            agents.logs.release()
        assert request.args_preview == "/w/big.txt: -5000 +1 lines"


class TestResuming:
    async def test_a_session_resumed_after_its_end_is_followed_again_from_its_log(
        self, tmp_path: Path
    ) -> None:
        cli = FakeClaude(tmp_path)
        cli.write(6)
        async with new_engine(tmp_path) as engine:
            agents = TerminalAgents(engine, watched=lambda: True, roots={"claude-code": cli.root})
            await agents.handle("claude-code", cli.hook("SessionStart"))
            await agents.handle("claude-code", cli.hook("SessionEnd"))
            assert not agents.runs(MAIN) and not agents.logs.follows(cli.transcript)
            ended = stored(tmp_path, MAIN)
            assert ended[-1].type == "turn.completed" and ended[-1].id.endswith("_hook")
            cli.write(11)  # `claude --resume`: the same transcript goes on
            await agents.handle("claude-code", cli.hook("SessionStart"))
            assert agents.runs(MAIN) and agents.warnings == []
            agents.logs.release()
        events = stored(tmp_path, MAIN)
        assert [e.id for e in events[: len(ended)]] == [e.id for e in ended]
        assert len(events) > len(ended)
        assert chain_violations(events, complete=False) == []


class TestCodexStop:
    async def test_x_denies_a_waiting_codex_question_without_interrupt(self, tmp_path: Path) -> None:
        cli = FakeCodex(tmp_path)
        cli.write(CHILD_ID, 6)
        async with new_engine(tmp_path) as engine:
            agents = codex_agents(engine, tmp_path, cli)
            pre = cli.hook(
                CHILD_ID, "PreToolUse", tool_name="Bash", tool_input=EXEC_INPUT, tool_use_id="call_ex1"
            )
            await agents.handle("codex", pre)
            replies: list[Reply] = []

            async def ask() -> None:
                event = cli.hook(CHILD_ID, "PermissionRequest", tool_name="Bash", tool_input=EXEC_INPUT)
                replies.append(await agents.handle("codex", event))

            async with anyio.create_task_group() as group:
                group.start_soon(ask)
                await wait_for_question(engine)
                assert await agents.stop(f"sess_{CHILD_ID}") == 1
            assert replies == [Reply("deny", message=STOPPED)]
            agents.logs.release()


class TestStoredTerminalSessions:
    async def test_a_stored_terminal_session_is_neither_closed_nor_continued_by_the_workbench(
        self, tmp_path: Path
    ) -> None:
        from support_workbench import scripted_models

        from agent_tui.engine.scripted import ScriptedProvider
        from agent_tui.runtime.agent_requests import SendRefused
        from agent_tui.runtime.workbench import Workbench

        cli = FakeClaude(tmp_path)
        cli.write(6)
        cli.write_subagent()
        async with new_engine(tmp_path) as engine:
            agents = TerminalAgents(engine, watched=lambda: True, roots={"claude-code": cli.root})
            await agents.logs.follow("claude-code", cli.transcript)  # its turn and its sub-agent's open
            agents.logs.release()
        before = {sid: stored(tmp_path, sid) for sid in (MAIN, f"{MAIN}_agent-a7f3c2")}
        workbench = Workbench.for_project(
            project=tmp_path,
            sessions_dir=tmp_path / "sessions",
            models=scripted_models(ScriptedProvider()),
            questions=None,
        )
        async with workbench.engine:
            assert await workbench.hydrate(lambda event: None) == []
            for session_id in before:
                sent = workbench.send(session_id, "go on")
                assert isinstance(sent, SendRefused)
                assert sent.reason.endswith("is a terminal agent: drive it from its own terminal")
        assert {sid: stored(tmp_path, sid) for sid in before} == before  # no turn closed in them
        workbench.close_store()
