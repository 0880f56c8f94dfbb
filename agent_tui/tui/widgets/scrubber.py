"""The replay scrubber: a bar over the whole timeline, and a status line for the cursor.

Line 1, the bar: each cell stands for a stretch of events and shows its most telling mark (a
corrupt line `!`, a failure `✗`, an approval `⚑`, a compression `◆`, a turn start `│`; while a
filter is on, `┃` where events match); the part already played is bright, the part not indexed
yet dotted, the cursor a `●` (or its cell's mark, highlighted). Clicking a cell moves there.

Line 2: play state, `position / total`, the event at the cursor (type, agent, time; or
`FILE:LINE: reason` on a corrupt line), the filter and its matches, new events that arrived while
the cursor was elsewhere, follow and speed.

The widget draws what it is told: the screen sets the reactive fields and `cells_for`, which
gives the bar's cells for a width (see `agent_tui.replay.bar`).
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from agent_tui.replay import Cell
from agent_tui.tui.marked import marked
from agent_tui.tui.messages import ScrubRequested

MUTED = "$text-muted"
_GLYPHS: dict[Cell, tuple[str, str]] = {
    "corrupt": ("!", "bold $text-error"),
    "failure": ("✗", "$text-error"),
    "approval": ("⚑", "$text-warning"),
    "compress": ("◆", "$text-secondary"),
    "turn": ("│", ""),
    "match": ("┃", "bold $text-accent"),
}


class Scrubber(Widget):
    """Where the cursor is in the timeline; a bar to click on."""

    DEFAULT_CSS = """
    Scrubber {
        height: 2;
        padding: 0 1;
        background: $panel;
    }
    """

    position: reactive[int] = reactive(0)
    total: reactive[int] = reactive(0)
    indexed: reactive[int] = reactive(0)
    """Events indexed so far (the bar is dotted past them)."""
    label: reactive[Content] = reactive(Content(""))
    playing: reactive[bool] = reactive(False)
    follow: reactive[bool] = reactive(False)
    speed: reactive[int] = reactive(20)
    filter_text: reactive[str] = reactive("")
    matches: reactive[int] = reactive(0)
    new_events: reactive[int] = reactive(0)
    revision: reactive[int] = reactive(0)
    """Bumped by the screen when the bar's marks changed without the counts changing."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.set_reactive(Scrubber.auto_links, False)  # no action links: none to style at each paint
        self.cells_for: Callable[[int], list[Cell]] | None = None

    def render(self) -> Content:
        width = self.content_region.width or self.size.width
        return Content("\n").join([self._bar(width), self._status(width)])

    def _bar(self, width: int) -> Content:
        if width <= 0:
            return Content("")
        blank: list[Cell] = [""] * width
        cells = self.cells_for(width) if self.cells_for is not None and self.total else blank
        total = self.total
        cursor = min(width - 1, self.position * width // total) if total and self.position else -1
        indexed = self.indexed * width // total if total else 0
        parts: list[tuple[str, str]] = []  # runs of one style: far fewer segments to draw
        filtering = bool(self.filter_text)
        for cell, mark in enumerate(cells):
            played = cell < cursor
            if cell == cursor:  # the cursor: its cell's mark if it has one, else a dot
                glyph = _GLYPHS[mark][0] if mark and mark != "turn" else "●"
                parts.append((glyph, "bold reverse $accent" if glyph != "●" else "bold $accent"))
            elif cell >= indexed and total:
                parts.append(("┄", MUTED))
            elif mark and mark != "turn":
                glyph, style = _GLYPHS[mark]
                parts.append((glyph, style if played or filtering else style + " dim"))
            elif mark == "turn":
                parts.append(("│", "$accent" if played else "$foreground-muted"))
            else:
                dim = filtering and not mark
                parts.append(("━" if played and not dim else "─", "$accent" if played and not dim else MUTED))
        runs: list[tuple[str, str]] = []
        for glyph, style in parts:
            if runs and runs[-1][1] == style:
                runs[-1] = (runs[-1][0] + glyph, style)
            else:
                runs.append((glyph, style))
        return Content.assemble(*runs)

    def _status(self, width: int) -> Content:
        play = ("▶ playing", "bold $text-success") if self.playing else ("‖ paused", MUTED)
        left = Content.assemble(
            play, "  ", (f"{self.position:,}", "bold"), (" / ", MUTED), f"{self.total:,}", "  ", self.label
        )
        right: list[Content | tuple[str, str]] = []
        if self.filter_text:
            count = f"{self.matches:,} match{'es' if self.matches != 1 else ''}"
            right += [marked(f"/{self.filter_text} ", "$text-accent"), (count, MUTED), ("  ", "")]
        if self.new_events:
            right += [(f"+{self.new_events:,} new", "bold $text-warning"), ("  ", "")]
        right += [
            ("follow ●" if self.follow else "follow ○", "$text-success" if self.follow else MUTED),
            ("  ", ""),
            (f"{self.speed}/s", MUTED),
        ]
        tail = Content.assemble(*right)
        room = width - tail.cell_length - 2
        if left.cell_length > room:
            left = left.truncate(max(0, room), ellipsis=True)
        gap = max(2, width - left.cell_length - tail.cell_length)
        return Content.assemble(left, " " * gap, tail)

    def on_click(self, event: events.Click) -> None:
        width = self.content_region.width
        x = event.x - self.styles.padding.left
        if event.y == 0 and width > 0 and 0 <= x < width and self.total:
            self.post_message(ScrubRequested(round((x + 0.5) / width * self.total)))
