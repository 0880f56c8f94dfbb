"""The replay screen: the dashboard's panels over recorded logs, and a scrubber to move in time.

A screen of three parts, one concept each: `ReplayView` (`replay_view`: what the screen shows
at the cursor), `ReplayFeed` (`replay_feed`: the indexing and following threads), and this
screen, which holds them and says what the keys do (steps, jumps to marks, `g`o to, `/`
filters, playing). With a filter on, stepping visits only the matching events.

Invariants:
- the parts are held, not inherited: the screen is a `SessionsScreen` that hands each message
  of the feed's threads to the feed, and gives the view and the feed what they use of it
  (`ReplayPanels`, `FeedHost`);
- the cursor keys belong to the go-to/filter prompt while it is open, and `home`/`end` to the
  detail while it has focus;
- while the screen is up, the collector takes the young less often (`RunCollector`): what
  indexing built is frozen by the feed, and a seek's garbage is freed by reference counting.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from pathlib import Path
from typing import Literal

from textual import on, work
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from agent_tui.reducer import DashboardState, epoch_ms
from agent_tui.replay import (
    CatalogChild,
    Filter,
    GotoError,
    Mark,
    Timeline,
    goto_position,
    matching,
    overlay,
)
from agent_tui.tui.commands import PaletteCommand
from agent_tui.tui.messages import (
    ReplayAppended,
    ReplayFiltered,
    ReplayIndexed,
    ReplayIndexing,
    ReplayListed,
    ReplayOpened,
    ReplayPromptSubmitted,
    ReplaySpendScanned,
    ScrubRequested,
    SessionSelected,
)
from agent_tui.tui.run_collector import RunCollector
from agent_tui.tui.screens.replay_feed import ReplayFeed
from agent_tui.tui.screens.replay_view import DEFAULT_SPEED, ReplaySource, ReplayView, replay_mode
from agent_tui.tui.screens.sessions import SessionsScreen
from agent_tui.tui.timing import now_epoch_ms
from agent_tui.tui.widgets.index_progress import IndexProgress
from agent_tui.tui.widgets.replay_detail import ReplayDetail
from agent_tui.tui.widgets.replay_prompt import ReplayPrompt
from agent_tui.tui.widgets.scrubber import Scrubber
from agent_tui.tui.widgets.session_detail import SessionDetail

SPEEDS = (5, 10, 20, 50, 100, 200, 500, 1000, 5000)
TICKS_PER_SECOND = 20
FOLLOW_TICK_SECONDS = 1.0
"""How often a followed replay at its end redraws the passing time (running turns, waits)."""
_CURSOR_ACTIONS = {"step", "seek_start", "seek_end", "play_pause"}  # left to the prompt when open
_DETAIL_ACTIONS = {"seek_start", "seek_end"}  # home / end: the detail's own top and bottom when it has focus
_MARK_NAMES = {"turn": "turn start", "compress": "compression", "approval": "approval", "failure": "failure"}


class ReplayScreen(SessionsScreen):
    """Scrub through recorded sessions.

    Args:
        files: the session logs (may be empty when following a directory).
        follow: tail the logs (and pick up new ones in `watch_dir`).
        watch_dir: the directory whose new `*.jsonl` files join while following.
        start_at_end: open at the last event (True) or at the first.
        pause_indexing_after: stop indexing after this many events until `resume_indexing()`
            (for tests and screenshots of the indexing state).
        listing: many logs: a child reading their list already (`ReplayFeed`'s `listing`).
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
        Binding("g", "prompt('goto')", "Go to", priority=True),  # text boxes: see TEXT_BOX_OPENERS
        Binding("slash", "prompt('filter')", "Filter", key_display="/", priority=True),
        Binding("escape", "clear_filter", show=False),
        # In the footer, following the logs matters more here than the queue of recorded requests.
        Binding("a", "focus_approvals", "Approvals", show=False),
        Binding("f", "toggle_follow", "Follow"),
    ]

    def __init__(
        self,
        files: list[Path],
        *,
        follow: bool = False,
        watch_dir: Path | None = None,
        start_at_end: bool = True,
        pause_indexing_after: int | None = None,
        listing: CatalogChild | None = None,
    ) -> None:
        super().__init__(replay_mode(len(files)))
        self.source = ReplaySource(list(files), watch_dir, follow, start_at_end)
        self.cursor = ReplayView(self, self.source)
        self.feed = ReplayFeed(self, self.source, self.cursor, pause_indexing_after, listing)
        self.playing = False
        self.speed = DEFAULT_SPEED
        self.withdrawn_note = "it is not pending at this point of the log"
        self._play_timer: Timer | None = None
        self._carry = 0.0
        self._match_generation = -1
        self._matched_upto = 0  # the filter's matches cover the events before this index
        self._collector = RunCollector()

    # -- what tests, the app and the search read of the parts ----------------------------------
    @property
    def position(self) -> int:
        """Where the cursor is (events before it are shown)."""
        return self.cursor.position

    @property
    def timeline(self) -> Timeline | None:
        return self.cursor.timeline

    @property
    def loaded(self) -> bool:
        """Whether the indexed timeline is on screen."""
        return self.cursor.loaded

    def resume_indexing(self) -> None:
        self.feed.resume_indexing()

    # -- the panels ----------------------------------------------------------------------------
    def make_detail(self) -> SessionDetail:
        detail = ReplayDetail(id="detail")
        detail.hydrate = self.cursor.hydrate
        return detail

    def compose_bottom(self) -> list[Widget]:
        return [IndexProgress(id="index-progress"), ReplayPrompt(id="replay-prompt"), Scrubber(id="scrubber")]

    @property
    def scrubber(self) -> Scrubber:
        return self.query_one("#scrubber", Scrubber)

    @property
    def prompt(self) -> ReplayPrompt:
        return self.query_one("#replay-prompt", ReplayPrompt)

    @property
    def index_progress(self) -> IndexProgress:
        return self.query_one(IndexProgress)

    def on_mount(self) -> None:
        self._collector.young_less_often()
        super().on_mount()
        self.set_interval(FOLLOW_TICK_SECONDS, self._follow_tick)
        scrubber = self.scrubber
        scrubber.follow = self.source.following
        scrubber.speed = self.speed
        scrubber.label = Content.styled("opening the logs…", "$text-accent")
        scrubber.cells_for = self.cursor.cells
        self.index_progress.files = len(self.source.files)
        self.feed.start()

    def on_unmount(self) -> None:
        self.feed.stop()
        self._collector.restore()

    def selected_session(self) -> str | None:
        return self.session_tree.selected_id

    def show_state(self, state: DashboardState) -> None:
        # Over many logs the tree lists every session from the catalog; the timeline's
        # sessions, at the cursor, take the place of theirs.
        catalog = self.feed.catalog
        if catalog is not None:
            # The chosen family's sessions are folded whole: none of theirs is partial.
            partial = self.feed.partial
            self.session_tree.partial_spend = partial - state.sessions.keys() if partial else partial
            self.summary.partial_spend = bool(self.session_tree.partial_spend)
            state = overlay(catalog.state, state)
        super().show_state(state)

    def show_problem(self, error: str, title: str, *, loud: bool, summary: str) -> None:
        if loud:
            self.notify(error, title=title, severity="error", timeout=15)
        self.summary_error = summary
        self.show_state(self.state)

    def show_mode(self, mode: str) -> None:
        self.mode = mode
        self.summary.mode = mode

    def show_end_marks(self, marks: dict[str, str]) -> None:
        self.session_tree.end_marks = marks

    def _show_detail(self) -> None:
        selected = self.session_tree.selected_id
        self.cursor.hydrate(selected)
        catalog = self.feed.catalog
        if catalog is not None and selected is not None and selected in catalog.light:
            # Shown from the list (no timeline covers it yet): its turns' texts, which the child
            # left out, read again from its log.
            listed = catalog.state.sessions.get(selected)
            if listed is not None and self.state.sessions.get(selected) is listed:
                catalog.whole(selected)
        super()._show_detail()

    def log_of(self, session_id: str) -> Path | None:
        found = next((path for path in self.source.files if path.stem == session_id), None)
        watch_dir = self.source.watch_dir
        if found is None and watch_dir is not None:  # a log that appeared while following
            found = watch_dir / f"{session_id}.jsonl"
        return found

    def now_ms(self) -> int | None:
        """A recorded view's clock is the event under the cursor: a turn still running there shows
        how long it had run by then, the same at every replay of the log. Following at the end,
        it is the wall clock instead: the logs are being written now, so a running turn's time and
        a request's wait go on between their events."""
        view = self.cursor.view
        event = view.event if view is not None else None
        at = epoch_ms(event.ts) if event is not None else None
        if self.source.following and self.cursor.at_end:
            clock = getattr(self.app, "clock_ms", None) or now_epoch_ms
            return max(clock(), at or 0)
        return at

    def _follow_tick(self) -> None:
        if self.source.following and self.cursor.at_end and self.cursor.view is not None:
            self.tick()

    # -- the feed's reports, taken on this thread ----------------------------------------------
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.feed.worker_failed(event.worker.group, event.worker.error)

    @on(ReplayListed)
    @on(ReplaySpendScanned)
    @on(ReplayOpened)
    @on(ReplayIndexing)
    @on(ReplayIndexed)
    @on(ReplayAppended)
    def _from_feed(self, message: Message) -> None:
        """A report of the feed's threads, to the feed's method of its name (`take_listed`, …)."""
        getattr(self.feed, "take_" + message.handler_name.removeprefix("on_replay_"))(message)

    @on(SessionSelected)
    def _choose_family(self, message: SessionSelected) -> None:
        self.feed.session_chosen(message.session_id)

    def action_toggle_follow(self) -> None:
        self.feed.toggle_follow()

    # -- the keys ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The cursor keys are priority bindings; while the prompt is open they are its own.
        if action in _CURSOR_ACTIONS and self.is_mounted and self.prompt.is_open:
            return False
        if action in _DETAIL_ACTIONS and self.is_mounted and self.detail.has_focus:
            return False
        return super().check_action(action, parameters)

    def action_step(self, delta: int) -> None:
        self._pause()
        matches = self.cursor.matches
        if matches is None or not len(matches):
            self.cursor.move_to(self.position + delta)
            return
        current = self.position - 1
        if delta > 0:
            k = min(len(matches) - 1, bisect_right(matches, current) + delta - 1)
        else:
            k = max(0, bisect_left(matches, current) + delta)
        self.cursor.move_to(matches[k] + 1)

    def action_seek_start(self) -> None:
        self._pause()
        self.cursor.move_to(self.cursor.matches[0] + 1 if self.cursor.matches else 0)

    def action_seek_end(self) -> None:
        self._pause()
        timeline = self.timeline
        if timeline is None:
            return
        if self.cursor.matches:
            self.cursor.move_to(self.cursor.matches[-1] + 1)
        elif self.cursor.indexing and self.source.start_at_end:
            self.notify("The end shows once indexing reaches it.", timeout=3)
        else:
            self.cursor.move_to(timeline.total)

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
        self.cursor.move_to(target)

    @on(ScrubRequested)
    def _scrub(self, message: ScrubRequested) -> None:
        self._pause()
        self.cursor.move_to(message.position)

    def action_prompt(self, kind: Literal["filter", "goto"]) -> None:
        self._pause()
        value = self.cursor.filter.query if kind == "filter" and self.cursor.filter is not None else ""
        self.prompt.open(kind, value)

    @on(ReplayPromptSubmitted)
    def _prompted(self, message: ReplayPromptSubmitted) -> None:
        self.session_tree.focus()
        text = message.text
        if text is None or self.timeline is None:
            return
        if message.kind == "goto":
            try:
                position = goto_position(
                    self.timeline, text, selected=self.session_tree.selected_id, cursor=self.position
                )
            except GotoError as error:
                self.notify(str(error), title="Go to", severity="warning", timeout=5)
                return
            self.cursor.move_to(position)
        elif not text.strip():
            self.action_clear_filter()
        else:
            self._filter(Filter.parse(text), 0)

    def events_arrived(self, generation: int) -> None:
        if self.cursor.matches is not None and self.cursor.filter is not None:
            # New events are matched on their own; a rebuilt timeline is matched again whole.
            same = generation == self._match_generation
            self._filter(self.cursor.filter, self._matched_upto if same else 0)

    def timeline_replaced(self) -> None:
        if self.cursor.filter is not None:
            self._filter(self.cursor.filter, 0)

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
        first = self.cursor.filter is None or self.cursor.filter.query != message.query
        if message.start and not first and self.cursor.matches is not None:
            if message.generation != self._match_generation:
                return  # matched against a timeline since rebuilt: a whole match follows
            self.cursor.matches.extend(message.matches)
        else:
            self.cursor.matches = message.matches
        matches = self.cursor.matches
        self._match_generation = message.generation
        self._matched_upto = message.end
        self.cursor.filter = Filter.parse(message.query)
        scrubber = self.scrubber
        scrubber.filter_text = message.query
        scrubber.matches = len(matches)
        self.cursor.redraw_bar()
        if not first:
            return
        if not len(matches):
            self.notify(f"No event matches {message.query!r}.", timeout=4)
            return
        # The cursor goes to the matching event nearest to it.
        current = self.position - 1
        k = bisect_left(matches, current)
        near = [matches[i] for i in (k - 1, k) if 0 <= i < len(matches)]
        self.cursor.move_to(min(near, key=lambda index: (abs(index - current), index)) + 1)

    def action_clear_filter(self) -> None:
        if self.cursor.filter is None:
            return
        self.cursor.filter = None
        self.cursor.matches = None
        self.scrubber.filter_text = ""
        self.scrubber.matches = 0
        self.cursor.redraw_bar()

    def action_play_pause(self) -> None:
        if self.playing:
            self._pause()
            return
        if self.timeline is None:
            return
        if self.position >= self.timeline.total:
            self.cursor.move_to(0)
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
            self.cursor.move_to(self.position + step)

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
