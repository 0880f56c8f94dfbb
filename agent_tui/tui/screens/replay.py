"""The replay screen: the dashboard's panels over recorded logs, and a scrubber to move in time.

Three layers, one concept each: `replay_view` (what the screen shows at the cursor),
`replay_feed` (the indexing and following threads), and this module (what the keys do: steps,
jumps to marks, `g`o to, `/` filters, playing). With a filter on, stepping visits only the
matching events.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Literal

from textual import on, work
from textual.binding import Binding

from agent_tui.replay import Filter, GotoError, Mark, goto_position, matching
from agent_tui.tui.commands import PaletteCommand
from agent_tui.tui.messages import ReplayFiltered, ReplayPromptSubmitted, ScrubRequested
from agent_tui.tui.screens.replay_feed import ReplayFeedScreen
from agent_tui.tui.screens.replay_view import DEFAULT_SPEED

BIG_STEP = 100
SPEEDS = (5, 10, 20, 50, 100, 200, 500, 1000, 5000)
TICKS_PER_SECOND = 20
_CURSOR_ACTIONS = {"step", "seek_start", "seek_end", "play_pause"}  # left to the prompt when open
_DETAIL_ACTIONS = {"seek_start", "seek_end"}  # home / end: the detail's own top and bottom when it has focus
_MARK_NAMES = {"turn": "turn start", "compress": "compression", "approval": "approval", "failure": "failure"}


class ReplayScreen(ReplayFeedScreen):
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
        Binding("g", "prompt('goto')", "Go to", priority=True),  # text boxes: see TEXT_BOX_OPENERS
        Binding("slash", "prompt('filter')", "Filter", key_display="/", priority=True),
        Binding("escape", "clear_filter", show=False),
        # In the footer, following the logs matters more here than the queue of recorded requests.
        Binding("a", "focus_approvals", "Approvals", show=False),
        Binding("f", "toggle_follow", "Follow"),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The cursor keys are priority bindings; while the prompt is open they are its own.
        if action in _CURSOR_ACTIONS and self.is_mounted and self.prompt.is_open:
            return False
        if action in _DETAIL_ACTIONS and self.is_mounted and self.detail.has_focus:
            return False
        return super().check_action(action, parameters)

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
                position = goto_position(
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

    def events_arrived(self, generation: int) -> None:
        if self.matches is not None and self.filter is not None:
            # New events are matched on their own; a rebuilt timeline is matched again whole.
            same = generation == self._match_generation
            self._filter(self.filter, self._matched_upto if same else 0)

    def timeline_replaced(self) -> None:
        if self.filter is not None:
            self._filter(self.filter, 0)

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
