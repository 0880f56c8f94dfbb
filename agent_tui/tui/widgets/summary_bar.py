"""The top line: what this view is, and the counts a user watches (running, approvals, events)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from agent_tui.reducer import DashboardState

MUTED = "$text-muted"


class SummaryBar(Static):
    """`agent-tui · live demo   ● 3 running   ⚑ 2 approvals   138 events`."""

    DEFAULT_CSS = """
    SummaryBar {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    """

    def __init__(self, mode: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.mode = mode
        self._key: object = None

    def show_state(self, state: DashboardState, *, note: str = "", error: str = "") -> None:
        running = state.running_count()
        pending = len(state.pending_permissions())
        key = (self.mode, running, pending, state.event_count, len(state.sessions), note, error)
        if key == self._key:
            return
        self._key = key
        sep = (" · ", MUTED)
        parts: list[Content | str | tuple[str, str]] = [
            ("agent-tui", "bold $text-accent"),
            (" " + self.mode, MUTED),
            "  ",
            (f"● {running} running", "bold $text-accent" if running else MUTED),
            sep,
            (
                f"⚑ {pending} approval{'s' if pending != 1 else ''}",
                "bold $text-warning" if pending else MUTED,
            ),
            sep,
            (f"{len(state.sessions)} session{'s' if len(state.sessions) != 1 else ''}", MUTED),
            sep,
            (f"{state.event_count:,} events", MUTED),
        ]
        if note:
            parts += [sep, (note, MUTED)]
        if error:
            parts += ["   ", ("⚠ " + error, "bold $text-error")]
        self.update(Content.assemble(*parts))
