"""Reopening a closed session: the sessions closed in the dashboard, newest first, to pick one.

A closed session left the tree (its log stayed, listed in the sessions directory's closed list);
`enter` here dismisses with its id, and the dashboard reopens it, sub-agents included, by the
`Reopen` command. `escape` dismisses with None.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from agent_tui.ports import StoredSession
from agent_tui.tui.formatting import MUTED
from agent_tui.tui.marked import marked


def closed_label(session: StoredSession) -> Content:
    """`2026-11-30 14:02  fix-login  Fix the login bug…  completed`."""
    when = session.last_ts[:16].replace("T", " ")
    prompt = (session.first_prompt or session.title or "").strip().splitlines()
    return Content.assemble(
        (f"{when}  ", MUTED),
        marked(session.name, "bold"),
        ("  ", ""),
        marked(prompt[0][:60] if prompt else ""),
        (f"  {session.status}", MUTED),
    )


class PickScreen(ModalScreen[str | None]):
    """A list to pick one entry of: dismisses with its id (`enter`), or None (`escape`).

    Args:
        list_id: the list's id (its looks are in `styles/app.tcss`).
        title, subtitle: the list's border titles.
        options: the entries, each with its id.
        highlighted: the entry highlighted first (None: the list's own choice).
    """

    BINDINGS = [Binding("escape", "dismiss", "Cancel")]

    def __init__(
        self, list_id: str, title: str, subtitle: str, options: list[Option], highlighted: int | None = None
    ) -> None:
        super().__init__()
        self._list = OptionList(*options, id=list_id)
        self._list.border_title = title
        self._list.border_subtitle = subtitle
        self._highlighted = highlighted

    def compose(self) -> ComposeResult:
        yield self._list

    def on_mount(self) -> None:
        if self._highlighted is not None:
            self._list.highlighted = self._highlighted
        self._list.focus()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)


class ReopenScreen(PickScreen):
    """The closed sessions; dismisses with the one picked."""

    def __init__(self, sessions: list[StoredSession]) -> None:
        options = [Option(closed_label(session), id=session.session_id) for session in sessions]
        super().__init__("reopen-list", "Reopen a closed session", "enter reopens · esc cancels", options)
