"""Every benchmark in one command: `python bench/run.py [--events N]`.

Prints one table: each figure beside a baseline measured in the same run and the target it must
meet. Exits 1 if a target is missed, so the numbers cannot silently rot. Each benchmark's rows
go to stderr as it finishes; one that crashes is a failed row, and the others still run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bus_attach import bench_bus_attach
from bench_bus_host import bench_bus_host
from bench_bus_paint import bench_bus_paint
from bench_dashboard_memory import dashboard_rows
from bench_dump import bench_dump
from bench_engine import TARGET_EVENTS_PER_SECOND, bench_engine
from bench_export import bench_export
from bench_grep import bench_grep
from bench_hook import bench_hook
from bench_import import bench_import
from bench_live_dashboard import live_dashboard_rows
from bench_log import Row, bench_log, format_table
from bench_many import bench_many
from bench_markdown import bench_markdown
from bench_prices import bench_prices
from bench_providers import bench_providers
from bench_replay import bench_replay
from bench_search import bench_search
from bench_shell_risk import bench_shell_risk
from bench_startup import bench_startup
from bench_terminal_discovery import bench_terminal_discovery
from bench_terminal_live import bench_terminal_live


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the generated log")
    parser.add_argument("--turns", type=int, default=1_000, help="turns per engine benchmark run (best of 3)")
    parser.add_argument("--import-mb", type=float, default=100, help="size of the generated Claude Code log")
    parser.add_argument("--commands", type=int, default=10_000, help="command lines, shell risk benchmark")
    parser.add_argument("--grep-mb", type=float, default=10, help="size of the file the grep tool searches")
    parser.add_argument(
        "--sessions",
        type=int,
        default=3_000,
        help="generated logs of 500 events, search and history benchmarks",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="run only the benchmarks whose name contains one of these words (e.g. `bus paint`, `import`)",
    )
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for name, bench in _steps(args):
        if args.only and not any(word in name for word in args.only):
            continue
        try:
            found = bench()
        except Exception as error:  # one broken benchmark is a failed row, not a lost table
            traceback.print_exc()
            found = [Row(f"{name}: crashed ({type(error).__name__})", 0, 0, 0, "runs", passed=False)]
        rows += found
        print(format_table(found).split("\n", 2)[-1], file=sys.stderr, flush=True)  # progress
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


def _steps(args: argparse.Namespace) -> list[tuple[str, Callable[[], list[Row]]]]:
    """Each benchmark as a step of its own, in the order they run."""
    return [
        ("the log, the replay and --dump", lambda: _log_rows(args.events)),
        ("import", lambda: _in_tmp("import", lambda tmp: bench_import(args.import_mb, tmp))),
        ("engine", lambda: _engine_rows(args.turns)),
        ("providers", bench_providers),
        ("shell risk", lambda: bench_shell_risk(args.commands)),
        ("prices", bench_prices),  # 100,000 calls priced with the maintained table and the old way
        ("export", bench_export),  # a 10,000-event session
        ("grep", lambda: bench_grep(args.grep_mb)),
        ("hook", bench_hook),  # a Claude Code or Codex hook call, with and without agent-tui
        ("search", lambda: _in_tmp("search", lambda tmp: bench_search(args.sessions, tmp))),
        ("start-up", lambda: bench_startup(args.sessions)),  # each headless command as a whole process
        (
            "many",
            lambda: _in_tmp("many", lambda tmp: bench_many(args.sessions, tmp)),
        ),  # replay DIR, workbench
        ("dashboard memory", dashboard_rows),  # always 100,000 events: the caches need that many to settle
        ("live dashboard", live_dashboard_rows),  # 100 agents streaming as fast as the engine goes
        ("bus host", bench_bus_host),  # the same 100 agents on a host that publishes to a real server
        ("bus attach", bench_bus_attach),  # a dashboard attaching to a stream of 1,000,000 events
        ("bus paint", bench_bus_paint),  # committed on a host -> painted in an attached dashboard
        ("terminal discovery", bench_terminal_discovery),  # 5,000 Claude Code and Codex transcripts' heads
        ("terminal live", bench_terminal_live),  # 50 Claude Code transcripts growing: line -> frame
        ("markdown", bench_markdown),  # a 2,000-line Markdown answer as the detail renders it
    ]


def _in_tmp(name: str, bench: Callable[[Path], list[Row]]) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix=f"agent-tui-bench-{name}-") as tmp:
        return bench(Path(tmp))


def _log_rows(events: int) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-") as tmp:
        rows = bench_log(events, Path(tmp))
        rows += bench_replay(events, Path(tmp), quick=events < 1_000_000)  # same log
        return rows + bench_dump(events, Path(tmp))  # `replay --dump state` as a whole process


def _engine_rows(turns: int) -> list[Row]:
    return [
        Row(
            name=name,
            measured=rate,
            baseline=base,
            ratio=rate / base,
            target="informational" if verdict == "informational" else f">= {TARGET_EVENTS_PER_SECOND:,} ev/s",
            passed=verdict != "FAIL",
            unit="ev/s",
        )
        for name, rate, base, verdict in bench_engine(turns)
    ]


if __name__ == "__main__":
    sys.exit(main())
