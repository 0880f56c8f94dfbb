"""Live dashboard under load: 100 agents streaming as fast as the engine goes, drawn headless.

    .venv/bin/python bench/bench_live_dashboard.py [--sessions 100] [--events-per-session 2000]

The workload: a project with `--sessions` agents, each started the way the new-agent form's
command starts one (`Workbench.start_agent`), each playing one turn of a scripted model with no
delays: steps of 50 text chunks and a `read_file` call, then a final answer. Two runs of it,
each measured 3 times (min and median reported):

- headless, the baseline: the same `Workbench` (engine, JSONL store, router, tools) on a bare
  event loop, no reducer and no UI; events/s from the first agent started to the last turn's end
  stored;
- the dashboard: a real `AgentTuiApp` on the project, `run_test(size=(120, 40))`, the same
  agents; events/s over the same span.

Lag from event stored to paint, in the dashboard run, measured with three probes:
1. stored: an engine listener (the engine tells listeners right after the store appended the
   line, after the dashboard's own listener folded it into its state) notes `perf_counter()`
   for each event, in store order;
2. shown: the dashboard screen's `show_state` is wrapped; when it is called, every event stored
   so far is in the state it shows, and the widgets take it in (each marks what changed);
3. painted: the app's `_display` is wrapped; when the compositor hands it a frame of the
   dashboard screen (the strips of what changed, rendered by the widgets), the frame is also
   turned into the escape codes a terminal would receive (a headless app skips that step, a
   real one pays it). Every event changes one thing for sure, the summary bar's event count, so
   the count is the witness: a frame in which the count's widget was rendered shows every event
   of the last `show_state`, and those events count as painted at that moment. (A frame drawn
   before the screen took in the count's change does not count.)
Lag of an event = painted - stored (p50, p99, worst); every event must be painted in the end.

Also reported (informational): `show_state` calls and paints per second while the agents run
(the refresh asks for 12 a second) and what one of each costs (a paint: layout, rendering the
strips, and the escape codes).

Targets: >= 30,000 events/s over 100 sessions, >= 0.6x headless, lag p99 <= 250 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_log import Row, format_table  # noqa: E402

from agent_tui.engine.scenario import AgentScript, ScriptedToolCall, Step  # noqa: E402
from agent_tui.engine.scripted import ScriptedProvider  # noqa: E402
from agent_tui.events import Event  # noqa: E402
from agent_tui.runtime.model_router import ModelChoice  # noqa: E402
from agent_tui.runtime.workbench import AgentSpec, Workbench  # noqa: E402

SESSIONS = 100
EVENTS_PER_SESSION = 2_000
CHUNKS_PER_STEP = 50
EVENTS_PER_STEP = CHUNKS_PER_STEP + 6  # context.built, the deltas, one read_file chain of five
SIZE = (120, 40)
REPEATS = 3
TARGET_EVENTS_PER_SECOND = 30_000
TARGET_RATIO = 0.6
TARGET_P99_MS = 250.0


def _script(events: int) -> AgentScript:
    steps = max(2, events // EVENTS_PER_STEP)
    read = ScriptedToolCall(tool="read_file", args={"path": "README.md"})
    chunks = [f"word{i % 97} " for i in range(CHUNKS_PER_STEP)]
    return AgentScript(
        steps=[*(Step(text=chunks, toolCalls=[read]) for _ in range(steps - 1)), Step(text=chunks)]
    )


def _names(sessions: int) -> list[str]:
    return [f"agent-{n:03d}" for n in range(sessions)]


def _models(names: list[str], events_per_session: int) -> list[ModelChoice]:
    script = _script(events_per_session)
    provider = ScriptedProvider(agents={name: script for name in names})
    return [ModelChoice("scripted", "bench", build=lambda: provider)]


def _project(workdir: Path) -> Path:
    project = workdir / "project"
    project.mkdir(parents=True)
    (project / "README.md").write_text("# bench\n" * 20)
    return project


class _Finish:
    """Counts stored events and turn ends; `done` is set when every agent's turn has ended."""

    def __init__(self, turns: int) -> None:
        self.turns = turns
        self.events = 0
        self.ended = 0
        self.done = asyncio.Event()
        self.finished_at = 0.0

    def __call__(self, event: Event) -> None:
        self.events += 1
        if event.type == "turn.completed":
            self.ended += 1
            if self.ended == self.turns:
                self.finished_at = time.perf_counter()
                self.done.set()


# -- the baseline: the same workload without a UI ----------------------------------------------


async def _headless(workdir: Path, sessions: int, events_per_session: int) -> tuple[int, float]:
    names = _names(sessions)
    project = _project(workdir)
    workbench = Workbench.for_project(
        project=project,
        sessions_dir=workdir / "sessions",
        models=_models(names, events_per_session),
        questions=None,
    )
    finish = _Finish(sessions)
    workbench.engine.subscribe(finish)
    try:
        async with workbench.engine:
            started = time.perf_counter()
            for name in names:
                await workbench.start_agent(AgentSpec("Work through the README", project, name=name))
            await finish.done.wait()
    finally:
        workbench.close_store()
    return finish.events, finish.finished_at - started


# -- the dashboard -----------------------------------------------------------------------------


@dataclass
class _Probes:
    """Stored, shown and painted times, and what redraws cost (see the module docstring)."""

    stored: list[float] = field(default_factory=list)
    shown_upto: int = 0  # events in the state the screen last showed
    painted_upto: int = 0  # events whose count a paint has put on screen
    lags: list[float] = field(default_factory=list)
    shows: list[tuple[float, float]] = field(default_factory=list)  # (when, seconds it took)
    paints: list[tuple[float, float]] = field(default_factory=list)  # (when, seconds it took)
    _count_painted: bool = False
    _painting: float | None = None

    def on_stored(self, event: Event) -> None:
        self.stored.append(time.perf_counter())

    def install(self, app: Any) -> None:
        """Wrap what the probes watch: the screen's `show_state`, the event count's rendering,
        the screen's layout and paint, and the app's hand-over of a frame to the terminal."""
        screen = app.dashboard
        screen.show_state = self._timed_show(screen.show_state)
        count = screen.summary.query_one("#summary-counts")
        count.render_lines = self._witness(count.render_lines)
        screen._refresh_layout = self._timed_paint(screen._refresh_layout)
        screen._compositor_refresh = self._timed_paint(screen._compositor_refresh)
        app._display = self._displayed(app._display, screen, app.console)

    def _timed_show(self, show: Callable[..., None]) -> Callable[..., None]:
        def show_state(*args: Any, **kwargs: Any) -> None:
            began = time.perf_counter()
            self.shown_upto = len(self.stored)  # every event stored so far is in the state
            show(*args, **kwargs)
            self.shows.append((began, time.perf_counter() - began))

        return show_state

    def _witness(self, render_lines: Callable[..., Any]) -> Callable[..., Any]:
        def rendered(*args: Any, **kwargs: Any) -> Any:
            self._count_painted = True  # this paint draws the count the last show_state set
            return render_lines(*args, **kwargs)

        return rendered

    def _timed_paint(self, paint: Callable[..., None]) -> Callable[..., None]:
        def timed(*args: Any, **kwargs: Any) -> None:
            if self._painting is not None:  # a layout's own paint: counted with the layout
                paint(*args, **kwargs)
                return
            self._painting = began = time.perf_counter()
            try:
                paint(*args, **kwargs)
            finally:
                self._painting = None
                self.paints.append((began, time.perf_counter() - began))

        return timed

    def _displayed(
        self, display: Callable[[Any, Any], None], screen: Any, console: Any
    ) -> Callable[..., None]:
        def _display(on: Any, renderable: Any) -> None:
            if renderable is None or on is not screen:
                display(on, renderable)
                return
            render_segments = getattr(renderable, "render_segments", None)
            if render_segments is not None:
                render_segments(console)  # what a terminal would be sent
            display(on, renderable)
            if self._count_painted:
                now = time.perf_counter()
                stored, shown = self.stored, self.shown_upto
                self.lags.extend(now - stored[i] for i in range(self.painted_upto, shown))
                self.painted_upto = max(self.painted_upto, shown)
                self._count_painted = False

        return _display


async def _dashboard(workdir: Path, sessions: int, events_per_session: int) -> tuple[int, float, _Probes]:
    from agent_tui.tui.app import AgentTuiApp
    from agent_tui.tui.messages import WorkbenchReady

    class BenchApp(AgentTuiApp):
        """The dashboard, telling the benchmark when its engine is open."""

        engine_open = asyncio.Event()

        def on_workbench_ready(self, message: WorkbenchReady) -> None:
            self.engine_open.set()

    names = _names(sessions)
    project = _project(workdir)
    app = BenchApp(
        sessions_dir=workdir / "sessions", project=project, models=_models(names, events_per_session)
    )
    probes = _Probes()
    finish = _Finish(sessions)
    async with app.run_test(size=SIZE) as pilot:
        await app.engine_open.wait()
        await pilot.pause()
        live = app.live
        assert live is not None and live.workbench is not None
        probes.install(app)
        engine = live.workbench.engine
        engine.subscribe(probes.on_stored)
        engine.subscribe(finish)
        started = time.perf_counter()
        for name in names:
            await live.workbench.start_agent(AgentSpec("Work through the README", project, name=name))
        await finish.done.wait()
        elapsed = finish.finished_at - started
        deadline = time.monotonic() + 10
        while probes.painted_upto < len(probes.stored) and time.monotonic() < deadline:
            await pilot.pause(0.02)  # the last redraw
        probes.shows = [r for r in probes.shows if started <= r[0] <= finish.finished_at]
        probes.paints = [r for r in probes.paints if started <= r[0] <= finish.finished_at]
        await pilot.press("q")
    return finish.events, elapsed, probes


# -- the figures -------------------------------------------------------------------------------


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


@dataclass(frozen=True)
class Measured:
    """One pass of both runs."""

    events: int
    headless_rate: float
    dashboard_rate: float
    lag_p50_ms: float
    lag_p99_ms: float
    lag_max_ms: float
    unpainted: int
    shows_per_second: float
    show_ms: float
    paints_per_second: float
    paint_ms: float


def measure_once(sessions: int, events_per_session: int) -> Measured:
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-live-") as tmp:
        count, seconds = asyncio.run(_headless(Path(tmp) / "headless", sessions, events_per_session))
        headless_rate = count / seconds
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-live-") as tmp:
        events, seconds, probes = asyncio.run(
            _dashboard(Path(tmp) / "dashboard", sessions, events_per_session)
        )
    lags = probes.lags
    shows = [cost for _, cost in probes.shows]
    paints = [cost for _, cost in probes.paints]
    return Measured(
        events=events,
        headless_rate=headless_rate,
        dashboard_rate=events / seconds,
        lag_p50_ms=_percentile(lags, 0.50) * 1000,
        lag_p99_ms=_percentile(lags, 0.99) * 1000,
        lag_max_ms=max(lags, default=float("nan")) * 1000,
        unpainted=len(probes.stored) - probes.painted_upto,
        shows_per_second=len(shows) / seconds,
        show_ms=statistics.median(shows) * 1000 if shows else float("nan"),
        paints_per_second=len(paints) / seconds,
        paint_ms=statistics.median(paints) * 1000 if paints else float("nan"),
    )


def bench_live_dashboard(
    sessions: int = SESSIONS, events_per_session: int = EVENTS_PER_SESSION, repeats: int = REPEATS
) -> tuple[list[Row], list[Measured]]:
    """Rows for `bench/run.py`'s table (the median of `repeats` passes), and every pass."""
    passes = [measure_once(sessions, events_per_session) for _ in range(repeats)]

    def median(get: Callable[[Measured], float]) -> float:
        return statistics.median(get(p) for p in passes)

    rate = median(lambda p: p.dashboard_rate)
    base = median(lambda p: p.headless_rate)
    ratio = median(lambda p: p.dashboard_rate / p.headless_rate)
    p50 = median(lambda p: p.lag_p50_ms)
    p99 = median(lambda p: p.lag_p99_ms)
    painted = all(p.unpainted == 0 for p in passes)
    label = f"{sessions} sessions"
    rows = [
        Row(
            name=f"live dashboard: events/s, {label} (baseline: headless)",
            measured=rate,
            baseline=base,
            ratio=ratio,
            target=f">= {TARGET_EVENTS_PER_SECOND:,} ev/s and >= {TARGET_RATIO:g}x",
            passed=rate >= TARGET_EVENTS_PER_SECOND and ratio >= TARGET_RATIO,
            unit="ev/s",
        ),
        Row(
            name=f"live dashboard: lag stored->painted p99, {label} (baseline: p50)",
            measured=p99,
            baseline=p50,
            ratio=p99 / p50 if p50 else float("nan"),
            target=f"<= {TARGET_P99_MS:g} ms, every event painted",
            passed=p99 <= TARGET_P99_MS and painted,
            unit="ms",
        ),
    ]
    return rows, passes


def live_dashboard_rows(sessions: int = SESSIONS, events_per_session: int = EVENTS_PER_SESSION) -> list[Row]:
    """The rows `bench/run.py` prints."""
    return bench_live_dashboard(sessions, events_per_session)[0]


def _spread(values: list[float], fmt: str) -> str:
    return f"{format(min(values), fmt)} / {format(statistics.median(values), fmt)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--events-per-session", type=int, default=EVENTS_PER_SESSION)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    args = parser.parse_args(argv)
    rows, passes = bench_live_dashboard(args.sessions, args.events_per_session, args.repeats)
    print(f"{passes[0].events:,} events from {args.sessions} agents, {len(passes)} passes (min / median):")
    figures: list[tuple[str, Callable[[Measured], float], str]] = [
        ("headless events/s", lambda p: p.headless_rate, ",.0f"),
        ("dashboard events/s", lambda p: p.dashboard_rate, ",.0f"),
        ("dashboard / headless", lambda p: p.dashboard_rate / p.headless_rate, ".2f"),
        ("lag p50 ms", lambda p: p.lag_p50_ms, ".0f"),
        ("lag p99 ms", lambda p: p.lag_p99_ms, ".0f"),
        ("lag worst ms", lambda p: p.lag_max_ms, ".0f"),
        ("show_state calls/s", lambda p: p.shows_per_second, ".1f"),
        ("one show_state, median ms", lambda p: p.show_ms, ".1f"),
        ("paints/s", lambda p: p.paints_per_second, ".1f"),
        ("one paint, median ms", lambda p: p.paint_ms, ".1f"),
    ]
    for name, get, fmt in figures:
        print(f"  {name:<26} {_spread([get(p) for p in passes], fmt)}")
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
