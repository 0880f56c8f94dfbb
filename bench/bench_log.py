"""Benchmark of the JSONL event log: index, replay, memory and random access on one big log.

A log is one session (docs/event-log.md): `session.created`, then turns of `turn.started`, `user.message`,
one or more steps of `context.built` + `model.delta`s + tool chains (`model.tool_call_requested`,
`permission.requested`/`resolved`, `tool.started`, `tool.delta`s, `tool.completed`/`tool.failed`),
and `turn.completed`, with sequences 1, 2, 3, ... Each measured figure is compared with a bare
baseline on the same bytes:

- `LineIndex(path)` (open + scan) against `data.count(b"\\n")` on bytes already in memory;
- `JsonlEventLog.replay()` (validation and chain check included) against
  `for line in data.splitlines(): orjson.loads(line)`, in events per second; plus replay into the
  reducer's final state with `project_state` (the target) and with an `apply_event` loop (the live
  dashboard's path, reported beside it);
- peak RSS of a child process doing a full replay, against a child that only imports;
- mean `read(n)` at random `n`, against `pread` of the same line when its offsets are known.

Every timing runs three times (the replay rows five, alternating with their baseline) and keeps
the best. Run:
    python bench/bench_log.py --events 1000000 [--workdir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agent_tui.store import JsonlEventLog, LineIndex

REPEATS = 3
REPLAY_REPEATS = 5  # the replay rows move most with a shared machine's load: more tries, best kept
RANDOM_READS = 1_000
SESSION_ID = "sess_bench"


@dataclass(frozen=True)
class Row:
    """One line of the result table. `ratio` is measured / baseline (or as stated in `unit`)."""

    name: str
    measured: float
    baseline: float
    ratio: float
    target: str
    passed: bool
    unit: str = ""

    @property
    def verdict(self) -> str:
        return "pass" if self.passed else "FAIL"


# -- the log -----------------------------------------------------------------------------------

_WORDS = [
    "the",
    "file",
    "list",
    "shows",
    "three",
    "modules",
    "and",
    "a",
    "test",
    "folder",
    "so",
    "I",
    "will",
    "read",
    "the",
    "main",
    "one",
    "first",
    "then",
    "rename",
    "the",
    "helper",
    "and",
    "update",
    "every",
    "import",
    "that",
    "refers",
    "to",
    "it",
    "before",
    "running",
    "the",
    "tests",
    "again",
]


def _text(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(low, high)))


def _turn(rng: random.Random, turn: int) -> Iterator[tuple[str, str | None, dict[str, Any]]]:
    """The events of one turn as (type, turnId, payload), payload keys in model order."""
    turn_id = f"turn_{turn}"
    prompt = f"Turn {turn}: " + _text(rng, 5, 30)
    yield "turn.started", turn_id, {"promptPreview": prompt[:80]}
    yield "user.message", turn_id, {"content": prompt}
    transcript = 400 * turn
    steps = rng.randint(1, 3)
    for step in range(1, steps + 1):
        transcript += rng.randint(100, 900)
        yield (
            "context.built",
            turn_id,
            {
                "step": step,
                "tokens": {"instruction": 1200, "transcript": transcript, "tools": 850},
                "maxContextTokens": 200_000,
            },
        )
        for _ in range(rng.randint(3, 12)):
            yield "model.delta", turn_id, {"text": _text(rng, 1, 8) + " "}
        if step == steps:
            break
        for call in range(rng.randint(1, 2)):
            call_id = f"call_{turn}_{step}_{call}"
            tool, args, risk = rng.choice(
                (
                    ("read_file", {"path": "src/foo.py"}, "read"),
                    ("shell", {"cmd": "pytest -q tests/test_foo.py"}, "execute"),
                    ("edit_file", {"path": "src/foo.py", "old": "foo", "new": "bar"}, "write"),
                )
            )
            preview = orjson.dumps(args).decode()[:80]
            yield "model.tool_call_requested", turn_id, {"toolCallId": call_id, "tool": tool, "args": args}
            yield (
                "permission.requested",
                turn_id,
                {
                    "requestId": f"perm_{call_id}",
                    "toolCallId": call_id,
                    "tool": tool,
                    "risk": risk,
                    "argsPreview": preview,
                },
            )
            if risk == "read":
                yield (
                    "permission.resolved",
                    turn_id,
                    {
                        "requestId": f"perm_{call_id}",
                        "toolCallId": call_id,
                        "decision": "allow",
                        "actor": "policy",
                        "policy": "default",
                    },
                )
            else:
                yield (
                    "permission.resolved",
                    turn_id,
                    {
                        "requestId": f"perm_{call_id}",
                        "toolCallId": call_id,
                        "decision": "ask",
                        "actor": "policy",
                        "policy": "default",
                    },
                )
                decision = "allow" if rng.random() < 0.9 else "deny"
                yield (
                    "permission.resolved",
                    turn_id,
                    {
                        "requestId": f"perm_{call_id}",
                        "toolCallId": call_id,
                        "decision": decision,
                        "actor": "user",
                        "remember": "once",
                    },
                )
                if decision == "deny":
                    yield (
                        "tool.failed",
                        turn_id,
                        {
                            "toolCallId": call_id,
                            "tool": tool,
                            "errorCode": "permission_denied",
                            "message": "the user denied this call",
                        },
                    )
                    continue
            yield "tool.started", turn_id, {"toolCallId": call_id, "tool": tool, "argsPreview": preview}
            chunks = [_text(rng, 8, 30) + "\n" for _ in range(rng.randint(1, 6))]
            for chunk in chunks:
                yield "tool.delta", turn_id, {"toolCallId": call_id, "stream": "stdout", "text": chunk}
            result = "".join(chunks)
            if rng.random() < 0.0005:  # now and then a huge output: a line longer than an index block
                result = result * (100_000 // len(result) + 1)
            yield (
                "tool.completed",
                turn_id,
                {
                    "toolCallId": call_id,
                    "tool": tool,
                    "result": result,
                    "exitCode": 0,
                    "truncated": False,
                },
            )
    yield (
        "turn.completed",
        turn_id,
        {
            "stopReason": "final",
            "usage": {"promptTokens": transcript + 2050, "completionTokens": rng.randint(20, 400)},
        },
    )


def _session(rng: random.Random) -> Iterator[tuple[str, str | None, dict[str, Any]]]:
    yield "session.created", None, {"cwd": "/home/dev/project", "client": "bench", "title": "bench"}
    turn = 0
    while True:
        turn += 1
        yield from _turn(rng, turn)


def write_log(path: Path, events: int, *, seed: int = 1) -> int:
    """Write one session of exactly `events` events (the last turn may be cut short). Returns bytes."""
    rng = random.Random(seed)
    dumps = orjson.dumps
    base_ms = 1_795_000_000_000
    batch: list[bytes] = []
    size = 0
    with open(path, "wb") as handle:
        for sequence, (kind, turn_id, payload) in enumerate(_session(rng), start=1):
            if sequence > events:
                break
            millis = base_ms + sequence * 37
            ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(millis // 1000)) + f".{millis % 1000:03d}Z"
            batch.append(
                dumps(
                    {
                        "v": 1,
                        "id": f"evt_bench_{sequence}",
                        "sessionId": SESSION_ID,
                        "turnId": turn_id,
                        "sequence": sequence,
                        "ts": ts,
                        "type": kind,
                        "payload": payload,
                    }
                )
                + b"\n"
            )
            if len(batch) >= 10_000:
                data = b"".join(batch)
                handle.write(data)
                size += len(data)
                batch.clear()
        data = b"".join(batch)
        handle.write(data)
        size += len(data)
    return size


# -- timing ------------------------------------------------------------------------------------


def interleaved_best(runs: dict[str, Callable[[], Any]], repeats: int = REPEATS) -> dict[str, float]:
    """Best wall time of each run, in seconds, running them in turn `repeats` times."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeats):
        for name, run in runs.items():
            gc.collect()
            started = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def best_of(run: Callable[[], Any], repeats: int = REPEATS) -> float:
    """Best wall time of `repeats` runs, in seconds (garbage collection left on, as in real use)."""
    return interleaved_best({"run": run}, repeats)["run"]


def _drain(events: Iterable[Any]) -> int:
    count = 0
    for _ in events:
        count += 1
    return count


def _reducer_folds() -> list[tuple[str, Callable[[Iterable[Any]], Any]]]:
    """The reducer's two ways to a final state: `project_state`, and a loop of `apply_event`
    (what the live dashboard does, one event at a time)."""
    from agent_tui.reducer import DashboardState, apply_event, project_state

    def fold(events: Iterable[Any]) -> Any:
        state = DashboardState()
        for event in events:
            state = apply_event(state, event)
        return state

    return [("project_state", project_state), ("apply_event", fold)]


_CHILD = """
import resource, sys
from agent_tui.store import JsonlEventLog
mode = sys.argv[1]
if mode != "imports":
    log = JsonlEventLog(sys.argv[2])
    events = log.replay()
    if mode == "reducer":
        sys.path.insert(0, sys.argv[3])
        from bench_log import _reducer_folds
        state = _reducer_folds()[0][1](events)
    else:
        for _ in events:
            pass
try:  # VmHWM: this process's own peak; ru_maxrss also counts the forking parent's pages
    with open("/proc/self/status") as status:
        print(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
except (OSError, StopIteration):
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _child_peak_mb(mode: str, path: Path) -> float:
    """Peak RSS in MB of a fresh interpreter doing `mode` (VmHWM / ru_maxrss are in KiB on Linux)."""
    output = subprocess.run(
        [sys.executable, "-c", _CHILD, mode, str(path), str(Path(__file__).resolve().parent)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return int(output.strip().splitlines()[-1]) / 1024


# -- the benchmark -----------------------------------------------------------------------------


def bench_log(events: int, workdir: Path) -> list[Row]:
    """Write a log of `events` events under `workdir` and measure it. Returns the result rows."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"{SESSION_ID}.jsonl"
    started = time.perf_counter()
    size = write_log(path, events)
    print(
        f"wrote {events:,} events, {size / 2**20:,.1f} MiB in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    rows: list[Row] = []

    # 1. the sparse index against a bare newline count
    data = path.read_bytes()
    newlines = data.count(b"\n")
    assert newlines == events, (newlines, events)
    count_s = best_of(lambda: data.count(b"\n"))
    index_s = best_of(lambda: LineIndex(path))
    assert LineIndex(path).line_count == events
    rows.append(
        Row(
            "LineIndex(path) build",
            index_s * 1e3,
            count_s * 1e3,
            index_s / count_s,
            "<= 2.5x",
            index_s / count_s <= 2.5,
            "ms",
        )
    )

    # 2. replay against a bare decode loop, in events per second
    def bare() -> None:
        loads = orjson.loads
        for line in data.splitlines():
            loads(line)

    log = JsonlEventLog(path)
    assert _drain(log.replay()) == events
    folds = _reducer_folds()
    # The runs alternate (bare, replay, each fold; again), so that a busy spell of a shared
    # machine falls on all of them alike rather than on whichever ran during it.
    timed: dict[str, Callable[[], Any]] = {"bare": bare, "replay": lambda: _drain(log.replay())}
    for label, fold in folds:

        def folded(fold: Callable[..., Any] = fold) -> Any:
            return fold(log.replay())

        timed[label] = folded
    best = interleaved_best(timed, REPLAY_REPEATS)
    bare_rate = events / best["bare"]
    replay_rate = events / best["replay"]
    rows.append(
        Row(
            "replay() events/s",
            replay_rate,
            bare_rate,
            replay_rate / bare_rate,
            ">= 0.40x",
            replay_rate / bare_rate >= 0.40,
            "ev/s",
        )
    )
    for label, _fold in folds:
        reduce_rate = events / best[label]
        ratio = reduce_rate / bare_rate
        if label == "project_state":  # the target: the whole log replayed to the final state
            rows.append(
                Row(
                    f"replay() -> {label} events/s",
                    reduce_rate,
                    bare_rate,
                    ratio,
                    ">= 0.40x",
                    ratio >= 0.40,
                    "ev/s",
                )
            )
        else:  # the live dashboard's path, one event at a time: reported beside it
            rows.append(
                Row(
                    f"replay() -> {label} events/s",
                    reduce_rate,
                    bare_rate,
                    ratio,
                    "informational",
                    True,
                    "ev/s",
                )
            )
    data = b""  # let the child processes below have the memory
    gc.collect()

    # 3. peak memory of a full replay (and reducer) in a child process
    imports_mb = _child_peak_mb("imports", path)
    replay_mb = _child_peak_mb("replay", path)
    rows.append(
        Row(
            "replay() peak RSS (child)",
            replay_mb,
            imports_mb,
            replay_mb / imports_mb,
            "<= 400 MB",
            replay_mb <= 400,
            "MB",
        )
    )
    reducer_mb = _child_peak_mb("reducer", path)
    rows.append(
        Row(
            "replay() -> project_state peak RSS",
            reducer_mb,
            imports_mb,
            reducer_mb / imports_mb,
            "<= 400 MB",
            reducer_mb <= 400,
            "MB",
        )
    )

    # 4. random access against pread of the same span with known offsets
    rng = random.Random(7)
    picks = [rng.randrange(events) for _ in range(RANDOM_READS)]
    log = JsonlEventLog(path)
    index = log.index
    spans = [index.line_span(n) for n in picks]
    for n in picks[:50]:
        assert log.read(n).sequence == n + 1

    def random_reads() -> None:
        read = log.read
        for n in picks:
            read(n)

    def known_offsets() -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            for start, end in spans:
                os.pread(fd, end - start, start)
        finally:
            os.close(fd)

    read_s = best_of(random_reads) / RANDOM_READS
    pread_s = best_of(known_offsets) / RANDOM_READS
    rows.append(
        Row(
            f"read(n) mean of {RANDOM_READS:,} random",
            read_s * 1e6,
            pread_s * 1e6,
            read_s / pread_s,
            "<= 1000 us",
            read_s * 1e6 <= 1000,
            "us",
        )
    )
    log.close()
    return rows


def format_table(rows: list[Row]) -> str:
    header = ("benchmark", "measured", "baseline", "ratio", "target", "result")
    lines = [tuple(header)]
    for row in rows:
        lines.append(
            (
                row.name,
                f"{row.measured:,.1f} {row.unit}",
                f"{row.baseline:,.1f} {row.unit}",
                f"{row.ratio:.2f}x",
                row.target,
                row.verdict,
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for k, line in enumerate(lines):
        out.append("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False)).rstrip())
        if k == 0:
            out.append("  ".join("-" * width for width in widths))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary directory")
    parser.add_argument("--keep", action="store_true", help="keep the generated log")
    args = parser.parse_args(argv)
    if args.workdir is not None:
        rows = bench_log(args.events, args.workdir)
        if not args.keep:
            (args.workdir / f"{SESSION_ID}.jsonl").unlink(missing_ok=True)
    else:
        with tempfile.TemporaryDirectory(prefix="bench_log_") as tmp:
            rows = bench_log(args.events, Path(tmp))
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
