"""A line of `Content` painted as one row of a widget, without Textual's wrap.

Textual paints a widget's text through `Visual.to_strips`, which splits the text into lines,
wraps each (finding where words break) and formats the rows; for a line that fits in the width
that work changes nothing, and on a replay's seek it is most of what painting the new rows costs.
`fits` says whether a line is such a line for a widget (no tab, which the wrap expands; no more
characters than cells; the widget's styles neither align, pad nor move its text), and `paint`
gives the row `Visual.to_strips` would give for it: the same segments, each cell's style holding
the selection offset `(x, y)` of its character (`y` the line's index in the widget's text).
A widget whose `auto_links` is on has its links styled by `to_strips`: this does not, so it is
for widgets that turned them off.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.content import Content
from textual.strip import Strip
from textual.widget import Widget


def fits(widget: Widget, line: Content, width: int) -> bool:
    """Whether `paint` paints `line` as `Visual.to_strips` would in `width` cells of `widget`."""
    plain = line.plain
    styles = widget.styles
    return (
        len(plain) <= width
        and line.cell_length <= width
        and "\t" not in plain
        and not widget.auto_links
        and styles.text_align in ("left", "start")
        and not styles.line_pad
        and tuple(styles.content_align) == ("left", "top")
    )


def paint(widget: Widget, line: Content, y: int) -> Strip:
    """`line` (which `fits`) as row `y` of `widget`'s text."""
    style = widget.visual_style
    segments: list[Segment] = []
    x = 0
    for text, text_style in line.render(style, end="", parse_style=widget._get_style):
        segments.append(Segment(text, (style + text_style).rich_style_with_offset(x, y)))
        x += len(text)
    return Strip(segments, line.cell_length)
