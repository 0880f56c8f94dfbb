"""The project-rules question: a rules file the project ships, shown in full, to accept or not.

Opened only by the user (`R` on the dashboard, as the notice says), never on its own: a
repository's rules wait like an approval does. `y` accepts the file as shown, `n` keeps it
ignored, `escape` closes and asks again later. Dismisses with True (accept), False (keep
ignoring) or None (closed).

What is shown is what would apply: each rule's decision, tool, risk and programs (a field left
out matches anything, so "allow shell, any risk" says so), and the file's path.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from agent_tui.ports import PermissionRule, ProjectRulesState
from agent_tui.tui.formatting import MUTED, short_path
from agent_tui.tui.screens.confirm import dialog_button


class ProjectRulesScreen(ModalScreen[bool | None]):
    """Shows a project's rules file and asks whether to apply it.

    Args:
        state: the file as it was read (its digest is what an accept accepts).
    """

    BINDINGS = [
        Binding("y", "dismiss(True)", "Accept"),
        Binding("n", "dismiss(False)", "Keep ignoring"),
        Binding("escape", "dismiss", "Close"),
    ]

    def __init__(self, state: ProjectRulesState) -> None:
        super().__init__()
        self.state = state

    def compose(self) -> ComposeResult:
        state = self.state
        count = len(state.rules)
        with Vertical(id="project-rules-dialog") as dialog:
            dialog.border_title = "Project rules"
            yield Static(
                Content.assemble(
                    ("This project ships its own permission rules: ", "bold"),
                    (short_path(state.path), "bold $text-accent"),
                ),
                id="project-rules-title",
            )
            yield Static(
                Content.assemble(
                    ("⚠ ", "bold"),
                    "They are ignored until you accept them. Accepted, they decide for every agent "
                    "of this project; if the file changes, it is asked about again.",
                ),
                id="project-rules-warning",
            )
            with VerticalScroll(id="project-rules-list"):
                if count:
                    yield Static(Content("\n").join(rule_line(rule) for rule in state.rules))
                else:
                    yield Static(Content.styled("(the file holds no rules)", MUTED))
            with Horizontal(id="project-rules-buttons"):
                yield dialog_button("Accept  y", "project-rules-accept", "dismiss(True)", "warning")
                yield dialog_button("Keep ignoring  n", "project-rules-ignore", "dismiss(False)", "primary")
            yield Static(Content.styled("esc closes; R opens this again", MUTED), id="project-rules-hint")

    def on_mount(self) -> None:
        self.query_one("#project-rules-ignore", Button).focus()


def rule_line(rule: PermissionRule) -> Content:
    """One rule as a line: `allow shell · any risk · programs rm` (with its example, if any)."""
    style = "bold $text-error" if rule.decision == "allow" else "bold $text-success"
    parts: list[Content | str | tuple[str, str]] = [
        (f"{rule.decision:<5} ", style),
        (rule.tool, "bold"),
        (" · ", MUTED),
        f"risk {rule.risk}" if rule.risk else "any risk",
    ]
    if rule.tool == "shell":
        programs = ", ".join(rule.programs) if rule.programs is not None else "any program"
        parts += [(" · ", MUTED), programs]
    if rule.example:
        parts += [(" · e.g. ", MUTED), (rule.example, MUTED)]
    return Content.assemble(*parts)
