"""The replay's one-line prompt: `/` to filter the timeline, `g` to go to a time or sequence.

Hidden until asked for; `enter` posts `ReplayPromptSubmitted` with the text and hides it,
`escape` posts it with None (nothing to do) and hides it; an empty filter clears the filter.
"""

from __future__ import annotations

from typing import Literal

from textual import events
from textual.widgets import Input

from agent_tui.tui.messages import ReplayPromptSubmitted
from agent_tui.tui.text_entry import focus_now

PLACEHOLDERS = {
    "filter": "filter: words, session:NAME, type:tool.failed, tool:shell  (enter: apply, empty: clear)",
    "goto": "go to: 22:17:05 · 57 (sequence of the selected session) · explorer:57 · #1200",
}


class ReplayPrompt(Input):
    """The filter / go-to input above the scrubber."""

    # Input's own `:focus` rule gives it a tall border, which outranks a plain type selector: on
    # a one-row box that left no row for the text. The focused state is named here as well.
    DEFAULT_CSS = """
    ReplayPrompt, ReplayPrompt:focus {
        display: none;
        height: 1;
        border: none;
        padding: 0 1;
        background: $panel;
        &.-open { display: block; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.kind: Literal["filter", "goto"] = "filter"

    def open(self, kind: Literal["filter", "goto"], value: str = "") -> None:
        self.kind = kind
        self.placeholder = PLACEHOLDERS[kind]
        self.value = value
        self.add_class("-open")
        focus_now(self)

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    async def action_submit(self) -> None:
        self.remove_class("-open")
        self.post_message(ReplayPromptSubmitted(self.kind, self.value))

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            self.remove_class("-open")
            self.post_message(ReplayPromptSubmitted(self.kind, None))
