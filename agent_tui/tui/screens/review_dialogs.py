"""The review screen's small dialogs: the commit message, which turn to rewind, and the rewind's
question (what it writes back, what it cannot undo).

`CommitMessageScreen` dismisses with the message (`ctrl+s` or the button) or None (escape);
`TurnPickScreen` with a turn id or None. `rewind_question` words a `RewindPlan` for a
`ConfirmScreen`: each file with what happens to it, the ones changed again since (a later turn or
the user: their change is replaced too), and every note of what stays undone.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import TextArea
from textual.widgets.option_list import Option

from agent_tui.ports import RewindPlan, TurnFacts
from agent_tui.tui.formatting import MUTED
from agent_tui.tui.marked import marked
from agent_tui.tui.screens.confirm import dialog_button
from agent_tui.tui.screens.reopen import PickScreen

_SHOWN_FILES = 8


class CommitMessageScreen(ModalScreen[str | None]):
    """The commit message, prefilled (from the session's prompt), to edit."""

    BINDINGS = [
        Binding("ctrl+s", "commit", "Commit", priority=True),
        Binding("escape", "dismiss", "Cancel", priority=True),
    ]

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(id="commit-dialog") as dialog:
            dialog.border_title = "Commit the worktree"
            dialog.border_subtitle = "ctrl+s commits · esc cancels"
            yield TextArea(self.message, id="commit-message", soft_wrap=True, show_line_numbers=False)
            with Horizontal(id="commit-buttons"):
                yield dialog_button("Commit  ctrl+s", "commit-yes", "commit", "primary")
                yield dialog_button("Cancel  esc", "commit-no", "dismiss")

    def on_mount(self) -> None:
        self.query_one("#commit-message", TextArea).focus()

    def action_commit(self) -> None:
        self.dismiss(self.query_one("#commit-message", TextArea).text)


class TurnPickScreen(PickScreen):
    """Which turn to rewind: every turn of the session, the last highlighted."""

    def __init__(self, turns: list[TurnFacts]) -> None:
        options = [Option(turn_label(turn), id=turn.turn_id) for turn in turns]
        last = len(turns) - 1 if turns else None
        super().__init__("turn-pick", "Rewind which turn?", "enter rewinds · esc cancels", options, last)


def turn_label(turn: TurnFacts) -> Content:
    prompt = turn.prompt.strip().splitlines()[0] if turn.prompt.strip() else "(no prompt)"
    parts: list[Content | tuple[str, str]] = [(f"{turn.number:>3}  ", MUTED), marked(prompt[:70])]
    if turn.rewound:
        parts.append(("  (rewound)", MUTED))
    return Content.assemble(*parts)


def rewind_question(plan: RewindPlan, number: int) -> tuple[str, str]:
    """The title and the question of a rewind's confirmation."""
    title = f"Rewind turn {number}"
    if not plan.files:
        lines = ["No file that turn changed differs any more."]
    else:
        lines = ["Put these files back as they were before it?"]
        for item in plan.files[:_SHOWN_FILES]:
            mark = {"restored": "restore", "removed": "remove", "skipped": "skip"}[item.action]
            extra = " (changed again since: that change goes too)" if item.changed_since else ""
            extra += " (protected: asked next)" if item.protected and item.skip is None else ""
            lines.append(f"  {mark} {item.shown}{extra}")
        if len(plan.files) > _SHOWN_FILES:
            lines.append(f"  … {len(plan.files) - _SHOWN_FILES} more")
    for note in plan.notes:
        lines.append(f"Not undone: {note}.")
    return title, "\n".join(lines)
