"""Memory of a dashboard left running: 20 agents, 100,000 events, headless.

    .venv/bin/python bench/bench_dashboard_memory.py [--events N] [--agents N]

The dashboard (a real `AgentTuiApp` on a project, a real engine writing real logs, the scripted
model) runs each agent's first turn, then a follow-up turn of each (sent as the composer sends
it). After each half, with `tracemalloc` and a full collection, it measures:

- retained: what the dashboard holds more than before the first agent started (state, engine,
  widgets, the logs' bookkeeping);
- reducer: the size of the reducer's own state for the same events, folded separately from the
  logs on disk: the baseline, what the dashboard must hold to show them;
- transcripts: the engine's transcripts (every session's whole conversation, kept so a
  follow-up turn can send it to the model), their objects and text.

The figure that must stay small is what the dashboard grew by over the second half beyond what
the reducer and the transcripts grew by, per event of that half: the first half pays the fixed
costs (widgets, Textual's render caches), which do not grow with events. The target is under 64
bytes an event: a buffer of events (one `Event` with its payload is several hundred bytes) would
miss it at once.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_log import Row  # noqa: E402

from agent_tui.engine.scenario import AgentScript, ScriptedToolCall, Step  # noqa: E402
from agent_tui.engine.scripted import ScriptedProvider  # noqa: E402
from agent_tui.reducer import project_state  # noqa: E402
from agent_tui.replay.sources import replay_all  # noqa: E402
from agent_tui.runtime.agent_requests import Sent  # noqa: E402
from agent_tui.runtime.model_router import ModelChoice  # noqa: E402
from agent_tui.runtime.workbench import AgentSpec  # noqa: E402
from agent_tui.tui.app import AgentTuiApp  # noqa: E402

TARGET_BYTES_BEYOND = 64
CHUNKS_PER_STEP = 200
EVENTS_PER_STEP = CHUNKS_PER_STEP + 6  # context.built, the deltas, one read_file chain of five


def _script(events: int) -> AgentScript:
    steps = max(1, events // EVENTS_PER_STEP)
    read = ScriptedToolCall(tool="read_file", args={"path": "README.md"})
    chunks = [f"word{i % 97} " for i in range(CHUNKS_PER_STEP)]
    body = [Step(text=chunks, toolCalls=[read]) for _ in range(steps - 1)]
    return AgentScript(steps=[*body, Step(text=chunks)])


def _deep_size(value: object, seen: set[int] | None = None) -> int:
    """Bytes of `value` and everything it holds (objects counted once)."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(_deep_size(k, seen) + _deep_size(v, seen) for k, v in value.items())
    elif isinstance(value, list | tuple | set | frozenset):
        size += sum(_deep_size(item, seen) for item in value)
    elif hasattr(value, "__dict__"):
        size += _deep_size(vars(value), seen)
    elif hasattr(value, "__slots__"):
        size += sum(
            _deep_size(getattr(value, name), seen) for name in value.__slots__ if hasattr(value, name)
        )
    return size


def _traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def _wait_all_done(pilot, live, agents: int, turns: int) -> None:
    def started() -> bool:  # every agent's turn has started
        sessions = live.state.sessions
        return len(sessions) >= agents and all(len(s.turns) >= turns for s in sessions.values())

    while not started() or live.state.running_count():
        await asyncio.sleep(0.05)  # a plain sleep: the app is busy, `pilot.pause` would time out
    await pilot.pause(0.2)  # the last redraws


def _measure(live, provider: ScriptedProvider, sessions: Path, before: int) -> dict[str, float]:
    """What the dashboard holds now, and what the reducer and the transcripts account for."""
    provider.calls.clear()  # the scripted model's own record of its calls is not the dashboard's
    retained = _traced() - before
    engine = live.workbench.engine
    transcript = _deep_size([info.transcript.messages for info in engine.sessions()])
    stored = list(replay_all(sessions))
    start = _traced()
    state = project_state(stored)
    reducer = _traced() - start
    del state, stored
    return {
        "events": float(live.state.event_count),
        "retained": float(retained),
        "reducer": float(reducer),
        "transcript": float(transcript),
    }


async def _run(events: int, agents: int, workdir: Path) -> tuple[dict[str, float], dict[str, float], float]:
    project = workdir / "project"
    project.mkdir()
    (project / "README.md").write_text("# bench\n" * 20)
    names = [f"agent-{n:02d}" for n in range(agents)]
    half = _script(events // agents // 2)
    script = AgentScript(steps=half.steps + half.steps)  # turn 1, then a follow-up turn 2
    provider = ScriptedProvider(agents={name: script for name in names})
    models = [ModelChoice("scripted", "bench", build=lambda: provider)]
    sessions = workdir / "sessions"
    app = AgentTuiApp(sessions_dir=sessions, project=project, models=models)
    started = time.perf_counter()
    async with app.run_test(size=(160, 50)) as pilot:
        live = app.live
        assert live is not None
        while live.workbench is None:
            await pilot.pause(0.01)
        await pilot.pause(0.1)
        before = _traced()
        workbench = live.workbench
        ids = [
            await workbench.start_agent(AgentSpec("Work through the README", project, name=n)) for n in names
        ]
        await _wait_all_done(pilot, live, agents, 1)
        first = _measure(live, provider, sessions, before)
        for session_id in ids:
            sent = workbench.send(session_id, "Again, please")
            assert isinstance(sent, Sent) and sent.how == "started"
        await _wait_all_done(pilot, live, agents, 2)
        second = _measure(live, provider, sessions, before)
        await pilot.press("q")
    return first, second, time.perf_counter() - started


def bench_dashboard_memory(events: int = 100_000, agents: int = 20) -> Measured:
    """Run the dashboard once and measure (see the module docstring)."""
    tracemalloc.start()
    try:
        with tempfile.TemporaryDirectory(prefix="agent-tui-bench-dash-") as tmp:
            first, second, seconds = asyncio.run(_run(events, agents, Path(tmp)))
    finally:
        tracemalloc.stop()
    grown = max(1.0, second["events"] - first["events"])
    return Measured(
        events=int(second["events"]),
        seconds=seconds,
        retained_per_event=second["retained"] / second["events"],
        reducer_per_event=second["reducer"] / second["events"],
        transcript_per_event=second["transcript"] / second["events"],
        beyond_per_event=(
            (second["retained"] - first["retained"])
            - (second["reducer"] - first["reducer"])
            - (second["transcript"] - first["transcript"])
        )
        / grown,
    )


@dataclass(frozen=True)
class Measured:
    """Bytes per event: what the dashboard holds, what the reducer and the transcripts account
    for, and (`beyond_per_event`) what it held per event of the second half beyond those two."""

    events: int
    seconds: float
    retained_per_event: float
    reducer_per_event: float
    transcript_per_event: float
    beyond_per_event: float

    @property
    def passed(self) -> bool:
        return self.beyond_per_event < TARGET_BYTES_BEYOND


def dashboard_rows(events: int = 100_000, agents: int = 20) -> list[Row]:
    """The result as rows of `bench/run.py`'s table (baseline: the reducer's own state)."""
    result = bench_dashboard_memory(events, agents)
    return [
        Row(
            name=f"dashboard memory beyond the reducer ({agents} agents, {result.events:,} events)",
            measured=result.beyond_per_event,
            baseline=result.reducer_per_event,
            ratio=result.beyond_per_event / max(result.reducer_per_event, 1e-9),
            target=f"< {TARGET_BYTES_BEYOND} B/event",
            passed=result.passed,
            unit="B/event",
        )
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--agents", type=int, default=20)
    args = parser.parse_args(argv)
    result = bench_dashboard_memory(args.events, args.agents)
    print(
        f"{result.events:,} events from {args.agents} agents in {result.seconds:.1f} s (headless dashboard)"
    )
    print(f"{'retained by the dashboard':<40} {result.retained_per_event:>8.1f} B/event")
    print(f"{'  the reducer state (baseline)':<40} {result.reducer_per_event:>8.1f} B/event")
    print(f"{'  the engine transcripts':<40} {result.transcript_per_event:>8.1f} B/event")
    verdict = "pass" if result.passed else "FAIL"
    print(
        f"{'growth beyond those, second half':<40} {result.beyond_per_event:>8.1f} B/event"
        f"  (target < {TARGET_BYTES_BEYOND}: {verdict})"
    )
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
