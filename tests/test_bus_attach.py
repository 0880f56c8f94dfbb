"""An attached dashboard against a real JetStream server: it folds what hosts published into the
state a replay of their logs gives, never folds a gap or a duplicate, survives the server's
death, sees hosts go quiet, and asks hosts for actions with retriable requests."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Iterator
from pathlib import Path

import nats
import orjson
import pytest
from nats.aio.client import Client
from nats.js.errors import KeyNotFoundError
from support_bus import (
    CheckedFold,
    ControlResponder,
    dump_of,
    ensure_stream,
    heartbeat,
    log_lines,
    logs_of_a_real_run,
    publish_lines,
    replay_dump,
    until,
)
from support_nats import NatsServer, nats_server

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusTarget, BusUnreachable
from agent_tui.bus.consumer import StartAt
from agent_tui.bus.presence import bucket, machine, now
from agent_tui.bus.protocol import MSG_ID_HEADER, NAMES_BUCKET, PRESENCE_BUCKET, NameClaim, events_subject
from agent_tui.events import Event, event_from_json
from agent_tui.runtime.commands import FollowUp, Stop
from agent_tui.tui.attached import AttachedRun

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def run_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The logs of one real `agent-tui run` of the sample scenario."""
    return logs_of_a_real_run(tmp_path_factory.mktemp("run") / "sessions")


@pytest.fixture
def second_run_logs(tmp_path: Path) -> Iterator[list[Path]]:
    yield logs_of_a_real_run(tmp_path / "second" / "sessions", approve="deny")


async def client(server: NatsServer) -> Client:
    return await nats.connect(server.url)


async def test_a_late_attach_shows_what_a_replay_of_the_hosts_logs_shows(
    nats_server: NatsServer, run_logs: list[Path], second_run_logs: list[Path]
) -> None:
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await ensure_stream(js)
    await publish_lines(js, "build-box", log_lines(run_logs))
    await publish_lines(js, "laptop", log_lines(second_run_logs))
    fold = CheckedFold()
    bus = AttachedBus(BusTarget(nats_server.url), fold=fold)
    await bus.open()
    try:
        await until(bus, lambda: bus.live, "the stream read to its end")
        assert dump_of(bus.state) == replay_dump(run_logs + second_run_logs)
        assert {bus.host_of(sid) for sid in bus.state.sessions} == {"build-box", "laptop"}
        assert [h.name for h in bus.hosts()] == ["build-box", "laptop"]
        assert not fold.bad and fold.folded == len(log_lines(run_logs + second_run_logs))
    finally:
        await bus.close()
        await publisher.close()


async def test_an_attached_run_redraws_slower_while_it_catches_up_with_the_history(
    nats_server: NatsServer, run_logs: list[Path]
) -> None:
    """The first event shows at once (the first screen); the rest of the history comes at the
    catch-up pace, and becoming live lifts it."""
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await ensure_stream(js)
    await publish_lines(js, "build-box", log_lines(run_logs))
    bus = AttachedBus(BusTarget(nats_server.url))
    run = AttachedRun(bus, lambda _message: None)
    seen: list[tuple[bool, bool]] = []  # (live, slowed) as each event reached the run

    def heard(event: Event | None) -> None:  # before the run's own listener, which play adds
        if event is not None:
            seen.append((bus.live, run.redraws.slowed))

    bus.listen(heard)
    playing = asyncio.create_task(run.play())
    try:
        await until(bus, lambda: bus.live, "the stream read to its end")
        assert len(seen) == len(log_lines(run_logs))
        assert seen[0] == (False, False)  # the first event: not slowed yet (it redraws at once)
        assert all(slowed for live, slowed in seen[1:] if not live)
        assert not run.redraws.slowed
    finally:
        await run.shutdown()
        await playing
        await publisher.close()


async def test_gaps_and_duplicates_never_reach_the_reducer(
    nats_server: NatsServer, run_logs: list[Path]
) -> None:
    """A host that republishes past the duplicate window (a repeat the stream keeps) and out of
    order (a hole filled later): the fold still sees each session's sequence once, in order."""
    lines = log_lines(run_logs)
    shuffled = list(lines)
    random.Random(21).shuffle(shuffled)
    repeats = random.Random(7).sample(lines, 40)
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await ensure_stream(js)
    for line in [*shuffled[:90], *repeats, *shuffled[90:], *repeats]:
        fields = orjson.loads(line)
        # No message id: the stream keeps every repeat, as after a window that ran out.
        await js.publish(events_subject("build-box", fields["sessionId"]), line)
    fold = CheckedFold()
    bus = AttachedBus(BusTarget(nats_server.url), fold=fold)
    await bus.open()
    try:
        # (the repeats published after the last new event may come after it is folded)
        order = bus.feed.order
        await until(
            bus,
            lambda: fold.folded == len(lines) and order.duplicates == 2 * len(repeats),
            "every event folded once, every repeat seen",
        )
        assert not fold.bad
        assert not any(order.open(session_id) for session_id in bus.state.sessions)  # nothing held
        assert dump_of(bus.state) == replay_dump(run_logs)
    finally:
        await bus.close()
        await publisher.close()


async def test_a_hole_the_stream_cannot_fill_is_said_and_held_until_the_republish_fills_it(
    nats_server: NatsServer, run_logs: list[Path]
) -> None:
    lines = log_lines(run_logs[:1])
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await ensure_stream(js)
    await publish_lines(js, "build-box", lines[:3] + lines[4:])
    fold = CheckedFold()
    bus = AttachedBus(BusTarget(nats_server.url), fold=fold, hole_grace=0)
    await bus.open()
    try:
        await until(bus, lambda: bus.live, "the stream read")
        assert fold.folded == 3  # the events after the hole wait
        session_id = event_from_json(lines[0]).session_id
        assert bus.feed.order.hole(session_id) == (4, 4, len(lines) - 4)
        await until(bus, lambda: bool(bus.problems), "the hole said, once the stream was read for it")
        assert bus.problems == [
            f"session {session_id} of host build-box: event 4 is not in the stream, and host build-box "
            "did not answer when asked to publish them again; "
            f"{len(lines) - 4} later events held until the host publishes what is missing again"
        ]
        await publish_lines(js, "build-box", lines[3:4])  # the host's republish
        await until(bus, lambda: fold.folded == len(lines), "the rest folded once the hole filled")
        assert not fold.bad and len(bus.problems) == 1
    finally:
        await bus.close()
        await publisher.close()


async def test_events_the_gate_had_to_drop_are_read_again_from_the_stream(
    nats_server: NatsServer, run_logs: list[Path]
) -> None:
    """The gate holds two events per session here: the rest after the hole are dropped as they
    come, and nothing would ever bring them again but a re-read of the session from the stream."""
    lines = log_lines(run_logs[:1])
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await ensure_stream(js)
    await publish_lines(js, "build-box", lines[:3] + lines[4:] + lines[3:4])
    fold = CheckedFold()
    bus = AttachedBus(BusTarget(nats_server.url), fold=fold, hold_limit=2, hole_grace=0)
    await bus.open()
    try:
        await until(bus, lambda: fold.folded == len(lines), "every event folded once")
        assert not fold.bad and not bus.problems
        assert bus.feed.order.overflowed == len(lines) - 6  # all but 1-3, the two held, and 4
        assert bus.feed.holes.refilled == len(lines) - 6
        assert dump_of(bus.state) == replay_dump(run_logs[:1])
    finally:
        await bus.close()
        await publisher.close()


async def test_a_message_that_is_not_a_valid_event_is_reported_and_skipped(
    nats_server: NatsServer, run_logs: list[Path]
) -> None:
    lines = log_lines(run_logs[:1])
    first = event_from_json(lines[0])
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await ensure_stream(js)
    await js.publish(events_subject("build-box", first.session_id), b"{not json")
    await js.publish(events_subject("build-box", "sess_someone_else"), lines[0])  # wrong subject
    await publish_lines(js, "build-box", lines)
    # Another session's event on a subject whose own session's events were taken already.
    other = event_from_json(log_lines(run_logs[1:2])[0])
    await js.publish(events_subject("build-box", first.session_id), other.to_json())
    # Another host claims the session (no message id: the stream would drop it as a repeat).
    await js.publish(events_subject("intruder", first.session_id), lines[1])
    bus = AttachedBus(BusTarget(nats_server.url), fold=CheckedFold())
    await bus.open()
    try:
        await until(bus, lambda: len(bus.problems) == 4, "four problems reported")
        assert "stream sequence 1" in bus.problems[0] and "not an event" in bus.problems[0]
        assert "holds an event of session" in bus.problems[1]
        assert f"holds an event of session {other.session_id!r}" in bus.problems[2]
        assert "belongs to host build-box" in bus.problems[3]
        assert dump_of(bus.state) == replay_dump(run_logs[:1])
    finally:
        await bus.close()
        await publisher.close()


async def test_attach_from_a_stream_sequence_reads_from_there(
    nats_server: NatsServer, run_logs: list[Path]
) -> None:
    lines = log_lines(run_logs[:1])
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await ensure_stream(js)
    await publish_lines(js, "build-box", lines)
    fold = CheckedFold()
    fold.last[event_from_json(lines[0]).session_id] = 4  # what it had already (from elsewhere)
    bus = AttachedBus(BusTarget(nats_server.url), fold=fold, start=StartAt(sequence=5))
    await bus.open()
    try:
        await until(bus, lambda: bus.live, "read from sequence 5")
        assert fold.folded == len(lines) - 4 and not fold.bad
    finally:
        await bus.close()
        await publisher.close()


async def test_a_killed_server_loses_and_repeats_nothing(
    nats_server: NatsServer, run_logs: list[Path], second_run_logs: list[Path]
) -> None:
    """The server dies while events stream; the publisher (a host) republishes what it had not
    seen acknowledged; the dashboard says the bus is away, then catches up, every event once."""
    lines = log_lines(run_logs + second_run_logs)
    half = len(lines) // 2
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await ensure_stream(js)
    await publish_lines(js, "build-box", lines[:half])
    fold = CheckedFold()
    bus = AttachedBus(BusTarget(nats_server.url), fold=fold)
    seen_down: list[bool] = []
    bus.listen(lambda _event: seen_down.append(not bus.connected))
    await bus.open()
    try:
        await until(bus, lambda: fold.folded == half, "the first half folded")
        await publisher.close()
        nats_server.stop()
        await until(bus, lambda: not bus.connected, "the dashboard notices the bus is away")
        assert bus.disconnected_since is not None
        nats_server.start()
        publisher = await client(nats_server)
        js = publisher.jetstream()
        # The host's republish from its mark: the last few again (dedupe drops them), then the rest.
        await publish_lines(js, "build-box", lines[half - 10 :])
        await until(bus, lambda: bus.connected, "the dashboard reconnects")
        await until(bus, lambda: fold.folded == len(lines), "caught up")
        assert not fold.bad and any(seen_down)
        assert dump_of(bus.state) == replay_dump(run_logs + second_run_logs)
    finally:
        await bus.close()
        await publisher.close()


async def test_a_host_that_stops_heartbeating_is_unreachable_since_its_last_one(
    nats_server: NatsServer,
) -> None:
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await heartbeat(js, "build-box", ttl=1.0)
    await heartbeat(js, "laptop", ttl=1.0)
    bus = AttachedBus(BusTarget(nats_server.url))
    await bus.open()
    try:
        await until(bus, lambda: [h.name for h in bus.hosts()] == ["build-box", "laptop"], "both hosts")
        assert all(h.reachable for h in bus.hosts())
        heard = bus.host("build-box").presence
        assert heard is not None and heard.presence is not None and heard.presence.machine == "test-machine"

        # laptop keeps heartbeating; build-box goes quiet.
        async def keep_alive() -> None:
            while True:
                await heartbeat(js, "laptop", ttl=1.0)
                await asyncio.sleep(0.2)

        beating = asyncio.create_task(keep_alive())
        await until(bus, lambda: not bus.host("build-box").reachable, "build-box unreachable")
        beating.cancel()
        since = bus.host("build-box").unreachable_since
        assert since is not None and since == heard.heard_at
        assert bus.host("laptop").reachable
        await heartbeat(js, "build-box", ttl=1.0)
        await until(bus, lambda: bus.host("build-box").reachable, "build-box back")
    finally:
        await bus.close()
        await publisher.close()


async def test_a_host_that_leaves_cleanly_has_left_rather_than_become_unreachable(
    nats_server: NatsServer,
) -> None:
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await heartbeat(js, "ci-run", ttl=30.0)
    bus = AttachedBus(BusTarget(nats_server.url))
    await bus.open()
    try:
        await until(bus, lambda: bus.host("ci-run").reachable, "the host heard")
        await (await js.key_value(PRESENCE_BUCKET)).delete("ci-run")  # what a stopping host does
        await until(bus, lambda: bus.host("ci-run").left_at is not None, "the host left")
        view = bus.host("ci-run")
        assert not view.reachable and view.unreachable_since is None
        await heartbeat(js, "ci-run", ttl=30.0)  # started again
        await until(bus, lambda: bus.host("ci-run").reachable, "the host back")
        assert bus.host("ci-run").left_at is None
    finally:
        await bus.close()
        await publisher.close()


async def test_a_control_that_times_out_is_retried_as_the_same_request(nats_server: NatsServer) -> None:
    host = await client(nats_server)
    responder = ControlResponder(host, "build-box", silent=1)
    await responder.start()
    bus = AttachedBus(BusTarget(nats_server.url), control_timeout=0.5)
    await bus.open()
    try:
        first = await bus.control.send("build-box", FollowUp(sessionId="sess_1", text="and the tests too"))
        assert not first.answered
        assert "did not answer" in first.sentence("follow-up") and "try again" in first.sentence("follow-up")
        again = await bus.control.send("build-box", FollowUp(sessionId="sess_1", text="and the tests too"))
        assert again.answered and again.ok and again.request_id == first.request_id
        assert [r.id for r in responder.requests] == [first.request_id, first.request_id]
        assert responder.requests[0].by.dashboard == bus.name
        assert responder.requests[0].command == FollowUp(sessionId="sess_1", text="and the tests too")
        fresh = await bus.control.send("build-box", FollowUp(sessionId="sess_1", text="and the tests too"))
        assert fresh.request_id != first.request_id  # answered: asking again is a new request
        nobody = await bus.control.send("nobody-here", Stop(sessionId="sess_1"))
        assert not nobody.answered
    finally:
        await bus.close()
        await host.close()


async def test_a_message_id_is_the_protocols(nats_server: NatsServer, run_logs: list[Path]) -> None:
    """What the test publisher sends is what a host sends: the header, the subject, the line."""
    lines = log_lines(run_logs[:1])
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await ensure_stream(js)
    await publish_lines(js, "build-box", lines[:1])
    message = await js.get_msg("AGENT_TUI_EVENTS", 1)
    first = event_from_json(lines[0])
    assert message.headers is not None
    assert message.headers[MSG_ID_HEADER] == f"{first.session_id}:1"
    assert message.subject == events_subject("build-box", first.session_id)
    assert message.data == lines[0]
    await publisher.close()


async def test_a_presence_that_is_not_one_is_reported_and_the_host_still_heard(
    nats_server: NatsServer,
) -> None:
    publisher = await client(nats_server)
    js = publisher.jetstream()
    await heartbeat(js, "build-box", ttl=30.0)
    kv = await js.key_value("agent-tui-hosts")
    await kv.put("odd-box", b"\x1b]0;owned\x07 not json")
    bus = AttachedBus(BusTarget(nats_server.url))
    await bus.open()
    try:
        await until(bus, lambda: len(bus.hosts()) == 2, "both keys read")
        assert bus.problems == ["host odd-box: its presence in agent-tui-hosts is not readable"]
        odd = bus.host("odd-box")
        assert odd.reachable and odd.presence is not None and odd.presence.presence is None
    finally:
        await bus.close()
        await publisher.close()


async def test_a_dashboard_holds_its_name_while_attached_and_lets_it_go_on_close(
    nats_server: NatsServer,
) -> None:
    bus = AttachedBus(BusTarget(nats_server.url))
    await bus.open()
    observer = await client(nats_server)
    names = await observer.jetstream().key_value(NAMES_BUCKET)
    try:
        held = NameClaim.model_validate_json((await names.get(bus.name)).value or b"")
        assert (held.kind, held.pid, held.machine) == ("dashboard", os.getpid(), machine())
    finally:
        await bus.close()
    with pytest.raises(KeyNotFoundError):
        await names.get(bus.name)
    await observer.close()


async def test_a_dashboard_name_another_process_holds_is_refused_with_the_holder(
    nats_server: NatsServer,
) -> None:
    """Another live process of this machine (the server's, here) holds the name."""
    assert nats_server.process is not None
    holder = NameClaim(
        name="ana-laptop",
        kind="dashboard",
        pid=nats_server.process.pid,
        machine=machine(),
        user="ana",
        since=now(),
    )
    observer = await client(nats_server)
    names = await bucket(observer.jetstream(), NAMES_BUCKET, 30.0)
    await names.put("ana-laptop", holder.model_dump_json(by_alias=True).encode())
    bus = AttachedBus(BusTarget(nats_server.url), name="ana-laptop")
    with pytest.raises(BusUnreachable) as refused:
        await bus.open()
    assert f"in use on the bus by a dashboard (pid {nats_server.process.pid}" in str(refused.value)
    assert "user ana" in str(refused.value)
    assert not bus.is_open
    free = AttachedBus(BusTarget(nats_server.url))  # a name of its own is held beside it
    await free.open()
    await free.close()
    await observer.close()
