"""The top line: what this view is, the counts a user watches (what all its sessions spent among
them), where the logs go, and notices.

Notifications are shown here, at the right end of the line, instead of as toasts over the
panels: a notice never covers the detail's first lines, the approval queue or a dialog. The
newest notice replaces the one before, unless that one is more severe and still showing (a
warning is not pushed aside by a passing remark); each clears itself after its timeout.

The logs' location is the line's last part: when the line is too narrow for all of it, the
path loses its beginning (`…/projects/shop-5d41402abc4b`), never its end, which names the
project's own directory.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from agent_tui.events import counted
from agent_tui.reducer import DashboardState
from agent_tui.tui.marked import marked
from agent_tui.tui.notice import Notice
from agent_tui.tui.spend_text import cost_brief, spent

_Part = Content | str | tuple[str, str]

MUTED = "$text-muted"
NOTICE_RANK = {"information": 0, "warning": 1, "error": 2}


class SummaryBar(Horizontal):
    """`agent-tui · live demo   ● 3 running · ⚑ 2 approvals · $1.87 · 7 sessions · 138 events
    <notice>` (what every session spent, once anything was)."""

    DEFAULT_CSS = """
    SummaryBar {
        height: 1;
        padding: 0 1;
        background: $panel;
        & > #summary-counts { width: 1fr; height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
        & > #summary-notice { width: auto; max-width: 70%; height: 1; text-wrap: nowrap;
                              text-overflow: ellipsis; padding-left: 2; display: none; }
        & > #summary-notice.-shown { display: block; }
    }
    """

    def __init__(self, mode: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.mode = mode
        self.location = ""
        """Where the logs are (`~/.local/share/agent-tui/projects/x`), shown after the counts."""
        self.notice: str = ""
        self.partial_spend = False
        """The total counts part of some logs so far (a replay's list before its scan): `≥$4.20`."""
        self._notice_rank = 0
        self._key: object = None
        self._timer: Timer | None = None
        self._shown: tuple[DashboardState, str] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="summary-counts")
        yield Static(id="summary-notice")

    def show_state(self, state: DashboardState, *, error: str = "") -> None:
        running = state.running_count()
        pending = len(state.pending_permissions())
        sessions = len(state.sessions)
        total = state.total_spend()
        width = self.size.width
        notice = self.query_one("#summary-notice", Static)
        notice_width = notice.size.width if notice.has_class("-shown") else 0
        key = (
            self.mode, running, pending, state.event_count, sessions, error, self.location,
            width, notice_width, total, self.partial_spend,
        )  # fmt: skip
        self._shown = (state, error)
        if key == self._key:
            return
        self._key = key
        sep = (" · ", MUTED)
        parts: list[_Part] = [
            ("agent-tui", "bold $text-accent"),
            marked(" " + self.mode, MUTED),
            "  ",
            (f"● {running} running", "bold $text-accent" if running else MUTED),
            sep,
            (f"⚑ {counted(pending, 'approval')}", "bold $text-warning" if pending else MUTED),
            sep,
        ]
        if spent(total):
            parts += [(cost_brief(total, partial=self.partial_spend), "$text-secondary"), sep]
        parts.append((f"{counted(sessions, 'session')}", MUTED))
        events_count: list[_Part] = [sep, (f"{state.event_count:,} events", MUTED)]
        tail: list[_Part] = []
        if error:
            tail += ["   ", marked("⚠ " + error, "bold $text-error")]
        location, events_count = self._fitted_location(parts, events_count, tail, width - notice_width)
        parts += events_count
        if location:
            parts += [sep, marked(location, MUTED)]
        # One row whatever it says (`1fr` wide): a new text repaints it without a layout.
        self.query_one("#summary-counts", Static).update(Content.assemble(*parts, *tail), layout=False)

    def _fitted_location(
        self, parts: list[_Part], events_count: list[_Part], tail: list[_Part], width: int
    ) -> tuple[str, list[_Part]]:
        """The logs' path, elided to the room the line leaves it (`width`: the bar's less the
        notice's), and the events count, dropped when that gives the path more room."""
        if not self.location:
            return "", events_count

        def room(*pieces: _Part) -> int:
            used = Content.assemble(*pieces, *tail).cell_length + 3  # and the separator
            return width - 2 - used if self.size.width else len(self.location)

        location = elided_path(self.location, room(*parts, *events_count))
        if location != self.location:  # the events count gives way to the logs' path
            without = elided_path(self.location, room(*parts))
            if len(without) > len(location):
                return without, []
        return location, events_count

    def on_resize(self, event: events.Resize) -> None:
        self._redraw()

    def _redraw(self) -> None:
        """Draw the counts again at the line's width as it is now (the notice came or went)."""
        if self._shown is not None and self.is_attached:
            state, error = self._shown
            self.show_state(state, error=error)

    def show_notice(
        self, message: str, *, title: str = "", severity: str = "information", timeout: float = 5
    ) -> None:
        """Show a notice at the right end for `timeout` seconds (see the module docstring)."""
        rank = NOTICE_RANK.get(severity, 0)
        if self.notice and rank < self._notice_rank:
            return
        self._notice_rank = rank
        text = " ".join(message.split())
        self.notice = f"{title}: {text}" if title else text
        widget = self.query_one("#summary-notice", Static)
        widget.update(Notice(text, title, severity).line())
        widget.add_class("-shown")
        self.call_after_refresh(self._redraw)
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(max(1.0, timeout), self.clear_notice)

    def clear_notice(self) -> None:
        self.notice = ""
        self._notice_rank = 0
        self.query_one("#summary-notice", Static).remove_class("-shown")
        self.call_after_refresh(self._redraw)


def elided_path(path: str, room: int) -> str:
    """`path` in at most `room` cells: whole, or its end after `…` from a `/` on (empty when
    not even its last part fits)."""
    if len(path) <= room:
        return path
    if room < 2:
        return ""
    tail = path[-(room - 1) :]
    cut = tail.find("/")
    if cut < 0:
        return ""
    return "…" + tail[cut:]
