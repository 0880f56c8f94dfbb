"""Tools and permissions inside real turns: the tool-call chain of docs/event-log.md, exactly, in the log."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import anyio.abc
import anyio.lowlevel
import pytest
from support_engine import HeldPrompter, collect, make_engine, steps, types, workspace

from agent_tui.engine.permissions import PolicyConfig
from agent_tui.engine.scenario import Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.engine.tools.router import ToolRouter
from agent_tui.events.chains import chain_violations
from agent_tui.store import JsonlEventLog

# Commands below sleep for 30 s. A call that ends in under half that did not wait for the sleep,
# which is what these tests check; how quickly it ends is measured in bench/, not asserted here,
# so a busy machine cannot fail them.
NOT_WAITED_FOR = 15.0

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def log_of(tmp_path: Path, sid: str) -> list:
    return list(JsonlEventLog(tmp_path / "sessions" / f"{sid}.jsonl").replay("strict"))


def alive(pid: int) -> bool:
    """True if `pid` runs; a zombie (killed, waiting for its reaper) counts as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


LONG_SHELL_WRITING_PIDS = "sleep 30 & echo $! > pids; echo $$ >> pids; sleep 30"
"""A shell with a background job, both writing their pids to `pids` and running for 30 s."""


def long_shell_then_answer() -> list[Step]:
    """Model steps: call `LONG_SHELL_WRITING_PIDS`, then answer."""
    return steps({"text": ["x"], "toolCalls": [call("shell", cmd=LONG_SHELL_WRITING_PIDS)]}, {"text": ["y"]})


async def both_pids_written(pidfile: Path) -> None:
    """Poll until `LONG_SHELL_WRITING_PIDS` has written both pids (the file is the only signal);
    fail, rather than hang, if they never come."""
    with anyio.fail_after(30):
        while not (pidfile.exists() and len(pidfile.read_text().split()) == 2):
            await anyio.sleep(0.02)


def assert_all_gone(pidfile: Path) -> None:
    """Every process whose pid the command wrote to `pidfile` is gone (or a zombie)."""
    for pid in map(int, pidfile.read_text().split()):
        # SIGKILL was sent before the turn ended; the kernel may take a moment to finish it.
        deadline = time.monotonic() + 10.0
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not alive(pid), f"process {pid} outlived the turn"


def call(tool: str, **args: object) -> dict:
    return {"tool": tool, "args": args}


class TestToolChain:
    async def test_allowed_read_runs_and_its_result_reaches_the_next_model_call(self, tmp_path: Path) -> None:
        cwd = workspace(tmp_path)
        (cwd / "a.txt").write_text("alpha\n")
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider, policy=None)  # default policy: read is allowed
        async with engine:
            sid = await engine.create_session(cwd)
            provider.assign(
                sid,
                steps(
                    {"text": ["reading"], "toolCalls": [call("read_file", path="a.txt")]}, {"text": ["done"]}
                ),
            )
            events = await collect(engine.run_turn(sid, "read a.txt"))
        assert types(events) == [
            "turn.started",
            "user.message",
            "context.built",
            "model.delta",
            "model.tool_call_requested",
            "model.usage",  # the call's stream ended: its usage, before its tools run
            "permission.requested",
            "permission.resolved",
            "tool.started",
            "tool.completed",
            "context.built",
            "model.delta",
            "model.usage",
            "turn.completed",
        ]
        resolved = events[7].payload
        assert resolved["decision"] == "allow" and resolved["actor"] == "policy"
        assert events[6].payload["risk"] == "read"
        second_request = provider.calls[1]
        assert any(m.role == "tool" and "alpha" in m.text for m in second_request.messages)
        assert not any("sequence" in m.text or "toolCallId" in m.text for m in second_request.messages)

    async def test_the_routers_output_budget_is_the_one_a_turn_uses(self, tmp_path: Path) -> None:
        cwd = workspace(tmp_path)
        (cwd / "big.txt").write_text("x" * 5_001)
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider, router=ToolRouter(output_budget=1_000))
        async with engine:
            sid = await engine.create_session(cwd)
            provider.assign(
                sid,
                steps({"text": ["r"], "toolCalls": [call("read_file", path="big.txt")]}, {"text": ["ok"]}),
            )
            events = await collect(engine.run_turn(sid, "read big.txt"))
        completed = next(event.payload for event in events if event.type == "tool.completed")
        assert completed["truncated"] is True
        assert completed["result"].count("x") == 1_000

    async def test_ask_then_user_allow_writes_two_resolutions(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider, policy=None, approve="allow")
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(
                sid,
                steps(
                    {"text": ["writing"], "toolCalls": [call("write_file", path="b.txt", content="hi")]},
                    {"text": ["done"]},
                ),
            )
            events = await collect(engine.run_turn(sid, "write"))
        resolutions = [
            (e.payload["decision"], e.payload["actor"]) for e in events if e.type == "permission.resolved"
        ]
        assert resolutions == [("ask", "policy"), ("allow", "user")]
        assert (tmp_path / "work" / "b.txt").read_text() == "hi"

    async def test_a_denied_call_never_starts(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider, policy=None, approve="deny")
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(
                sid,
                steps(
                    {"text": ["deleting"], "toolCalls": [call("shell", cmd="touch x && rm x")]},
                    {"text": ["ok"]},
                ),
            )
            events = await collect(engine.run_turn(sid, "clean"))
        assert "tool.started" not in types(events)
        failed = [e.payload for e in events if e.type == "tool.failed"]
        assert [f["errorCode"] for f in failed] == ["permission_denied"]
        assert not (tmp_path / "work" / "x").exists()
        assert chain_violations(log_of(tmp_path, sid)) == []

    async def test_policy_deny_by_tool(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(
            tmp_path, provider, policy=PolicyConfig(byTool={"list_dir": "deny"}, default="allow")
        )
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(
                sid, steps({"text": ["x"], "toolCalls": [call("list_dir", path=".")]}, {"text": ["y"]})
            )
            events = await collect(engine.run_turn(sid, "go"))
        resolved = [e.payload for e in events if e.type == "permission.resolved"]
        assert resolved == [
            {
                "requestId": resolved[0]["requestId"],
                "toolCallId": resolved[0]["toolCallId"],
                "decision": "deny",
                "actor": "policy",
                "policy": "byTool.list_dir",
            }
        ]

    async def test_unknown_tool_and_bad_arguments_are_readable_tool_failures(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(
                sid,
                steps(
                    {"text": ["x"], "toolCalls": [call("teleport", to="mars"), call("read_file", wrong=1)]},
                    {"text": ["y"]},
                ),
            )
            events = await collect(engine.run_turn(sid, "go"))
        failed = [e.payload for e in events if e.type == "tool.failed"]
        assert [f["errorCode"] for f in failed] == ["not_found", "unknown"]
        assert "teleport" in failed[0]["message"] and "path" in failed[1]["message"]
        assert events[-1].payload["stopReason"] == "final"
        assert chain_violations(log_of(tmp_path, sid)) == []

    async def test_several_calls_in_one_step_each_answered_once_before_the_next_call(
        self, tmp_path: Path
    ) -> None:
        cwd = workspace(tmp_path)
        (cwd / "a.txt").write_text("a")
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(cwd)
            provider.assign(
                sid,
                steps(
                    {
                        "text": ["x"],
                        "toolCalls": [
                            call("read_file", path="a.txt"),
                            call("list_dir", path="."),
                            call("read_file", path="../escape"),
                        ],
                    },
                    {"text": ["y"]},
                ),
            )
            events = await collect(engine.run_turn(sid, "go"))
        answers = [
            e.payload["errorCode"] if e.type == "tool.failed" else "ok"
            for e in events
            if e.type in ("tool.completed", "tool.failed")
        ]
        assert answers == ["ok", "ok", "path_unsafe"]
        assert chain_violations(log_of(tmp_path, sid)) == []

    async def test_shell_streams_deltas_before_completion(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(
                sid,
                steps(
                    {"text": ["x"], "toolCalls": [call("shell", cmd="echo out; echo err >&2; exit 3")]},
                    {"text": ["y"]},
                ),
            )
            events = await collect(engine.run_turn(sid, "go"))
        deltas = [(e.payload["stream"], e.payload["text"]) for e in events if e.type == "tool.delta"]
        assert ("stdout", "out\n") in deltas and ("stderr", "err\n") in deltas
        completed = next(e for e in events if e.type == "tool.completed")
        assert completed.payload["exitCode"] == 3
        assert events.index(completed) > max(i for i, e in enumerate(events) if e.type == "tool.delta")


class TestCancelDuringTools:
    async def test_cancel_while_asking_resolves_deny_by_system_and_ends_cancelled(
        self, tmp_path: Path
    ) -> None:
        prompter = HeldPrompter()
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider, policy=None, approve=None)
        engine.questions.answerer = prompter.ask
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(
                sid,
                steps(
                    {"text": ["x"], "toolCalls": [call("write_file", path="f", content="c")]}, {"text": ["y"]}
                ),
            )
            handle = engine.start_turn(sid, "go")
            request = await prompter.next_request()
            assert request.agent_path == (sid,)
            engine.cancel_turn(sid)
            assert await handle.wait() == "cancelled"
        assert prompter.withdrawn == [request.request_id]
        log = log_of(tmp_path, sid)
        resolved = [e.payload for e in log if e.type == "permission.resolved"]
        assert [(r["decision"], r["actor"], r.get("reason")) for r in resolved][-1] == (
            "deny",
            "system",
            "cancelled",
        )
        failed = [e.payload for e in log if e.type == "tool.failed"]
        assert [f["errorCode"] for f in failed] == ["cancelled"]
        assert "tool.started" not in types(log)
        assert log[-1].payload["stopReason"] == "cancelled"
        assert chain_violations(log) == []

    async def test_cancel_during_a_long_shell_ends_the_turn_and_leaves_no_process(
        self, tmp_path: Path
    ) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        pidfile = tmp_path / "work" / "pids"
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, long_shell_then_answer())
            handle = engine.start_turn(sid, "go")
            with anyio.fail_after(10):
                await both_pids_written(pidfile)
            started = time.monotonic()
            engine.cancel_turn(sid)
            assert await handle.wait() == "cancelled"
            assert time.monotonic() - started < NOT_WAITED_FOR
        assert_all_gone(pidfile)
        log = log_of(tmp_path, sid)
        assert [e.payload["errorCode"] for e in log if e.type == "tool.failed"] == ["cancelled"]
        assert chain_violations(log) == []

    async def test_a_cancel_while_the_shell_is_still_starting_kills_its_group(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The shell runs (and starts its background job) before `open_process` has returned
        # to us; a cancel landing in that gap must still reach the whole group.
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        pidfile = tmp_path / "work" / "pids"
        open_process = anyio.open_process
        sid = ""

        async def open_then_cancel(*args: object, **kwargs: object) -> anyio.abc.Process:
            process = await open_process(*args, **kwargs)  # type: ignore[arg-type]
            await both_pids_written(pidfile)
            engine.cancel_turn(sid)
            await anyio.lowlevel.checkpoint()  # where the cancel arrives, before we return
            return process

        monkeypatch.setattr(anyio, "open_process", open_then_cancel)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, long_shell_then_answer())
            with anyio.fail_after(NOT_WAITED_FOR):
                assert await engine.start_turn(sid, "go").wait() == "cancelled"
        assert_all_gone(pidfile)
        log = log_of(tmp_path, sid)
        assert [e.payload["errorCode"] for e in log if e.type == "tool.failed"] == ["cancelled"]
        assert chain_violations(log) == []


class TestContextWindow:
    async def test_overflow_compacts_deterministically_then_fits(self, tmp_path: Path) -> None:
        cwd = workspace(tmp_path)
        (cwd / "big.txt").write_text("word " * 3000)

        async def run_once(root: Path) -> list:
            provider = ScriptedProvider(max_context_tokens=3000)
            engine = make_engine(root, provider)
            async with engine:
                sid = await engine.create_session(cwd, session_id="sess_fixed")
                provider.assign(
                    sid,
                    steps(
                        {"text": ["x"], "toolCalls": [call("read_file", path="big.txt")]},
                        {"text": ["summarised"]},
                    ),
                )
                return await collect(engine.run_turn(sid, "read it"))

        first = await run_once(tmp_path / "one")
        second = await run_once(tmp_path / "two")
        compacted = [e for e in first if e.type == "context.compacted"]
        assert len(compacted) == 1
        payload = compacted[0].payload
        assert payload["afterTokens"] < 3000 < payload["beforeTokens"]
        assert payload == next(e for e in second if e.type == "context.compacted").payload
        assert first[-1].payload["stopReason"] == "final"
        assert types(first).index("context.compacted") < len(first) - 1 - types(first)[::-1].index(
            "context.built"
        )

    async def test_overflow_that_compaction_cannot_fix_ends_without_calling_the_model(
        self, tmp_path: Path
    ) -> None:
        provider = ScriptedProvider(max_context_tokens=200)
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["never"]}))
            events = await collect(engine.run_turn(sid, "x" * 5000))
        assert events[-1].payload == {"stopReason": "error", "errorCode": "context_overflow"}
        assert provider.calls == []
        assert "context.built" not in types(events)
