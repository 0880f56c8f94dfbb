"""`agent-tui run --agent NAME --approve ask --bus URL`: the ACP agent's question is published on
the bus and answered by an attached dashboard (over the control subject, as a dashboard answers),
as for a scenario run with `--bus`. A real process, a real server, the test agent as the agent."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from acp_support import TEST_AGENT
from support_bus_host import control, host_env, reader, start_agent_tui
from support_nats import NatsServer, nats_server
from test_bus_host_cli import first_request, resolutions

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio


async def test_an_agents_question_is_answered_by_a_dashboard_on_the_bus(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    sessions = tmp_path / "sessions"
    agent = f"\n[acp.test-agent]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(TEST_AGENT))}]\n"
    client, _ = await reader(nats_server.url)
    asked = await first_request(client, "ci-agent")
    args = [
        "run",
        "--agent",
        "test-agent",
        "--prompt",
        "terminal: echo made > made.txt",
        "--cwd",
        str(project),
    ]
    args += [
        "--sessions-dir",
        str(sessions),
        "--approve",
        "ask",
        "--bus",
        nats_server.url,
        "--host",
        "ci-agent",
    ]
    process = start_agent_tui(args, host_env(tmp_path, agent))
    try:
        session_id, request_id = await asyncio.wait_for(asked, 60)
        reply = await control(
            client,
            "ci-agent",
            "answer",
            request_id="a1",
            dashboard="laptop",
            session_id=session_id,
            requestId=request_id,
            decision="allow",
        )
        assert reply.ok, reply.message
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        await client.close()
    assert process.returncode == 0, out + err
    assert "publishes on the bus" in err and "turn ended: final" in out
    (resolved,) = resolutions(sessions)
    assert (resolved["actor"], resolved["decision"]) == ("user", "allow")
    by = resolved["by"]
    assert isinstance(by, dict) and by["dashboard"] == "laptop"  # who answered, as for our own agents
    assert (project / "made.txt").read_text() == "made\n"
