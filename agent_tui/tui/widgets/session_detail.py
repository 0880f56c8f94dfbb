"""The selected session's detail: a header, then its turns (messages and tool calls).

The header says who and where the session is, how long its turn has taken (live while it
runs, measured to the `now_ms` the screen passes), what the turn, the session and its tree spent
and how that stands to its budget (it moves as each model call ends, a sub-agent's too). Three fixed parts, so a streaming turn
re-renders only itself: the header, the finished turns (rebuilt only when that list changes) and
the last turn (rebuilt when the session has new events). A turn that ended with a message (the
reducer's `end_message`: an agent's exit status and stderr tail, a provider's error) shows it
under its last line, live and in a replay alike. While `follow` is on and the view is at the
bottom, it stays at the bottom as the text grows; scrolling up pauses that until the user is
back at the bottom. The agent's answers are rendered as Markdown (`answer_markdown`); a tool
call's lines are cut to the panel with `…` unless `whole_lines` is on (`W`), when they wrap and
read whole.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import var
from textual.widgets import Static

from agent_tui.reducer import DashboardState, SessionView
from agent_tui.tui.formatting import session_header, turn_lines, turn_summary
from agent_tui.tui.widgets.transcript_lines import TranscriptLines

FULL_TURNS = 8
"""The last this-many finished turns are shown in full."""
SUMMARY_TURNS = 40
"""Before those, this many more get one line each; anything older is only counted."""


class SessionDetail(VerticalScroll):
    """What one session said and did."""

    DEFAULT_CSS = """
    SessionDetail {
        & > #detail-header { padding: 0 1 1 1; }
        & > #detail-history { padding: 0 1; }
        & > #detail-current { padding: 0 1; }
    }
    """

    follow: var[bool] = var(True)
    """Keep the newest output in view."""
    whole_lines: var[bool] = var(False)
    """Show long lines whole (wrapped) rather than cut with `…`."""

    def __init__(self, *, id: str | None = None, empty_text: str = "Waiting for the first session…") -> None:
        super().__init__(id=id)
        self.can_focus = True
        self.empty_text = empty_text
        """What shows before there is any session."""
        self._session_id: str | None = None
        self._header_key: object = None
        self._history_key: object = None
        self._current_key: object = None
        self._width: int | None = None
        self._pinned = True  # at the bottom, and the user has not scrolled up since
        self._last: tuple[DashboardState, str | None, int | None] | None = None
        self._now_ms: int | None = None

    def compose(self) -> ComposeResult:
        yield TranscriptLines(Content.styled(self.empty_text, "$text-muted"), id="detail-header")
        yield TranscriptLines(id="detail-history")
        yield TranscriptLines(id="detail-current")

    @property
    def session_id(self) -> str | None:
        return self._session_id

    def show(self, state: DashboardState, session_id: str | None, now_ms: int | None = None) -> None:
        """Show `session_id` as it is in `state` (re-rendering only the parts that changed).

        `now_ms` is what a running turn's duration and a waiting request's wait are measured to.
        """
        self._last = (state, session_id, now_ms)
        self._now_ms = now_ms
        session = state.sessions.get(session_id or "")
        width = self._line_width()
        if width != self._width:
            self._width = width
            self._history_key = self._current_key = None
        switched = session_id != self._session_id
        if switched:
            self._session_id = session_id
            self._header_key = self._history_key = self._current_key = None
        changed = self._render_session(state, session)
        if self.follow and changed and (self._pinned or switched):
            self._pinned = True
            self._keep_at_end()

    def _keep_at_end(self) -> None:
        """Scroll to the end the text will have once laid out, so the layout that grows it
        paints it scrolled (one paint, not a paint and then a scroll); if the parts are not
        measured yet, scroll once the layout is done."""
        height = 0
        for part in self.query(TranscriptLines):
            if not part.display:
                continue
            measured = part.measured_height
            if measured is None:
                self.call_after_refresh(self.scroll_end, animate=False, immediate=True)
                return
            height += measured + part.styles.gutter.height + part.styles.margin.height
        end = max(0, height - (self.container_size.height - self.scrollbar_size_horizontal))
        if end != self.scroll_y:
            self.set_reactive(SessionDetail.scroll_y, end)
            self.set_reactive(SessionDetail.scroll_target_y, end)
            self.vertical_scrollbar.position = end
            self.refresh(layout=True)
        self.call_after_refresh(self._check_at_end)

    def _check_at_end(self) -> None:
        if self.follow and self._pinned and self.scroll_y != self.max_scroll_y:
            self.scroll_end(animate=False, immediate=True)  # the guess was off (a new width)

    def _render_session(self, state: DashboardState, session: SessionView | None) -> bool:
        header = self.query_one("#detail-header", TranscriptLines)
        history = self.query_one("#detail-history", TranscriptLines)
        current = self.query_one("#detail-current", TranscriptLines)
        if session is None:
            return self._render_none(state, header, history, current)
        changed = False
        live = session.pending or session.running
        header_key = (
            session.last_sequence,
            session.event_count,
            len(session.pending),
            state.agent_path(session.session_id),
            self._now_ms // 1000 if live and self._now_ms is not None else None,
            state.tree_spend(session.session_id),  # a sub-agent's spend moves the tree's
            session.budget_usd,
            session.budget_tokens,
        )
        if header_key != self._header_key:
            self._header_key = header_key
            header.update(session_header(state, session, self._now_ms))
            changed = True
        if self._render_history(history, session):
            changed = True
        turns = session.turns
        current_key = (id(turns[-1]), session.last_sequence) if turns else None
        if current_key != self._current_key:
            self._current_key = current_key
            if turns:
                current.show_lines(self._current_lines(session))
            else:
                current.update(Content.styled("No turn yet.", "$text-muted"))
            changed = True
        return changed

    def _current_lines(self, session: SessionView) -> list[Content]:
        """The lines of `session`'s current (last) turn, which must have one."""
        turns = session.turns
        return turn_lines(turns[-1], len(turns), session, self._width, self._now_ms, whole=self.whole_lines)

    def _render_none(self, state: DashboardState, header: Static, history: Static, current: Static) -> bool:
        """No session to show: say why (none selected, or none yet)."""
        key = ("empty", len(state.sessions))
        if key == self._header_key:
            return False
        self._header_key = key
        text = "No session selected." if state.sessions else self.empty_text
        header.update(Content.styled(text, "$text-muted"))
        history.update("")
        history.display = False
        current.update("")
        return True

    def _render_history(self, history: Static, session: SessionView) -> bool:
        finished = session.turns[:-1]
        full_from = max(0, len(finished) - FULL_TURNS)
        first = max(0, full_from - SUMMARY_TURNS)
        # Finished turns never change (a valid log ends a turn with its last event), and a
        # replay fold rebuilds them as new objects: key them by id and end, not identity.
        key = tuple((turn.turn_id, turn.ended_sequence) for turn in finished[first:])
        if key == self._history_key:
            return False
        self._history_key = key
        parts: list[Content] = []
        if first:
            parts.append(Content.styled(f"… {first} earlier turns", "$text-muted"))
        summaries = [
            turn_summary(turn, first + index + 1, self._now_ms, session)
            for index, turn in enumerate(finished[first:full_from])
        ]
        if summaries:
            parts.append(Content("\n").join(summaries))
        for number, turn in enumerate(finished[full_from:], full_from + 1):
            lines = turn_lines(turn, number, session, self._width, self._now_ms, whole=self.whole_lines)
            parts.append(Content("\n").join(lines))
        # One blank line between turns, and one before the current turn.
        history.update(Content("\n\n").join(parts) + "\n" if parts else Content(""))
        history.display = bool(parts)
        return True

    def _line_width(self) -> int | None:
        # The panel's inner width, less the text's own padding and the scrollbar.
        width = self.size.width - 3
        return width if width > 10 else None

    def on_resize(self) -> None:
        if self._last is not None and self._line_width() != self._width:
            self.show(*self._last)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value >= self.max_scroll_y - 1:
            self._pinned = True
        elif new_value < old_value:
            self._pinned = False  # the user scrolled up: stop following until they come back

    def watch_whole_lines(self) -> None:
        self._history_key = self._current_key = None
        if self._last is not None:
            self.show(*self._last)

    def watch_follow(self, follow: bool) -> None:
        if follow:
            self._pinned = True
            self.scroll_end(animate=False)
