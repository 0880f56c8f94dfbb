"""End to end with real processes: `agent-tui serve` (its private bus), `agent-tui run --bus local
--approve ask`, and the attached dashboard driven by Pilot: a request answered from the
dashboard lets the run go on, stop subtree ends every descendant on the host, quitting the
dashboard leaves the host's agents running, two dashboards answering one request: one wins."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from support_bus import until
from support_bus_host import RENAMING, SPAWNING, host_env, start_agent_tui, wait_for_line
from support_workbench import wait_for
from textual.pilot import Pilot

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import resolve_target
from agent_tui.replay.sources import replay_all
from agent_tui.runtime.commands import Answer
from agent_tui.tui.attached_app import AttachedApp
from agent_tui.tui.screens.approval import ApprovalScreen

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


@dataclass
class Machine:
    tmp: Path
    env: dict[str, str]
    serve: subprocess.Popen[str]

    def run(self, scenario: Mapping[str, object]) -> tuple[subprocess.Popen[str], Path]:
        (self.tmp / "ws" / "src").mkdir(parents=True, exist_ok=True)
        (self.tmp / "ws" / "src" / "foo.py").write_text("x = 1\n")
        path = self.tmp / "scenario.json"
        path.write_bytes(orjson.dumps(scenario))
        sessions = self.tmp / "run-sessions"
        args = ["run", str(path), "--sessions-dir", str(sessions), "--approve", "ask", "--bus", "local"]
        return start_agent_tui([*args, "--host", "ci-run"], self.env), sessions


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Machine]:
    """`agent-tui serve` with its private bus, and this test's environment pointing at it."""
    env = host_env(tmp_path)
    for key in ("AGENT_TUI_CONFIG", "XDG_RUNTIME_DIR", "XDG_DATA_HOME"):
        monkeypatch.setenv(key, env[key])
    monkeypatch.delenv("AGENT_TUI_BUS", raising=False)
    serve = start_agent_tui(
        ["serve", "--sessions-dir", str(tmp_path / "served"), "--cwd", str(tmp_path), "--host", "box"], env
    )
    record = tmp_path / "run" / "agent-tui" / "bus.json"
    try:
        wait_for_line(serve, "host box serves")
        yield Machine(tmp_path, env, serve)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
        os.kill(json.loads(record.read_text())["pid"], signal.SIGTERM)


def attached() -> AttachedApp:
    return AttachedApp(AttachedBus(resolve_target("local")))


async def waiting_request(pilot: Pilot, app: AttachedApp) -> tuple[str, str]:
    await wait_for(pilot, lambda: bool(app.dashboard.state.pending_permissions()), "a request waiting", 60)
    view = app.dashboard.state.pending_permissions()[0]
    return view.session_id, view.request_id


def ended(process: subprocess.Popen[str]) -> str:
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    return stderr


async def test_a_request_answered_from_the_dashboard_lets_the_run_go_on(machine: Machine) -> None:
    run, sessions = machine.run(RENAMING)
    app = attached()
    async with app.run_test(size=SIZE) as pilot:
        session_id, _request_id = await waiting_request(pilot, app)
        assert app.attached.bus.host_of(session_id) == "ci-run"
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval dialog")
        await pilot.press("y")
        await wait_for(
            pilot, lambda: not app.dashboard.state.pending_permissions(), "the answer folded back", 60
        )
        await asyncio.to_thread(ended, run)
        await wait_for(pilot, lambda: app.dashboard.state.running_count() == 0, "the run's end shown", 60)
    (resolved,) = [
        e.payload
        for e in replay_all(sessions)
        if e.type == "permission.resolved" and e.payload["decision"] != "ask"
    ]
    assert resolved["decision"] == "allow" and resolved["actor"] == "user"
    assert resolved["by"]["dashboard"] == app.attached.bus.name
    assert [e.type for e in replay_all(sessions)].count("tool.completed") == 1  # the mv ran


async def test_stop_subtree_from_the_dashboard_ends_every_descendant(machine: Machine) -> None:
    run, sessions = machine.run(SPAWNING)
    app = attached()
    async with app.run_test(size=SIZE) as pilot:
        child, _request = await waiting_request(pilot, app)
        lead = app.dashboard.state.sessions[child].parent_session_id
        assert lead is not None
        app.dashboard.select_session(lead)
        await pilot.pause()
        app.dashboard.session_tree.focus()
        await pilot.press("x")
        await wait_for(
            pilot, lambda: app.dashboard.state.running_count() == 0, "both stopped on the host", 60
        )
        await asyncio.to_thread(ended, run)
    reasons = [e.payload["stopReason"] for e in replay_all(sessions) if e.type == "turn.completed"]
    assert reasons == ["cancelled", "cancelled"]


async def test_quitting_the_dashboard_leaves_the_hosts_agents_running(machine: Machine) -> None:
    run, sessions = machine.run(RENAMING)
    app = attached()
    async with app.run_test(size=SIZE) as pilot:
        session_id, request_id = await waiting_request(pilot, app)
        await pilot.press("q")
    assert app.return_code == 0
    assert run.poll() is None  # still running, still waiting for an answer
    later = AttachedBus(resolve_target("local"))
    await later.open()
    try:
        outcome = await later.control.send(
            "ci-run", Answer(sessionId=session_id, requestId=request_id, decision="deny")
        )
        assert outcome.answered and outcome.ok
    finally:
        await later.close()
    await asyncio.to_thread(ended, run)
    assert not [
        e
        for e in replay_all(sessions)
        if e.type == "turn.completed" and e.payload["stopReason"] == "cancelled"
    ]


async def test_two_dashboards_answering_one_request_one_wins(machine: Machine) -> None:
    run, sessions = machine.run(RENAMING)
    first, second = AttachedBus(resolve_target("local")), AttachedBus(resolve_target("local"))
    await first.open()
    await second.open()
    try:
        await until(first, lambda: bool(first.state.pending_permissions()), "the run's request", 60)
        view = first.state.pending_permissions()[0]
        outcomes = await asyncio.gather(
            first.control.send(
                "ci-run", Answer(sessionId=view.session_id, requestId=view.request_id, decision="allow")
            ),
            second.control.send(
                "ci-run", Answer(sessionId=view.session_id, requestId=view.request_id, decision="deny")
            ),
        )
        won = [o for o in outcomes if o.ok]
        lost = [o for o in outcomes if not o.ok]
        assert len(won) == 1 and len(lost) == 1
        winner = first if outcomes[0].ok else second
        assert (
            lost[0].message is not None
            and "already answered" in lost[0].message
            and f"by {winner.name} " in lost[0].message
        )
    finally:
        await first.close()
        await second.close()
    await asyncio.to_thread(ended, run)
    users = [
        e.payload
        for e in replay_all(sessions)
        if e.type == "permission.resolved" and e.payload.get("actor") == "user"
    ]
    assert len(users) == 1 and users[0]["by"]["dashboard"] == winner.name
