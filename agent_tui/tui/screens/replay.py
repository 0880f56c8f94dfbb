"""The replay screen: the dashboard's panels over recorded logs, and a scrubber to move in time.

Loading runs in a thread worker that streams progress, so the screen draws at once. Follow mode
tails the logs with `watchfiles.awatch` (new session logs in a watched directory too) and keeps
the cursor at the end when it was there. A corrupt log is one clear `file:line: reason` in a
notification and in the summary bar; the events before the bad line still show.
"""

from __future__ import annotations

from pathlib import Path

from textual import on, work
from textual.binding import Binding
from textual.timer import Timer
from textual.widget import Widget
from textual.worker import Worker, WorkerState
from watchfiles import awatch

from agent_tui.replay.sources import ReplaySourceError, log_files
from agent_tui.tui.commands import PaletteCommand
from agent_tui.tui.formatting import agent_path_text
from agent_tui.tui.messages import (
    ReplayAppended,
    ReplayLoaded,
    ReplayLoadProgress,
    ScrubRequested,
)
from agent_tui.tui.screens.sessions import SessionsScreen
from agent_tui.tui.timeline import LogReader, ReplayTimeline, load_timeline
from agent_tui.tui.widgets.scrubber import Scrubber
from agent_tui.tui.widgets.summary_bar import SummaryBar

BIG_STEP = 100
SPEEDS = (5, 10, 20, 50, 100, 200, 500, 1000, 5000)
DEFAULT_SPEED = 20
TICKS_PER_SECOND = 20


def _mode(logs: int) -> str:
    return f"replay · {logs} log{'s' if logs != 1 else ''}"


class ReplayScreen(SessionsScreen):
    """Scrub through recorded sessions.

    Args:
        files: the session logs.
        follow: tail the logs from the start.
        watch_dir: a directory whose new `*.jsonl` files join the replay in follow mode (None:
            only `files` are followed).
        start_at_end: open at the last event (True) or at the first.
    """

    BINDINGS = [
        Binding("left", "step(-1)", "-1", show=False, priority=True),
        Binding("right", "step(1)", "+1", show=False, priority=True),
        Binding("shift+left,pageup", "step(-100)", "-100", show=False, priority=True),
        Binding("shift+right,pagedown", "step(100)", "+100", show=False, priority=True),
        Binding("home", "seek_start", "Start", show=False, priority=True),
        Binding("end", "seek_end", "End", show=False, priority=True),
        Binding("space", "play_pause", "Play/pause", priority=True),
        Binding("plus,equals_sign", "speed(1)", "Faster", show=False),
        Binding("minus", "speed(-1)", "Slower", show=False),
    ]

    def __init__(
        self,
        files: list[Path],
        *,
        follow: bool = False,
        watch_dir: Path | None = None,
        start_at_end: bool = True,
    ) -> None:
        super().__init__(_mode(len(files)))
        self.files = list(files)
        self.watch_dir = watch_dir
        self.following = follow
        self.start_at_end = start_at_end
        self.timeline: ReplayTimeline | None = None  # set by the loading thread
        self.loaded = False  # True once the screen has shown the loaded timeline
        self.readers: dict[Path, LogReader] = {}
        self.position = 0
        self.playing = False
        self.speed = DEFAULT_SPEED
        self.errors: list[str] = []
        self._play_timer: Timer | None = None
        self._carry = 0.0
        self.withdrawn_note = "it is not pending at this point of the log"

    def compose_bottom(self) -> list[Widget]:
        return [Scrubber(id="scrubber")]

    @property
    def scrubber(self) -> Scrubber:
        return self.query_one("#scrubber", Scrubber)

    def on_mount(self) -> None:
        super().on_mount()
        self.scrubber.follow = self.following
        self.scrubber.speed = self.speed
        self._load()

    # -- loading -------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="replay-load", exit_on_error=False)
    def _load(self) -> None:
        readers = [LogReader(path) for path in self.files]
        self.readers = {reader.path: reader for reader in readers}

        def progress(stage: str, done: int, total: int) -> None:
            self.post_message(ReplayLoadProgress(stage, done, total))

        self.timeline, errors = load_timeline(readers, progress)
        self.post_message(ReplayLoaded(errors))

    @on(ReplayLoadProgress)
    def _progress(self, message: ReplayLoadProgress) -> None:
        if self.timeline is None:
            share = f" {100 * message.done // message.total}%" if message.total else ""
            self.scrubber.notice = f"Loading logs… {message.stage} {message.done:,} events{share}"

    @on(ReplayLoaded)
    def _loaded(self, message: ReplayLoaded) -> None:
        timeline = self.timeline
        assert timeline is not None
        self.scrubber.notice = None
        self._report(message.errors)
        self._move_to(timeline.total if (self.start_at_end or self.following) else 0)
        self.loaded = True
        if self.following:
            self._follow()

    def _report(self, errors: list[str]) -> None:
        for error in errors:
            if error not in self.errors:
                self.errors.append(error)
                self.notify(
                    error, title="Corrupt log: events up to this line are shown", severity="error", timeout=15
                )
        if self.errors:
            more = f" (+{len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
            self.summary_error = self.errors[0] + more

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if event.worker.group == "replay-load":
            self.scrubber.notice = f"Could not load the logs: {error}"
            self.notify(str(error), title="Could not load the logs", severity="error", timeout=30)
        elif event.worker.group == "replay-follow":
            self.following = False
            self.scrubber.follow = False
            self.notify(str(error), title="Follow stopped", severity="error", timeout=15)

    # -- the cursor ----------------------------------------------------------------------------
    def _move_to(self, position: int) -> None:
        timeline = self.timeline
        if timeline is None:
            return
        position = max(0, min(position, timeline.total))
        self.position = position
        state = timeline.state_at(position)
        event = timeline.event_at(position)
        scrubber = self.scrubber
        scrubber.total = timeline.total
        scrubber.position = position
        if event is None:
            scrubber.event_label = "start"
        else:
            who = agent_path_text(state.agent_path(event.session_id)[-1:])
            scrubber.event_label = f"{event.type} · {who} · {event.ts[11:23]}"
        self.show_state(state)

    def action_step(self, delta: int) -> None:
        self._pause()
        self._move_to(self.position + delta)

    def action_seek_start(self) -> None:
        self._pause()
        self._move_to(0)

    def action_seek_end(self) -> None:
        self._pause()
        self._move_to(self.timeline.total if self.timeline is not None else 0)

    @on(ScrubRequested)
    def _scrub(self, message: ScrubRequested) -> None:
        self._pause()
        self._move_to(message.position)

    # -- playing -------------------------------------------------------------------------------
    def action_play_pause(self) -> None:
        if self.playing:
            self._pause()
            return
        if self.timeline is None:
            return
        if self.position >= self.timeline.total:
            self._move_to(0)
        self.playing = True
        self._carry = 0.0
        self.scrubber.playing = True
        self._play_timer = self.set_interval(1 / TICKS_PER_SECOND, self._tick)

    def _tick(self) -> None:
        timeline = self.timeline
        if timeline is None or self.position >= timeline.total:
            self._pause()
            return
        # A steady rate at any speed: whole events per tick, the fraction carried over.
        self._carry += self.speed / TICKS_PER_SECOND
        step = int(self._carry)
        if step:
            self._carry -= step
            self._move_to(self.position + step)

    def _pause(self) -> None:
        self.playing = False
        if self.is_mounted:
            self.scrubber.playing = False
        if self._play_timer is not None:
            self._play_timer.stop()
            self._play_timer = None

    def action_speed(self, direction: int) -> None:
        index = SPEEDS.index(self.speed) if self.speed in SPEEDS else SPEEDS.index(DEFAULT_SPEED)
        index = max(0, min(len(SPEEDS) - 1, index + direction))
        self.speed = SPEEDS[index]
        self.scrubber.speed = self.speed

    # -- follow --------------------------------------------------------------------------------
    def action_toggle_follow(self) -> None:
        self.following = not self.following
        self.scrubber.follow = self.following
        if self.following:
            self.notify("Following the logs: new events appear as they are written.", timeout=3)
            if self.timeline is not None:
                self._catch_up()
                self._move_to(self.timeline.total)
                self._follow()
        else:
            self.workers.cancel_group(self, "replay-follow")
            self.notify("Follow off.", timeout=2)

    @work(exclusive=True, group="replay-follow", exit_on_error=False)
    async def _follow(self) -> None:
        watched = {path.parent for path in self.files}
        if self.watch_dir is not None:
            watched.add(self.watch_dir)
        self._catch_up()
        async for _changes in awatch(*watched, debounce=50, step=25, recursive=False):
            self._catch_up()

    def _catch_up(self) -> None:
        """Read what the logs gained since the last look (and logs new in the watched dir)."""
        if self.watch_dir is not None:
            try:
                found = log_files(self.watch_dir)
            except ReplaySourceError:  # the directory went away or has no logs: nothing to add
                found = []
            for path in found:
                if path not in self.readers:
                    self.files.append(path)
                    self.readers[path] = LogReader(path)
                    self.mode = _mode(len(self.files))
                    self.query_one("#summary", SummaryBar).mode = self.mode
        new = []
        for reader in self.readers.values():
            new += reader.read_new()
        errors = [reader.error for reader in self.readers.values() if reader.error is not None]
        if new or any(error not in self.errors for error in errors):
            self.post_message(ReplayAppended(new, errors))

    @on(ReplayAppended)
    def _appended(self, message: ReplayAppended) -> None:
        timeline = self.timeline
        if timeline is None:
            return
        self._report(message.errors)
        at_end = self.position >= timeline.total
        anchor = timeline.event_at(self.position)
        timeline.extend(message.events)
        if at_end and self.following:
            self._move_to(timeline.total)
        else:
            # Stay on the same event, wherever late arrivals were inserted.
            self._move_to(timeline.position_of(anchor))

    # -- palette -------------------------------------------------------------------------------
    def palette_commands(self) -> list[PaletteCommand]:
        commands = super().palette_commands()
        commands[1:1] = [
            PaletteCommand("Play / pause", "Play the recording forward", self.action_play_pause),
            PaletteCommand("Go to start", "Before the first event", self.action_seek_start),
            PaletteCommand("Go to end", "After the last event", self.action_seek_end),
        ]
        return commands
