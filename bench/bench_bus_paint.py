"""From committed on a host to painted in an attached dashboard: 100 sessions at 10,000 events/s.

A real nats-server (JetStream) on a free port; a child process plays the host: it publishes
100 sessions' log lines round-robin, paced to 10,000 events a second (100 every 10 ms), each
the way a host publishes an event once it is in its log (the exact line, on the session's
subject, with its `Nats-Msg-Id`), and notes the moment of each publish (the commit: a host
publishes right after the append). The dashboard is the real `AttachedApp`, headless, attached
to that server before the first event; the paint probes are the live dashboard's
(`bench_live_dashboard._Probes`: an event counts as painted when a frame rendering the event
count that includes it is handed to the terminal, the frame turned into the escape codes a
terminal would get). Both processes read the same clock (`CLOCK_MONOTONIC`, which
`time.perf_counter` reads on Linux), so lag = painted - committed, per event.

The baseline, from the same run, is the pacing itself: the 10 ms between two batches. Target:
p99 <= 300 ms, and every event painted in the end.

    python bench/bench_bus_paint.py [--sessions 100] [--rate 10000] [--seconds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bus_attach import _logs
from bench_bus_host import _server
from bench_live_dashboard import _percentile, _Probes
from bench_log import Row

from agent_tui.bus.protocol import ALL_EVENTS, DUPLICATE_WINDOW_S, MSG_ID_HEADER, STREAM, events_subject

SESSIONS = 100
RATE = 10_000
SECONDS = 10
TICK_S = 0.01
TARGET_P99_MS = 300.0
SIZE = (120, 40)


# -- the host (a child process) ----------------------------------------------------------------


async def _play_host(url: str, logs: list[Path], rate: int, out: Path) -> None:
    """Publish the logs' lines round-robin at `rate` events/s; write each publish's moment."""
    import nats

    connection = await nats.connect(url)
    sessions = [(path.stem, path.read_bytes().splitlines()) for path in logs]
    per_tick = max(1, round(rate * TICK_S))
    order = [
        (n, sequence)
        for sequence in range(max(len(lines) for _, lines in sessions))
        for n in range(len(sessions))
    ]
    order = [(n, sequence) for n, sequence in order if sequence < len(sessions[n][1])]
    committed: dict[str, float] = {}
    started = time.perf_counter()
    for tick, first in enumerate(range(0, len(order), per_tick)):
        due = started + tick * TICK_S
        wait = due - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        for n, index in order[first : first + per_tick]:
            session_id, lines = sessions[n]
            key = f"{session_id}:{index + 1}"
            committed[key] = time.perf_counter()
            await connection.publish(
                events_subject("bench-host", session_id), lines[index], headers={MSG_ID_HEADER: key}
            )
        await connection.flush()
    await connection.close()
    out.write_text(json.dumps({"committed": committed, "seconds": time.perf_counter() - started}))


# -- the dashboard -----------------------------------------------------------------------------


async def _attach(url: str, host_command: list[str], total: int) -> tuple[list[str], _Probes]:
    """Attach, start the host, and watch every event until it is painted. Returns the events'
    keys in fold order and the probes (whose `lags` are then each event's paint moment)."""
    import nats

    from agent_tui.bus.attach import AttachedBus
    from agent_tui.bus.attach_target import BusTarget
    from agent_tui.tui.attached_app import AttachedApp

    connection = await nats.connect(url)
    await connection.jetstream().add_stream(
        name=STREAM, subjects=[ALL_EVENTS], duplicate_window=DUPLICATE_WINDOW_S
    )
    await connection.close()

    bus = AttachedBus(BusTarget(url))
    app = AttachedApp(bus)
    probes = _Probes()
    keys: list[str] = []

    def folded(event: object) -> None:
        if event is not None:
            keys.append(f"{event.session_id}:{event.sequence}")  # type: ignore[attr-defined]
            probes.stored.append(0.0)  # so a paint notes its own moment as the event's "lag"

    async with app.run_test(size=SIZE) as pilot:
        while not bus.live:
            await pilot.pause(0.01)
        await pilot.pause()
        probes.install(app)
        bus.listen(folded)
        host = await asyncio.create_subprocess_exec(*host_command)
        while len(keys) < total or probes.painted_upto < total:
            if host.returncode is not None and host.returncode != 0:
                raise RuntimeError(f"the host process failed ({host.returncode})")
            await asyncio.sleep(0.05)  # the app paints on its own pace, as in a terminal
        await host.wait()
        await pilot.press("q")
    return keys, probes


def bench_bus_paint(sessions: int = SESSIONS, rate: int = RATE, seconds: int = SECONDS) -> list[Row]:
    per_session = max(1, rate * seconds // sessions)
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-paint-") as tmp:
        root = Path(tmp)
        logs = _logs(root, per_session * sessions, sessions)
        total = sum(len(path.read_bytes().splitlines()) for path in logs)
        process, url = _server(root / "store")
        out = root / "committed.json"
        host = [sys.executable, __file__, "--play-host", url, str(out), str(rate), *map(str, logs)]
        try:
            keys, probes = asyncio.run(_attach(url, host, total))
        finally:
            process.kill()
            process.wait()
        played = json.loads(out.read_text())
    committed: dict[str, float] = played["committed"]
    lags = [painted - committed[key] for key, painted in zip(keys, probes.lags, strict=True)]
    achieved = total / played["seconds"]
    p50, p99 = _percentile(lags, 0.50) * 1000, _percentile(lags, 0.99) * 1000
    floor_ms = TICK_S * 1000
    return [
        Row(
            f"attached: committed on the host -> painted, p99 ({sessions} sessions, {achieved:,.0f} ev/s)",
            p99,
            floor_ms,
            p99 / floor_ms,
            f"<= {TARGET_P99_MS:.0f} ms",
            p99 <= TARGET_P99_MS and len(lags) == total,
            "ms",
        ),
        Row("... p50", p50, floor_ms, p50 / floor_ms, "informational", True, "ms"),
        Row(
            "... worst", max(lags) * 1000, floor_ms, max(lags) * 1000 / floor_ms, "informational", True, "ms"
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    from bench_log import format_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--rate", type=int, default=RATE)
    parser.add_argument("--seconds", type=int, default=SECONDS)
    parser.add_argument("--play-host", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.play_host:
        url, out, rate, *logs = args.play_host
        asyncio.run(_play_host(url, [Path(log) for log in logs], int(rate), Path(out)))
        return 0
    rows = bench_bus_paint(args.sessions, args.rate, args.seconds)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
