"""Every benchmark in one command: `python bench/run.py [--events N]`.

Prints one table: each figure beside a baseline measured in the same run and the target it must
meet. Exits 1 if a target is missed, so the numbers cannot silently rot.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
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
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-") as tmp:
        rows = bench_log(args.events, Path(tmp))
        rows += bench_replay(args.events, Path(tmp), quick=args.events < 1_000_000)  # same log
        rows += bench_dump(args.events, Path(tmp))  # `replay --dump state` as a whole process
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-import-") as tmp:
        rows += bench_import(args.import_mb, Path(tmp))
    for name, rate, base, verdict in bench_engine(args.turns):
        informational = verdict == "informational"
        rows.append(
            Row(
                name=name,
                measured=rate,
                baseline=base,
                ratio=rate / base,
                target="informational" if informational else f">= {TARGET_EVENTS_PER_SECOND:,} ev/s",
                passed=verdict != "FAIL",
                unit="ev/s",
            )
        )
    rows.extend(bench_providers())
    rows.extend(bench_shell_risk(args.commands))
    rows.extend(bench_prices())  # 100,000 calls priced with the maintained table and the old way
    rows.extend(bench_export())  # a 10,000-event session
    rows.extend(bench_grep(args.grep_mb))
    rows.extend(bench_hook())  # a Claude Code or Codex hook call, with and without agent-tui
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-search-") as tmp:
        rows += bench_search(args.sessions, Path(tmp))
    rows.extend(bench_startup(args.sessions))  # each headless command as a whole process
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-many-") as tmp:
        rows += bench_many(args.sessions, Path(tmp))  # replay DIR and the workbench on them
    rows.extend(dashboard_rows())  # always 100,000 events: the caches need that many to settle
    rows.extend(live_dashboard_rows())  # 100 agents streaming as fast as the engine goes
    rows.extend(bench_bus_host())  # the same 100 agents on a host that publishes to a real server
    rows.extend(bench_bus_attach())  # a dashboard attaching to a stream of 1,000,000 events
    rows.extend(bench_bus_paint())  # committed on a host -> painted in an attached dashboard
    rows.extend(bench_terminal_discovery())  # 5,000 Claude Code and Codex transcripts' heads
    rows.extend(bench_terminal_live())  # 50 Claude Code transcripts growing: a line written -> its frame
    rows.extend(bench_markdown())  # a 2,000-line Markdown answer as the detail renders it
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
