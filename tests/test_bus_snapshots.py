"""State snapshots on a real JetStream server: a dashboard that starts from a host's snapshot ends
in the state of one that folds the whole stream (and of the replay of the logs), wherever the
snapshot was taken; one it cannot check (garbled, forged, oversized, of another format, of
another stream, with another host's events before it) is said once and the stream is read from
its start, never a traceback, never another state."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import nats
import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from nats.js import JetStreamContext
from support_bus import (
    SCENARIO,
    CheckedFold,
    as_another_host,
    ensure_stream,
    log_lines,
    logs_of_a_real_run,
    replay_dump,
    until,
)
from support_bus_host import host_env, start_agent_tui
from support_bus_roles import password, roles_config
from support_nats import NatsServer, nats_server

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusTarget
from agent_tui.bus.protocol import MSG_ID_HEADER, STREAM, events_subject, inbox_prefix, message_id
from agent_tui.bus.snapshots import (
    MAX_SNAPSHOT_BYTES,
    SNAPSHOT_BUCKET,
    SnapshotHead,
    SnapshotKeeper,
    snapshot_bucket,
)
from agent_tui.events import Event
from agent_tui.reducer import DashboardState

__all__ = ["nats_server"]

HOST = "host-a"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The logs of two real runs (one allowing, one denying), the sessions' ids all distinct."""
    allowed = logs_of_a_real_run(tmp_path_factory.mktemp("allow") / "sessions", approve="allow")
    denied = logs_of_a_real_run(tmp_path_factory.mktemp("deny") / "sessions", approve="deny")
    return allowed + denied


async def publish(
    js: JetStreamContext, lines: list[bytes], keeper: SnapshotKeeper | None, host: str = HOST
) -> None:
    """Each line as a host publishes it (a message id), its acknowledgement heard by `keeper`."""
    for start in range(0, len(lines), 256):
        chunk = lines[start : start + 256]
        acks = await asyncio.gather(
            *(
                js.publish(
                    events_subject(host, (fields := orjson.loads(line))["sessionId"]),
                    line,
                    headers={MSG_ID_HEADER: message_id(fields["sessionId"], fields["sequence"])},
                )
                for line in chunk
            )
        )
        if keeper is not None:
            for ack, line in zip(acks, chunk, strict=True):
                if not ack.duplicate:
                    keeper.stored(ack.seq, line)


class PrimedFold(CheckedFold):
    """`CheckedFold` for a dashboard that may start from a snapshot: a session the state holds
    before its first folded event goes on from the snapshot's last sequence."""

    def __call__(self, state: DashboardState, event: Event) -> object:
        session = state.sessions.get(event.session_id)
        if event.session_id not in self.last and session is not None:
            self.last[event.session_id] = session.last_sequence
        return super().__call__(state, event)


async def attached(url: str, total: int, *, snapshots: bool = True) -> tuple[AttachedBus, CheckedFold]:
    """A dashboard attached until it is live and holds `total` events."""
    fold = PrimedFold()
    bus = AttachedBus(BusTarget(url), fold=fold, snapshots=snapshots)
    await bus.open()
    await until(bus, lambda: bus.live and bus.state.event_count >= total, "the dashboard holds every event")
    return bus, fold


async def fresh_stream(url: str) -> tuple[nats.NATS, JetStreamContext, SnapshotKeeper]:
    connection = await nats.connect(url)
    js = connection.jetstream()
    for name in (STREAM, f"KV_{SNAPSHOT_BUCKET}"):
        try:
            await js.delete_stream(name)
        except Exception:
            pass
    await ensure_stream(js)
    keeper = SnapshotKeeper(HOST, lambda: js)
    keeper.began(await js.stream_info(STREAM))
    return connection, js, keeper


@st.composite
def interleaved(draw: st.DrawFn, sessions: list[list[bytes]]) -> tuple[list[bytes], int]:
    """An interleaving of the sessions' lines (each session's in order) and where the snapshot is
    taken."""
    cursors = [0] * len(sessions)
    order: list[bytes] = []
    while any(c < len(s) for c, s in zip(cursors, sessions, strict=True)):
        i = draw(st.sampled_from([i for i, s in enumerate(sessions) if cursors[i] < len(s)]))
        order.append(sessions[i][cursors[i]])
        cursors[i] += 1
    return order, draw(st.integers(1, len(order)))


async def _from_a_snapshot(
    url: str, order: list[bytes], cut: int
) -> tuple[DashboardState, DashboardState, int, int]:
    connection, js, keeper = await fresh_stream(url)
    try:
        await publish(js, order[:cut], keeper)
        assert await keeper.write()
        await publish(js, order[cut:], keeper)  # the tail, after the snapshot
        snapped, snapped_fold = await attached(url, len(order))
        whole, _ = await attached(url, len(order), snapshots=False)
        try:
            assert not snapped_fold.bad and not snapped.problems, snapped.problems
            return snapped.state, whole.state, snapped.snapshot_seq, snapped_fold.folded
        finally:
            await snapped.close()
            await whole.close()
    finally:
        await connection.close()


@settings(
    max_examples=5,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # each example is a real server's work: no shrinking
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_a_snapshot_and_its_tail_fold_to_the_whole_stream(
    nats_server: NatsServer, runs: list[Path], data: st.DataObject
) -> None:
    order, cut = data.draw(interleaved([log_lines([path]) for path in runs]))
    snapped, whole, snapshot_seq, folded = asyncio.run(_from_a_snapshot(nats_server.url, order, cut))
    assert snapshot_seq == cut
    assert folded == len(order) - cut  # only the tail was folded
    assert snapped == whole
    assert snapped.pending_permissions() == whole.pending_permissions()
    assert snapped.roots() == whole.roots()
    assert orjson.loads(orjson.dumps(snapped.to_state_dump())) == replay_dump(runs)


Tamper = Callable[[JetStreamContext, nats.NATS, list[Path]], Awaitable[None]]


async def _put_state(js: JetStreamContext, data: bytes, **head_fields: object) -> None:
    """A snapshot of `data` under HOST's keys, its head as the host wrote it but for `head_fields`."""
    bucket = await snapshot_bucket(js)
    head = SnapshotHead.model_validate_json((await bucket.get(f"{HOST}.head")).value or b"")
    await bucket.put(f"{HOST}.part-0", data)
    fields = {**head.model_dump(), "size": len(data), "parts": [hashlib.sha256(data).hexdigest()]}
    await bucket.put(f"{HOST}.head", orjson.dumps({**fields, **head_fields}))


async def garbled_part(js: JetStreamContext, _c: nats.NATS, _r: list[Path]) -> None:
    await (await snapshot_bucket(js)).put(f"{HOST}.part-0", b"\x00garbage")


async def not_json(js: JetStreamContext, _c: nats.NATS, _r: list[Path]) -> None:
    await _put_state(js, b"{not json")


async def wrong_shape(js: JetStreamContext, _c: nats.NATS, _r: list[Path]) -> None:
    document = orjson.loads(
        b"".join([(await (await snapshot_bucket(js)).get(f"{HOST}.part-0")).value or b""])
    )
    document["state"][1] = "many"  # event_count: a string
    await _put_state(js, orjson.dumps(document))


async def old_format(js: JetStreamContext, _c: nats.NATS, _r: list[Path]) -> None:
    await _put_state(js, orjson.dumps({"format": 0, "schema": "x", "state": []}), format=0)


async def old_schema(js: JetStreamContext, _c: nats.NATS, _r: list[Path]) -> None:
    await _put_state(js, orjson.dumps({"format": 1, "schema": "0123", "state": []}))


async def oversized(js: JetStreamContext, _c: nats.NATS, _r: list[Path]) -> None:
    bucket = await snapshot_bucket(js)
    head = orjson.loads((await bucket.get(f"{HOST}.head")).value or b"")
    await bucket.put(f"{HOST}.head", orjson.dumps({**head, "size": MAX_SNAPSHOT_BYTES + 1}))


async def huge_head(js: JetStreamContext, _c: nats.NATS, _r: list[Path]) -> None:
    bucket = await snapshot_bucket(js)
    head = orjson.loads((await bucket.get(f"{HOST}.head")).value or b"")
    await bucket.put(f"{HOST}.head", orjson.dumps({**head, "padding": "x" * 100_000}))


async def other_host(js: JetStreamContext, _c: nats.NATS, _r: list[Path]) -> None:
    bucket = await snapshot_bucket(js)
    head = orjson.loads((await bucket.get(f"{HOST}.head")).value or b"")
    await bucket.put(f"{HOST}.head", orjson.dumps({**head, "host": "host-b"}))


async def other_stream(js: JetStreamContext, _c: nats.NATS, _r: list[Path]) -> None:
    bucket = await snapshot_bucket(js)
    head = orjson.loads((await bucket.get(f"{HOST}.head")).value or b"")
    await bucket.put(f"{HOST}.head", orjson.dumps({**head, "stream": f"{STREAM}@2020-01-01T00:00:00Z"}))


async def another_host_first(js: JetStreamContext, _c: nats.NATS, runs: list[Path]) -> None:
    """Another host's events were in the stream before the snapshot's end: the head lies that the
    start is host-a's alone (its sequences moved past them)."""
    await publish(js, as_another_host(log_lines(runs[:1])), None, host="host-b")
    info = await js.stream_info(STREAM)
    bucket = await snapshot_bucket(js)
    head = orjson.loads((await bucket.get(f"{HOST}.head")).value or b"")
    await bucket.put(f"{HOST}.head", orjson.dumps({**head, "last_seq": info.state.last_seq}))


TAMPERS: list[tuple[Tamper, str]] = [
    (garbled_part, "part 0 is missing or does not match"),
    (not_json, "not JSON"),
    (wrong_shape, "event_count: str where int belongs"),
    (old_format, "format 0, this dashboard reads format 1"),
    (old_schema, "written in format 1 (schema 0123)"),
    (oversized, "says it holds"),
    (huge_head, "its keys hold over 65,536 bytes"),
    (other_host, "names host 'host-b'"),
    (other_stream, "made from another stream"),
    (another_host_first, "other hosts' events are in the stream before"),
]


@pytest.mark.parametrize(("tamper", "said"), TAMPERS, ids=[t.__name__ for t, _ in TAMPERS])
def test_a_snapshot_that_does_not_check_out_is_said_and_the_stream_is_read_from_its_start(
    nats_server: NatsServer, runs: list[Path], tamper: Tamper, said: str
) -> None:
    lines = log_lines(runs)

    async def go() -> tuple[DashboardState, DashboardState, list[str], int]:
        connection, js, keeper = await fresh_stream(nats_server.url)
        try:
            await publish(js, lines, keeper)
            assert await keeper.write()
            await tamper(js, connection, runs)
            total = (await js.stream_info(STREAM)).state.messages
            bus, fold = await attached(nats_server.url, total)
            whole, _ = await attached(nats_server.url, total, snapshots=False)
            try:
                assert bus.snapshot_seq == 0 and fold.folded == total  # folded from the start
                return bus.state, whole.state, bus.problems, total
            finally:
                await bus.close()
                await whole.close()
        finally:
            await connection.close()

    state, whole, problems, _ = asyncio.run(go())
    assert state == whole
    ignored = [p for p in problems if "snapshot" in p]
    assert len(ignored) == 1 and said in ignored[0] and "read from its start" in ignored[0], problems
    assert "Traceback" not in ignored[0]


def test_a_host_whose_start_is_not_its_own_writes_no_snapshot(
    nats_server: NatsServer, runs: list[Path]
) -> None:
    """Another publisher's message between the host's: the keeper stops, and the dashboard reads
    the stream from its start without a word (there is no snapshot to doubt)."""
    lines = log_lines(runs[:1])

    async def go() -> tuple[bool, AttachedBus]:
        connection, js, keeper = await fresh_stream(nats_server.url)
        try:
            await publish(js, lines[:3], keeper)
            await publish(js, as_another_host(lines[:1]), None, host="host-b")
            await publish(js, lines[3:], keeper)
            wrote = await keeper.write()
            bus, _ = await attached(nats_server.url, len(lines) + 1)
            await bus.close()
            return wrote, bus
        finally:
            await connection.close()

    wrote, bus = asyncio.run(go())
    assert not wrote and bus.snapshot_seq == 0 and not bus.problems


def test_with_the_documented_roles_a_host_writes_its_snapshot_and_a_watcher_starts_from_it(
    tmp_path: Path, runs: list[Path]
) -> None:
    """The host's own permissions are enough to make the bucket and write its keys; a watcher's
    are enough to read and check it (another host's events after it included); the server
    refuses nothing of it."""
    server = NatsServer(store=tmp_path / "store", config=roles_config(), log=tmp_path / "nats.log")
    server.start()
    lines = log_lines(runs[:2])
    later = as_another_host(log_lines(runs[2:3]))

    async def go() -> tuple[int, int, DashboardState, list[str]]:
        host = await nats.connect(
            server.url, user="buildbox", password=password("buildbox"), inbox_prefix=inbox_prefix("buildbox")
        )
        prod = await nats.connect(
            server.url, user="prod", password=password("prod"), inbox_prefix=inbox_prefix("prod")
        )
        try:
            js = host.jetstream()
            await ensure_stream(js)
            keeper = SnapshotKeeper("buildbox", lambda: js)
            keeper.began(await js.stream_info(STREAM))
            await publish(js, lines, keeper, host="buildbox")
            assert await keeper.write()
            await publish(prod.jetstream(), later, None, host="prod")
            target = BusTarget(server.url, {"user": "watch", "password": password("watch")})
            bus = AttachedBus(target, fold=PrimedFold())
            await bus.open()
            total = len(lines) + len(later)
            await until(bus, lambda: bus.live and bus.state.event_count >= total, "every event")
            await bus.close()
            return bus.snapshot_seq, keeper.last_seq, bus.state, bus.problems
        finally:
            await host.close()
            await prod.close()

    try:
        snapshot_seq, written, state, problems = asyncio.run(go())
        assert snapshot_seq == written == len(lines), problems
        assert not [p for p in problems if "snapshot" in p], problems
        assert orjson.loads(orjson.dumps(state.to_state_dump())) == replay_dump(
            _as_files(tmp_path, lines + later)
        )
        assert server.log is not None
        refused = [line for line in server.log.read_text().splitlines() if "Violation" in line]
        # (a watcher's own probes, its name and its control subjects, are refused as documented)
        assert [line for line in refused if "snapshots" in line or "user:watch" not in line] == []
    finally:
        server.stop()


def _as_files(folder: Path, lines: list[bytes]) -> list[Path]:
    """The lines as one log per session (what `replay` reads)."""
    by_session: dict[str, list[bytes]] = {}
    for line in lines:
        by_session.setdefault(orjson.loads(line)["sessionId"], []).append(line)
    paths = []
    for session_id, session_lines in by_session.items():
        path = folder / "logs" / f"{session_id}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"\n".join(session_lines) + b"\n")
        paths.append(path)
    return paths


def test_a_real_host_leaves_a_snapshot_that_a_dashboard_starts_from(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    """`agent-tui run --bus` on a new stream writes its snapshot as it stops; a dashboard attached
    afterwards starts from it, folds nothing more, and shows what the replay of the logs shows."""
    sessions = tmp_path / "sessions"
    args = ["run", str(SCENARIO), "--sessions-dir", str(sessions), "--approve", "allow"]
    args += ["--quiet", "--workspace", str(tmp_path / "ws"), "--bus", nats_server.url, "--host", "laptop"]
    done = start_agent_tui(args, host_env(tmp_path))
    assert done.wait(timeout=120) == 0, done.stderr.read() if done.stderr else ""

    async def go() -> tuple[int, int, object, list[str], int]:
        connection = await nats.connect(nats_server.url)
        try:
            stored = (await connection.jetstream().stream_info(STREAM)).state.last_seq
        finally:
            await connection.close()
        bus, fold = await attached(nats_server.url, stored)
        await bus.close()
        return bus.snapshot_seq, stored, bus.state.to_state_dump(), bus.problems, fold.folded

    snapshot_seq, stored, dump, problems, folded = asyncio.run(go())
    assert snapshot_seq == stored and folded == 0 and not problems
    assert orjson.loads(orjson.dumps(dump)) == replay_dump(sorted(sessions.glob("*.jsonl")))
