"""Benchmark of live terminal sessions: a transcript line written → the frame that shows it.

50 Claude Code sessions of one project (a temporary `CLAUDE_CONFIG_DIR`, each transcript opened
with the CLI's head lines: its title and the prompt that names the project as `cwd`) are followed
by `TerminalAgents(engine, …).serving(project=…)` on a real `SessionEngine` (a `JsonlFileEventStore`
in the same temporary directory). A listener subscribed to the engine folds every event into the
dashboard's reducer (`apply_event`, which projects the turn's phase frame from the event with
`events.frames.transition_for`, as the dashboard shows terminal sessions) and reads that phase.

A writer thread then appends to every transcript at a steady rate (20 lines a second per
session, each session's lines offset from the others', for 10 seconds: 10,000 lines at 1,000 a
second in all) the lines a working Claude Code appends (assistant text, a `Bash` tool use, its
tool result, in turn), each carrying a unique mark in its text. The write time of each line is
taken just before its one `write`; the listener takes the time when it has folded the event that
carries the line's mark and read the session's phase. Figures: p50 and p99 of that delay. (The
dashboard then paints its state at most 1/12 s later, `tui.app.REFRESH_SECONDS`: the stored →
painted lag is `bench_live_dashboard.py`'s row, not counted again here.)

Baseline, in the same run: the same path with one session writing at the same rate. The delay
of a single session is what the follower costs by design (its poll interval, `POLL_EVERY`, and
one line's import, store and fold); the 50 sessions' figure beside it shows what following many
at once adds. (The bare time for a write to be seen by a stat poll would be the poll interval
alone, a figure with nothing of agent-tui in it.) Target: p99 ≤ 300 ms.

    python bench/bench_terminal_live.py [--sessions 50] [--rate 20] [--seconds 10]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_log import Row, format_table

TARGET_MS = 300.0
SESSIONS = 50
RATE = 20.0  # lines a second per session
SECONDS = 10.0
SETTLE = 5.0  # seconds after the last write for the last lines to show
MODEL = "claude-sonnet-4-5-20250929"
_MARK = re.compile(r"mark-\d+-\d+")


# -- the transcripts ---------------------------------------------------------------------------


def _session_id(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"


def _record(sid: str, cwd: str, kind: str, n: int, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "parentUuid": f"{sid[:8]}-{n - 1:04d}" if n > 1 else None,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": sid,
        "version": "2.1.12",
        "gitBranch": "main",
        "type": kind,
        "message": message,
        "uuid": f"{sid[:8]}-{n:04d}",
        "timestamp": "2026-01-15T16:00:00.000Z",
    }


def _head(sid: str, cwd: str) -> bytes:
    title = {"type": "ai-title", "aiTitle": "Fix the refund rounding", "sessionId": sid}
    prompt = _record(
        sid, cwd, "user", 1, {"role": "user", "content": "Fix the refund rounding in src/refunds.py"}
    )
    return orjson.dumps(title) + b"\n" + orjson.dumps(prompt) + b"\n"


def _line(sid: str, cwd: str, session: int, n: int) -> tuple[str, bytes]:
    """Line `n` (from 2) of session `session`: its mark and its bytes, as Claude Code writes a
    working turn (text, a tool use, its result, again)."""
    mark = f"mark-{session}-{n}"
    usage = {"input_tokens": 1200 + n, "output_tokens": 40, "cache_read_input_tokens": 900}
    if n % 3 == 2:
        text = f"I will look at the rounding helper next ({mark}) and check how refunds are summed."
        message: dict[str, Any] = {
            "id": f"msg_{session}_{n}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [{"type": "text", "text": text}],
            "stop_reason": None,
            "usage": usage,
        }
        return mark, orjson.dumps(_record(sid, cwd, "assistant", n, message)) + b"\n"
    if n % 3 == 0:
        tool_use: dict[str, Any] = {
            "type": "tool_use",
            "id": f"toolu_{session}_{n}",
            "name": "Bash",
            "input": {"command": f"rg -n 'round' src/refunds.py  # {mark}", "description": "Find rounding"},
        }
        message = {
            "id": f"msg_{session}_{n}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [tool_use],
            "stop_reason": "tool_use",
            "usage": usage,
        }
        return mark, orjson.dumps(_record(sid, cwd, "assistant", n, message)) + b"\n"
    result = {
        "tool_use_id": f"toolu_{session}_{n - 1}",
        "type": "tool_result",
        "content": f"12:    return round(amount, 2)  # {mark}\n40:    total = round(sum(parts))",
    }
    return mark, orjson.dumps(_record(sid, cwd, "user", n, {"role": "user", "content": [result]})) + b"\n"


def _mark_of(event: Any) -> str | None:
    """The mark of the line an event was made of, for the event that shows the line's text."""
    payload = event.payload
    if event.type == "model.delta":
        text = payload.get("text")
    elif event.type == "model.tool_call_requested":
        text = (payload.get("args") or {}).get("command")
    elif event.type == "tool.completed":
        text = payload.get("result")
    else:
        return None
    found = _MARK.search(text) if isinstance(text, str) else None
    return found.group() if found else None


@contextmanager
def _cli_homes(base: Path) -> Iterator[Path]:
    """CLAUDE_CONFIG_DIR and CODEX_HOME in `base` while inside; yields Claude Code's projects."""
    saved = {name: os.environ.get(name) for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    os.environ["CLAUDE_CONFIG_DIR"] = str(base / "claude")
    os.environ["CODEX_HOME"] = str(base / "codex")
    try:
        yield base / "claude" / "projects"
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# -- one run -----------------------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _follow(
    sessions: int, rate: float, seconds: float, base: Path, poll_every: float | None
) -> list[float]:
    """Delays (seconds) from each line's write to its fold, `sessions` sessions at `rate`."""
    from agent_tui.engine.engine import SessionEngine
    from agent_tui.engine.questions import Questions
    from agent_tui.engine.scripted import ScriptedProvider
    from agent_tui.events import Event
    from agent_tui.reducer import DashboardState, apply_event
    from agent_tui.store import JsonlFileEventStore
    from agent_tui.terminal.agents import TerminalAgents

    project = base / "shop-api"
    project.mkdir()
    cwd = str(project.resolve())
    folder = base / "claude" / "projects" / cwd.replace("/", "-")
    folder.mkdir(parents=True)
    (base / "codex" / "sessions").mkdir(parents=True)
    paths = []
    for n in range(sessions):
        path = folder / f"{_session_id(n)}.jsonl"
        path.write_bytes(_head(_session_id(n), cwd))
        paths.append(path)

    written: dict[str, float] = {}
    delays: list[float] = []
    phases: set[str] = set()
    state = DashboardState()

    def heard(event: Event) -> None:
        apply_event(state, event)
        mark = _mark_of(event)
        if mark is None:
            return
        view = state.sessions[event.session_id]
        phases.add(view.turns[-1].phase)  # the phase frame the dashboard shows now
        delays.append(time.perf_counter() - written.pop(mark))

    lines = int(rate * seconds)

    def write() -> None:
        fds = [os.open(path, os.O_WRONLY | os.O_APPEND) for path in paths]
        try:
            made = [[_line(_session_id(s), cwd, s, n) for n in range(2, lines + 2)] for s in range(sessions)]
            start = time.perf_counter() + 0.05
            schedule = sorted(
                ((k + s / sessions) / rate, s, k) for s in range(sessions) for k in range(lines)
            )
            for at, s, k in schedule:
                pause = start + at - time.perf_counter()
                if pause > 0:
                    time.sleep(pause)
                mark, data = made[s][k]
                written[mark] = time.perf_counter()
                os.write(fds[s], data)
        finally:
            for fd in fds:
                os.close(fd)

    engine = SessionEngine(
        JsonlFileEventStore(base / "sessions"), ScriptedProvider(), questions=Questions(None)
    )
    options: dict[str, Any] = {} if poll_every is None else {"poll_every": poll_every}
    async with engine:
        engine.subscribe(heard)
        async with TerminalAgents(engine, watched=lambda: False).serving(
            project=project, **options
        ) as agents:
            if len(state.sessions) != sessions:
                raise RuntimeError(
                    f"{len(state.sessions)} of {sessions} sessions followed: {agents.warnings}"
                )
            writer = threading.Thread(target=write, name="transcript-writer")
            writer.start()
            await anyio.to_thread.run_sync(writer.join)
            deadline = time.perf_counter() + SETTLE
            while len(delays) < sessions * lines and time.perf_counter() < deadline:
                await anyio.sleep(0.05)
            if agents.warnings:
                raise RuntimeError(f"the follower warned: {agents.warnings}")
    if len(delays) != sessions * lines:
        raise RuntimeError(f"{sessions * lines - len(delays)} of {sessions * lines} lines never showed")
    if not phases <= {"model", "tool", "thinking", "start"} or not phases:
        raise RuntimeError(f"unexpected phases shown: {phases}")
    return delays


def measure(
    sessions: int, rate: float = RATE, seconds: float = SECONDS, poll_every: float | None = None
) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-live-") as tmp, _cli_homes(Path(tmp)):
        return anyio.run(_follow, sessions, rate, seconds, Path(tmp), poll_every)


def bench_terminal_live(sessions: int = SESSIONS, rate: float = RATE, seconds: float = SECONDS) -> list[Row]:
    one = measure(1, rate, seconds)
    many = measure(sessions, rate, seconds)
    rows = []
    for label, q, target in (("p50", 0.50, None), ("p99", 0.99, TARGET_MS)):
        measured, baseline = _percentile(many, q) * 1000, _percentile(one, q) * 1000
        rows.append(
            Row(
                name=(
                    f"live terminal sessions: {sessions} at {rate:g} lines/s each, "
                    f"line written -> frame, {label} (vs 1 session)"
                ),
                measured=measured,
                baseline=baseline,
                ratio=measured / baseline,
                target="informational" if target is None else f"<= {target:,.0f} ms",
                passed=target is None or measured <= target,
                unit="ms",
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--rate", type=float, default=RATE, help="lines a second per session")
    parser.add_argument("--seconds", type=float, default=SECONDS)
    args = parser.parse_args(argv)
    rows = bench_terminal_live(args.sessions, args.rate, args.seconds)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
