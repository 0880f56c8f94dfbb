"""`TranscriptLines`: text shown as a `Static` shows it, each line wrapped once, only visible rows painted.

A `Static` wraps its whole text twice on every update (once to measure its height, once to
paint), although a streaming turn only grows at its end and the panel shows a screenful of it.
This widget holds its text as a list of lines (each a `Content` without line breaks, wrapped on
its own, exactly as a `Static` wraps each line of the joined text), and:
- wraps a line only when it is new or changed (same text and same styles at the same place
  reuse the rendered rows), or when what wrapping depends on changes: the width, the widget's
  colours and text styles, the theme;
- measures its height as the sum of its lines' heights; a line that fits in the width (no tab,
  which the wrap expands) is one row without being wrapped (a seek's new history is measured
  whole, but mostly painted in part);
- paints a line that fits as its one row without wrapping it (`one_row`), and a row of a
  longer line from the rows its wrap gives: Textual asks only for the rows the
  screen shows, so a paint costs what is visible, not the transcript's length; it keeps the
  rows of the `KEPT_LINES` lines shown that were wrapped or painted last (and of no line no
  longer shown), wrapping a line again if it comes back into view;
- when an update keeps the height, repaints only the rows that changed, without a layout.
It looks like a `Static` of the lines joined by newlines, but for one thing: a wrapped line's
continuation rows hang under its text (`hanging.py`), so `◆ a long answer` or `    risk · …`
does not run on at column 0. No link in it is an action (`@click`; Markdown links are dropped),
so Textual's link styling is off: it cost each painted row a pass over its segments' metadata.
`content` is that text (joined when asked). While the user selects text in it, it paints as a plain `Static` does
(selection offsets run over the whole text).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.visual import Visual, VisualType
from textual.widgets import Static

from agent_tui.tui import one_row
from agent_tui.tui.hanging import hang_rows

KEPT_LINES = 96
"""Lines whose rendered rows are kept, of those shown (the most recently wrapped or painted)."""

_LineKey = tuple[str, tuple[object, ...]]
_RowsKey = tuple[_LineKey, int]  # a line, and its index


def _line_key(line: Content) -> _LineKey:
    # `Content.__eq__` compares the text only: two lines are the same when styles match too.
    return (line.plain, tuple(line.spans))


def _moved_down(strips: list[Strip], lines: int, chars: int = 0) -> list[Strip]:
    """`strips` of a line (or of its part from character `chars` on) rendered alone, as rows of
    the whole text where `lines` text lines come first: each cell's selection offset `(x, y)`
    becomes `(x + chars, y + lines)`."""
    if not lines and not chars:
        return strips
    moved: list[Strip] = []
    for strip in strips:
        segments = []
        for text, style, control in strip:
            meta = style.meta if style is not None else None
            offset = meta.get("offset") if meta else None
            if style is not None and meta and offset is not None:
                meta["offset"] = (offset[0] + chars, offset[1] + lines)
                # The same style with the new metadata: `+` would read and write both styles'
                # metadata again; without a link the plain copy takes the new metadata as is.
                base = style if style.link else style.clear_meta_and_links()
                style = base + Style.from_meta(meta)
            segments.append(Segment(text, style, control))
        moved.append(Strip(segments, strip.cell_length))
    return moved


class TranscriptLines(Static):
    """A `Static` for long, growing text (see the module docstring).

    `wrapped` counts the lines wrapped since the widget was made: what tests count to prove an
    update re-rendered only what changed.
    """

    def __init__(self, content: Content | None = None, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.set_reactive(TranscriptLines.auto_links, False)
        self._lines: list[Content] = []
        self._keys: list[_LineKey] = []
        self._joined: Content | None = None
        # Measured at one look (width, visual style, theme): per line, its rows' key and height.
        self._look: tuple[object, ...] | None = None
        self._row_keys: list[_RowsKey] = []
        self._heights: dict[_RowsKey, int] = {}
        self._starts: list[int] = []  # the first row of each line
        self._height = 0
        self._measured = False  # `_starts` fits the lines shown
        self._rows: LRUCache[_RowsKey, list[Strip]] = LRUCache(KEPT_LINES)
        self.wrapped = 0
        if content is not None:
            self.update(content)

    # -- what it shows -------------------------------------------------------------------------
    @property
    def content(self) -> VisualType:
        """The lines joined by newlines (what a `Static` would have been given)."""
        if self._joined is None:
            self._joined = Content("\n").join(self._lines)
        return self._joined

    @content.setter
    def content(self, content: VisualType) -> None:
        self.update(content)

    @property
    def visual(self) -> Visual:
        return self.render()

    def render(self) -> Content:
        content = self.content
        assert isinstance(content, Content)
        return content

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        """Show `content` (a `Content`, or plain text: no markup), one line per line of it."""
        self.show_lines([content if isinstance(content, Content) else Content(str(content))])

    def show_lines(self, lines: Sequence[Content]) -> None:
        """Show `lines`, one under the other (one that holds line breaks is split at them, so a
        growing message re-wraps only its last line); unchanged lines keep their rendered rows."""
        lines = [
            part
            for line in lines
            for part in (line.split("\n", allow_blank=True) if "\n" in line.plain else (line,))
        ]
        keys = [_line_key(line) for line in lines]
        if keys == self._keys:
            return
        before = (self._row_keys, self._starts, self._height) if self._measured else None
        self._lines = lines
        self._keys = keys
        self._joined = None
        self._measured = False
        width = self.size.width if self.is_mounted else 0
        if not width:
            self.refresh(layout=True)
            return
        self._measure(width)  # now, so a container can place itself (`measured_height`)
        if before is None:
            self.refresh(layout=True)
            return
        old_keys, old_starts, old_height = before
        if self._height != old_height:
            self.refresh(layout=True)
            return
        changed = [
            Region(0, start, width, self._heights[key])
            for index, (key, start) in enumerate(zip(self._row_keys, self._starts, strict=True))
            if index >= len(old_keys) or old_keys[index] != key or old_starts[index] != start
        ]
        if changed:
            self.refresh(*changed)

    @property
    def measured_height(self) -> int | None:
        """Its content height at its current width, if the lines shown are measured at it (a
        container can then place itself before the layout does)."""
        look = self._look
        if not self._measured or look is None or look[0] != self.size.width:
            return None
        return self._height

    # -- measuring and painting ----------------------------------------------------------------
    def _measure(self, width: int) -> None:
        """Wrap the lines not measured yet at `width`; note where each line starts."""
        styles = self.styles
        look = (
            width,
            self.visual_style,
            self.app.theme,
            styles.text_wrap,
            styles.text_overflow,
            styles.text_align,
            styles.line_pad,
            styles.content_align,
        )
        if look == self._look and self._measured:
            return
        if look != self._look:
            self._look = look
            self._heights = {}
            self._rows.clear()
        heights: dict[_RowsKey, int] = {}
        row_keys: list[_RowsKey] = []
        starts: list[int] = []
        height = 0
        fits = width - 2 * styles.line_pad
        for index, (key, line) in enumerate(zip(self._keys, self._lines, strict=True)):
            row_key = (key, index)
            rows = self._heights.get(row_key)
            if rows is None:
                rows = self._height_of(row_key, line, width, fits)
            heights[row_key] = rows
            row_keys.append(row_key)
            starts.append(height)
            height += rows
        self._heights = heights
        self._row_keys = row_keys
        # Drop the rows of lines no longer shown (a header's last version); the cache has no
        # `__iter__`, hence `keys()`.
        for gone in [key for key in self._rows.keys() if key not in heights]:  # noqa: SIM118
            self._rows.discard(gone)
        self._starts = starts
        self._height = height
        self._measured = True

    def _height_of(self, row_key: _RowsKey, line: Content, width: int, fits: int) -> int:
        """The rows `line` takes: one if it is at most `fits` cells without a tab (wrapped when
        painted), else as many as wrapping it at `width` gives."""
        if line.cell_length <= fits and "\t" not in row_key[0][0]:
            return 1
        return len(self._wrap(row_key, line, width))

    def _wrap(self, row_key: _RowsKey, line: Content, width: int) -> list[Strip]:
        hung = hang_rows(line, width)
        if hung is None and one_row.fits(self, line, width):
            strips = [one_row.paint(self, line, row_key[1])]  # as the wrap paints it, for less
        elif hung is None:
            strips = _moved_down(Visual.to_strips(self, line, width, None, self.visual_style), row_key[1])
        else:
            indent, rows = hung
            blank = Strip.blank(indent, self.visual_style.rich_style)
            strips = []
            for offset, row in rows:
                room = width - indent if offset else width
                painted = Visual.to_strips(self, row, room, None, self.visual_style)[0]
                moved = _moved_down([painted], row_key[1], offset)[0]
                strips.append(Strip.join([blank, moved]) if offset else moved)
        self._rows[row_key] = strips
        self.wrapped += 1
        return strips

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if not width:
            return 0
        self._measure(width)
        return self._height

    def render_line(self, y: int) -> Strip:
        if self.text_selection is not None:
            return super().render_line(y)
        width = self.size.width
        self._measure(width)
        index = bisect_right(self._starts, y) - 1
        if index < 0 or y >= self._height:
            return Strip.blank(width, self.visual_style.rich_style)
        row_key = self._row_keys[index]
        rows = self._rows.get(row_key)
        if rows is None:
            rows = self._wrap(row_key, self._lines[index], width)
        return rows[y - self._starts[index]]
