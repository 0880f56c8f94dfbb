"""A vertical scrollbar drawn straight to rows, for a panel whose scrollbar moves at every update.

Textual's `ScrollBar` renders a `ScrollBarRender`, a Rich renderable: each paint goes through a
Rich console (render, apply the widget's style, split into lines, crop), which for a 30-row bar
costs about as much as painting the panel's changed text. A replay's detail changes length and
scroll position at each seek, so its bar is painted each time. `RowsScrollBarRender` is the same
renderer (`ScrollBarRender.render_bar`: the same glyphs, colours and mouse actions) that is also
a Textual `Visual`, giving the rows themselves: each segment of the bar under the widget's style,
as the console would have given them. Set it as a vertical `ScrollBar`'s `renderer` (Textual's
documented way to change how one scrollbar draws).
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.color import Color
from rich.segment import Segment
from textual.css.styles import RulesMap
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

_BACK = Color.parse("#555555")
_BAR = Color.parse("bright_magenta")


class RowsScrollBarRender(ScrollBarRender, Visual):
    """`ScrollBarRender` as a `Visual` (vertical bars only: a horizontal one renders as Rich)."""

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        size = height or 0
        bar_style = self.style if not isinstance(self.style, str) else None
        bar = self.render_bar(
            size=size,
            window_size=self.window_size,
            virtual_size=self.virtual_size,
            position=self.position,
            vertical=True,
            thickness=width,
            back_color=(bar_style.bgcolor if bar_style is not None else None) or _BACK,
            bar_color=(bar_style.color if bar_style is not None else None) or _BAR,
        )
        base = style.rich_style
        rows: list[Strip] = []
        for text, segment_style, _control in bar.segments:
            styled = base + segment_style if base else segment_style
            rows.append(Strip([Segment(text, styled)], cell_len(text)))
        return rows

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.thickness

    def get_height(self, rules: RulesMap, width: int) -> int:
        return int(self.virtual_size)


def draw_in_rows(scrollbar: ScrollBar) -> None:
    """Have `scrollbar` (a vertical one) draw with `RowsScrollBarRender`."""
    if scrollbar.vertical:
        # `renderer` is a class variable that Textual reads through the instance, to be set per bar.
        setattr(scrollbar, "renderer", RowsScrollBarRender)  # noqa: B010
