"""A process killed mid-run leaves logs that replay, and sessions that a new engine continues."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from support_engine import collect, make_engine

from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events.chains import chain_violations
from agent_tui.store import JsonlEventLog, JsonlFileEventStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


SLOW_SCENARIO = {
    "sessions": [
        {
            "title": f"s{i}",
            "cwd": "work",
            "prompt": f"task {i}",
            "steps": [
                {
                    "text": [f"chunk {n} " for n in range(40)],
                    "delayMs": 25,
                    "toolCalls": [{"tool": "shell", "args": {"cmd": "sleep 5"}}],
                },
                {"text": ["done"]},
            ],
        }
        for i in range(3)
    ],
    "policy": {"default": "allow"},
}


def start_run(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    (tmp_path / "work").mkdir()
    scenario = tmp_path / "slow.json"
    scenario.write_bytes(orjson.dumps(SLOW_SCENARIO))
    sessions = tmp_path / "sessions"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_tui",
            "run",
            str(scenario),
            "--sessions-dir",
            str(sessions),
            "--workspace",
            str(tmp_path / "scratch"),
            "--quiet",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    return process, sessions


def wait_for_events(sessions: Path, at_least: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        total = sum(len(JsonlEventLog(p)) for p in sessions.glob("*.jsonl"))
        if total >= at_least and len(list(sessions.glob("*.jsonl"))) == 3:
            return
        time.sleep(0.05)
    raise AssertionError(f"the run wrote fewer than {at_least} events in {timeout}s")


async def test_kill_9_mid_run_leaves_replayable_logs_that_hydrate_and_continue(tmp_path: Path) -> None:
    process, sessions = start_run(tmp_path)
    try:
        wait_for_events(sessions, 30)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    logs = sorted(sessions.glob("*.jsonl"))
    assert len(logs) == 3
    # Simulate the worst case too: a crash in the middle of writing a line.
    with open(logs[0], "ab") as handle:
        handle.write(b'{"v":1,"id":"evt_torn","sessionId"')
    for log in logs:
        events = list(JsonlEventLog(log).replay())  # default mode skips the torn tail
        assert events and events[0].type == "session.created"
        assert chain_violations(events, complete=False) == []

    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider, store=JsonlFileEventStore(sessions))
    async with engine:
        reports = [await engine.open_session(log.stem) for log in logs]
        assert reports[0].repair is not None and reports[0].repair.bytes_removed > 0
        assert "repaired a torn final line" in reports[0].describe()
        assert all(report.closed_turn is not None for report in reports)
        for log in logs:
            before = JsonlEventLog(log).last_sequence
            events = await collect(engine.run_turn(log.stem, "carry on"))
            assert events[0].sequence == before + 1
            assert events[-1].payload["stopReason"] == "final"
    for log in logs:
        events = list(JsonlEventLog(log).replay("strict"))
        assert chain_violations(events) == []
        completed = [e for e in events if e.type == "turn.completed"]
        assert [e.payload["stopReason"] for e in completed] == ["error", "final"]


async def test_hydrated_transcript_equals_the_live_one(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "a.txt").write_text("alpha\n")
    from support_engine import steps

    async with engine:
        sid = await engine.create_session(tmp_path / "work")
        provider.assign(
            sid,
            steps(
                {"text": ["reading"], "toolCalls": [{"tool": "read_file", "args": {"path": "a.txt"}}]},
                {"text": ["it says alpha"]},
            ),
        )
        await collect(engine.run_turn(sid, "what is in a.txt?"))
        live = list(engine.session(sid).transcript.messages)
    fresh = make_engine(tmp_path, ScriptedProvider())
    async with fresh:
        report = await fresh.open_session(sid)
        assert report.repair is None and report.closed_turn is None
        assert fresh.session(sid).transcript.messages == live


async def test_a_log_cut_while_an_approval_was_pending_reopens_with_the_ask_withdrawn(tmp_path: Path) -> None:
    """The process died while the user was being asked: reopening withdraws that ask (so no
    approval waits forever in a dashboard that replays the log), fails the call, ends the turn."""
    from support_engine import steps

    from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest, PolicyConfig
    from agent_tui.reducer.fold import project_state

    (tmp_path / "work").mkdir()
    crashed = tmp_path / "crashed"
    crashed.mkdir()

    class CopyTheLogWhenAsked:
        """The crash: the log as it is on disk while the question is open."""

        async def ask(self, request: PermissionRequest) -> PermissionAnswer:
            name = f"{request.session_id}.jsonl"
            (crashed / name).write_bytes((tmp_path / "sessions" / name).read_bytes())
            return PermissionAnswer("deny")

    engine = make_engine(tmp_path, policy=PolicyConfig(default="ask"), approve=None)
    engine.questions.answerer = CopyTheLogWhenAsked().ask
    provider = engine.provider
    assert isinstance(provider, ScriptedProvider)
    async with engine:
        sid = await engine.create_session(tmp_path / "work")
        provider.assign(
            sid,
            steps(
                {
                    "text": ["writing"],
                    "toolCalls": [{"tool": "write_file", "args": {"path": "a", "content": "x"}}],
                }
            ),
        )
        await collect(engine.run_turn(sid, "write a"))

    cut = list(JsonlEventLog(crashed / f"{sid}.jsonl").replay("strict"))
    assert cut[-1].type == "permission.resolved" and cut[-1].payload["decision"] == "ask"
    assert [view.request_id for view in project_state(cut).pending_permissions()] != []

    fresh = make_engine(tmp_path, ScriptedProvider(), store=JsonlFileEventStore(crashed))
    async with fresh:
        report = await fresh.open_session(sid)
        assert report.closed_turn == cut[-1].turn_id
    events = list(JsonlEventLog(crashed / f"{sid}.jsonl").replay("strict"))
    added = events[len(cut) :]
    assert [(e.type, e.payload.get("decision"), e.payload.get("actor")) for e in added] == [
        ("permission.resolved", "deny", "system"),
        ("tool.failed", None, None),
        ("turn.completed", None, None),
    ]
    assert added[0].payload["reason"] == "interrupted"
    assert added[1].payload["errorCode"] == "cancelled"
    assert chain_violations(events) == []
    assert project_state(events).pending_permissions() == []
