"""`agent-tui run --bus` and `agent-tui serve` as a user meets them: real processes, a real
server, answers given over the control subject as an attached dashboard gives them."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import nats
import orjson
import pytest
from nats.aio.msg import Msg
from support_bus_host import (
    RENAMING,
    SPAWNING,
    control,
    host_env,
    log_lines,
    reader,
    start_agent_tui,
    stream_lines,
    wait_for_line,
)
from support_nats import NatsServer, nats_server

from agent_tui.bus.protocol import NAMES_BUCKET, PRESENCE_BUCKET, host_events
from agent_tui.replay.sources import replay_all

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "ws" / "src" / "foo.py").write_text("x = 1\n")
    path = tmp_path / "scenario.json"
    path.write_bytes(orjson.dumps(RENAMING))
    return path


async def first_request(client: nats.NATS, host: str) -> asyncio.Future[tuple[str, str]]:
    """Listen to the host's events; the future gets (sessionId, requestId) of the first permission
    request it waits on an answer for. The server holds the subscription when this returns (a
    run started after it cannot publish its request unheard)."""
    asked: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()

    async def heard(message: Msg) -> None:
        event = orjson.loads(message.data)
        asks = event["type"] == "permission.resolved" and event["payload"]["decision"] == "ask"
        if asks and not asked.done():  # the policy asks a person (an allowed call is resolved at once)
            asked.set_result((event["sessionId"], event["payload"]["requestId"]))

    subscription = await client.subscribe(host_events(host), cb=heard)
    await client.flush()
    asked.add_done_callback(lambda _asked: asyncio.ensure_future(subscription.unsubscribe()))
    return asked


def resolutions(sessions: Path) -> list[dict[str, object]]:
    return [
        e.payload
        for e in replay_all(sessions)
        if e.type == "permission.resolved" and e.payload["decision"] != "ask"
    ]


async def test_an_ask_waits_for_the_dashboards_answer_and_the_first_answer_wins(
    nats_server: NatsServer, tmp_path: Path, scenario: Path
) -> None:
    sessions = tmp_path / "sessions"
    client, _ = await reader(nats_server.url)
    asked = await first_request(client, "ci-run")
    args = ["run", str(scenario), "--sessions-dir", str(sessions), "--approve", "ask"]
    process = start_agent_tui([*args, "--bus", nats_server.url, "--host", "ci-run"], host_env(tmp_path))
    session_id, request_id = await asyncio.wait_for(asked, 60)
    answers = await asyncio.gather(
        control(
            client,
            "ci-run",
            "answer",
            request_id="a1",
            dashboard="laptop",
            session_id=session_id,
            requestId=request_id,
            decision="allow",
        ),
        control(
            client,
            "ci-run",
            "answer",
            request_id="b1",
            dashboard="desk",
            session_id=session_id,
            requestId=request_id,
            decision="deny",
        ),
    )
    won = [reply for reply in answers if reply.ok]
    lost = [reply for reply in answers if not reply.ok]
    assert len(won) == 1 and len(lost) == 1
    assert lost[0].message is not None and "already answered" in lost[0].message
    winner = "laptop" if answers[0].ok else "desk"
    assert winner in lost[0].message
    again = await control(
        client,
        "ci-run",
        "answer",
        request_id="a1" if winner == "laptop" else "b1",
        dashboard=winner,
        session_id=session_id,
        requestId=request_id,
        decision="allow",
    )
    assert again == won[0]  # a retry of the winner's id is the first reply again
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    (resolved,) = resolutions(sessions)
    assert resolved["actor"] == "user"
    assert resolved["by"] == {"dashboard": winner, "user": "ana", "host": "laptop-machine"}
    completed = [e.payload for e in replay_all(sessions) if e.type == "tool.completed"]
    assert (len(completed) == 1) == (winner == "laptop")  # allowed: the mv ran; denied: it did not
    await client.close()


async def test_ask_timeout_denies_as_system(nats_server: NatsServer, tmp_path: Path, scenario: Path) -> None:
    sessions = tmp_path / "sessions"
    args = ["run", str(scenario), "--sessions-dir", str(sessions), "--approve", "ask", "--ask-timeout", "1s"]
    process = start_agent_tui([*args, "--bus", nats_server.url, "--host", "ci"], host_env(tmp_path))
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    (resolved,) = resolutions(sessions)
    assert resolved["actor"] == "system" and resolved["decision"] == "deny"
    assert "--ask-timeout" in str(resolved["reason"])
    client, stream = await reader(nats_server.url)
    held, _ = await stream_lines(stream)
    assert held == log_lines(sessions)  # everything was published before the run left
    await client.close()


def test_approve_ask_needs_a_bus(tmp_path: Path, scenario: Path) -> None:
    process = start_agent_tui(
        ["run", str(scenario), "--sessions-dir", str(tmp_path / "s"), "--approve", "ask"], host_env(tmp_path)
    )
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    assert stderr.strip() == "agent-tui: --approve ask and --ask-timeout go with --bus URL|local"


def test_serve_without_a_server_binary_says_how_to_get_one(tmp_path: Path) -> None:
    env = host_env(tmp_path, AGENT_TUI_NATS_SERVER="")
    process = start_agent_tui(["serve", "--sessions-dir", str(tmp_path / "s"), "--cwd", str(tmp_path)], env)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    assert stderr.strip() == (
        "agent-tui: no nats-server found: pip install 'agent-tui-dashboard[bus]' (or put nats-server on PATH)"
    )


def test_serve_with_no_server_at_the_url_is_one_line_and_exit_2(tmp_path: Path) -> None:
    from support_nats import free_port

    url = f"nats://127.0.0.1:{free_port()}"
    process = start_agent_tui(
        ["serve", "--bus", url, "--sessions-dir", str(tmp_path / "s")], host_env(tmp_path)
    )
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and url in lines[0] and "cannot reach the bus" in lines[0], stderr


async def test_serve_starts_a_private_bus_records_it_and_holds_its_name(tmp_path: Path) -> None:
    env = host_env(tmp_path)
    sessions = tmp_path / "sessions"
    serve = start_agent_tui(
        ["serve", "--sessions-dir", str(sessions), "--cwd", str(tmp_path), "--host", "box"], env
    )
    record_path = tmp_path / "run" / "agent-tui" / "bus.json"
    try:
        wait_for_line(serve, "host box serves")
        assert record_path.stat().st_mode & 0o777 == 0o600
        record = json.loads(record_path.read_text())
        assert record["url"].startswith("nats://127.0.0.1:") and "token" not in record
        seed_file = Path(record["seedFile"])
        assert seed_file == tmp_path / "run" / "agent-tui" / "bus.nk"
        assert seed_file.stat().st_mode & 0o777 == 0o600
        seed = seed_file.read_text().strip()
        assert seed.startswith("SU")
        for kept in ("nats-server.log", "nats-server.conf"):  # the server knows the public key only
            assert seed not in (tmp_path / "run" / "agent-tui" / kept).read_text()

        async def quiet(_error: Exception) -> None:
            return None

        with pytest.raises(nats.errors.Error, match="Authorization"):  # no key, no entry
            await nats.connect(
                record["url"],
                connect_timeout=2,
                allow_reconnect=False,
                max_reconnect_attempts=1,
                error_cb=quiet,
            )
        client, stream = await reader(record["url"], nkeys_seed=str(seed_file))
        presence = await (await stream.key_value(PRESENCE_BUCKET)).get("box")
        said = json.loads(presence.value or b"{}")
        assert said["pid"] == serve.pid
        assert Path(said["cwd"]).resolve() == tmp_path.resolve()  # the form's default directory
        claim = await (await stream.key_value(NAMES_BUCKET)).get("box")
        assert json.loads(claim.value or b"{}")["kind"] == "host"
        reply = await control(client, "box", "sessions", request_id="s1")
        assert reply.ok and reply.detail["host"] == "box" and reply.detail["sessions"] == []
        refused = await control(client, "box", "new_agent", request_id="n1", prompt="hello")
        assert not refused.ok and refused.message and "model" in refused.message

        second = start_agent_tui(
            ["serve", "--bus", "local", "--sessions-dir", str(tmp_path / "other"), "--host", "box"], env
        )
        _, said = second.communicate(timeout=60)
        assert second.returncode == 2, said
        assert f"the name 'box' is in use on the bus by a host (pid {serve.pid}" in said
        assert seed not in said
        await client.close()
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
        record = json.loads(record_path.read_text())
        os.kill(record["pid"], signal.SIGTERM)
    assert serve.returncode == 128 + signal.SIGTERM


async def test_stop_subtree_from_the_bus_ends_every_descendant(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    (tmp_path / "ws").mkdir()
    scenario = tmp_path / "delegating.json"
    scenario.write_bytes(orjson.dumps(SPAWNING))
    sessions = tmp_path / "sessions"
    client, _ = await reader(nats_server.url)
    asked = await first_request(client, "tree")
    args = ["run", str(scenario), "--sessions-dir", str(sessions), "--approve", "ask"]
    process = start_agent_tui([*args, "--bus", nats_server.url, "--host", "tree"], host_env(tmp_path))
    child_id, request_id = await asyncio.wait_for(asked, 60)
    listing = await control(client, "tree", "sessions", request_id="l1")
    assert listing.ok
    by_id = {s["sessionId"]: s for s in listing.detail["sessions"]}
    (lead,) = [s for s in by_id.values() if s["parentSessionId"] is None]
    assert by_id[child_id]["parentSessionId"] == lead["sessionId"] and by_id[child_id]["running"]
    assert [w["requestId"] for w in listing.detail["waiting"]] == [request_id]
    assert all(s["publishedSequence"] <= s["lastSequence"] for s in by_id.values())
    stopped = await control(client, "tree", "stop_subtree", request_id="s1", session_id=lead["sessionId"])
    assert stopped.ok and stopped.detail == {"stopped": 2}
    late = await control(
        client, "tree", "answer", request_id="a1", session_id=child_id, requestId=request_id, decision="allow"
    )
    assert not late.ok and late.message is not None and "already answered (deny) by the host" in late.message
    _, stderr = process.communicate(timeout=60)
    ended = [e.payload["stopReason"] for e in replay_all(sessions) if e.type == "turn.completed"]
    assert ended == ["cancelled", "cancelled"], stderr
    await client.close()
