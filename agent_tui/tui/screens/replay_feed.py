"""Where the replay's events come from: the indexing thread, and following.

A thread worker opens the logs, posts a first look at their end (`preview_end`), waits for it to
be painted, counts the logs' lines and indexes them in batches of about a thousand events,
posting progress; every key works meanwhile (what is not indexed yet is simply not reachable).
Following runs a `Follower` in a thread of its own; each change arrives as the state at the new
end, already folded, so the screen's thread never parses a line it did not ask for. A followed
end is redrawn at most every `FOLLOW_PAINT_SECONDS`.
"""

from __future__ import annotations

import gc
import threading
import time

from textual import on, work
from textual.content import Content
from textual.worker import Worker, WorkerState, get_current_worker

from agent_tui.reducer import DashboardState
from agent_tui.replay import (
    INDEX_BATCH,
    Catalog,
    Follower,
    PollResult,
    Timeline,
    TimelineView,
    end_snapshot,
    preview_end,
    read_catalog,
    torn_tail_notices,
)
from agent_tui.tui.marked import marked
from agent_tui.tui.messages import (
    ReplayAppended,
    ReplayIndexed,
    ReplayIndexing,
    ReplayListed,
    ReplayNotice,
    ReplayOpened,
    SessionSelected,
)
from agent_tui.tui.screens.replay_view import ReplayViewScreen, replay_mode
from agent_tui.tui.widgets.index_progress import IndexProgress
from agent_tui.tui.widgets.summary_bar import SummaryBar

PROGRESS_SECONDS = 0.1
FIRST_PAINT_WAIT = 1.0
FOLLOW_PAINT_SECONDS = 0.1
LIST_FOLLOW_SECONDS = 1.0
"""Many logs, following: how often the list looks at every log's size (a stat each)."""


class ReplayFeedScreen(ReplayViewScreen):
    """The replay screen's threads and what they report (see `ReplayScreen`)."""

    def on_mount(self) -> None:
        super().on_mount()
        scrubber = self.scrubber
        scrubber.follow = self.following
        scrubber.speed = self.speed
        scrubber.label = Content.styled("opening the logs…", "$text-accent")
        scrubber.cells_for = self._cells
        self.query_one(IndexProgress).files = len(self.files)
        if self.many:
            scrubber.label = marked(f"listing {len(self.files):,} logs…", "$text-accent")
            self._list()
        else:
            self._index(Timeline(self.files, watch_dir=self.watch_dir), self._run_stop)

    _list_followed = False  # many logs: whether the list is being followed

    def on_unmount(self) -> None:
        self._stopping.set()
        self._run_stop.set()
        self._resume.set()
        self._first_paint.set()
        gc.unfreeze()  # what indexing built may be collected again
        if self._follower is not None:
            self._follower.stop()

    def resume_indexing(self) -> None:
        """Let an indexing paused by `pause_indexing_after` go on."""
        self._resume.set()

    @work(thread=True, group="replay-list", exit_on_error=False)
    def _list(self) -> None:
        """Many logs: their list from the heads first, then from heads and tails."""
        files = list(self.files)
        self.post_message(ReplayListed(read_catalog(files, tails=False), complete=False))
        self._first_paint.wait(FIRST_PAINT_WAIT)
        if self._stopping.is_set():
            return
        self.post_message(ReplayListed(read_catalog(files), complete=True))

    @work(thread=True, exclusive=True, group="replay-list-follow", exit_on_error=False)
    def _follow_list(self, catalog: Catalog) -> None:
        """Many logs, following: the logs that grow are read again at their tails, new ones at
        both ends (the chosen family's timeline follows its own logs)."""
        worker = get_current_worker()
        while self.following and not worker.is_cancelled and not self._stopping.wait(LIST_FOLLOW_SECONDS):
            refreshed = catalog.refreshed(self.watch_dir)
            if refreshed is not None:
                catalog = refreshed
                self.post_message(ReplayListed(catalog, complete=True))

    @work(thread=True, group="replay-index", exit_on_error=False)
    def _index(self, timeline: Timeline, stop: threading.Event) -> None:
        preview = (
            preview_end(timeline.files) if self.start_at_end and timeline.files and not self.many else None
        )
        self.post_message(ReplayOpened(timeline, preview))
        # Let the first screen paint before counting and folding take their share of the
        # interpreter.
        self._first_paint.wait(FIRST_PAINT_WAIT)
        timeline.count_lines()
        self.post_message(ReplayIndexing(0, timeline.expected_total))
        shown = 0.0
        while not stop.is_set():
            limit = INDEX_BATCH
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
        if not stop.is_set():
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
            self.scrubber.label = marked(f"Could not read the logs: {error}", "bold $text-error")
            self.notify(str(error), title="Could not read the logs", severity="error", timeout=30)
        elif event.worker.group == "replay-follow":
            self._set_following(False)
            self.notify(str(error), title="Follow stopped", severity="error", timeout=15)

    @on(ReplayListed)
    def _listed(self, message: ReplayListed) -> None:
        catalog = self.catalog = message.catalog
        self.listed = True
        if len(catalog.entries) != len(self.files):  # new logs, following
            self.files = [entry.path for _sid, entry in sorted(catalog.entries.items())]
            self.mode = replay_mode(len(self.files))
            self.query_one("#summary", SummaryBar).mode = self.mode
        # Followed, a log's last line may be one being written: not a torn tail.
        self.session_tree.end_marks = catalog.marks(torn=not self.following)
        if message.complete:
            for problem in catalog.problems(torn=not self.following):
                self._report(problem, "Listed, with a problem at its end")
            if self.following and not self._list_followed:
                self._list_followed = True
                self._follow_list(catalog)
        elif not self.family:
            self.scrubber.label = marked(f"reading the ends of {len(self.files):,} logs…", "$text-accent")
        self.show_state(self.view.state if self.view is not None else DashboardState())
        if message.complete and not self.family and self.session_tree.selected_id is not None:
            self.open_family(self.session_tree.selected_id)
        self.call_after_refresh(self._first_paint.set)

    @on(SessionSelected)
    def _choose_family(self, message: SessionSelected) -> None:
        if self.many and self.catalog is not None:
            self.open_family(message.session_id)

    def open_family(self, session_id: str) -> None:
        """Many logs: put the scrubber's timeline over `session_id`'s family (kept, or indexed
        now); nothing to do when the timeline covers that session already."""
        catalog = self.catalog
        entry = catalog.entries.get(session_id) if catalog is not None else None
        if catalog is None or entry is None or entry.path in self.family:
            return
        family = catalog.family(session_id)
        self._run_stop.set()  # the family indexed until now, if it is still indexing
        if self._follower is not None:
            self._follower.stop()
            self._follower = None
        self.family = family
        self.matches = None  # the filter is matched again over the new timeline
        self.at_end = self.start_at_end
        self.new_events = 0
        self._errors_seen = 0
        self._bar_key = None
        self.query_one(IndexProgress).files = len(family)
        held = self.timelines.get(family)
        if held is not None:
            timeline = self.timeline = held.timeline
            self.view = TimelineView(timeline)
            self.indexing = False
            self.query_one(IndexProgress).display = False
            if self.start_at_end:
                self._show_end(end_snapshot(timeline) if self.following else held.end)
            else:
                self._move_to(0)
            self._family_ready(timeline)
            return
        timeline = self.timeline = Timeline(family)
        self.view = TimelineView(timeline)
        self.indexing = True
        self.loaded = False
        self._run_stop = threading.Event()
        self._index(timeline, self._run_stop)

    def _family_ready(self, timeline: Timeline) -> None:
        self._report_errors()
        self.timeline_replaced()
        self.loaded = True
        if self.following:
            self._follow(timeline)

    @on(ReplayOpened)
    def _opened(self, message: ReplayOpened) -> None:
        if self.many:
            if message.timeline is not self.timeline:
                return  # a family chosen before this one
            at_end = self.at_end  # where to go once indexed
            self._move_to(0)
            self.at_end = at_end
            return
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
            scrubber.label = marked(f"waiting for logs in {where}…", "$text-accent")
            self.notify(f"No logs in {where} yet: waiting for them.", timeout=5)
        else:
            self._move_to(0)
        self.call_after_refresh(self._first_paint.set)

    @on(ReplayIndexing)
    def _indexing(self, message: ReplayIndexing) -> None:
        if not self.indexing:
            return  # a family chosen before this one, or indexed since
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
        if message.end.timeline is not timeline:
            return  # the end of a family chosen before this one
        self.indexing = False
        self.query_one(IndexProgress).display = False
        if self.many:
            self.timelines.put(self.family, timeline, message.end)
            if not self.following:
                for notice in torn_tail_notices(timeline.files, message.end.state):
                    self._report(notice, "Torn final line: left out (the writer stopped mid-line)")
            if self.at_end:
                self._show_end(message.end)
            else:
                self._move_to(self.position)
            self._family_ready(timeline)
            return
        # What indexing built lives as long as the screen: keep the collector from scanning it.
        gc.collect()
        gc.freeze()
        self._report_errors()
        if not self.following:  # followed, the bytes after the last newline may be a line being written
            for notice in torn_tail_notices(timeline.files, message.end.state):
                self._report(notice, "Torn final line: left out (the writer stopped mid-line)")
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
        if message.end.timeline is not self.timeline:
            return  # the follower of a family chosen before this one
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
            self.mode = replay_mode(len(self.files))
            self.query_one("#summary", SummaryBar).mode = self.mode
        self._report_errors()
        self.events_arrived(end.generation)
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

    def events_arrived(self, generation: int) -> None:
        """Following added events (`generation`: the timeline's, changed if it was rebuilt)."""

    def timeline_replaced(self) -> None:
        """Many logs: the timeline is another family's now, indexed (a filter matches again)."""

    @on(ReplayNotice)
    def _notice(self, message: ReplayNotice) -> None:
        self.notify(message.text, title="Logs changed", severity=message.severity, timeout=8)

    def action_toggle_follow(self) -> None:
        self._set_following(not self.following)
        self._list_followed = False
        if self.following and self.catalog is not None and self.catalog.complete:
            self._list_followed = True
            self._follow_list(self.catalog)
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
