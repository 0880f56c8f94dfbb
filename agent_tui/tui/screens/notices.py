"""The notices screen: every notification this run showed, whole, newest first.

The top line shows one notice at a time, cut to the screen's width, and only for a few seconds;
this screen keeps them readable: each wraps over as many lines as it needs, with its severity's
mark and its title. `N` opens it from anywhere (and the palette); escape, q or N closes it.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from agent_tui.tui.marked import marked
from agent_tui.tui.notice import Notice
from agent_tui.tui.widgets.summary_bar import NOTICE_STYLE

MUTED = "$text-muted"


def notice_line(notice: Notice) -> Content:
    """One notice as shown here: its mark, its title in bold, then the whole message."""
    glyph, style = NOTICE_STYLE.get(notice.severity, NOTICE_STYLE["information"])
    parts: list[Content | str | tuple[str, str]] = [(glyph + " ", style)]
    if notice.title:
        parts += [marked(notice.title, f"bold {style}"), (": ", MUTED)]
    parts.append(marked(notice.message))  # a notice may quote a log, a file name, an error
    return Content.assemble(*parts)


class NoticesScreen(ModalScreen[None]):
    """The notices, newest first (`notices` oldest first, as the app keeps them)."""

    BINDINGS = [Binding("escape,q,N", "dismiss", "Close")]

    def __init__(self, notices: Iterable[Notice]) -> None:
        super().__init__()
        self._notices = list(notices)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="notices-dialog") as dialog:
            dialog.border_title = "Notices"
            dialog.border_subtitle = "esc closes"
            if not self._notices:
                yield Static(Content.styled("No notices yet.", MUTED), classes="notice-line")
            for notice in reversed(self._notices):
                yield Static(notice_line(notice), classes="notice-line")
