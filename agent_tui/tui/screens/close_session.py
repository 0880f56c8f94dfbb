"""Closing a session: stop it and its sub-agents, take it out of the tree, and, for an agent that
worked in its own git worktree, ask whether to remove that worktree.

Dismisses with `"remove"` (close, and remove the worktree), `"keep"` (close, keep it) or None
(do nothing). The log always stays on disk; the worktree's branch is kept either way.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from agent_tui.ports import WorktreeError, uncommitted_changes
from agent_tui.tui.formatting import short_path
from agent_tui.tui.marked import marked
from agent_tui.tui.screens.confirm import dialog_button


class CloseSessionScreen(ModalScreen[str | None]):
    """Asks before a session is closed.

    Args:
        agent_path: whom it closes (`lead`).
        running: how many turns of its subtree are running (they are stopped).
        worktree: its worktree, if it has one.
        branch: the worktree's branch.
        changes: uncommitted changes in the worktree (None: unknown).
    """

    BINDINGS = [
        Binding("r", "choose('remove')", "Remove worktree", show=False),
        Binding("k", "choose('keep')", "Keep worktree", show=False),
        Binding("y", "choose('keep')", "Close", show=False),
        Binding("n,escape", "choose(None)", "Cancel"),
    ]

    def __init__(
        self,
        agent_path: str,
        *,
        running: int,
        worktree: Path | None,
        branch: str | None = None,
        changes: int | None = None,
    ) -> None:
        super().__init__()
        self._path = agent_path
        self._running_turns = running
        self._worktree = worktree
        self._branch = branch
        self._changes = changes

    def compose(self) -> ComposeResult:
        lines = [f"Close {self._path}? It leaves the tree; its log stays on disk."]
        if self._running_turns:
            turns = "turn is" if self._running_turns == 1 else "turns are"
            lines.append(f"{self._running_turns} running {turns} stopped first (sub-agents included).")
        if self._worktree is not None:
            lines.append("")
            lines.append(f"It worked in the worktree {short_path(self._worktree)}")
            if self._branch:
                lines.append(f"on branch {self._branch} (the branch is kept either way).")
            if self._changes:
                lines.append(f"Removing it deletes {self._changes} uncommitted change(s) there.")
        with Vertical(id="close-dialog") as dialog:
            dialog.border_title = "Close session"
            yield Static(marked("\n".join(lines)), id="close-question")
            with Horizontal(id="close-buttons"):
                if self._worktree is not None:
                    yield dialog_button("Remove worktree  r", "close-remove", "choose('remove')", "error")
                    yield dialog_button("Keep worktree  k", "close-keep", "choose('keep')", "primary")
                else:
                    yield dialog_button("Close  y", "close-keep", "choose('keep')", "primary")
                yield dialog_button("Cancel  n", "close-cancel", "choose(None)")

    def on_mount(self) -> None:
        self.query_one("#close-cancel", Button).focus()

    def action_choose(self, choice: str | None) -> None:
        if choice == "remove" and self._worktree is None:
            return
        self.dismiss(choice)


def worktree_to_ask(worktree: Path | None) -> tuple[Path | None, int | None]:
    """A closing session's worktree, if it is still there, and its uncommitted changes (None:
    unknown)."""
    if worktree is None or not worktree.exists():
        return None, None  # none, or removed already: nothing to ask about
    try:
        return worktree, uncommitted_changes(worktree)
    except WorktreeError:
        return worktree, None
