"""A small yes/no modal (stopping every session asks first)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from agent_tui.tui.marked import marked


class ConfirmScreen(ModalScreen[bool]):
    """Asks one question; dismisses True for `y`/the confirm button, False for `n`/escape.

    Args:
        title: the dialog's border title.
        question: what is asked, in one or two sentences.
        confirm: the label of the confirming button.
    """

    BINDINGS = [
        Binding("y", "choose(True)", "Yes"),
        Binding("n,escape", "choose(False)", "No"),
    ]

    def __init__(self, title: str, question: str, confirm: str) -> None:
        super().__init__()
        self._dialog_title = title
        self._question = question
        self._confirm = confirm

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog") as dialog:
            dialog.border_title = marked(self._dialog_title)
            yield Static(marked(self._question), id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self._confirm}  y", id="confirm-yes", variant="error", compact=True)
                yield Button("Cancel  n", id="confirm-no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def action_choose(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")
