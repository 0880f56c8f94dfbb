"""Benchmark of a history of thousands of session logs opened at once (the replay's list).

3,000 logs of 500 events each (1.5M events; generated here, children among them), opened as
`agent-tui replay DIR` opens them, each figure from a fresh child process running the real app
headless, beside the same app on a 10-event log measured in the same run:
- first screen: from starting the process to the list of every session painted (from the logs'
  heads), target 1 s;
- the list complete: the same to the list painted from heads and tails (statuses, phases, last
  turns), target 1.5 s;
- memory: the peak RSS after choosing 30 sessions one after another (each one's timeline
  indexed and shown), against the 10-event log's; target 250 MB; the timelines held never
  exceed the cache's bound.

    python bench/bench_many.py [--sessions 3000] [--events-per-session 500]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_log import Row, format_table
from bench_replay import DRIVE, TINY_EVENTS, _first_screen_seconds, _run_child
from replay_drive import write_sessions

WALK_STEPS = 30


def _many_first_seconds(directory: Path) -> tuple[float, float]:
    """Best of three: process start to the list painted, and to the list complete."""
    best = (float("inf"), float("inf"))
    for _ in range(3):
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, str(DRIVE), "many-first", str(directory)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        listed = child.stdout.readline()
        at_list = time.perf_counter() - started
        complete = child.stdout.readline()
        at_complete = time.perf_counter() - started
        _out, err = child.communicate()
        if (listed.strip(), complete.strip()) != ("listed", "complete"):
            raise RuntimeError(f"many-first child failed: {err.strip()[-2000:]}")
        best = (min(best[0], at_list), min(best[1], at_complete))
    return best


def bench_many(sessions: int, workdir: Path, events_per_session: int = 500) -> list[Row]:
    """The rows of this benchmark, the logs written under `workdir`."""
    from bench_log import SESSION_ID, write_log

    directory = workdir / "history"
    write_sessions(directory, sessions * events_per_session, sessions)
    tiny = workdir / "tiny" / f"{SESSION_ID}.jsonl"
    tiny.parent.mkdir(parents=True, exist_ok=True)
    write_log(tiny, TINY_EVENTS)
    label = f"{sessions:,} logs"
    floor = _first_screen_seconds([tiny])
    listed, complete = _many_first_seconds(directory)
    walk = _run_child("many-walk", str(directory), str(WALK_STEPS))
    base = _run_child("scrub", str(tiny))["peak_mb"]
    return [
        Row(
            f"replay DIR first screen ({label})",
            listed * 1e3,
            floor * 1e3,
            listed / floor,
            "<= 1000 ms",
            listed <= 1.0,
            "ms",
        ),
        Row(
            f"replay DIR list from heads and tails ({label})",
            complete * 1e3,
            floor * 1e3,
            complete / floor,
            "<= 1500 ms",
            complete <= 1.5,
            "ms",
        ),
        Row(
            f"replay DIR peak RSS, {WALK_STEPS} sessions chosen ({label})",
            walk["peak_mb"],
            base,
            walk["peak_mb"] / base,
            f"<= 250 MB, <= {walk['bound']} timelines",
            walk["peak_mb"] <= 250 and walk["held"] <= walk["bound"],
            "MB",
        ),
        Row(
            f"replay DIR choose a session, mean ({label})",
            walk["step_s"] * 1e3,
            floor * 1e3,
            walk["step_s"] / floor,
            "informational",
            True,
            "ms",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=3_000)
    parser.add_argument("--events-per-session", type=int, default=500)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_many_") as tmp:
        rows = bench_many(args.sessions, Path(tmp), args.events_per_session)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
