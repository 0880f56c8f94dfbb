"""The replay screen: the dashboard's panels over recorded logs, and a scrubber to move in time.

A thread worker opens the logs, posts a first look at their end (`preview_end`), then indexes
them in batches of a few thousand events, posting progress; the screen draws at once and every
key works while it runs (positions not indexed yet are simply not reachable). Following runs a
`Follower` in a thread of its own; each change arrives as the state at the new end, already
folded, so the screen's thread never parses a log line it did not ask for.

The cursor is a position in the timeline (`agent_tui.replay.view`); a seek restores the nearest
checkpoint and folds at most a few thousand events read from disk. Jumps, `g`o to and `/`
filters move the cursor; with a filter on, stepping visits only the matching events.
"""

from __future__ import annotations

import gc
import re
import threading
import time
from array import array
from bisect import bisect_left, bisect_right
from pathlib import Path
from typing import Literal

from textual import on, work
from textual.binding import Binding
from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from agent_tui.replay.bar import Cell, bar_cells
from agent_tui.replay.filters import Filter, matching
from agent_tui.replay.follow import Follower
from agent_tui.replay.goto import GotoError, resolve
from agent_tui.replay.kinds import Mark
from agent_tui.replay.preview import preview_end
from agent_tui.replay.timeline import BATCH, PollResult, Timeline
from agent_tui.replay.view import Snapshot, TimelineView, end_snapshot
from agent_tui.tui.commands import PaletteCommand
from agent_tui.tui.formatting import agent_path_text
from agent_tui.tui.messages import (
    ReplayAppended,
    ReplayFiltered,
    ReplayIndexed,
    ReplayIndexing,
    ReplayNotice,
    ReplayOpened,
    ReplayPromptSubmitted,
    ScrubRequested,
)
from agent_tui.tui.screens.sessions import SessionsScreen
from agent_tui.tui.widgets.index_progress import IndexProgress
from agent_tui.tui.widgets.replay_detail import ReplayDetail
from agent_tui.tui.widgets.replay_prompt import ReplayPrompt
from agent_tui.tui.widgets.scrubber import Scrubber
from agent_tui.tui.widgets.session_detail import SessionDetail
from agent_tui.tui.widgets.summary_bar import SummaryBar

BIG_STEP = 100
SPEEDS = (5, 10, 20, 50, 100, 200, 500, 1000, 5000)
DEFAULT_SPEED = 20
TICKS_PER_SECOND = 20
PROGRESS_SECONDS = 0.1
FIRST_PAINT_WAIT = 1.0
FOLLOW_PAINT_SECONDS = 0.1
_CURSOR_ACTIONS = {"step", "seek_start", "seek_end", "play_pause"}  # left to the prompt when open
_WHERE = re.compile(r"^(?P<path>.+?)(?P<rest>:\d+: .*|: .*)$", re.S)
_MARK_NAMES = {"turn": "turn start", "compress": "compression", "approval": "approval", "failure": "failure"}


def _short(error: str) -> str:
    """`FILE:LINE: reason` with the file's name instead of its whole path (the bars are narrow;
    the notification says the whole path)."""
    match = _WHERE.match(error)
    return Path(match["path"]).name + match["rest"] if match else error


def _mode(logs: int) -> str:
    return f"replay · {logs} log{'s' if logs != 1 else ''}"


class ReplayScreen(SessionsScreen):
    """Scrub through recorded sessions.

    Args:
        files: the session logs (may be empty when following a directory).
        follow: tail the logs (and pick up new ones in `watch_dir`).
        watch_dir: the directory whose new `*.jsonl` files join while following.
        start_at_end: open at the last event (True) or at the first.
        pause_indexing_after: stop indexing after this many events until `resume_indexing()`
            (for tests and screenshots of the indexing state).
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
        Binding("right_square_bracket", "jump('turn', 1)", "Next turn", show=False),
        Binding("left_square_bracket", "jump('turn', -1)", "Previous turn", show=False),
        Binding("c", "jump('compress', 1)", "Compress", show=False),
        Binding("C", "jump('compress', -1)", show=False),
        Binding("p", "jump('approval', 1)", "Approval", show=False),
        Binding("P", "jump('approval', -1)", show=False),
        Binding("e", "jump('failure', 1)", "Error", show=False),
        Binding("E", "jump('failure', -1)", show=False),
        Binding("g", "prompt('goto')", "Go to"),
        Binding("slash", "prompt('filter')", "Filter", key_display="/"),
        Binding("escape", "clear_filter", show=False),
    ]

    def __init__(
        self,
        files: list[Path],
        *,
        follow: bool = False,
        watch_dir: Path | None = None,
        start_at_end: bool = True,
        pause_indexing_after: int | None = None,
    ) -> None:
        super().__init__(_mode(len(files)))
        self.files = list(files)
        self.watch_dir = watch_dir
        self.following = follow
        self.start_at_end = start_at_end
        self.timeline: Timeline | None = None  # set when the worker has opened the logs
        self.view: TimelineView | None = None
        self.position = 0
        self.at_end = start_at_end
        self.indexing = True
        self.previewing = False
        self.loaded = False  # True once the indexed timeline is on screen
        self.playing = False
        self.speed = DEFAULT_SPEED
        self.errors: list[str] = []
        self._error_set: set[str] = set()
        self._errors_seen = 0
        self.filter: Filter | None = None
        self.matches: array[int] | None = None
        self.new_events = 0
        self._known_total = 0  # the timeline's length when the cursor last was at its end
        self._pause_after = pause_indexing_after
        self._resume = threading.Event()
        self._first_paint = threading.Event()
        self._stopping = threading.Event()
        self._follower: Follower | None = None
        self._play_timer: Timer | None = None
        self._pending_end: Snapshot | None = None
        self._end_timer: Timer | None = None
        self._last_end_shown = 0.0
        self._carry = 0.0
        self._bar_key: object = None
        self._bar: list[Cell] = []
        self._match_generation = -1
        self._matched_upto = 0  # the filter's matches cover the events before this index
        self.withdrawn_note = "it is not pending at this point of the log"

    def make_detail(self) -> SessionDetail:
        detail = ReplayDetail(id="detail")
        detail.hydrate = self._hydrate_turns
        return detail

    def _hydrate_turns(self, session_id: str, turns: int) -> None:
        if self.view is not None:
            self.view.hydrate(session_id, turns)

    def compose_bottom(self) -> list[Widget]:
        return [IndexProgress(id="index-progress"), ReplayPrompt(id="replay-prompt"), Scrubber(id="scrubber")]

    @property
    def scrubber(self) -> Scrubber:
        return self.query_one("#scrubber", Scrubber)

    @property
    def prompt(self) -> ReplayPrompt:
        return self.query_one("#replay-prompt", ReplayPrompt)

    def on_mount(self) -> None:
        super().on_mount()
        scrubber = self.scrubber
        scrubber.follow = self.following
        scrubber.speed = self.speed
        scrubber.label = Content.styled("opening the logs…", "$text-accent")
        scrubber.cells_for = self._cells
        self.query_one(IndexProgress).files = len(self.files)
        self._index()

    def on_unmount(self) -> None:
        self._stopping.set()
        self._resume.set()
        self._first_paint.set()
        if self._follower is not None:
            self._follower.stop()

    def resume_indexing(self) -> None:
        """Let an indexing paused by `pause_indexing_after` go on."""
        self._resume.set()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The cursor keys are priority bindings; while the prompt is open they are its own.
        return not (action in _CURSOR_ACTIONS and self.is_mounted and self.prompt.is_open)

    # -- the worker threads --------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="replay-index", exit_on_error=False)
    def _index(self) -> None:
        timeline = Timeline(self.files, watch_dir=self.watch_dir)
        preview = preview_end(timeline.files) if self.start_at_end and self.files else None
        self.post_message(ReplayOpened(timeline, preview))
        # Let the first screen paint before counting and folding take their share of the
        # interpreter.
        self._first_paint.wait(FIRST_PAINT_WAIT)
        timeline.count_lines()
        self.post_message(ReplayIndexing(0, timeline.expected_total))
        shown = 0.0
        while not self._stopping.is_set():
            limit = BATCH
            if self._pause_after is not None:
                limit = min(limit, self._pause_after - timeline.total)
                if limit <= 0:
                    self.post_message(ReplayIndexing(timeline.total, timeline.expected_total))
                    self._resume.wait()
                    self._pause_after = None
                    continue
            if not timeline.index_some(limit):
                break
            now = time.monotonic()
            if now - shown >= PROGRESS_SECONDS:
                shown = now
                self.post_message(ReplayIndexing(timeline.total, timeline.expected_total))
        if not self._stopping.is_set():
            self.post_message(ReplayIndexed(end_snapshot(timeline)))

    @work(thread=True, exclusive=True, group="replay-follow", exit_on_error=False)
    def _follow(self, timeline: Timeline) -> None:
        def changed(result: PollResult) -> None:
            for notice in result.notices:
                self.post_message(ReplayNotice(notice))
            self.post_message(ReplayAppended(end_snapshot(timeline)))

        follower = self._follower = Follower(timeline, changed)
        if not self._stopping.is_set():
            follower.run()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if event.worker.group == "replay-index":
            self.scrubber.label = Content.styled(f"Could not read the logs: {error}", "bold $text-error")
            self.notify(str(error), title="Could not read the logs", severity="error", timeout=30)
        elif event.worker.group == "replay-follow":
            self._set_following(False)
            self.notify(str(error), title="Follow stopped", severity="error", timeout=15)

    # -- what the workers report ---------------------------------------------------------------
    @on(ReplayOpened)
    def _opened(self, message: ReplayOpened) -> None:
        timeline = self.timeline = message.timeline
        self.view = TimelineView(timeline)
        scrubber = self.scrubber
        scrubber.total = timeline.expected_total
        if message.preview is not None:
            self.previewing = True
            self.position = scrubber.position = timeline.expected_total
            scrubber.label = Content.styled(
                "the end of each log (a first look while indexing)", "$text-accent"
            )
            self.show_state(message.preview)
        elif not self.files:
            where = self.watch_dir or "the directory"
            scrubber.label = Content.styled(f"waiting for logs in {where}…", "$text-accent")
            self.notify(f"No logs in {where} yet: waiting for them.", timeout=5)
        else:
            self._move_to(0)
        self.call_after_refresh(self._first_paint.set)

    @on(ReplayIndexing)
    def _indexing(self, message: ReplayIndexing) -> None:
        self.query_one(IndexProgress).show_progress(message.done, message.total)
        scrubber = self.scrubber
        scrubber.indexed = message.done
        scrubber.total = max(message.total, scrubber.total if self.previewing else 0)
        if self.previewing:
            self.position = scrubber.position = scrubber.total

    @on(ReplayIndexed)
    def _indexed(self, message: ReplayIndexed) -> None:
        timeline = self.timeline
        assert timeline is not None and self.view is not None
        self.indexing = False
        self.query_one(IndexProgress).display = False
        # What indexing built lives as long as the screen: keep the collector from scanning it.
        gc.collect()
        gc.freeze()
        self._report_errors()
        if self.at_end:
            self.previewing = False
            self._show_end(message.end)
        else:
            self._move_to(self.position)
        self.loaded = True
        if self.following:
            self._follow(timeline)

    @on(ReplayAppended)
    def _appended(self, message: ReplayAppended) -> None:
        # Following many busy logs, new ends arrive faster than a screen is worth redrawing:
        # show at most one every FOLLOW_PAINT_SECONDS (the newest), and leave the interpreter to
        # the thread that reads the logs in between.
        self._pending_end = message.end
        wait = self._last_end_shown + FOLLOW_PAINT_SECONDS - time.monotonic()
        if wait <= 0:
            self._take_end()
        elif self._end_timer is None:
            self._end_timer = self.set_timer(wait, self._take_end)

    def _take_end(self) -> None:
        self._end_timer = None
        end, self._pending_end = self._pending_end, None
        view = self.view
        if end is None or view is None or self.indexing:
            return
        self._last_end_shown = time.monotonic()
        timeline = self.timeline
        if timeline is not None and len(timeline.files) != len(self.files):
            self.files = [file.path for file in timeline.files]
            self.mode = _mode(len(self.files))
            self.query_one("#summary", SummaryBar).mode = self.mode
        self._report_errors()
        if self.matches is not None and self.filter is not None:
            # New events are matched on their own; a rebuilt timeline is matched again whole.
            same = end.generation == self._match_generation
            self._filter(self.filter, self._matched_upto if same else 0)
        if self.at_end and self.following:
            self._show_end(end)
            return
        rewound = end.generation != view.generation_seen
        if rewound:  # positions after the rebuilt part may have moved: stay on the same line
            anchor = view.anchor()
            self._move_to(self._position_of(anchor) if anchor is not None else self.position)
        self.new_events = max(0, end.position - self._known_total)
        self.scrubber.new_events = self.new_events
        self.scrubber.total = end.position
        self._redraw_bar()

    @on(ReplayNotice)
    def _notice(self, message: ReplayNotice) -> None:
        self.notify(message.text, title="Logs changed", severity=message.severity, timeout=8)

    def _report_errors(self) -> None:
        timeline = self.timeline
        if timeline is None:
            return
        for problem in timeline.unreadable():
            self._report(problem, "Unreadable log")
        errors = timeline.errors
        if len(errors) < self._errors_seen:  # rebuilt: look at them all again (seen ones are skipped)
            self._errors_seen = 0
        for _index, error in list(errors[self._errors_seen :]):
            self._report(error, "Corrupt line: marked on the timeline, the replay goes on")
        self._errors_seen = len(errors)

    def _report(self, error: str, title: str) -> None:
        if error in self._error_set:
            return
        self._error_set.add(error)
        self.errors.append(error)
        if len(self.errors) <= 3:
            self.notify(error, title=title, severity="error", timeout=15)
        more = f" (+{len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        self.summary_error = _short(self.errors[0]) + more
        self.show_state(self.state)

    # -- the cursor ----------------------------------------------------------------------------
    def _show_end(self, end: Snapshot) -> None:
        view = self.view
        assert view is not None
        view.adopt(end, self.session_tree.selected_id)
        self.at_end = True
        self.new_events = 0
        self._show()

    def _move_to(self, position: int) -> None:
        view = self.view
        timeline = self.timeline
        if view is None or timeline is None:
            return
        if self.indexing and position >= timeline.expected_total and self.start_at_end:
            return  # the end is the preview until indexing reaches it
        self.previewing = False
        view.seek(position, self.session_tree.selected_id)
        self.at_end = not self.indexing and view.position >= timeline.total
        if self.at_end:
            self.new_events = 0
        self._show()

    def _show(self) -> None:
        view = self.view
        timeline = self.timeline
        assert view is not None and timeline is not None
        self.position = view.position
        if self.at_end:
            self._known_total = view.position
        scrubber = self.scrubber
        scrubber.total = timeline.expected_total if self.indexing else timeline.total
        scrubber.indexed = timeline.total
        scrubber.position = view.position
        scrubber.new_events = self.new_events
        scrubber.label = self._label()
        self.show_state(view.state)

    def _label(self) -> Content:
        view = self.view
        timeline = self.timeline
        assert view is not None and timeline is not None
        if timeline.total == 0 and not timeline.files and self.following:
            return Content.styled(f"waiting for logs in {self.watch_dir or 'the directory'}…", "$text-accent")
        if view.position == 0:
            return Content.styled("start", "$text-accent")
        error = timeline.error_at(view.position - 1)
        if error is not None:
            return Content.styled(f"✗ {_short(error)}", "bold $text-error")
        event = view.event
        if event is None:
            return Content("")
        who = agent_path_text(view.state.agent_path(event.session_id)[-1:])
        return Content.styled(f"{event.type} · {who} · {event.ts[11:23]}", "$text-accent")

    def _show_detail(self) -> None:
        if self.view is not None:
            self.view.hydrate(self.session_tree.selected_id)
        super()._show_detail()

    def action_step(self, delta: int) -> None:
        self._pause()
        matches = self.matches
        if matches is None or not len(matches):
            self._move_to(self.position + delta)
            return
        current = self.position - 1
        if delta > 0:
            k = min(len(matches) - 1, bisect_right(matches, current) + delta - 1)
        else:
            k = max(0, bisect_left(matches, current) + delta)
        self._move_to(matches[k] + 1)

    def action_seek_start(self) -> None:
        self._pause()
        self._move_to(self.matches[0] + 1 if self.matches else 0)

    def action_seek_end(self) -> None:
        self._pause()
        timeline = self.timeline
        if timeline is None:
            return
        if self.matches:
            self._move_to(self.matches[-1] + 1)
        elif self.indexing and self.start_at_end:
            self.notify("The end shows once indexing reaches it.", timeout=3)
        else:
            self._move_to(timeline.total)

    def action_jump(self, mark: Mark, direction: int) -> None:
        self._pause()
        timeline = self.timeline
        if timeline is None:
            return
        with timeline.lock:
            indices = timeline.marks[mark]
            current = self.position - 1
            if direction > 0:
                k = bisect_right(indices, current)
                target = indices[k] + 1 if k < len(indices) else None
            else:
                k = bisect_left(indices, current) - 1
                target = indices[k] + 1 if k >= 0 else None
        if target is None:
            where = "later" if direction > 0 else "earlier"
            self.notify(f"No {where} {_MARK_NAMES[mark]}.", timeout=2)
            return
        self._move_to(target)

    @on(ScrubRequested)
    def _scrub(self, message: ScrubRequested) -> None:
        self._pause()
        self._move_to(message.position)

    def _position_of(self, anchor: tuple[int, int]) -> int:
        assert self.timeline is not None
        index = self.timeline.position_of(*anchor)
        return index + 1 if index is not None else self.position

    # -- the bar -------------------------------------------------------------------------------
    def _cells(self, width: int) -> list[Cell]:
        timeline = self.timeline
        if timeline is None:
            return [""] * width
        total = self.scrubber.total
        matched = -1 if self.matches is None else len(self.matches)
        key = (width, total, timeline.total, timeline.generation, matched, len(timeline.errors))
        if key != self._bar_key:
            with timeline.lock:
                marks: dict[str, array[int]] = {name: indices for name, indices in timeline.marks.items()}
                marks["corrupt"] = array("I", (index for index, _error in timeline.errors))
                self._bar = bar_cells(width, total, marks, self.matches)
            self._bar_key = key
        return self._bar

    def _redraw_bar(self) -> None:
        self.scrubber.revision += 1

    # -- go to and filter ----------------------------------------------------------------------
    def action_prompt(self, kind: Literal["filter", "goto"]) -> None:
        self._pause()
        value = self.filter.query if kind == "filter" and self.filter is not None else ""
        self.prompt.open(kind, value)

    @on(ReplayPromptSubmitted)
    def _prompted(self, message: ReplayPromptSubmitted) -> None:
        self.session_tree.focus()
        text = message.text
        if text is None or self.timeline is None:
            return
        if message.kind == "goto":
            try:
                position = resolve(
                    self.timeline, text, selected=self.session_tree.selected_id, cursor=self.position
                )
            except GotoError as error:
                self.notify(str(error), title="Go to", severity="warning", timeout=5)
                return
            self._move_to(position)
        elif not text.strip():
            self.action_clear_filter()
        else:
            self._filter(Filter.parse(text), 0)

    @work(thread=True, exclusive=True, group="replay-filter", exit_on_error=False)
    def _filter(self, flt: Filter, start: int) -> None:
        timeline = self.timeline
        assert timeline is not None
        with timeline.lock:
            generation, end = timeline.generation, timeline.total
        found = matching(timeline, flt, start, end)
        self.post_message(ReplayFiltered(flt.query, found, generation, start, end))

    @on(ReplayFiltered)
    def _filtered(self, message: ReplayFiltered) -> None:
        first = self.filter is None or self.filter.query != message.query
        if message.start and not first and self.matches is not None:
            if message.generation != self._match_generation:
                return  # matched against a timeline since rebuilt: a whole match follows
            self.matches.extend(message.matches)
        else:
            self.matches = message.matches
        matches = self.matches
        self._match_generation = message.generation
        self._matched_upto = message.end
        self.filter = Filter.parse(message.query)
        scrubber = self.scrubber
        scrubber.filter_text = message.query
        scrubber.matches = len(matches)
        self._redraw_bar()
        if not first:
            return
        if not len(matches):
            self.notify(f"No event matches {message.query!r}.", timeout=4)
            return
        # The cursor goes to the matching event nearest to it.
        current = self.position - 1
        k = bisect_left(matches, current)
        near = [matches[i] for i in (k - 1, k) if 0 <= i < len(matches)]
        self._move_to(min(near, key=lambda index: (abs(index - current), index)) + 1)

    def action_clear_filter(self) -> None:
        if self.filter is None:
            return
        self.filter = None
        self.matches = None
        self.scrubber.filter_text = ""
        self.scrubber.matches = 0
        self._redraw_bar()

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
        self._set_following(not self.following)
        if self.following:
            self.notify("Following the logs: new events appear as they are written.", timeout=3)
            timeline = self.timeline
            if timeline is not None and not self.indexing:
                self._show_end(end_snapshot(timeline))
                self._follow(timeline)
        else:
            self.notify("Follow off.", timeout=2)

    def _set_following(self, on: bool) -> None:
        self.following = on
        self.scrubber.follow = on
        if not on and self._follower is not None:
            self._follower.stop()
            self._follower = None

    # -- palette -------------------------------------------------------------------------------
    def palette_commands(self) -> list[PaletteCommand]:
        commands = super().palette_commands()
        commands[1:1] = [
            PaletteCommand("Play / pause", "Play the recording forward", self.action_play_pause),
            PaletteCommand("Go to start", "Before the first event", self.action_seek_start),
            PaletteCommand("Go to end", "After the last event", self.action_seek_end),
            PaletteCommand("Filter", "Show only events that match (/)", lambda: self.action_prompt("filter")),
            PaletteCommand("Go to a time or sequence", "g", lambda: self.action_prompt("goto")),
        ]
        return commands
