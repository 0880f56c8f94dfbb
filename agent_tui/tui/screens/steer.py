"""A one-line input modal: text to steer a running session with (absorbed at its next step)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class SteerScreen(ModalScreen[str | None]):
    """Dismisses with the text typed (enter), or None (escape or empty).

    Args:
        agent_path: whom the text goes to (`lead › explorer`).
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, agent_path: str) -> None:
        super().__init__()
        self._agent_path = agent_path

    def compose(self) -> ComposeResult:
        with Vertical(id="steer-dialog") as dialog:
            dialog.border_title = f"Steer {self._agent_path}"
            yield Static(
                Content.styled(
                    "The running turn takes this in at its next step boundary.  enter sends, esc cancels",
                    "$text-muted",
                )
            )
            yield Input(placeholder="e.g. also update the docs", id="steer-input")

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss(text or None)
