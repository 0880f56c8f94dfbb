"""The Textual apps: the live dashboard (`agent-tui`) and the replay scrubber (`agent-tui replay`).

Both show the same panels over a `DashboardState` folded by the one reducer. The dashboard runs a
scenario in a worker on the app's own event loop and redraws on a short timer when events came
in (never once per event). For tests and screenshots either app can be built in a fixed state:
`AgentTuiApp(events=[...], live=False)`, or `ReplayApp([fixture.jsonl])`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState

import agent_tui
from agent_tui.events import Event
from agent_tui.reducer import project_state
from agent_tui.tui.commands import ScreenCommands
from agent_tui.tui.formatting import agent_path_text
from agent_tui.tui.live import LiveRun
from agent_tui.tui.messages import LiveRunFinished, PermissionAsked, PermissionWithdrawn
from agent_tui.tui.screens.dashboard import DashboardScreen
from agent_tui.tui.screens.help import HelpScreen
from agent_tui.tui.screens.replay import ReplayScreen

DEFAULT_THEME = "tokyo-night"
THEME_ENV = "AGENT_TUI_THEME"
REFRESH_SECONDS = 1 / 12
"""How often the live dashboard redraws when events came in."""
ASK_TOAST_GAP = 4.0
"""Seconds after an "approval needed" notification during which more asks only update the queue."""


def stylesheet_path() -> Path:
    """`app.tcss`: inside the package when installed from a wheel, else the repo's `styles/`."""
    try:
        packaged = Path(str(resources.files("agent_tui") / "styles" / "app.tcss"))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - namespace oddities
        packaged = Path(agent_tui.__file__).parent / "styles" / "app.tcss"
    if packaged.is_file():
        return packaged
    return Path(agent_tui.__file__).resolve().parent.parent / "styles" / "app.tcss"


class _AgentTuiBase(App[int]):
    """What both apps share: styles, theme, help, the command palette's screen commands."""

    CSS_PATH = str(stylesheet_path())
    TITLE = "agent-tui"
    COMMANDS = App.COMMANDS | {ScreenCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("f1", "help", "Help", show=False),
    ]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-normal"), (160, "-wide")]

    def __init__(self, *, theme: str | None = None) -> None:
        super().__init__()
        self._initial_theme = theme or os.environ.get(THEME_ENV) or DEFAULT_THEME

    def on_mount(self) -> None:
        if self._initial_theme in self.available_themes:
            self.theme = self._initial_theme

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())


class AgentTuiApp(_AgentTuiBase):
    """The dashboard: a live scenario run, or (live=False) a fixed set of recorded events.

    Args:
        events: events to show (folded once; for tests and screenshots).
        live: run `scenario_path`, writing logs to `sessions_dir`.
        scenario_path: the scenario (the built-in demo for `agent-tui`).
        sessions_dir: where the live run's logs go.
        workspace_root: where the scenario's directories are copied (a temp dir if None).
        theme: a Textual theme name (default: $AGENT_TUI_THEME, else tokyo-night).
    """

    def __init__(
        self,
        *,
        events: Iterable[Event] | None = None,
        live: bool = True,
        scenario_path: Path | None = None,
        sessions_dir: Path | None = None,
        workspace_root: Path | None = None,
        theme: str | None = None,
    ) -> None:
        super().__init__(theme=theme)
        self.live: LiveRun | None = None
        if live:
            if scenario_path is None or sessions_dir is None:
                raise ValueError("a live dashboard needs scenario_path and sessions_dir")
            self.live = LiveRun(scenario_path, sessions_dir, self.post_message, workspace_root)
            self._mode = f"live · {scenario_path.stem}"
        else:
            self._mode = "recorded"
        self._events = list(events or ())
        self._last_ask_toast = -ASK_TOAST_GAP

    def get_default_screen(self) -> Screen[None]:
        screen = DashboardScreen(self.live, self._mode)
        if self.live is None:
            screen.state = project_state(self._events)
        return screen

    @property
    def dashboard(self) -> DashboardScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, DashboardScreen)
        return screen

    def on_mount(self) -> None:
        super().on_mount()
        if self.live is not None:
            self.set_interval(REFRESH_SECONDS, self._refresh_live)
            self._run_live()

    # -- the live run --------------------------------------------------------------------------
    @work(exclusive=True, group="live-run", exit_on_error=False)
    async def _run_live(self) -> None:
        assert self.live is not None
        try:
            result = await self.live.play()
        except Exception as error:  # a bad scenario or a store failure: say so, keep the UI up
            self.post_message(LiveRunFinished("The run stopped.", error=f"{type(error).__name__}: {error}"))
            return
        reasons = [reason for reason in result.stop_reasons.values() if reason is not None]
        summary = f"Run finished: {len(reasons)} turns ended"
        counts = {reason: reasons.count(reason) for reason in sorted(set(reasons))}
        if counts:
            summary += " (" + ", ".join(f"{n} {reason}" for reason, n in counts.items()) + ")"
        self.post_message(LiveRunFinished(summary + "."))

    def _refresh_live(self) -> None:
        live = self.live
        if live is not None and live.dirty:
            live.dirty = False
            self.dashboard.show_state(live.state)

    @on(PermissionAsked)
    def _asked(self, message: PermissionAsked) -> None:
        request = message.request
        now = time.monotonic()
        if now - self._last_ask_toast < ASK_TOAST_GAP and request.risk != "destructive":
            self._refresh_live()  # the queue and the summary bar show it; one toast at a time
            return
        self._last_ask_toast = now
        self.notify(
            f"{agent_path_text(request.agent_path)}: {request.tool} ({request.risk})",
            title="Approval needed · a, then a or enter",
            severity="warning" if request.risk == "destructive" else "information",
            timeout=4,
        )
        self._refresh_live()

    @on(PermissionWithdrawn)
    def _withdrawn(self, message: PermissionWithdrawn) -> None:
        if self.live is not None:
            self.live.dirty = True
        self._refresh_live()

    @on(LiveRunFinished)
    def _finished(self, message: LiveRunFinished) -> None:
        self._refresh_live()
        if message.error:
            self.notify(message.error, title=message.summary, severity="error", timeout=30)
        else:
            self.notify(message.summary, title="Done", timeout=8)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "live-run" and event.state == WorkerState.ERROR:
            self.notify(str(event.worker.error), title="The run failed", severity="error", timeout=30)

    async def action_quit(self) -> None:
        live = self.live
        if live is not None and not live.finished and live.running_turns():
            self.notify("Stopping running turns…", timeout=2)
            await live.shutdown()
        self.workers.cancel_group(self, "live-run")
        self.exit(0)


class ReplayApp(_AgentTuiBase):
    """The replay scrubber over recorded session logs.

    Args:
        files: the logs.
        follow: tail them (and new logs in `watch_dir`).
        watch_dir: the sessions directory to pick new logs up from in follow mode.
        start_at_end: open at the last event (True) or the first.
        theme: a Textual theme name.
        pause_indexing_after: hold indexing after this many events (tests and screenshots of
            the indexing state; `replay.resume_indexing()` lets it go on).
    """

    def __init__(
        self,
        files: list[Path],
        *,
        follow: bool = False,
        watch_dir: Path | None = None,
        start_at_end: bool = True,
        theme: str | None = None,
        pause_indexing_after: int | None = None,
    ) -> None:
        super().__init__(theme=theme)
        self._files = list(files)
        self._follow = follow
        self._watch_dir = watch_dir
        self._start_at_end = start_at_end
        self._pause_indexing_after = pause_indexing_after

    def get_default_screen(self) -> Screen[None]:
        return ReplayScreen(
            self._files,
            follow=self._follow,
            watch_dir=self._watch_dir,
            start_at_end=self._start_at_end,
            pause_indexing_after=self._pause_indexing_after,
        )

    @property
    def replay(self) -> ReplayScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, ReplayScreen)
        return screen


# -- entry points (agent_tui.cli) --------------------------------------------------------------


def run_dashboard(sessions_dir: Path) -> int:
    """`agent-tui`: the dashboard on the built-in demo, logging to `sessions_dir`."""
    from agent_tui.demo import demo_scenario_path

    app = AgentTuiApp(scenario_path=demo_scenario_path(), sessions_dir=sessions_dir)
    app.run()
    print(f"agent-tui: session logs in {sessions_dir} (agent-tui replay {sessions_dir})")
    return app.return_code or 0


def run_replay(
    files: list[Path], follow: bool, *, sessions_dir: Path | None = None, from_start: bool = False
) -> int:
    """`agent-tui replay PATH [--follow] [--from-start]`: the scrubber over `files`.

    `sessions_dir` (PATH when it is a directory, even one that does not exist yet) is where
    follow mode picks up new logs; without it, it is guessed from `files`.
    """
    watch_dir = sessions_dir if sessions_dir is not None else _sessions_dir_of(files)
    app = ReplayApp(files, follow=follow, watch_dir=watch_dir, start_at_end=not from_start)
    app.run()
    return app.return_code or 0


def _sessions_dir_of(files: list[Path]) -> Path | None:
    """The directory to watch for new logs in follow mode, guessed from what the CLI passed.

    `agent-tui replay DIR` passes every log of DIR (several files, one parent: watch DIR, even if
    more logs appeared since); `agent-tui replay FILE` passes one file, and then only that file is
    followed, unless it is its directory's only log (then a sessions dir that has just begun).
    """
    parents = {path.parent for path in files}
    if len(parents) != 1:
        return None
    directory = parents.pop()
    if len(files) > 1:
        return directory
    return directory if sorted(directory.glob("*.jsonl")) == sorted(files) else None
