"""`agent-tui serve --relay-hooks` as a user meets it: a real host process on a real server follows
the project's Claude Code session, publishes its events to attached dashboards, stops it when a
dashboard asks and refuses a follow-up; without the flag it follows nothing."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import orjson
import pytest
from nats.aio.msg import Msg
from support_bus_host import control, host_env, reader, start_agent_tui, wait_for_line
from support_nats import NatsServer, nats_server
from test_terminal_logs import CLAUDE, CLAUDE_ID, MAIN

from agent_tui.bus.protocol import host_events

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio


def claude_session(tmp_path: Path, project: Path) -> Path:
    """The fixture's session as Claude Code would keep it for `project`: its config dir."""
    config = tmp_path / "claude-config"
    folder = config / "projects" / "-project"
    folder.mkdir(parents=True)
    lines = []
    for raw in (CLAUDE / f"{CLAUDE_ID}.jsonl").read_bytes().splitlines()[:6]:
        line = orjson.loads(raw)
        if "cwd" in line:
            line["cwd"] = str(project)
        lines.append(orjson.dumps(line) + b"\n")
    (folder / f"{CLAUDE_ID}.jsonl").write_bytes(b"".join(lines))
    return config


async def test_serve_relay_hooks_publishes_and_stops_the_projects_terminal_session(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = claude_session(tmp_path, project)
    env = host_env(tmp_path, CLAUDE_CONFIG_DIR=str(config), CODEX_HOME=str(tmp_path / "codex"))
    client, _ = await reader(nats_server.url)
    created: asyncio.Future[dict[str, object]] = asyncio.get_running_loop().create_future()

    async def heard(message: Msg) -> None:
        event = orjson.loads(message.data)
        if event["type"] == "session.created" and not created.done():
            created.set_result(event)

    await client.subscribe(host_events("box"), cb=heard)
    await client.flush()
    sessions = tmp_path / "sessions"
    args = ["serve", "--bus", nats_server.url, "--host", "box", "--cwd", str(project)]
    serve = start_agent_tui([*args, "--sessions-dir", str(sessions), "--relay-hooks"], env)
    try:
        wait_for_line(serve, "host box serves")
        event = await asyncio.wait_for(created, 60)
        assert event["sessionId"] == MAIN and (event["payload"] or {})["client"] == "claude-code"  # type: ignore[index]
        refused = await control(client, "box", "follow_up", request_id="f1", session_id=MAIN, text="go on")
        assert not refused.ok and (refused.message or "").endswith(
            "is a terminal agent: drive it from its own terminal"
        )
        stopped = await control(client, "box", "stop", request_id="s1", session_id=MAIN)
        assert stopped.ok and stopped.detail == {"stopped": 1}
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
        await client.close()
    records = [orjson.loads(line) for line in (sessions / f"{MAIN}.jsonl").read_bytes().splitlines()]
    stop = [
        r for r in records if r["type"] == "source.record" and r["payload"]["recordType"] == "agent-tui.stop"
    ]
    assert stop and stop[0]["payload"]["data"]["by"].startswith("laptop")
    # left as written: the CLI's turn goes on (no turn.completed written for it)
    assert records[-1]["type"] != "turn.completed"


async def test_serve_without_the_flag_follows_no_terminal_session(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = claude_session(tmp_path, project)
    env = host_env(tmp_path, CLAUDE_CONFIG_DIR=str(config), CODEX_HOME=str(tmp_path / "codex"))
    sessions = tmp_path / "sessions"
    args = [
        "serve",
        "--bus",
        nats_server.url,
        "--host",
        "plain",
        "--cwd",
        str(project),
        "--sessions-dir",
        str(sessions),
    ]
    serve = start_agent_tui(args, env)
    client, _ = await reader(nats_server.url)
    try:
        wait_for_line(serve, "host plain serves")  # with the flag, the project's sessions are followed by now
        listed = await control(client, "plain", "sessions", request_id="l1")
        assert listed.ok and listed.detail["sessions"] == []
        assert not (sessions / f"{MAIN}.jsonl").exists()
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
        await client.close()


async def test_a_relaying_host_counts_as_watched_only_while_a_dashboard_holds_a_name(
    nats_server: NatsServer,
) -> None:
    from types import SimpleNamespace

    from agent_tui.bus.presence import bucket
    from agent_tui.bus.protocol import NAMES_BUCKET, NameClaim
    from agent_tui.cli.bus_commands import _dashboard_attached

    client, stream = await reader(nats_server.url)
    host = SimpleNamespace(link=SimpleNamespace(stream=stream), settings=SimpleNamespace(presence_ttl_s=30.0))
    try:
        assert not await _dashboard_attached(host)  # no names at all
        names = await bucket(stream, NAMES_BUCKET, 30.0)

        def claim(name: str, kind: str) -> bytes:
            fields = {"name": name, "kind": kind, "pid": 1, "machine": "m", "user": "ana", "since": "now"}
            return NameClaim.model_validate(fields).model_dump_json().encode()

        await names.put("box", claim("box", "host"))
        assert not await _dashboard_attached(host)  # a host is no one to answer
        await names.put("gone-dash", claim("gone-dash", "dashboard"))
        await names.delete("gone-dash")
        assert not await _dashboard_attached(host)
        await names.put("junk", b"not a claim")
        await names.put("laptop-dash-1", claim("laptop-dash-1", "dashboard"))
        assert await _dashboard_attached(host)  # whatever else the bucket holds
        await names.delete("laptop-dash-1")
        assert not await _dashboard_attached(host)
        assert not await _dashboard_attached(SimpleNamespace(link=SimpleNamespace(stream=None)))  # no bus
    finally:
        await client.close()
