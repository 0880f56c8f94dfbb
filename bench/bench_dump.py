"""Benchmark of `agent-tui replay LOG --dump state` as a whole process, as a script would run it.

The figure is the command's rate over the big log, start-up, fold, the state's serialisation and
writing it included (`python -m agent_tui replay LOG --dump state > file`), against a baseline in
a process of its own on the same file: read it, then `orjson.loads` every line. Target: at least
0.40x the baseline's rate. Beside it, informational: the same command on a 10-event log (its
start-up, mostly imports) against a bare `python -c pass`.

The command and its baseline alternate, five times each, and the best of each is kept, so a busy
spell of a shared machine falls on both alike.

    python bench/bench_dump.py --events 1000000 [--workdir DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_log import SESSION_ID, Row, format_table, write_log

REPEATS = 5
TARGET_RATIO = 0.40
TINY_EVENTS = 10

_BARE = """
import sys
import orjson
loads = orjson.loads
with open(sys.argv[1], "rb") as handle:
    data = handle.read()
for line in data.splitlines():
    loads(line)
"""


def _dump_command(path: Path) -> list[str]:
    return [sys.executable, "-m", "agent_tui", "replay", str(path), "--dump", "state"]


def _seconds(command: list[str], out: Path) -> float:
    """Wall time of one run of `command`, its standard output written to `out`."""
    with out.open("wb") as sink:
        started = time.perf_counter()
        done = subprocess.run(command, stdout=sink, stderr=subprocess.PIPE, check=False)
        elapsed = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"{command[2:]} failed: {done.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def _interleaved_best(commands: dict[str, list[str]], out: Path) -> dict[str, float]:
    best = dict.fromkeys(commands, float("inf"))
    for _ in range(REPEATS):
        for name, command in commands.items():
            best[name] = min(best[name], _seconds(command, out))
    return best


def bench_dump(events: int, workdir: Path) -> list[Row]:
    """Measure the dump command on the log of `events` events under `workdir` (written if missing)."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"{SESSION_ID}.jsonl"
    if not path.exists() or _lines(path) != events:
        write_log(path, events)
    tiny = workdir / "dump-tiny" / f"{SESSION_ID}.jsonl"
    tiny.parent.mkdir(exist_ok=True)
    write_log(tiny, TINY_EVENTS)
    out = workdir / "dump-state.json"
    best = _interleaved_best(
        {
            "bare": [sys.executable, "-c", _BARE, str(path)],
            "dump": _dump_command(path),
            "python": [sys.executable, "-c", "pass"],
            "tiny": _dump_command(tiny),
        },
        out,
    )
    out.unlink(missing_ok=True)
    label = f"{events / 1e6:g}M" if events >= 1_000_000 else f"{events:,}"
    dump_rate, bare_rate = events / best["dump"], events / best["bare"]
    ratio = dump_rate / bare_rate
    return [
        Row(
            f"replay --dump state, whole process ({label}) ev/s",
            dump_rate,
            bare_rate,
            ratio,
            f">= {TARGET_RATIO:.2f}x",
            ratio >= TARGET_RATIO,
            "ev/s",
        ),
        Row(
            f"replay --dump state start-up ({TINY_EVENTS} events)",
            best["tiny"] * 1e3,
            best["python"] * 1e3,
            best["tiny"] / best["python"],
            "informational",
            True,
            "ms",
        ),
    ]


def _lines(path: Path) -> int:
    with open(path, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 24), b""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary directory")
    args = parser.parse_args(argv)
    if args.workdir is not None:
        rows = bench_dump(args.events, args.workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="bench_dump_") as tmp:
            rows = bench_dump(args.events, Path(tmp))
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
