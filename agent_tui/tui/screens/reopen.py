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


class ReopenScreen(ModalScreen[str | None]):
    """The closed sessions; dismisses with the one picked."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    #reopen-list { width: 100; max-width: 96%; height: auto; max-height: 80%; border: round $primary;
        background: $surface; }
    """

    def __init__(self, sessions: list[StoredSession]) -> None:
        super().__init__()
        self.sessions = sessions

    def compose(self) -> ComposeResult:
        options = OptionList(
            *(Option(closed_label(session), id=session.session_id) for session in self.sessions),
            id="reopen-list",
        )
        options.border_title = "Reopen a closed session"
        options.border_subtitle = "enter reopens · esc cancels"
        yield options

    def on_mount(self) -> None:
        self.query_one("#reopen-list", OptionList).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(OptionList.OptionSelected, "#reopen-list")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)
