"""Generated runs on a real JetStream server: a dashboard that attaches mid-run ends in the same
state as one attached from the start, and as the replay of the logs, whatever the interleaving
of the sessions, wherever the late one attaches, and whatever a host repeats or sends late."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support_bus import (
    CheckedFold,
    ensure_stream,
    log_lines,
    logs_of_a_real_run,
    publish_lines,
    replay_dump,
    until,
)
from support_nats import NatsServer, nats_server

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusTarget
from agent_tui.bus.protocol import STREAM, events_subject

__all__ = ["nats_server"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The logs of two real runs (one allowing, one denying), the sessions' ids all distinct."""
    allowed = logs_of_a_real_run(tmp_path_factory.mktemp("allow") / "sessions", approve="allow")
    denied = logs_of_a_real_run(tmp_path_factory.mktemp("deny") / "sessions", approve="deny")
    return allowed + denied


@st.composite
def published(draw: st.DrawFn, sessions: list[list[bytes]]) -> tuple[list[bytes], list[bytes], int]:
    """An interleaving of the sessions' lines (each session's in order), some of them late (a
    republish after a hole) or repeated (a republish past the duplicate window), and where the
    late dashboard attaches. Returns (what the host publishes, in order; the repeats; the cut)."""
    cursors = [0] * len(sessions)
    order: list[bytes] = []
    while any(c < len(s) for c, s in zip(cursors, sessions, strict=True)):
        open_ = [i for i, s in enumerate(sessions) if cursors[i] < len(s)]
        i = draw(st.sampled_from(open_))
        order.append(sessions[i][cursors[i]])
        cursors[i] += 1
    late = draw(st.lists(st.integers(0, len(order) - 1), max_size=5, unique=True))
    for index in sorted(late, reverse=True):  # a line that comes after the next ones (a hole)
        line = order.pop(index)
        order.insert(min(len(order), index + draw(st.integers(1, 20))), line)
    repeats = draw(st.lists(st.sampled_from(order), max_size=10))
    cut = draw(st.integers(0, len(order)))
    return order, repeats, cut


async def _publish_raw(js: object, host: str, lines: list[bytes]) -> None:
    """Lines without message ids: the stream keeps them even when they repeat."""
    for line in lines:
        await js.publish(events_subject(host, orjson.loads(line)["sessionId"]), line)  # type: ignore[attr-defined]


async def _one_run(
    url: str, order: list[bytes], repeats: list[bytes], cut: int
) -> tuple[object, object, CheckedFold, CheckedFold]:
    connection = await nats.connect(url)
    js = connection.jetstream()
    try:
        await js.delete_stream(STREAM)
    except Exception:
        pass
    await ensure_stream(js)
    early_fold, late_fold = CheckedFold(), CheckedFold()
    early = AttachedBus(BusTarget(url), fold=early_fold)
    late = AttachedBus(BusTarget(url), fold=late_fold)
    await early.open()
    try:
        await _publish_raw(js, "host-a", order[:cut] + repeats[: len(repeats) // 2])
        await late.open()  # attaches mid-run
        await _publish_raw(js, "host-a", order[cut:] + repeats[len(repeats) // 2 :])
        total = len(order)
        await until(early, lambda: early_fold.folded >= total, "the early dashboard folded every event")
        await until(late, lambda: late_fold.folded >= total, "the late dashboard folded every event")
        return early.state.to_state_dump(), late.state.to_state_dump(), early_fold, late_fold
    finally:
        await late.close()
        await early.close()
        await connection.close()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_late_dashboard_ends_as_one_attached_from_the_start(
    nats_server: NatsServer, runs: list[Path], data: st.DataObject
) -> None:
    sessions = [log_lines([path]) for path in runs]
    order, repeats, cut = data.draw(published(sessions))
    early, late, early_fold, late_fold = asyncio.run(_one_run(nats_server.url, order, repeats, cut))
    assert not early_fold.bad and not late_fold.bad
    assert early == late
    assert orjson.loads(orjson.dumps(late)) == _replayed(runs)


_REPLAYED: dict[tuple[Path, ...], object] = {}


def _replayed(runs: list[Path]) -> object:
    key = tuple(runs)
    if key not in _REPLAYED:
        _REPLAYED[key] = replay_dump(runs)
    return _REPLAYED[key]


def test_the_publisher_keeps_message_ids(nats_server: NatsServer, runs: list[Path]) -> None:
    """The republish with message ids the host really does is dropped by the stream itself."""

    async def go() -> tuple[int, int]:
        connection = await nats.connect(nats_server.url)
        js = connection.jetstream()
        await ensure_stream(js)
        lines = log_lines(runs[:2])
        first = await publish_lines(js, "host-a", lines)
        again = await publish_lines(js, "host-a", lines)
        await connection.close()
        return first, again

    first, again = asyncio.run(go())
    assert (first, again) == (len(log_lines(runs[:2])), 0)
