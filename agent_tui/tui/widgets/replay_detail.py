"""The replay's session detail: only as much of a session's history as the panel shows.

The live dashboard's detail renders a session's last finished turns whole (and a line for each
of many more); a seek in a replay lands on a different turn list every time, and laying all of
that out costs tens of milliseconds although the panel shows its last screenful. This detail
renders the current turn and, going back, only the finished turns that fill what the panel has
left above it; scrolling to its top brings in earlier turns a panel's height at a time (the view
stays where it was).
The turns it will show whole are asked for through `hydrate` first (the replay keeps older turns
as header copies until then). Its scrollbar, which a seek moves, draws straight to rows
(`row_scrollbar`).

A seek rebuilds the state's turns as new objects, but a finished turn never changes: its lines
(and their estimated height) are kept by what identifies its content (`_TurnKey`: session, turn,
end, entries, calls, number, width, whole lines), so a step or a followed log's next event lays
out only the current turn again; the current turn's lines are made once per show, for the room
they leave and for the panel.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.cache import LRUCache
from textual.content import Content
from textual.widgets import Static

from agent_tui.reducer import SessionView, TurnView
from agent_tui.replay import FULL_TURNS
from agent_tui.tui.formatting import turn_lines
from agent_tui.tui.widgets.row_scrollbar import draw_in_rows
from agent_tui.tui.widgets.session_detail import SessionDetail

HYDRATE_STEP = 4
"""Turns made whole at a time when the panel needs more than a seek gave it."""
KEPT_TURNS = 64
"""Finished turns whose lines are kept (the most recently shown)."""

_TurnKey = tuple[str, str, int | None, int, int, int, int | None, bool]
"""A finished turn's lines depend on: session, turn id, ended sequence, transcript entries, tool
calls (a header copy has none until hydrated), its number, the width and `whole_lines`."""


def _lines(lines: list[Content], width: int | None) -> int:
    """About how many lines `lines` take at `width` (wrapping estimated per line)."""
    rows = [row for line in lines for row in line.plain.split("\n")]
    if width is None:
        return len(rows)
    return sum(max(1, -(-len(row) // width)) for row in rows)


NOTHING_YET = "No event yet at this point of the logs."
"""The detail before the first event (the cursor at the start, or logs still awaited)."""


class ReplayDetail(SessionDetail):
    """A `SessionDetail` that renders the history only as far back as the panel shows."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, empty_text=NOTHING_YET)
        self.hydrate: Callable[[str, int], None] | None = None
        """`hydrate(session_id, turns)`: make that session's last `turns` turns whole."""
        self._more = 0  # extra lines of history the user scrolled up for
        self._hidden = 0  # finished turns not rendered
        self._newest: object = None  # the newest finished turn rendered (a seek elsewhere resets)
        self._grow_from: float | None = None
        self._turns: LRUCache[_TurnKey, tuple[Content, int]] = LRUCache(KEPT_TURNS)
        self._current: tuple[TurnView, tuple[object, ...], list[Content]] | None = None
        """The last current turn shown, what its lines depend on, and its lines."""

    def on_mount(self) -> None:
        draw_in_rows(self.vertical_scrollbar)  # repainted at each seek: rows without Rich

    def _current_lines(self, session: SessionView) -> list[Content]:
        turns = session.turns
        turn = turns[-1]
        key = (session.last_sequence, len(turns), self._width, self._now_ms, self.whole_lines)
        if self._current is not None and self._current[0] is turn and self._current[1] == key:
            return self._current[2]
        lines = super()._current_lines(session)
        self._current = (turn, key, lines)
        return lines

    def _finished_turn(self, session: SessionView, index: int) -> tuple[Content, int]:
        """Finished turn `index` of `session` as one text, and about how many lines it takes."""
        turn = session.turns[index]
        width = self._width
        key = (
            session.session_id,
            turn.turn_id,
            turn.ended_sequence,
            len(turn.transcript),
            len(turn.tool_calls),
            index + 1,
            width,
            self.whole_lines,
        )
        kept = self._turns.get(key)
        if kept is None:
            lines = turn_lines(turn, index + 1, session, width, whole=self.whole_lines)
            kept = self._turns[key] = (Content("\n").join(lines), _lines(lines, width))
        return kept

    def _render_history(self, history: Static, session: SessionView) -> bool:
        finished = session.turns[:-1]
        newest = (session.session_id, finished[-1].turn_id) if finished else None
        if newest != self._newest:
            self._newest = newest
            self._more = 0
        # What is left of the panel under the header (3 lines) and above the current turn.
        below = _lines(self._current_lines(session), self._width) if session.turns else 0
        room = max(3, self.size.height - 3 - below) + self._more
        parts: list[Content] = []
        used = 0
        count = 0
        hydrated = FULL_TURNS  # the seek made these whole
        for index in range(len(finished) - 1, -1, -1):
            if used >= room:
                break
            if self.hydrate is not None and count + 2 > hydrated:
                hydrated = count + 2 + HYDRATE_STEP  # this turn, the current one, a few more
                self.hydrate(session.session_id, hydrated)
            text, height = self._finished_turn(session, index)
            parts.append(text)
            used += height + 1
            count += 1
        parts.reverse()
        self._hidden = len(finished) - count
        shown = session.turns[self._hidden : len(finished)]  # as hydrated (it replaces header copies)
        key = (self._hidden, tuple((t.turn_id, t.ended_sequence, len(t.transcript)) for t in shown))
        if key == self._history_key:
            return False
        self._history_key = key
        if self._hidden:
            earlier = f"… {self._hidden} earlier turn{'s' if self._hidden != 1 else ''} (scroll up for more)"
            parts.insert(0, Content.styled(earlier, "$text-muted"))
        history.update(Content("\n\n").join(parts) + "\n" if parts else Content(""))
        history.display = bool(parts)
        return True

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value and self._hidden and self._last is not None:
            self._more += max(10, self.size.height)
            self._grow_from = self.max_scroll_y
            self.show(*self._last)
            self.call_after_refresh(self._keep_place)

    def _keep_place(self) -> None:
        # Earlier turns went in above: scroll down by what they added, so the view stays.
        if self._grow_from is not None:
            self.scroll_to(y=max(0.0, self.max_scroll_y - self._grow_from), animate=False, immediate=True)
            self._grow_from = None
