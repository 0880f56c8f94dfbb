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

from agent_tui.tui.notice import Notice

MUTED = "$text-muted"


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
                yield Static(notice.line(), classes="notice-line")
