"""The scrubber opened from a search result: one session's log, at the event that matched.

It is the replay screen over the hit's log, opened at its start, that goes to the hit's event
(`SESSION:SEQUENCE`, as `g` would) once the log is indexed. `esc` goes back to the search (a
filter typed here is cleared first, as in the replay).
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.binding import Binding

from agent_tui.replay import GotoError, goto_position
from agent_tui.tui.messages import ReplayIndexed
from agent_tui.tui.screens.replay import ReplayScreen


class SearchReplayScreen(ReplayScreen):
    """Scrub through `log`, starting at event `sequence` of session `session_id`."""

    BINDINGS = [Binding("escape", "clear_filter", "Back")]

    def __init__(self, log: Path, session_id: str, sequence: int) -> None:
        super().__init__([log], start_at_end=False)
        self.target = f"{session_id}:{sequence}"
        self.target_session = session_id
        self.arrived = False
        """Whether the cursor has been put on the target event."""

    @on(ReplayIndexed)
    def _go_to_the_hit(self, message: ReplayIndexed) -> None:
        timeline = self.timeline
        if timeline is None or self.arrived:
            return
        try:
            position = goto_position(
                timeline, self.target, selected=self.target_session, cursor=self.position
            )
        except GotoError as error:  # the log changed since it was indexed for the search
            self.notify(str(error), title="Not found in the log", severity="warning", timeout=8)
            return
        self.select_session(self.target_session)
        self.cursor.move_to(position)
        self.arrived = True

    def action_clear_filter(self) -> None:
        if self.cursor.filter is None:
            self.app.pop_screen()
            return
        super().action_clear_filter()
