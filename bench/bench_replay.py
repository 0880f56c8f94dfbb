"""Benchmark of the replay scrubber on big logs, driven headless as a user would drive it.

Each figure comes from a fresh child process running the real app (`ReplayApp.run_test`), beside
a baseline measured in the same run:
- first screen: from starting the process to the first content painted (a first look at the end
  of the log) on the big log, against the same app on a 10-event log (the floor: Python, imports,
  Textual); target 1 s on the big log;
- indexing: the thread's whole checkpointed fold, against `project_state` over the same log
  (informational: nothing waits for it);
- seek: a move to a random position until its frame is composed (state rebuilt from the nearest
  checkpoint, detail and bar laid out and painted), median, p99 and worst, against one step
  forward (mostly the paint); targets 30 ms, 100 ms, 250 ms;
- memory: the scrubber's peak RSS after indexing and the seeks, against the app on the 10-event
  log; target 200 MB at 1M events (300 MB at 3M with `--big`);
- follow: a writer process appends to 200 logs at once (ts = when written) while the scrubber
  follows the directory; how old the newest event on screen is, sampled after each paint, p50 and
  p99, against a bare loop that only polls (every 50 ms) and reads the same files; target 300 ms
  at p99, with every event shown in the end.

    python bench/bench_replay.py --events 1000000 [--quick] [--big]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_log import SESSION_ID, Row, _session, format_table, write_log

SEEKS = 200
FOLLOW_FILES = 200
FOLLOW_RATE = 30_000  # events per second over all files, about what the live dashboard sustains
FOLLOW_SECONDS = 8.0
TINY_EVENTS = 10


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def _peak_mb() -> float:
    with open("/proc/self/status") as status:
        return int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) / 1024


# -- child processes ---------------------------------------------------------------------------


async def _first_screen(paths: list[Path]) -> None:
    from agent_tui.tui.app import ReplayApp

    app = ReplayApp(paths)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        while not (screen.previewing or screen.loaded):
            await asyncio.sleep(0.002)
        # Compose the frame now (pilot.pause would wait for the indexing thread to go idle).
        await pilot._wait_for_screen()
        screen._on_timer_update()
        print("painted", flush=True)


async def _painted(pilot: Any, act: Any) -> float:
    """Seconds from `act()` to the frame composed: the screen's messages handled, its layout and
    paint done (twice: the detail scrolls after the first refresh). Textual's own update timer,
    at 60 Hz, would add up to 16 ms in a terminal."""
    began = time.perf_counter()
    act()
    screen = pilot.app.screen
    for _ in range(2):
        await pilot._wait_for_screen()
        screen._on_timer_update()
    return time.perf_counter() - began


async def _scrub(paths: list[Path]) -> dict[str, Any]:
    from agent_tui.tui.app import ReplayApp

    app = ReplayApp(paths)
    started = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        while not screen.loaded:
            await pilot.pause(0.02)
        indexed = time.perf_counter() - started
        assert screen.timeline is not None
        total = screen.timeline.total
        rng = random.Random(11)
        seeks: list[float] = []
        steps: list[float] = []
        await pilot.pause()
        for _ in range(SEEKS):
            position = rng.randrange(total)
            seeks.append(await _painted(pilot, partial(screen._move_to, position)))
            steps.append(await _painted(pilot, partial(screen._move_to, position + 1)))
            await pilot.pause(0)
    return {"index_s": indexed, "total": total, "seeks": seeks, "steps": steps, "peak_mb": _peak_mb()}


async def _follow(directory: Path, expected: int, seconds: float) -> dict[str, Any]:
    """Follow `directory` (created by the writer later); every ~20 ms, after the screen has
    painted, note how old the newest event on screen is."""
    from agent_tui.tui.app import ReplayApp

    lags: list[float] = []
    app = ReplayApp([], follow=True, watch_dir=directory)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.replay
        while not screen.loaded:
            await pilot.pause(0.01)
        print("ready", flush=True)
        deadline = time.monotonic() + seconds + 20
        while screen.position < _written(directory, expected) and time.monotonic() < deadline:
            await pilot.pause(0.02)
            event = screen.view.event if screen.view is not None else None
            if event is not None and not _written(directory, 0):
                lags.append(time.time() - _ts_seconds(event.ts))
        seen = screen.position
    return {"lags": lags, "seen": seen, "peak_mb": _peak_mb()}


def _written(directory: Path, otherwise: int) -> int:
    """How many events the writer wrote, once it has finished (it leaves a note); else `otherwise`."""
    note = directory.with_name(directory.name + ".written")
    return int(note.read_text() or otherwise) if note.exists() else otherwise


def _bare_follow(directory: Path, expected: int, seconds: float) -> dict[str, Any]:
    """The floor: poll the same files every 50 ms, read what was appended, note the newest ts."""
    print("ready", flush=True)
    offsets: dict[Path, int] = {}
    lags: list[float] = []
    seen = 0
    deadline = time.monotonic() + seconds + 20
    while seen < _written(directory, expected) and time.monotonic() < deadline:
        newest = ""
        for path in directory.glob("*.jsonl") if directory.is_dir() else ():
            size = path.stat().st_size
            start = offsets.get(path, 0)
            if size > start:
                with open(path, "rb") as handle:
                    handle.seek(start)
                    data = handle.read(size - start)
                end = data.rfind(b"\n") + 1
                offsets[path] = start + end
                seen += data.count(b"\n", 0, end)
                if end:
                    last = data[data.rfind(b"\n", 0, end - 1) + 1 : end]
                    newest = max(newest, json.loads(last)["ts"])
        if newest and not _written(directory, 0):
            lags.append(time.time() - _ts_seconds(newest))
        time.sleep(0.05)
    return {"lags": lags, "seen": seen}


def _ts_seconds(ts: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def _write_live(directory: Path, files: int, rate: int, seconds: float) -> int:
    """Append events to `files` logs at `rate` events/s in all for `seconds`; returns how many."""
    import orjson

    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(3)
    sessions = [_session(random.Random(k)) for k in range(files)]
    ids = [f"sess_live_{k:03d}" for k in range(files)]
    fds = [os.open(directory / f"{sid}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) for sid in ids]
    sequences = [0] * files
    written = 0
    tick = 0.01
    started = time.monotonic()
    try:
        while time.monotonic() - started < seconds:
            due = int((time.monotonic() - started + tick) * rate) - written
            now = time.time()
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"
            for _ in range(max(0, due)):
                k = rng.randrange(files)
                kind, turn_id, payload = next(sessions[k])
                sequences[k] += 1
                line = {
                    "v": 1,
                    "id": f"evt_{k}_{sequences[k]}",
                    "sessionId": ids[k],
                    "turnId": turn_id,
                    "sequence": sequences[k],
                    "ts": ts,
                    "type": kind,
                    "payload": payload,
                }
                os.write(fds[k], orjson.dumps(line) + b"\n")  # one write per event, as the engine
                written += 1
            time.sleep(tick)
    finally:
        for fd in fds:
            os.close(fd)
    return written


def _child(argv: list[str]) -> None:
    mode, *rest = argv
    if mode == "first-screen":
        asyncio.run(_first_screen([Path(p) for p in rest]))
    elif mode == "scrub":
        print(json.dumps(asyncio.run(_scrub([Path(p) for p in rest]))), flush=True)
    elif mode == "follow":
        print(json.dumps(asyncio.run(_follow(Path(rest[0]), int(rest[1]), float(rest[2])))), flush=True)
    elif mode == "bare-follow":
        print(json.dumps(_bare_follow(Path(rest[0]), int(rest[1]), float(rest[2]))), flush=True)
    elif mode == "write":
        print(_write_live(Path(rest[0]), int(rest[1]), int(rest[2]), float(rest[3])), flush=True)
    elif mode == "project-state":
        from agent_tui.reducer import project_state
        from agent_tui.replay.sources import replay_files

        started = time.perf_counter()
        project_state(replay_files([Path(p) for p in rest]))
        print(json.dumps({"seconds": time.perf_counter() - started}), flush=True)


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--child", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run_child(*args: str) -> dict[str, Any]:
    child = _spawn(*args)
    out, err = child.communicate()
    if child.returncode:
        raise RuntimeError(f"bench child {args[0]} failed: {err.strip()[-2000:]}")
    return json.loads(out.strip().splitlines()[-1])


def _first_screen_seconds(paths: list[Path]) -> float:
    """Best of three: process start to the first content painted."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        child = _spawn("first-screen", *map(str, paths))
        assert child.stdout is not None
        line = child.stdout.readline()
        elapsed = time.perf_counter() - started
        child.communicate()
        if line.strip() != "painted":
            raise RuntimeError(f"first-screen child failed: {child.stderr.read() if child.stderr else ''}")
        best = min(best, elapsed)
    return best


def _follow_figures(workdir: Path, seconds: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scrubber, then the bare loop, each following its own writer; each result says how
    many events its writer wrote (`written`)."""
    results = []
    for mode in ("follow", "bare-follow"):
        directory = workdir / f"{mode}-logs"
        shutil.rmtree(directory, ignore_errors=True)
        directory.with_name(directory.name + ".written").unlink(missing_ok=True)
        expected = int(FOLLOW_RATE * seconds * 2)  # until the writer says how many it wrote
        watcher = _spawn(mode, str(directory), str(expected), str(seconds))
        assert watcher.stdout is not None
        watcher.stdout.readline()  # "ready": the scrubber is up, the directory does not exist yet
        writer = _spawn("write", str(directory), str(FOLLOW_FILES), str(FOLLOW_RATE), str(seconds))
        out, err = writer.communicate()
        if writer.returncode:
            raise RuntimeError(f"writer failed: {err}")
        written = int(out.strip())
        note = directory.with_name(directory.name + ".written")
        note.with_suffix(".tmp").write_text(str(written))
        note.with_suffix(".tmp").replace(note)  # whole, or not there
        out, err = watcher.communicate()
        if watcher.returncode:
            raise RuntimeError(f"{mode} failed: {err.strip()[-2000:]}")
        results.append({**json.loads(out.strip().splitlines()[-1]), "written": written})
    return results[0], results[1]


def bench_replay(events: int, workdir: Path, *, quick: bool = False, big: bool = False) -> list[Row]:
    """Measure the scrubber on a log of `events` events under `workdir` (written if missing)."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"{SESSION_ID}.jsonl"
    if not path.exists() or path.read_bytes()[-1:] != b"\n" or _lines(path) != events:
        write_log(path, events)
    tiny = workdir / "tiny" / f"{SESSION_ID}.jsonl"
    tiny.parent.mkdir(exist_ok=True)
    write_log(tiny, TINY_EVENTS)
    rows: list[Row] = []
    label = f"{events / 1e6:g}M" if events >= 1_000_000 else f"{events:,}"

    first = _first_screen_seconds([path])
    floor = _first_screen_seconds([tiny])
    rows.append(
        Row(
            f"replay first screen ({label} events)",
            first * 1e3,
            floor * 1e3,
            first / floor,
            "<= 1000 ms",
            first <= 1.0,
            "ms",
        )
    )

    scrub = _run_child("scrub", str(path))
    plain = _run_child("project-state", str(path))["seconds"]
    rows.append(
        Row(
            "replay index + checkpoints (thread)",
            scrub["index_s"],
            plain,
            scrub["index_s"] / plain,
            "informational",
            True,
            "s",
        )
    )
    seeks = [s * 1e3 for s in scrub["seeks"]]
    steps = [s * 1e3 for s in scrub["steps"]]
    step = _percentile(steps, 0.5)
    for name, value, limit in (
        ("median", _percentile(seeks, 0.5), 30.0),
        ("p99", _percentile(seeks, 0.99), 100.0),
        ("worst", max(seeks), 250.0),
    ):
        rows.append(
            Row(
                f"replay seek + paint, {name}",
                value,
                step,
                value / step,
                f"<= {limit:g} ms",
                value <= limit,
                "ms",
            )
        )
    base = _run_child("scrub", str(tiny))["peak_mb"]
    rows.append(
        Row(
            f"replay scrubber peak RSS ({label})",
            scrub["peak_mb"],
            base,
            scrub["peak_mb"] / base,
            "<= 200 MB",
            scrub["peak_mb"] <= 200,
            "MB",
        )
    )
    if big:
        huge = workdir / "big" / f"{SESSION_ID}.jsonl"
        huge.parent.mkdir(exist_ok=True)
        write_log(huge, 3 * events)
        peak = _run_child("scrub", str(huge))["peak_mb"]
        rows.append(
            Row(
                f"replay scrubber peak RSS ({3 * events / 1e6:g}M)",
                peak,
                base,
                peak / base,
                "<= 300 MB",
                peak <= 300,
                "MB",
            )
        )

    seconds = 3.0 if quick else FOLLOW_SECONDS
    follow, bare = _follow_figures(workdir, seconds)
    written = follow["written"]
    for name, share in (("p50", 0.5), ("p99", 0.99)):
        lag = _percentile(follow["lags"], share) * 1e3
        floor_lag = _percentile(bare["lags"], share) * 1e3
        kept_up = follow["seen"] == written
        rows.append(
            Row(
                f"follow {FOLLOW_FILES} growing logs, lag {name} ({written / seconds:,.0f} ev/s)",
                lag,
                floor_lag,
                lag / floor_lag,
                "<= 300 ms",
                lag <= 300 and kept_up,
                "ms",
            )
        )
    return rows


def _lines(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 24), b""))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        _child(argv[1:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100,000 events and a short follow")
    parser.add_argument("--big", action="store_true", help="also the memory at 3x the events (slow)")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary directory")
    args = parser.parse_args(argv)
    events = 100_000 if args.quick else args.events
    if args.workdir is not None:
        rows = bench_replay(events, args.workdir, quick=args.quick, big=args.big)
    else:
        with tempfile.TemporaryDirectory(prefix="bench_replay_") as tmp:
            rows = bench_replay(events, Path(tmp), quick=args.quick, big=args.big)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
