"""The replay's indexing progress: what is being read, and a real progress bar.

Shown while the indexing thread reads the logs (the screen already shows a first look at their
end, and every key works); hidden once the timeline is complete.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Label, ProgressBar

from agent_tui.events import counted


class IndexProgress(Horizontal):
    """`Indexing 7 logs · 412,000 / 1,000,000 events  ━━━━━━━━━━━──────  41%`."""

    DEFAULT_CSS = """
    IndexProgress {
        height: 1;
        padding: 0 1;
        background: $panel;
        & > Label { width: auto; color: $text-accent; padding-right: 2; }
        & > ProgressBar { width: 1fr; }
        & > ProgressBar > Bar { width: 1fr; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.files = 0

    def compose(self) -> ComposeResult:
        yield Label("Opening the logs…", id="index-label")
        yield ProgressBar(total=None, show_eta=False, id="index-bar")

    def show_progress(self, done: int, total: int) -> None:
        """`done` of `total` events indexed."""
        logs = f"{counted(self.files, 'log')}"
        self.query_one("#index-label", Label).update(f"Indexing {logs} · {done:,} / {total:,} events")
        # The bar rounds its fill to the half cells of its width when it is set, and a longer
        # label narrows it: set it once the new label is laid out, or it keeps the old width's
        # rounding (one half cell off, depending on when the message came).
        bar = self.query_one("#index-bar", ProgressBar)
        self.call_after_refresh(bar.update, total=max(total, 1), progress=done)
