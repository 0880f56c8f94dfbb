"""A hole the stream cannot fill, against a real server and a real host: the dashboard asks the
session's host to publish the missing events again from its log, and ends with the state a
replay of the host's logs gives, nothing folded twice or out of order; a host whose log does
not hold them either, or whose republish the stream drops as a duplicate (a message deleted
within its duplicate window), is said, once, with its reason."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import nats
import orjson
import pytest
from support_bus import CheckedFold, dump_of, ensure_stream, publish_lines, replay_dump, until
from support_bus_host import stream_lines
from support_engine import make_engine, steps, workspace
from support_nats import NatsServer, nats_server

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusTarget
from agent_tui.bus.config import BusSettings
from agent_tui.bus.host import BusHost
from agent_tui.bus.protocol import DUPLICATE_WINDOW_S, STREAM
from agent_tui.engine.scripted import ScriptedProvider

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio

HOST = "box"
MISSING = 4


@dataclass
class Logged:
    """A host over logs whose session's event `MISSING` the stream never stored."""

    host: BusHost
    log: Path
    lines: list[bytes]
    said: list[str]


@pytest.fixture
async def logged(nats_server: NatsServer, tmp_path: Path) -> AsyncIterator[Logged]:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider)
    async with engine:
        session_id = await engine.create_session(workspace(tmp_path), agent_name="lead")
        provider.assign(session_id, steps({"text": [f"part {i} " for i in range(8)]}))
        await engine.start_turn(session_id, "go").done.wait()
        log = tmp_path / "sessions" / f"{session_id}.jsonl"
        lines = [line for line in log.read_bytes().splitlines() if line.strip()]
        # The host's publish of one event never got stored, later ones did.
        client = await nats.connect(nats_server.url)
        js = client.jetstream()
        await ensure_stream(js)
        await publish_lines(js, HOST, [line for line in lines if orjson.loads(line)["sequence"] != MISSING])
        await client.close()
        settings = BusSettings(url=nats_server.url, presence_ttl_s=5.0, heartbeat_s=1.0)
        said: list[str] = []
        host = BusHost(settings, name=HOST, kind="serve", sessions_dir=tmp_path / "sessions", say=said.append)
        await host.start(required=True)
        host.attach(engine)
        await host.control_ready()
        try:
            yield Logged(host, log, lines, said)
        finally:
            await host.close()


async def test_a_hole_the_stream_cannot_fill_is_filled_by_the_hosts_republish(
    nats_server: NatsServer, logged: Logged
) -> None:
    fold = CheckedFold()
    bus = AttachedBus(BusTarget(nats_server.url), fold=fold, hole_grace=0)
    await bus.open()
    try:
        await until(
            bus, lambda: fold.folded == len(logged.lines), "every event folded once the host republished"
        )
        assert not fold.bad and not bus.problems
        order = bus.feed.order
        assert not any(order.open(session_id) for session_id in bus.state.sessions) and order.duplicates == 0
        assert dump_of(bus.state) == replay_dump([logged.log])
        assert not bus.control_refusal(HOST)  # the dashboard's probe of its rights went to the host,
        assert not logged.said  # which took it quietly
    finally:
        await bus.close()
    client = await nats.connect(nats_server.url)
    held, _ = await stream_lines(client.jetstream())
    await client.close()
    assert sorted(held[logged.log.stem]) == sorted(logged.lines)  # the missing one, stored anew, once


async def test_a_hole_the_hosts_log_does_not_hold_is_said_once_with_the_hosts_reason(
    nats_server: NatsServer, logged: Logged
) -> None:
    await logged.host.close()  # the host comes back over a log cut before the missing event
    logged.log.write_bytes(b"".join(line + b"\n" for line in logged.lines[: MISSING - 1]))
    settings = BusSettings(url=nats_server.url, presence_ttl_s=5.0, heartbeat_s=1.0)
    sessions_dir = logged.log.parent
    host = logged.host = BusHost(settings, name=HOST, kind="serve", sessions_dir=sessions_dir, say=print)
    await host.start(required=True)
    engine = make_engine(sessions_dir.parent)
    async with engine:
        host.attach(engine)
        await host.control_ready()
        fold = CheckedFold()
        bus = AttachedBus(BusTarget(nats_server.url), fold=fold, hole_grace=0)
        await bus.open()
        try:
            await until(bus, lambda: bool(bus.problems), "the hole said")
            session_id = logged.log.stem
            waiting = len(logged.lines) - MISSING
            assert bus.problems == [
                f"session {session_id} of host {HOST}: event {MISSING} is not in the stream, and host "
                f"{HOST} cannot publish them again (session {session_id}'s log on this host ends at "
                f"event {MISSING - 1}, before {MISSING}); {waiting} later events held until the host "
                "publishes what is missing again"
            ]
            assert fold.folded == MISSING - 1 and not fold.bad
        finally:
            await bus.close()


async def test_a_hole_whose_message_id_the_stream_still_remembers_is_said_with_why(
    nats_server: NatsServer, logged: Logged
) -> None:
    """A message deleted from the stream within its duplicate window: the host's republish of it
    carries the same id, which the stream drops again; the sentence says so."""
    client = await nats.connect(nats_server.url)
    js = client.jetstream()
    await publish_lines(js, HOST, logged.lines[MISSING - 1 : MISSING])
    await js.delete_msg(STREAM, (await js.stream_info(STREAM)).state.last_seq)
    await client.close()
    fold = CheckedFold()
    bus = AttachedBus(BusTarget(nats_server.url), fold=fold, hole_grace=0)
    await bus.open()
    try:
        await until(bus, lambda: bool(bus.problems), "the hole said")
        assert bus.problems == [
            f"session {logged.log.stem} of host {HOST}: event {MISSING} is not in the stream, and host "
            f"{HOST} published them again but the stream dropped them as duplicates (it remembers a "
            f"message id for {DUPLICATE_WINDOW_S / 60:.0f} minutes); {len(logged.lines) - MISSING} later "
            "events held until the host publishes what is missing again"
        ]
        assert fold.folded == MISSING - 1 and not fold.bad
    finally:
        await bus.close()
