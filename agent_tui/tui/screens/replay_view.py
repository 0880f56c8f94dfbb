"""What the replay screen shows: the cursor's state in the panels, and the scrubber.

The state at the cursor comes from a `TimelineView` (`agent_tui.replay.view`): a move restores the
nearest checkpoint and folds at most a few thousand events read from disk. The scrubber's bar
draws the timeline's marks (or a filter's matches); its label names the event at the cursor, or
`FILE:LINE: reason` on a corrupt line. Problems with the logs (corrupt lines, unreadable files)
are reported once each, and the first stays in the summary bar.
"""

from __future__ import annotations

import re
import threading
from array import array
from pathlib import Path

from textual.content import Content
from textual.timer import Timer
from textual.widget import Widget

from agent_tui.events import counted
from agent_tui.reducer import DashboardState, epoch_ms
from agent_tui.replay import (
    Catalog,
    Cell,
    Filter,
    Follower,
    Snapshot,
    Timeline,
    TimelineCache,
    TimelineView,
    bar_cells,
    overlay,
)
from agent_tui.tui.formatting import agent_path_text
from agent_tui.tui.marked import marked
from agent_tui.tui.screens.sessions import SessionsScreen
from agent_tui.tui.timing import now_epoch_ms
from agent_tui.tui.widgets.index_progress import IndexProgress
from agent_tui.tui.widgets.replay_detail import ReplayDetail
from agent_tui.tui.widgets.replay_prompt import ReplayPrompt
from agent_tui.tui.widgets.scrubber import Scrubber
from agent_tui.tui.widgets.session_detail import SessionDetail

DEFAULT_SPEED = 20
_WHERE = re.compile(r"^(?P<path>.+?)(?P<rest>:\d+: .*|: .*)$", re.S)


def _short(error: str) -> str:
    """`FILE:LINE: reason` with the file's name instead of its whole path (the bars are narrow;
    the notification says the whole path)."""
    match = _WHERE.match(error)
    return Path(match["path"]).name + match["rest"] if match else error


LIST_FROM = 64
"""Over more logs than this, the replay opens on their list (read from each log's head and
tail) and the scrubber's timeline covers the chosen session's family (`Catalog.family`)."""

FOLLOW_TICK_SECONDS = 1.0
"""How often a followed replay at its end redraws the passing time (running turns, waits)."""


def replay_mode(logs: int) -> str:
    """The summary bar's `replay · 7 logs`."""
    return f"replay · {counted(logs, 'log')}"


class ReplayViewScreen(SessionsScreen):
    """The panels at the replay cursor, and the scrubber (see `ReplayScreen` for the arguments)."""

    def __init__(
        self,
        files: list[Path],
        *,
        follow: bool = False,
        watch_dir: Path | None = None,
        start_at_end: bool = True,
        pause_indexing_after: int | None = None,
    ) -> None:
        super().__init__(replay_mode(len(files)))
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
        self.many = len(self.files) > LIST_FROM
        """Listed from heads and tails, a timeline over the chosen family (see `LIST_FROM`)."""
        self.catalog: Catalog | None = None
        self.listed = False  # True once the list of many logs is on screen
        self.timelines = TimelineCache()
        self.family: tuple[Path, ...] = ()  # the logs the timeline covers (many logs)
        self._run_stop = threading.Event()  # stops the indexing of the current family

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

    def show_state(self, state: DashboardState) -> None:
        # Over many logs the tree lists every session from the catalog; the timeline's
        # sessions, at the cursor, take the place of theirs.
        if self.catalog is not None:
            state = overlay(self.catalog.state, state)
        super().show_state(state)

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

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(FOLLOW_TICK_SECONDS, self._follow_tick)

    def log_of(self, session_id: str) -> Path | None:
        found = next((path for path in self.files if path.stem == session_id), None)
        if found is None and self.watch_dir is not None:  # a log that appeared while following
            found = self.watch_dir / f"{session_id}.jsonl"
        return found

    def now_ms(self) -> int | None:
        """A recorded view's clock is the event under the cursor: a turn still running there shows
        how long it had run by then, the same at every replay of the log. Following at the end,
        it is the wall clock instead: the logs are being written now, so a running turn's time and
        a request's wait go on between their events."""
        event = self.view.event if self.view is not None else None
        at = epoch_ms(event.ts) if event is not None else None
        if self.following and self.at_end:
            clock = getattr(self.app, "clock_ms", None) or now_epoch_ms
            return max(clock(), at or 0)
        return at

    def _follow_tick(self) -> None:
        if self.following and self.at_end and self.view is not None:
            self.tick()

    def _label(self) -> Content:
        view = self.view
        timeline = self.timeline
        assert view is not None and timeline is not None
        if self.many and not self.family:
            return marked("choose a session: its timeline opens here", "$text-accent")
        if timeline.total == 0 and not timeline.files and self.following:
            return marked(f"waiting for logs in {self.watch_dir or 'the directory'}…", "$text-accent")
        if view.position == 0:
            return Content.styled("start", "$text-accent")
        error = timeline.error_at(view.position - 1)
        if error is not None:
            return marked(f"✗ {_short(error)}", "bold $text-error")
        event = view.event
        if event is None:
            return Content("")
        who = agent_path_text(view.state.agent_path(event.session_id)[-1:])
        return marked(f"{event.type} · {who} · {event.ts[11:23]}", "$text-accent")

    def _show_detail(self) -> None:
        if self.view is not None:
            self.view.hydrate(self.session_tree.selected_id)
        super()._show_detail()

    def _position_of(self, anchor: tuple[int, int]) -> int:
        assert self.timeline is not None
        index = self.timeline.position_of(*anchor)
        return index + 1 if index is not None else self.position

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
