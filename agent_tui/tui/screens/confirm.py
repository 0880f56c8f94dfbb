"""A small yes/no modal (stopping every session asks first)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import ContentText
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Label, Static
from textual.widgets.button import ButtonVariant

from agent_tui.tui.marked import marked


def dialog_button(
    label: ContentText, button_id: str, action: str, variant: ButtonVariant = "default"
) -> Button:
    """A dialog's compact button that runs the screen's `action` when pressed."""
    return Button(label, variant, id=button_id, compact=True, action=f"screen.{action}")


def field_row(label: str, *fields: Widget) -> Horizontal:
    """A form's row: its label, then its fields."""
    return Horizontal(Label(label, classes="field-label"), *fields, classes="field-row")


class ConfirmScreen(ModalScreen[bool]):
    """Asks one question; dismisses True for `y`/the confirm button, False for `n`/escape.

    Args:
        title: the dialog's border title.
        question: what is asked, in one or two sentences.
        confirm: the label of the confirming button.
    """

    BINDINGS = [
        Binding("y", "dismiss(True)", "Yes"),
        Binding("n,escape", "dismiss(False)", "No"),
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
                yield dialog_button(f"{self._confirm}  y", "confirm-yes", "dismiss(True)", "error")
                yield dialog_button("Cancel  n", "confirm-no", "dismiss(False)")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()
