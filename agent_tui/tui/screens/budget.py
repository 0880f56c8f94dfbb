"""The budget dialog (`B`): set, raise or remove what a session's tree may spend.

It shows what the tree has spent and its budget now, and asks for dollars and tokens (either,
both, or neither: no budget). `enter` (or Set) checks what was typed and says what is wrong
under the fields; it dismisses with a `BudgetAnswer`, and the dashboard hands it to the run
(the same control an attached dashboard uses). `esc` closes without a change.
"""

from __future__ import annotations

from typing import NamedTuple

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from agent_tui.tui.marked import marked
from agent_tui.tui.screens.confirm import dialog_button, field_row
from agent_tui.tui.spend_text import BudgetInputError, parse_tokens, parse_usd, tokens_text
from agent_tui.tui.text_entry import focus_now

MUTED = "$text-muted"


class BudgetAnswer(NamedTuple):
    """The budget the user asked for (both None: no budget)."""

    usd: float | None
    tokens: int | None


class BudgetScreen(ModalScreen[BudgetAnswer | None]):
    """Dismisses with the new budget, or None (closed without a change).

    Args:
        path: the session's agent path (`lead › explorer`), for the title.
        summary: what its tree spent and its budget now, one line.
        usd: the dollars of its budget now (None: no dollar limit).
        tokens: the tokens of its budget now (None: no token limit).
    """

    BINDINGS = [Binding("escape", "dismiss", "Cancel")]

    def __init__(self, path: str, summary: Content, usd: float | None, tokens: int | None) -> None:
        super().__init__()
        self._path = path
        self._summary = summary
        self._usd = usd
        self._tokens = tokens

    def compose(self) -> ComposeResult:
        with Vertical(id="budget-dialog") as dialog:
            dialog.border_title = marked(f"Budget · {self._path}")
            dialog.border_subtitle = "enter sets · esc closes"
            yield Static(self._summary, id="budget-summary")
            usd = f"{self._usd:.2f}" if self._usd is not None else ""
            tokens = tokens_text(self._tokens) if self._tokens is not None else ""
            usd_input = Input(
                usd, placeholder="e.g. 2.50 (empty: no dollar limit)", id="budget-usd", compact=True
            )
            yield field_row("Dollars", usd_input)
            tokens_input = Input(
                tokens, placeholder="e.g. 500k (empty: no token limit)", id="budget-tokens", compact=True
            )
            yield field_row("Tokens", tokens_input)
            yield Static(
                Content.styled("The budget counts for its sub-agents too; both empty: no budget.", MUTED),
                id="budget-note",
            )
            yield Static("", id="budget-error")
            with Horizontal(id="budget-buttons"):
                yield dialog_button("Set  enter", "budget-set", "set", "primary")
                yield dialog_button("Cancel  esc", "budget-cancel", "dismiss")

    def on_mount(self) -> None:
        focus_now(self.query_one("#budget-usd", Input))

    def action_set(self) -> None:
        """Dismiss with what the fields say, or say under them why they cannot be used."""
        try:
            usd = parse_usd(self.query_one("#budget-usd", Input).value)
            tokens = parse_tokens(self.query_one("#budget-tokens", Input).value)
        except BudgetInputError as error:
            self.query_one("#budget-error", Static).update(marked(f"✗ {error}", "$text-error"))
            return
        self.dismiss(BudgetAnswer(usd, tokens))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_set()
