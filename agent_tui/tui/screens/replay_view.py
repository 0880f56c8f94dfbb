"""`ReplayView`: what the replay screen shows at its cursor, and the scrubber's bar and label.

One of the replay screen's three parts (the screen's keys, the feed's threads, this view). The
state at the cursor comes from a `TimelineView` (`agent_tui.replay.view`): a move restores the
nearest checkpoint and folds at most a few thousand events read from disk. The scrubber's bar
draws the timeline's marks (or a filter's matches); its label names the event at the cursor, or
`FILE:LINE: reason` on a corrupt line. Problems with the logs (corrupt lines, unreadable files)
are reported once each, and the first stays in the summary bar.

Invariants:
- the view reaches its screen only through `ReplayPanels` (the scrubber, the tree's selection,
  where a state is shown, where a problem is said) and reads which logs are replayed from the
  `ReplaySource` it shares with the feed; it imports neither the screen nor the feed;
- a move never reaches past what is indexed while the end is still a preview (`move_to`);
- each problem is reported once, however often the timeline is looked at again.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from textual.content import Content

from agent_tui.events import counted
from agent_tui.reducer import DashboardState
from agent_tui.replay import LIST_FROM, Cell, Filter, Snapshot, Timeline, TimelineView, bar_cells
from agent_tui.tui.formatting import agent_path_text
from agent_tui.tui.marked import marked
from agent_tui.tui.widgets.scrubber import Scrubber

DEFAULT_SPEED = 20
_WHERE = re.compile(r"^(?P<path>.+?)(?P<rest>:\d+: .*|: .*)$", re.S)


def _short(error: str) -> str:
    """`FILE:LINE: reason` with the file's name instead of its whole path (the bars are narrow;
    the notification says the whole path)."""
    match = _WHERE.match(error)
    return Path(match["path"]).name + match["rest"] if match else error


def replay_mode(logs: int) -> str:
    """The summary bar's `replay · 7 logs`."""
    return f"replay · {counted(logs, 'log')}"


@dataclass(eq=False)
class ReplaySource:
    """Which logs are replayed and how: read by the view, changed by the feed.

    Args:
        files: the session logs (grows while following a directory).
        watch_dir: the directory whose new `*.jsonl` files join while following.
        following: tailing the logs now.
        start_at_end: open at the last event (True) or at the first.
    """

    files: list[Path]
    watch_dir: Path | None = None
    following: bool = False
    start_at_end: bool = True
    family: tuple[Path, ...] = ()
    """Many logs: the logs the timeline covers (the chosen session's family)."""
    many: bool = field(init=False)
    """Listed from heads and tails, a timeline over the chosen family (see `LIST_FROM`)."""

    def __post_init__(self) -> None:
        self.many = len(self.files) > LIST_FROM

    @property
    def mode(self) -> str:
        return replay_mode(len(self.files))


class ReplayPanels(Protocol):
    """What the view uses of its screen."""

    @property
    def scrubber(self) -> Scrubber: ...

    def selected_session(self) -> str | None:
        """The session the tree's cursor is on."""
        ...

    def show_state(self, state: DashboardState) -> None: ...

    def show_problem(self, error: str, title: str, *, loud: bool, summary: str) -> None:
        """Say a problem with the logs (`loud`: notify it too); `summary` stays in the summary bar."""
        ...


class ReplayView:
    """The cursor over the timeline, and how the scrubber draws it (see the module docstring)."""

    def __init__(self, panels: ReplayPanels, source: ReplaySource) -> None:
        self.panels = panels
        self.source = source
        self.timeline: Timeline | None = None  # set when the feed has opened the logs
        self.view: TimelineView | None = None
        self.position = 0
        self.at_end = source.start_at_end
        self.indexing = True
        self.previewing = False
        self.loaded = False  # True once the indexed timeline is on screen
        self.errors: list[str] = []
        self._error_set: set[str] = set()
        self._errors_seen = 0
        self.filter: Filter | None = None
        self.matches: array[int] | None = None
        self.new_events = 0
        self._known_total = 0  # the timeline's length when the cursor last was at its end
        self._bar_key: object = None
        self._bar: list[Cell] = []

    def show_timeline(self, timeline: Timeline) -> None:
        """Put the cursor over `timeline` (its errors looked at anew, its bar drawn anew)."""
        self.timeline = timeline
        self.view = TimelineView(timeline)
        self._errors_seen = 0
        self._bar_key = None

    def hydrate(self, session_id: str | None, turns: int | None = None) -> None:
        """Make the last `turns` turns of `session_id` whole (`TimelineView.hydrate`), before the
        detail shows them."""
        if self.view is not None:
            self.view.hydrate(session_id, turns)

    # -- problems ------------------------------------------------------------------------------
    def report_errors(self) -> None:
        timeline = self.timeline
        if timeline is None:
            return
        for problem in timeline.unreadable():
            self.report(problem, "Unreadable log")
        errors = timeline.errors
        if len(errors) < self._errors_seen:  # rebuilt: look at them all again (seen ones are skipped)
            self._errors_seen = 0
        for _index, error in list(errors[self._errors_seen :]):
            self.report(error, "Corrupt line: marked on the timeline, the replay goes on")
        self._errors_seen = len(errors)

    def report(self, error: str, title: str) -> None:
        if error in self._error_set:
            return
        self._error_set.add(error)
        self.errors.append(error)
        more = f" (+{len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        self.panels.show_problem(
            error, title, loud=len(self.errors) <= 3, summary=_short(self.errors[0]) + more
        )

    # -- the cursor ----------------------------------------------------------------------------
    def show_end(self, end: Snapshot) -> None:
        view = self.view
        assert view is not None
        view.adopt(end, self.panels.selected_session())
        self.at_end = True
        self.new_events = 0
        self.show()

    def move_to(self, position: int) -> None:
        view = self.view
        timeline = self.timeline
        if view is None or timeline is None:
            return
        if self.indexing and position >= timeline.expected_total and self.source.start_at_end:
            return  # the end is the preview until indexing reaches it
        self.previewing = False
        view.seek(position, self.panels.selected_session())
        self.at_end = not self.indexing and view.position >= timeline.total
        if self.at_end:
            self.new_events = 0
        self.show()

    def show(self) -> None:
        view = self.view
        timeline = self.timeline
        assert view is not None and timeline is not None
        self.position = view.position
        if self.at_end:
            self._known_total = view.position
        scrubber = self.panels.scrubber
        scrubber.total = timeline.expected_total if self.indexing else timeline.total
        scrubber.indexed = timeline.total
        scrubber.position = view.position
        scrubber.new_events = self.new_events
        scrubber.label = self.label()
        self.panels.show_state(view.state)

    def arrived(self, end: int) -> None:
        """Following added events up to `end`, the cursor elsewhere: count the new ones."""
        self.new_events = max(0, end - self._known_total)
        scrubber = self.panels.scrubber
        scrubber.new_events = self.new_events
        scrubber.total = end
        self.redraw_bar()

    def position_of(self, anchor: tuple[int, int]) -> int:
        assert self.timeline is not None
        index = self.timeline.position_of(*anchor)
        return index + 1 if index is not None else self.position

    # -- the scrubber --------------------------------------------------------------------------
    def label(self) -> Content:
        view = self.view
        timeline = self.timeline
        assert view is not None and timeline is not None
        source = self.source
        if source.many and not source.family:
            return marked("choose a session: its timeline opens here", "$text-accent")
        if timeline.total == 0 and not timeline.files and source.following:
            return marked(f"waiting for logs in {source.watch_dir or 'the directory'}…", "$text-accent")
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

    def cells(self, width: int) -> list[Cell]:
        timeline = self.timeline
        if timeline is None:
            return [""] * width
        total = self.panels.scrubber.total
        matched = -1 if self.matches is None else len(self.matches)
        key = (width, total, timeline.total, timeline.generation, matched, len(timeline.errors))
        if key != self._bar_key:
            with timeline.lock:
                marks: dict[str, array[int]] = {name: indices for name, indices in timeline.marks.items()}
                marks["corrupt"] = array("I", (index for index, _error in timeline.errors))
                self._bar = bar_cells(width, total, marks, self.matches)
            self._bar_key = key
        return self._bar

    def redraw_bar(self) -> None:
        self.panels.scrubber.revision += 1
