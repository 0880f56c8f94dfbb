"""`ReplayFeed`: where the replay's events come from: the indexing thread, and following.

One of the replay screen's three parts (the screen's keys, this feed, the view at the cursor). A
thread worker opens the logs, posts a first look at their end (`preview_end`), waits for it to
be painted, counts the logs' lines and indexes them in batches of about a thousand events,
posting progress; every key works meanwhile (what is not indexed yet is simply not reachable).
Over many logs, what exists when they are opened (the app, its modules) and their lists as
read (they hold no cycles) are kept out of the collector's passes until the screen closes
(`RunCollector.freeze`), their list from the heads is read
before the screen first paints (by a thread beyond `HEADS_BEFORE_PAINT` logs), while a child
process reads it from heads and tails on the other core (`CatalogChild`, started by the CLI
before the app's start-up, or here; a thread takes its list, or reads the tails itself if the
child could not, and the screen's stop ends the child); once it is
drawn, another thread asks the search index what each log spent (`logs_spend`), so the
list's costs become the whole logs'. Following runs a `Follower` in a thread of its own; each change arrives as the state at the new
end, already folded, so the screen's thread never parses a line it did not ask for. The follower
is paced by the screen: it makes the next end only when the screen asks for it, once the last one
is painted and its period is over: at least `FOLLOW_PAINT_SECONDS`, longer when a paint costs
more than `FOLLOW_PAINT_SHARE` of that (the reading thread keeps the rest of the interpreter, so
it keeps up with busy logs), at most `FOLLOW_PAINT_MAX_SECONDS`.

Invariants:
- the threads only post messages; what they report is taken on the screen's thread (the
  screen hands each message to the method of the same name here), so the view is only ever
  changed there;
- a report about a timeline the screen no longer shows (a family chosen before this one) is
  dropped;
- the feed reaches its screen only through `FeedHost`, and the cursor through the `ReplayView`
  it is given; it imports neither the screen nor its keys.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Protocol

from textual.content import Content
from textual.screen import Screen
from textual.worker import get_current_worker

from agent_tui.reducer import DashboardState, collector_paused
from agent_tui.replay import (
    INDEX_BATCH,
    Catalog,
    CatalogChild,
    Follower,
    ListSpend,
    PollResult,
    Snapshot,
    Timeline,
    TimelineCache,
    end_snapshot,
    preview_end,
    read_catalog,
    torn_tail_notices,
)
from agent_tui.tui.marked import marked
from agent_tui.tui.messages import (
    NoticePosted,
    ReplayAppended,
    ReplayIndexed,
    ReplayIndexing,
    ReplayListed,
    ReplayOpened,
    ReplaySpendScanned,
)
from agent_tui.tui.run_collector import RunCollector
from agent_tui.tui.screens.replay_view import ReplayPanels, ReplaySource, ReplayView
from agent_tui.tui.widgets.index_progress import IndexProgress

PROGRESS_SECONDS = 0.1
FIRST_PAINT_WAIT = 1.0
FOLLOW_PAINT_SECONDS = 0.1
"""Following: a new end is shown at most this often."""
FOLLOW_PAINT_SHARE = 1 / 3
"""Following: showing ends (the screen's work from taking one to having painted it, in CPU time)
takes at most about this share of the time; a dearer paint makes the next end wait longer. At
30,000 events a second over 200 logs, reading and folding them takes about half the interpreter
and an end costs about 45 ms to show: the next end waits about 135 ms."""
FOLLOW_PAINT_MAX_SECONDS = 0.5
"""Following: the longest wait between two shown ends, however dear a paint."""
LIST_FOLLOW_SECONDS = 1.0
"""Many logs, following: how often the list looks at every log's size (a stat each)."""
HEADS_BEFORE_PAINT = 5_000
"""Many logs: up to this many are listed from their heads before the screen first paints (about
15 µs a log: the first screen is the list, not a screen saying it is being read); more are
listed by a thread while the screen says so."""


class FeedHost(ReplayPanels, Protocol):
    """What the feed uses of its screen: the view's panels and more, and (as `screen`, the screen
    itself) Textual's own means: threads, messages, timers, notices."""

    @property
    def screen(self) -> Screen[object]: ...

    @property
    def index_progress(self) -> IndexProgress: ...

    def show_mode(self, mode: str) -> None:
        """The summary bar's mode (`replay · 7 logs`)."""
        ...

    def show_end_marks(self, marks: dict[str, str]) -> None:
        """The tree's marks for logs with a problem at their end."""
        ...

    def events_arrived(self, generation: int) -> None:
        """Following added events (`generation`: the timeline's, changed if it was rebuilt)."""
        ...

    def timeline_replaced(self) -> None:
        """Many logs: the timeline is another family's now, indexed."""
        ...


class ReplayFeed:
    """The replay's threads and what they report (see the module docstring).

    Args:
        host: the screen (see `FeedHost`).
        source: which logs, shared with the view.
        cursor: the view the reports move.
        pause_indexing_after: stop indexing after this many events until `resume_indexing()`
            (for tests and screenshots of the indexing state).
        listing: many logs: a child reading their list already (started by the CLI before the
            app was imported); the feed owns it from now on. One is started when the feed opens
            the logs if none is given (or it reads other paths).
    """

    def __init__(
        self,
        host: FeedHost,
        source: ReplaySource,
        cursor: ReplayView,
        pause_indexing_after: int | None = None,
        listing: CatalogChild | None = None,
    ) -> None:
        self.host = host
        self.source = source
        self.cursor = cursor
        self.catalog: Catalog | None = None
        self.listed = False  # True once the list of many logs is on screen
        self.timelines = TimelineCache()
        self.spend = ListSpend()  # many logs: what their earlier turns spent
        self.partial: set[str] = set()  # many logs: sessions whose spend counts their last turn only
        self._list_followed = False  # many logs: whether the list is being followed
        self._pause_after = pause_indexing_after
        self._listing = listing
        self._resume = threading.Event()
        self._first_paint = threading.Event()
        self._stopping = threading.Event()
        self._run_stop = threading.Event()  # stops the indexing of the current family
        self._follower: Follower | None = None
        self._collector = RunCollector()  # what indexing keeps out, and following (see `_follow`)
        self._ends_shown = 0  # followed ends taken; the follower is asked for the next once each
        self._asked = 0  # the last of them after which the follower was asked for the next

    @property
    def screen(self) -> Screen[object]:
        """The screen, for Textual's own means (threads, messages, timers, notices)."""
        return self.host.screen

    # -- the threads ---------------------------------------------------------------------------
    def start(self) -> None:
        """Open the logs: list them (many logs), or index them."""
        if self.source.many:
            # What exists now (the app, its modules) lives as long as the screen: kept out of
            # the collector's full passes, which over thousands of logs' heads, tails and tree
            # lines would otherwise each scan it again (`stop` lets it go).
            self._collector.freeze()
            files = self.source.files
            listing = self._listing
            if listing is None or listing.paths != tuple(files):
                if listing is not None:
                    listing.close()
                listing = self._listing = CatalogChild(files)  # first: it reads beside the heads
            heads = None
            if len(files) <= HEADS_BEFORE_PAINT:
                with collector_paused():  # frozen as the list from the tails is (`_list`)
                    heads = read_catalog(self.source.files, tails=False)
                    self._collector.freeze()
                self.take_listed(ReplayListed(heads, complete=False))
            else:
                self.host.scrubber.label = marked(f"listing {len(self.source.files):,} logs…", "$text-accent")
            self._run(lambda: self._list(heads, listing), "replay-list")
        else:
            timeline = Timeline(self.source.files, watch_dir=self.source.watch_dir)
            self._index(timeline, self._run_stop)

    def stop(self) -> None:
        """The screen is gone: every thread stops."""
        self._stopping.set()
        self._run_stop.set()
        self._resume.set()
        self._first_paint.set()
        self._collector.restore()  # what indexing or following kept out may be collected again
        if self._listing is not None:
            self._listing.close()
        if self._follower is not None:
            self._follower.stop()

    def resume_indexing(self) -> None:
        """Let an indexing paused by `pause_indexing_after` go on."""
        self._resume.set()

    def _run(self, work: Callable[[], None], group: str, *, exclusive: bool = False) -> None:
        self.screen.run_worker(work, group=group, exclusive=exclusive, thread=True, exit_on_error=False)

    def _list(self, heads: Catalog | None, listing: CatalogChild) -> None:
        """Many logs: their list from the heads first (unless `heads` is it, already shown),
        then from heads and tails (as `listing` read them, or read here if it could not)."""
        if heads is None:
            heads = read_catalog(self.source.files, tails=False)
            self.screen.post_message(ReplayListed(heads, complete=False))
        self._first_paint.wait(FIRST_PAINT_WAIT)
        if self._stopping.is_set():
            return
        # The list lives as long as the screen and holds no cycles: frozen before the collector
        # runs again, or its first pass scans every event and view just read (a tenth of the
        # read), then its full passes again and again while the list is painted.
        with collector_paused():
            complete = listing.result()
            if complete is None and not self._stopping.is_set():
                complete = heads.with_tails()
            if complete is None or self._stopping.is_set():
                return  # the screen is gone (and has let go of what was frozen)
            self._collector.freeze()
        self.screen.post_message(ReplayListed(complete, complete=True))

    def _follow_list(self, catalog: Catalog) -> None:
        """Many logs, following: the logs that grow are read again at their tails, new ones at
        both ends (the chosen family's timeline follows its own logs)."""

        def follow() -> None:
            current = catalog
            worker = get_current_worker()
            while (
                self.source.following
                and not worker.is_cancelled
                and not self._stopping.wait(LIST_FOLLOW_SECONDS)
            ):
                refreshed = current.refreshed(self.source.watch_dir)
                if refreshed is not None:
                    current = refreshed
                    self.screen.post_message(ReplayListed(current, complete=True))

        self._run(follow, "replay-list-follow", exclusive=True)

    def _scan_spend(self, catalog: Catalog) -> None:
        """Many logs: ask the search index (brought up to date in a thread) what the listed logs
        whose earlier turns' spend is not known yet spent."""
        entries = self.spend.to_ask(catalog)
        if not entries:
            return
        files = list(self.source.files)

        def ask() -> None:
            from agent_tui.ports import SearchError, logs_spend  # the index, on this thread only

            try:
                spent = logs_spend(files)
            except SearchError as error:
                self.screen.post_message(ReplaySpendScanned(entries, {}, str(error)))
                return
            if not self._stopping.is_set():
                self.screen.post_message(ReplaySpendScanned(entries, spent))

        self._run(ask, "replay-spend")

    def _index(self, timeline: Timeline, stop: threading.Event) -> None:
        def index() -> None:
            source = self.source
            preview = (
                preview_end(timeline.files)
                if source.start_at_end and timeline.files and not source.many
                else None
            )
            post = self.screen.post_message
            post(ReplayOpened(timeline, preview))
            # Let the first screen paint before counting and folding take their share of the
            # interpreter.
            self._first_paint.wait(FIRST_PAINT_WAIT)
            timeline.count_lines()
            post(ReplayIndexing(0, timeline.expected_total))
            shown = 0.0
            while not stop.is_set():
                limit = INDEX_BATCH
                if self._pause_after is not None:
                    limit = min(limit, self._pause_after - timeline.total)
                    if limit <= 0:
                        post(ReplayIndexing(timeline.total, timeline.expected_total))
                        self._resume.wait()
                        self._pause_after = None
                        continue
                if not timeline.index_some(limit):
                    break
                now = time.monotonic()
                if now - shown >= PROGRESS_SECONDS:
                    shown = now
                    post(ReplayIndexing(timeline.total, timeline.expected_total))
            if not stop.is_set():
                post(ReplayIndexed(end_snapshot(timeline)))

        self._run(index, "replay-index")

    def _follow(self, timeline: Timeline) -> None:
        # Following folds and paints for as long as the logs grow: what exists now is kept out of
        # the collector's passes and the young are collected less often (`RunCollector`; about
        # a tenth of the reading thread's time at 30,000 events a second).
        self._collector.keep_out()

        def follow() -> None:
            def changed(result: PollResult) -> None:
                for notice in result.notices:
                    self.screen.post_message(NoticePosted(notice, "Logs changed", timeout=8))
                self.screen.post_message(ReplayAppended(end_snapshot(timeline)))

            follower = self._follower = Follower(timeline, changed, paced=True)
            if not self._stopping.is_set():
                follower.run()

        self._run(follow, "replay-follow", exclusive=True)

    def worker_failed(self, group: str, error: BaseException | None) -> None:
        """A thread of the feed raised (`group`: which)."""
        host = self.host
        if group == "replay-index":
            host.scrubber.label = marked(f"Could not read the logs: {error}", "bold $text-error")
            self.screen.notify(str(error), title="Could not read the logs", severity="error", timeout=30)
        elif group == "replay-spend":
            self.screen.notify(
                str(error), title="Could not read what the sessions spent", severity="error", timeout=15
            )
        elif group == "replay-follow":
            self.set_following(False)
            self.screen.notify(str(error), title="Follow stopped", severity="error", timeout=15)

    # -- what the threads report ---------------------------------------------------------------
    def take_listed(self, message: ReplayListed) -> None:
        host, source, cursor = self.host, self.source, self.cursor
        catalog = self.catalog = message.catalog
        self.listed = True
        self.spend.apply(catalog)
        self.partial = self.spend.partial(catalog)
        if len(catalog.entries) != len(source.files):  # new logs, following
            source.files = [entry.path for _sid, entry in sorted(catalog.entries.items())]
            host.show_mode(source.mode)
        # Followed, a log's last line may be one being written: not a torn tail.
        host.show_end_marks(catalog.marks(torn=not source.following))
        if message.complete:
            for problem in catalog.problems(torn=not source.following):
                cursor.report(problem, "Listed, with a problem at its end")
            if source.following and not self._list_followed:
                self._list_followed = True
                self._follow_list(catalog)
        elif not source.family:
            host.scrubber.label = marked(f"reading the ends of {len(source.files):,} logs…", "$text-accent")
        host.show_state(cursor.view.state if cursor.view is not None else DashboardState())
        if message.complete and not source.family:
            # Once the whole list is painted (its family's timeline indexed meanwhile would vie
            # with that paint).
            self.screen.call_after_refresh(self._open_selected)
        self.screen.call_after_refresh(self._first_paint.set)
        if message.complete:
            self.screen.call_after_refresh(self._scan_spend, catalog)

    def take_spend_scanned(self, message: ReplaySpendScanned) -> None:
        """Many logs: what some listed sessions' earlier turns spent, into the list."""
        self.spend.take(message.entries, message.spent)
        catalog = self.catalog
        if catalog is None:
            return
        if message.problem is not None:
            self.cursor.report(
                message.problem, "What the listed sessions spent before their last turns is left out"
            )
        self.spend.apply(catalog)
        self.partial = self.spend.partial(catalog)
        cursor = self.cursor
        self.host.show_state(cursor.view.state if cursor.view is not None else DashboardState())

    def _open_selected(self) -> None:
        """Many logs, listed whole: the timeline over the selected session's family, unless
        one is chosen already."""
        selected = self.host.selected_session()
        if not self.source.family and selected is not None:
            self.open_family(selected)

    def session_chosen(self, session_id: str) -> None:
        if self.source.many and self.catalog is not None:
            self.open_family(session_id)

    def open_family(self, session_id: str) -> None:
        """Many logs: put the scrubber's timeline over `session_id`'s family (kept, or indexed
        now); nothing to do when the timeline covers that session already."""
        source, cursor = self.source, self.cursor
        catalog = self.catalog
        entry = catalog.entries.get(session_id) if catalog is not None else None
        if catalog is None or entry is None or entry.path in source.family:
            return
        family = catalog.family(session_id)
        self._run_stop.set()  # the family indexed until now, if it is still indexing
        if self._follower is not None:
            self._follower.stop()
            self._follower = None
        source.family = family
        cursor.matches = None  # the filter is matched again over the new timeline
        cursor.at_end = source.start_at_end
        cursor.new_events = 0
        progress = self.host.index_progress
        progress.files = len(family)
        held = self.timelines.get(family)
        if held is not None:
            timeline = held.timeline
            cursor.show_timeline(timeline)
            cursor.indexing = False
            progress.display = False
            if source.start_at_end:
                cursor.show_end(end_snapshot(timeline) if source.following else held.end)
            else:
                cursor.move_to(0)
            self._family_ready(timeline)
            return
        timeline = Timeline(family)
        cursor.show_timeline(timeline)
        cursor.indexing = True
        cursor.loaded = False
        self._run_stop = threading.Event()
        self._index(timeline, self._run_stop)

    def _family_ready(self, timeline: Timeline) -> None:
        self.cursor.report_errors()
        self.host.timeline_replaced()
        self.cursor.loaded = True
        if self.source.following:
            self._follow(timeline)

    def take_opened(self, message: ReplayOpened) -> None:
        host, source, cursor = self.host, self.source, self.cursor
        if source.many:
            if message.timeline is not cursor.timeline:
                return  # a family chosen before this one
            at_end = cursor.at_end  # where to go once indexed
            cursor.move_to(0)
            cursor.at_end = at_end
            return
        timeline = message.timeline
        cursor.show_timeline(timeline)
        scrubber = host.scrubber
        scrubber.total = timeline.expected_total
        if message.preview is not None:
            cursor.previewing = True
            cursor.position = scrubber.position = timeline.expected_total
            scrubber.label = Content.styled(
                "the end of each log (a first look while indexing)", "$text-accent"
            )
            host.show_state(message.preview)
        elif not source.files:
            where = source.watch_dir or "the directory"
            scrubber.label = marked(f"waiting for logs in {where}…", "$text-accent")
            self.screen.notify(f"No logs in {where} yet: waiting for them.", timeout=5)
        else:
            cursor.move_to(0)
        self.screen.call_after_refresh(self._first_paint.set)

    def take_indexing(self, message: ReplayIndexing) -> None:
        cursor = self.cursor
        if not cursor.indexing:
            return  # a family chosen before this one, or indexed since
        self.host.index_progress.show_progress(message.done, message.total)
        scrubber = self.host.scrubber
        scrubber.indexed = message.done
        scrubber.total = max(message.total, scrubber.total if cursor.previewing else 0)
        if cursor.previewing:
            cursor.position = scrubber.position = scrubber.total

    def take_indexed(self, message: ReplayIndexed) -> None:
        source, cursor = self.source, self.cursor
        timeline = cursor.timeline
        assert timeline is not None and cursor.view is not None
        if message.end.timeline is not timeline:
            return  # the end of a family chosen before this one
        cursor.indexing = False
        self.host.index_progress.display = False
        if source.many:
            self.timelines.put(source.family, timeline, message.end)
        else:
            # What indexing built lives as long as the screen: keep the collector from scanning it.
            gc.collect()
            self._collector.freeze()
            cursor.report_errors()
        if not source.following:  # followed, the bytes after the last newline may be a line being written
            for notice in torn_tail_notices(timeline.files, message.end.state):
                cursor.report(notice, "Torn final line: left out (the writer stopped mid-line)")
        if cursor.at_end:
            cursor.previewing = False
            cursor.show_end(message.end)
        else:
            cursor.move_to(cursor.position)
        if source.many:
            self._family_ready(timeline)
            return
        cursor.loaded = True
        if source.following:
            self._follow(timeline)

    def take_appended(self, message: ReplayAppended) -> None:
        # The follower made this end because the screen asked (see the module docstring): show
        # it now, and ask for the next once it is painted and its period is over.
        if message.end.timeline is not self.cursor.timeline:
            return  # the follower of a family chosen before this one
        began, cpu = time.monotonic(), time.thread_time()
        self._ends_shown += 1
        ticket = self._ends_shown
        self._take_end(message.end)
        self.screen.call_after_refresh(self._end_painted, ticket, began, cpu)
        # In case no paint comes (another screen on top): ask anyway, later.
        self.screen.set_timer(FOLLOW_PAINT_MAX_SECONDS, partial(self._ask_next_end, ticket))

    def _end_painted(self, ticket: int, began: float, cpu: float) -> None:
        """The end taken at `began` (monotonic) and `cpu` (this thread's CPU time) is painted:
        ask for the next once its period is over (see `FOLLOW_PAINT_SHARE`)."""
        if ticket != self._ends_shown:
            return
        cost = time.thread_time() - cpu
        period = min(FOLLOW_PAINT_MAX_SECONDS, max(FOLLOW_PAINT_SECONDS, cost / FOLLOW_PAINT_SHARE))
        wait = began + period - time.monotonic()
        if wait <= 0:
            self._ask_next_end(ticket)
        else:
            self.screen.set_timer(wait, partial(self._ask_next_end, ticket))

    def _ask_next_end(self, ticket: int) -> None:
        """Ask the follower for the end after the one taken as `ticket` (once, and only if no
        end was taken since)."""
        if ticket != self._ends_shown or self._asked >= ticket:
            return
        self._asked = ticket
        if self._follower is not None:
            self._follower.ready()

    def _take_end(self, end: Snapshot) -> None:
        host, source, cursor = self.host, self.source, self.cursor
        view = cursor.view
        if view is None or cursor.indexing:
            return
        timeline = cursor.timeline
        if timeline is not None and len(timeline.files) != len(source.files):
            source.files = [file.path for file in timeline.files]
            host.show_mode(source.mode)
        cursor.report_errors()
        host.events_arrived(end.generation)
        if cursor.at_end and source.following:
            cursor.show_end(end)
            return
        rewound = end.generation != view.generation_seen
        if rewound:  # positions after the rebuilt part may have moved: stay on the same line
            anchor = view.anchor()
            cursor.move_to(cursor.position_of(anchor) if anchor is not None else cursor.position)
        cursor.arrived(end.position)

    # -- following -----------------------------------------------------------------------------
    def toggle_follow(self) -> None:
        source, cursor = self.source, self.cursor
        self.set_following(not source.following)
        self._list_followed = False
        if source.following and self.catalog is not None and self.catalog.complete:
            self._list_followed = True
            self._follow_list(self.catalog)
        if source.following:
            self.screen.notify("Following the logs: new events appear as they are written.", timeout=3)
            timeline = cursor.timeline
            if timeline is not None and not cursor.indexing:
                cursor.show_end(end_snapshot(timeline))
                self._follow(timeline)
        else:
            self.screen.notify("Follow off.", timeout=2)

    def set_following(self, on: bool) -> None:
        self.source.following = on
        self.host.scrubber.follow = on
        if not on and self._follower is not None:
            self._follower.stop()
            self._follower = None
