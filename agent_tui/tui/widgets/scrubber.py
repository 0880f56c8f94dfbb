"""The replay scrubber: a bar over the whole timeline, and a status line for the cursor.

Line 1, the bar: each cell stands for a stretch of events and shows its most telling mark (a
corrupt line `!`, a failure `✗`, an approval `⚑`, a compression `◆`, a turn start `│`; while a
filter is on, `┃` where events match); the part already played is bright, the part not indexed
yet dotted, the cursor a `●` (or its cell's mark, highlighted). Clicking a cell moves there.

Line 2: play state, `position / total`, the event at the cursor (type, agent, time; or
`FILE:LINE: reason` on a corrupt line), the filter and its matches, new events that arrived while
the cursor was elsewhere, follow and speed.

The widget draws what it is told: the screen sets the reactive fields and `cells_for`, which
gives the bar's cells for a width (see `agent_tui.replay.bar`). Each line is painted on its own
as one row (`one_row`: no wrap, which a line as wide as the widget does not need), the bar kept
while what it shows is the same (a step rarely moves the cursor to another cell): a seek
repaints two rows, not the wrap of a two-line text.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.content import Content
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from agent_tui.replay import Cell
from agent_tui.tui import one_row
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
        self._bar_row: tuple[object, Strip] | None = None  # what the bar showed, and its row

    def render(self) -> Content:
        width = self.content_region.width or self.size.width
        return Content("\n").join([self._bar(width), self._status(width)])

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if self.text_selection is not None or y > 1 or width <= 0:
            return super().render_line(y)
        if y == 1:
            line = self._status(width)
            return one_row.paint(self, line, 1) if one_row.fits(self, line, width) else super().render_line(y)
        cells, cursor, indexed, filtering = self._bar_key(width)
        key = (tuple(cells), cursor, indexed, filtering, bool(self.total), self.visual_style, self.app.theme)
        if self._bar_row is not None and self._bar_row[0] == key:
            return self._bar_row[1]
        line = self._bar(width)
        if not one_row.fits(self, line, width):
            return super().render_line(y)
        row = one_row.paint(self, line, 0)
        self._bar_row = (key, row)
        return row

    def _bar_key(self, width: int) -> tuple[list[Cell], int, int, bool]:
        """What the bar shows at `width`: its cells, the cursor's cell, the first cell not indexed
        and whether a filter is on."""
        blank: list[Cell] = [""] * width
        cells = self.cells_for(width) if self.cells_for is not None and self.total else blank
        total = self.total
        cursor = min(width - 1, self.position * width // total) if total and self.position else -1
        indexed = self.indexed * width // total if total else 0
        return cells, cursor, indexed, bool(self.filter_text)

    def _bar(self, width: int) -> Content:
        if width <= 0:
            return Content("")
        cells, cursor, indexed, _filtering = self._bar_key(width)
        total = self.total
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
