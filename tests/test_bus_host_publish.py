"""A host's events reach the stream after its logs, once each, whatever the server does: killed
and restarted while agents stream, or the host itself killed and started again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support_bus_host import log_lines, reader, stream_lines
from support_engine import make_engine, steps, workspace
from support_nats import NatsServer, nats_server

from agent_tui.bus.config import BusSettings
from agent_tui.bus.host import BusHost
from agent_tui.bus.protocol import DUPLICATE_WINDOW_S, STREAM
from agent_tui.engine.scenario import Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio

AGENTS = 20


def chatty_steps(chunks: int) -> list[Step]:
    return steps({"text": [f"part {i} " for i in range(chunks)]})


async def run_agents(tmp_path: Path, host: BusHost, on_event: object = None) -> Path:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider)
    cwd = workspace(tmp_path)
    async with engine:
        host.attach(engine)
        if on_event is not None:
            engine.subscribe(on_event)  # type: ignore[arg-type]
        handles = []
        for n in range(AGENTS):
            sid = await engine.create_session(cwd, agent_name=f"agent-{n}")
            provider.assign(sid, chatty_steps(300))
            handles.append(engine.start_turn(sid, "go"))
        for handle in handles:
            await handle.done.wait()
    return tmp_path / "sessions"


def settings(server: NatsServer) -> BusSettings:
    return BusSettings(url=server.url, presence_ttl_s=5.0, heartbeat_s=1.0)


async def test_every_logged_event_is_in_the_stream_once_in_order(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    host = BusHost(
        settings(nats_server), name="box", kind="serve", sessions_dir=tmp_path / "sessions", say=print
    )
    await host.start(required=True)
    sessions = await run_agents(tmp_path, host)
    assert await host.publisher.flushed(60)
    await host.close()
    client, stream = await reader(nats_server.url)
    held, ids = await stream_lines(stream)
    assert held == log_lines(sessions)
    assert len(ids) == len(set(ids))
    info = await stream.stream_info(STREAM)
    assert info.config.duplicate_window == DUPLICATE_WINDOW_S
    await client.close()


async def test_a_server_killed_and_restarted_mid_stream_loses_and_doubles_nothing(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    said: list[str] = []
    host = BusHost(
        settings(nats_server), name="box", kind="serve", sessions_dir=tmp_path / "sessions", say=said.append
    )
    await host.start(required=True)
    heard = [0]
    killed = asyncio.Event()
    restart = asyncio.Event()

    def count(event: Event) -> None:
        heard[0] += 1
        if heard[0] == 2000:
            killed.set()
        if heard[0] == 4000:
            restart.set()

    async def fault() -> None:
        await killed.wait()
        nats_server.stop()
        await host.link.lost.wait()  # the host noticed
        await restart.wait()
        nats_server.start()

    faults = asyncio.get_running_loop().create_task(fault())
    sessions = await run_agents(tmp_path, host, count)
    await faults
    await host.link.connected.wait()
    assert await host.publisher.flushed(60)
    await host.close()
    assert any("away" in line for line in said) and any("is back" in line for line in said)
    client, stream = await reader(nats_server.url)
    held, ids = await stream_lines(stream)
    logged = log_lines(sessions)
    assert sorted(held) == sorted(logged)
    for session_id, lines in logged.items():
        assert sorted(held[session_id]) == sorted(lines), session_id  # every one, once
    assert len(ids) == len(set(ids))
    await client.close()
