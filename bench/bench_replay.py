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

    python bench/bench_replay.py --events 1000000 [--quick] [--big] [--many]

`--many` adds the same events in 200 logs (informational), `--big` the memory at 3x the events.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_log import SESSION_ID, Row, format_table, write_log
from replay_drive import write_sessions, written_note

DRIVE = Path(__file__).resolve().parent / "replay_drive.py"

FOLLOW_FILES = 200
FOLLOW_RATE = 30_000  # events per second over all files, about what the live dashboard sustains
FOLLOW_SECONDS = 8.0
TINY_EVENTS = 10


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(DRIVE), *args],
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
        written_note(directory).unlink(missing_ok=True)
        expected = int(FOLLOW_RATE * seconds * 2)  # until the writer says how many it wrote
        watcher = _spawn(mode, str(directory), str(expected), str(seconds))
        assert watcher.stdout is not None
        watcher.stdout.readline()  # "ready": the scrubber is up, the directory does not exist yet
        writer = _spawn("write", str(directory), str(FOLLOW_FILES), str(FOLLOW_RATE), str(seconds))
        out, err = writer.communicate()
        if writer.returncode:
            raise RuntimeError(f"writer failed: {err}")
        written = int(out.strip())
        note = written_note(directory)
        note.with_suffix(".tmp").write_text(str(written))
        note.with_suffix(".tmp").replace(note)  # whole, or not there
        out, err = watcher.communicate()
        if watcher.returncode:
            raise RuntimeError(f"{mode} failed: {err.strip()[-2000:]}")
        results.append({**json.loads(out.strip().splitlines()[-1]), "written": written})
    return results[0], results[1]


def bench_replay(
    events: int, workdir: Path, *, quick: bool = False, big: bool = False, many: bool = False
) -> list[Row]:
    """Measure the scrubber on a log of `events` events under `workdir` (written if missing);
    with `many`, also on the same number of events in 200 logs."""
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

    if many:
        paths = write_sessions(workdir / "many", events, FOLLOW_FILES)
        first = _first_screen_seconds(paths)
        rows.append(
            Row(
                f"replay first screen ({label} in 200 logs)",
                first * 1e3,
                floor * 1e3,
                first / floor,
                "informational",
                True,
                "ms",
            )
        )
        scrub = _run_child("scrub", *map(str, paths))
        seeks = [s * 1e3 for s in scrub["seeks"]]
        step = _percentile([s * 1e3 for s in scrub["steps"]], 0.5)
        for name, share in (("median", 0.5), ("p99", 0.99)):
            value = _percentile(seeks, share)
            rows.append(
                Row(
                    f"replay seek + paint, {name} (200 logs)",
                    value,
                    step,
                    value / step,
                    "informational",
                    True,
                    "ms",
                )
            )
        rows.append(
            Row(
                f"replay scrubber peak RSS ({label} in 200 logs)",
                scrub["peak_mb"],
                base,
                scrub["peak_mb"] / base,
                "informational",
                True,
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="100,000 events and a short follow")
    parser.add_argument("--big", action="store_true", help="also the memory at 3x the events (slow)")
    parser.add_argument("--many", action="store_true", help="also the same events in 200 logs (slow)")
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary directory")
    args = parser.parse_args(argv)
    events = 100_000 if args.quick else args.events
    if args.workdir is not None:
        rows = bench_replay(events, args.workdir, quick=args.quick, big=args.big, many=args.many)
    else:
        with tempfile.TemporaryDirectory(prefix="bench_replay_") as tmp:
            rows = bench_replay(events, Path(tmp), quick=args.quick, big=args.big, many=args.many)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
