"""Attaching a dashboard to a stream of 1,000,000 events (100 sessions of 10,000): how long until
the first screen shows sessions, and until it is live (its state holds everything the stream
held, folded, and new events show as they happen).

The dashboard runs headless (Textual's test driver), painting on its own timers; the driver
checks for the first screen by waiting for every widget to take its messages and painting, a
hundred times a second, and only until the first screen is there (done all along, that check
costs the fold about a twentieth of its time).

The stream is written as a host writes it, and the host's state snapshot of it (the whole
stream) is in the bucket: the dashboard loads it and folds what follows (nothing, here). The
third row attaches again without the snapshot, folding every event of the stream.

The baseline is the replay's fold of the same events from their JSONL logs (what `replay --dump
state` does), in the same run. Run alone: `python bench/bench_bus_attach.py [--events N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import nats
from bench_bus_host import _server
from bench_log import SESSION_ID, Row, write_log

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusTarget
from agent_tui.bus.host_link import PUBLISH_WINDOW
from agent_tui.bus.protocol import ALL_EVENTS, DUPLICATE_WINDOW_S, MSG_ID_HEADER, STREAM, events_subject
from agent_tui.bus.snapshots import SnapshotKeeper
from agent_tui.reducer import project_state
from agent_tui.replay.sources import replay_files

SESSIONS = 100
HOST = "bench-host"
FIRST_SCREEN_X = 1.0
"""First screen: at most the replay's fold of the same logs."""
LIVE_X = 4.0
"""Fully live: at most four times the replay's fold."""


def _logs(root: Path, events: int, sessions: int = SESSIONS) -> list[Path]:
    per = events // sessions
    template = root / "template.jsonl"
    write_log(template, per)
    data = template.read_bytes()
    paths = []
    for n in range(sessions):
        path = root / f"sess_bench{n:04d}.jsonl"
        path.write_bytes(data.replace(SESSION_ID.encode(), f"sess_bench{n:04d}".encode()))
        paths.append(path)
    return paths


async def _publish(url: str, paths: list[Path]) -> int:
    """Every line into the stream, as a host does (asynchronous publishes, a window of them
    waiting for their acknowledgement), each acknowledgement heard by the host's snapshot keeper,
    which writes its snapshot of the whole stream at the end."""
    connection = await nats.connect(url)
    js = connection.jetstream(publish_async_max_pending=PUBLISH_WINDOW * 2)
    info = await js.add_stream(name=STREAM, subjects=[ALL_EVENTS], duplicate_window=DUPLICATE_WINDOW_S)
    keeper = SnapshotKeeper(HOST, lambda: js, every_events=10**9, every_s=1e9)
    keeper.began(info)
    total = 0
    window: deque[tuple[asyncio.Future[Any], bytes]] = deque()

    def settle(future: asyncio.Future[Any], line: bytes) -> None:
        keeper.stored(int(future.result().seq), line)

    for path in paths:
        session_id = path.stem
        subject = events_subject(HOST, session_id)
        for sequence, line in enumerate(path.read_bytes().splitlines(), start=1):
            future = await js.publish_async(
                subject, line, headers={MSG_ID_HEADER: f"{session_id}:{sequence}"}
            )
            window.append((future, line))
            total += 1
            if len(window) >= PUBLISH_WINDOW:
                settle(*(await _oldest(window)))
    while window:
        settle(*(await _oldest(window)))
    assert await keeper.write(), "the bench's snapshot was not written"
    await connection.close()
    return total


async def _oldest(window: deque[tuple[asyncio.Future[Any], bytes]]) -> tuple[asyncio.Future[Any], bytes]:
    future, line = window.popleft()
    await future
    return future, line


async def _attach(url: str, total: int, *, snapshots: bool = True) -> tuple[float, float]:
    from agent_tui.tui.attached_app import AttachedApp

    bus = AttachedBus(BusTarget(url), snapshots=snapshots)
    app = AttachedApp(bus)
    start = time.perf_counter()
    first = live = 0.0
    async with app.run_test(size=(120, 40)) as pilot:
        while not first and not bus.live:
            await pilot.pause(0.01)  # waits for the screen to take what is posted, and paints it
            if app.dashboard.session_tree.visible_ids:
                first = time.perf_counter() - start
        # From here on the app paints on its own timers, as in a terminal: the pilot's pause
        # (it makes every widget answer a message, a hundred times a second) would take the
        # fold's time for a driver's work.
        while not (bus.live and bus.state.event_count >= total):
            await asyncio.sleep(0.01)
        live = time.perf_counter() - start
        first = first or live
        assert bus.snapshot_seq == (total if snapshots else 0), "the snapshot was not used as it should be"
        await pilot.press("q")
    return first, live


def bench_bus_attach(events: int = 1_000_000) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-attach-") as tmp:
        root = Path(tmp)
        paths = _logs(root, events)
        process, url = _server(root / "store")
        try:
            total = asyncio.run(_publish(url, paths))
            started = time.perf_counter()
            project_state(replay_files(paths))
            replayed = time.perf_counter() - started
            first, live = asyncio.run(_attach(url, total))
            _, live_all = asyncio.run(_attach(url, total, snapshots=False))
        finally:
            process.kill()
            process.wait()
    return [
        Row(
            name=f"attach to {total:,} events: first screen",
            measured=first,
            baseline=replayed,
            ratio=first / replayed,
            target=f"<= {FIRST_SCREEN_X:.0f}x",
            passed=first <= FIRST_SCREEN_X * replayed,
            unit="s",
        ),
        Row(
            name="... fully live (from the host's snapshot)",
            measured=live,
            baseline=replayed,
            ratio=live / replayed,
            target=f"<= {LIVE_X:.0f}x",
            passed=live <= LIVE_X * replayed,
            unit="s",
        ),
        Row(
            name="... fully live, folding the whole stream",
            measured=live_all,
            baseline=replayed,
            ratio=live_all / replayed,
            target="(for comparison)",
            passed=True,
            unit="s",
        ),
    ]


if __name__ == "__main__":
    from bench_log import format_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    print(format_table(bench_bus_attach(parser.parse_args().events)))
