"""The faults a host must survive: killed with `kill -9` mid-turn and started again, the bus
away when a run starts, retried control requests; and its credentials never said anywhere."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import orjson
import pytest
from nats.aio.msg import Msg
from support_bus_host import (
    host_env,
    log_lines,
    reader,
    start_agent_tui,
    stream_lines,
    wait_for_line,
)
from support_engine import make_engine, steps, workspace
from support_nats import NatsServer, nats_server

from agent_tui.bus.config import BusSettings
from agent_tui.bus.control_server import ControlServer
from agent_tui.bus.host import BusHost, EngineActions
from agent_tui.bus.protocol import PRESENCE_BUCKET, Caller, ControlRequest, host_events
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.replay.sources import replay_all

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio

SLOW = {
    "sessions": [
        {
            "title": "slow",
            "cwd": "ws",
            "prompt": "Take your time",
            "steps": [{"text": [f"word {i} " for i in range(400)], "delayMs": 50}],
        }
    ]
}
TOKEN = "s3cr3t-T0ken-that-must-never-show"


@pytest.fixture
def slow_scenario(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    path = tmp_path / "slow.json"
    path.write_bytes(orjson.dumps(SLOW))
    return path


async def test_a_host_killed_mid_turn_repairs_its_logs_and_publishes_what_was_missing(
    nats_server: NatsServer, tmp_path: Path, slow_scenario: Path
) -> None:
    sessions = tmp_path / "sessions"
    client, stream = await reader(nats_server.url)
    seen: list[str] = []
    enough = asyncio.Event()
    target: list[str] = []
    arrived = asyncio.Event()

    async def heard(message: Msg) -> None:
        msg_id = (message.headers or {}).get("Nats-Msg-Id", "")
        seen.append(msg_id)
        if len(seen) >= 20:
            enough.set()
        if target and target[0] in seen:
            arrived.set()

    await client.subscribe(host_events("h1"), cb=heard)
    await client.flush()
    env = host_env(tmp_path)
    run = start_agent_tui(
        [
            "run",
            str(slow_scenario),
            "--sessions-dir",
            str(sessions),
            "--bus",
            nats_server.url,
            "--host",
            "h1",
        ],
        env,
    )
    await asyncio.wait_for(enough.wait(), 60)
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=30)
    (log,) = sessions.glob("*.jsonl")
    before = log.read_bytes().count(b"\n")
    serve = start_agent_tui(
        [
            "serve",
            "--bus",
            nats_server.url,
            "--host",
            "h1",
            "--sessions-dir",
            str(sessions),
            "--cwd",
            str(tmp_path),
        ],
        env,
    )
    try:
        wait_for_line(serve, "host h1 serves")  # the name the killed run held is taken over
        lines = log_lines(sessions)[log.stem]
        assert len(lines) > before  # hydration closed the open turn
        assert orjson.loads(lines[-1])["type"] == "turn.completed"
        target.append(f"{log.stem}:{len(lines)}")
        if target[0] in seen:
            arrived.set()
        await asyncio.wait_for(arrived.wait(), 60)
        held, ids = await stream_lines(stream)
        assert held == log_lines(sessions)  # nothing lost, nothing twice, in order
        assert len(ids) == len(set(ids))
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
        await client.close()


async def test_a_retried_request_is_done_once(nats_server: NatsServer, tmp_path: Path) -> None:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider)
    host = BusHost(
        BusSettings(url=nats_server.url),
        name="box",
        kind="serve",
        sessions_dir=tmp_path / "sessions",
        say=print,
    )
    async with engine:
        sid = await engine.create_session(workspace(tmp_path), agent_name="a")
        provider.assign(sid, steps({"text": ["first"]}, {"text": ["second"]}))
        await engine.start_turn(sid, "one").done.wait()
        server = ControlServer("box", host.link, EngineActions(engine, host.publisher), engine.questions)
        request = (
            ControlRequest(
                id="retry-1",
                action="follow_up",
                by=Caller(dashboard="laptop", user="ana", host="m"),
                sessionId=sid,
                args={"text": "again"},
            )
            .model_dump_json(by_alias=True)
            .encode()
        )
        first, second = await asyncio.gather(server.handle(request, "ana"), server.handle(request, "ana"))
        third = await server.handle(request, "ana")
        assert first.ok and first == second == third
        info = engine.session(sid)
        assert info.turn is not None
        await info.turn.done.wait()
        garbage = await server.handle(b"{not json", "ana")
        assert not garbage.ok and garbage.message and garbage.message.startswith("not a control request")
        unknown = await server.handle(
            request.replace(b"retry-1", b"retry-2").replace(sid.encode(), b"nope"), "ana"
        )
        assert not unknown.ok and unknown.message == "no session nope runs on this host"
    started = [e for e in replay_all(tmp_path / "sessions") if e.type == "turn.started"]
    assert len(started) == 2  # "one", and "again" once


def _never_said(token: str, *texts: str) -> None:
    for text in texts:
        assert token not in text


async def test_credentials_never_reach_a_line_a_log_or_an_error(tmp_path: Path, slow_scenario: Path) -> None:
    server = NatsServer(store=tmp_path / "store", token=TOKEN)
    server.start()
    try:
        config = '[bus]\ncredentials_env = "AGENT_TUI_BUS_SECRET"\n'
        good = host_env(tmp_path, config, AGENT_TUI_BUS_SECRET=TOKEN)
        wrong = host_env(tmp_path, config, AGENT_TUI_BUS_SECRET=TOKEN[::-1])
        said: list[str] = []
        for env, url in (
            (wrong, server.url),
            (host_env(tmp_path), server.url.replace("://", f"://{TOKEN[::-1]}@")),  # a wrong token in the URL
            (host_env(tmp_path), server.url.replace("://", f"://ana:{TOKEN}@")),
            (good, "nats://127.0.0.1:1"),  # nobody there
        ):
            serve = start_agent_tui(["serve", "--bus", url, "--sessions-dir", str(tmp_path / "s")], env)
            out, err = serve.communicate(timeout=60)
            assert serve.returncode == 2, err
            assert len(err.strip().splitlines()) == 1 and "127.0.0.1:" in err
            said += [out, err]
        _never_said(TOKEN, *said)
        _never_said(TOKEN[::-1], *said)

        sessions = tmp_path / "sessions"
        run = start_agent_tui(
            ["run", str(slow_scenario), "--sessions-dir", str(sessions), "--bus", server.url, "--host", "r"],
            good,
        )
        wait_for_line(run, "connected to the bus")
        server.stop()  # the bus goes away mid-run: said, never with the token
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        assert "away" in err
        _never_said(TOKEN, out, err, *(path.read_text() for path in sessions.rglob("*") if path.is_file()))
    finally:
        server.stop()


async def test_a_run_whose_bus_is_away_at_start_runs_and_says_so(tmp_path: Path, slow_scenario: Path) -> None:
    from support_nats import free_port

    url = f"nats://127.0.0.1:{free_port()}"
    fast = tmp_path / "fast.json"
    fast.write_bytes(
        orjson.dumps({"sessions": [{"cwd": "ws", "prompt": "hi", "steps": [{"text": ["hello"]}]}]})
    )
    sessions = tmp_path / "sessions"
    run = start_agent_tui(
        ["run", str(fast), "--sessions-dir", str(sessions), "--bus", url], host_env(tmp_path)
    )
    _, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    assert f"the bus at {url} did not take every event before the run ended; the logs have them all" in err
    assert [e.type for e in replay_all(sessions)][-1] == "turn.completed"


async def test_a_killed_hosts_presence_lapses_with_its_ttl(nats_server: NatsServer, tmp_path: Path) -> None:
    env = host_env(tmp_path, '[bus]\npresence_ttl = "1s"\n')
    serve = start_agent_tui(
        ["serve", "--bus", nats_server.url, "--host", "gone", "--sessions-dir", str(tmp_path / "s")], env
    )
    wait_for_line(serve, "host gone serves")
    client, stream = await reader(nats_server.url)
    hosts = await stream.key_value(PRESENCE_BUCKET)
    watcher = await hosts.watch("gone")
    present = await watcher.updates(timeout=10)
    assert present is not None and present.value and orjson.loads(present.value)["pid"] == serve.pid
    assert orjson.loads(present.value)["ttlS"] == 1.0
    serve.send_signal(signal.SIGKILL)
    serve.communicate(timeout=30)
    while True:  # the server removes the key once the TTL passed without a heartbeat, and says so
        change = await watcher.updates(timeout=30)
        if change is not None and change.operation is not None:
            break
    assert change.operation == "PURGE"  # the server's marker: the killed host could purge nothing
    assert (await hosts.get("gone")).value is None
    await watcher.stop()
    await client.close()
