"""Benchmark of a history of thousands of session logs opened at once (the replay's list).

3,000 logs of 500 events each (1.5M events; generated here, children among them), opened as
`agent-tui replay DIR` opens them, each figure from a fresh child process running the real app
headless, beside the same app on a 10-event log measured in the same run:
- first screen: from starting the process to the list of every session painted (from the logs'
  heads), target at most twice the 10-event log's first screen;
- the list complete: the same to the list painted from heads and tails (statuses, phases, last
  turns), target 1.5 s; then until every log's spend is known (asked of the search index, built or
  brought up to date in the background) and the list shows the whole logs' costs (informational: the list is in use meanwhile);
- memory: the peak RSS after choosing 30 sessions one after another (each one's timeline
  indexed and shown), against the 10-event log's; target 250 MB; the timelines held never
  exceed the cache's bound;
- the workbench (the dashboard on a project whose sessions directory holds those logs): from
  starting the process to "listed", the first frame composed with a line in the tree for every
  session (from the logs' first lines; their last turns may still be being read), against the
  same dashboard on a directory of one 10-event log; target at most twice that; then until the workbench is
  ready (every log's last turn read, the unfinished ones reopened, the finished ones' earlier spend
  asked of the search index; informational: the dashboard is in use meanwhile);
- the workbench's memory: the peak RSS after choosing 30 sessions one after another in its tree
  (each one read whole by the engine as it is chosen), against the 10-event directory's; target
  250 MB; the sessions held read never exceed the workbench's bound.

The package is byte-compiled first (as an installed one is), so no child compiles it.

    python bench/bench_many.py [--sessions 3000] [--events-per-session 500]
"""

from __future__ import annotations

import argparse
import compileall
import json
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
FIRST_SCREEN_RATIO = 2.0
"""The first screens' target: at most this many times the same app's on a 10-event log."""


def _two_moments(*args: str, words: tuple[str, str], runs: int = 3) -> tuple[float, float, str]:
    """Best of `runs`: process start to the child's first word, and to its second; and what it
    printed last (its JSON, if any)."""
    best = (float("inf"), float("inf"))
    last = ""
    for _ in range(runs):
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, str(DRIVE), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert child.stdout is not None
        first = child.stdout.readline()
        at_first = time.perf_counter() - started
        second = child.stdout.readline()
        at_second = time.perf_counter() - started
        rest = child.stdout.read()  # (communicate would miss what the reader has buffered)
        _out, err = child.communicate()
        if (first.strip(), second.strip()) != words:
            raise RuntimeError(f"{args[0]} child failed: {err.strip()[-2000:]}")
        best = (min(best[0], at_first), min(best[1], at_second))
        last = rest.strip().splitlines()[-1] if rest.strip() else last
    return best[0], best[1], last


def bench_many(sessions: int, workdir: Path, events_per_session: int = 500) -> list[Row]:
    """The rows of this benchmark, the logs written under `workdir`."""
    from bench_log import SESSION_ID, write_log

    directory = workdir / "history"
    # Finished sessions: the workbench reopens them as they are (an unfinished turn would be
    # closed, written to its log, at every run).
    write_sessions(directory, sessions * events_per_session, sessions, whole_turns=True)
    tiny = workdir / "tiny" / f"{SESSION_ID}.jsonl"
    tiny.parent.mkdir(parents=True, exist_ok=True)
    write_log(tiny, TINY_EVENTS)
    label = f"{sessions:,} logs"
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "agent_tui", quiet=1)
    floor = _first_screen_seconds([tiny])
    listed, complete, _ = _two_moments("many-first", str(directory), words=("listed", "complete"))
    _, scanned, _ = _two_moments("many-spend", str(directory), words=("complete", "scanned"), runs=1)
    walk = _run_child("many-walk", str(directory), str(WALK_STEPS))
    base = _run_child("scrub", str(tiny))["peak_mb"]
    project = workdir / "project"
    words = ("listed", "ready")
    wb_floor, _, tiny_json = _two_moments("workbench-first", str(tiny.parent), str(project), words=words)
    wb_listed, wb_ready, _ = _two_moments("workbench-first", str(directory), str(project), words=words)
    wb_walk = _run_child("workbench-walk", str(directory), str(project), str(WALK_STEPS))
    wb_base = json.loads(tiny_json)["peak_mb"]
    return [
        Row(
            f"replay DIR first screen ({label})",
            listed * 1e3,
            floor * 1e3,
            listed / floor,
            f"<= {FIRST_SCREEN_RATIO:g}x",
            listed / floor <= FIRST_SCREEN_RATIO,
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
            f"replay DIR list with the whole logs' spend, from the index in the background ({label})",
            scanned * 1e3,
            floor * 1e3,
            scanned / floor,
            "informational",
            True,
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
            f"workbench first screen ({label})",
            wb_listed * 1e3,
            wb_floor * 1e3,
            wb_listed / wb_floor,
            f"<= {FIRST_SCREEN_RATIO:g}x",
            wb_listed / wb_floor <= FIRST_SCREEN_RATIO,
            "ms",
        ),
        Row(
            f"workbench ready: every log's end read, the finished ones' spend scanned ({label})",
            wb_ready * 1e3,
            wb_floor * 1e3,
            wb_ready / wb_floor,
            "informational",
            True,
            "ms",
        ),
        Row(
            f"workbench peak RSS, {WALK_STEPS} sessions chosen ({label})",
            wb_walk["peak_mb"],
            wb_base,
            wb_walk["peak_mb"] / wb_base,
            f"<= 250 MB, <= {wb_walk['bound']} sessions read",
            wb_walk["peak_mb"] <= 250 and wb_walk["held"] <= wb_walk["bound"],
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
