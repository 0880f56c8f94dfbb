"""`RowsScrollBarRender` draws a vertical scrollbar's rows without Rich, and they are the rows
Textual's own renderer gives, segment for segment (glyphs, colours, mouse actions), wherever the
view is scrolled, whatever the length of what it scrolls, and under the mouse."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip
from textual.visual import Visual, visualize
from textual.widgets import Static

from agent_tui.tui.widgets.row_scrollbar import RowsScrollBarRender, draw_in_rows


class _Panel(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll(id="panel"):
            yield Static("\n".join(f"line {n}" for n in range(200)), id="text")


async def _painted(app: App[None]) -> None:
    refreshed = asyncio.Event()
    app.screen.call_after_refresh(refreshed.set)
    await refreshed.wait()


def _rows(bar: ScrollBar, renderer: type[ScrollBarRender]) -> list[Strip]:
    setattr(bar, "renderer", renderer)  # noqa: B010
    width, height = bar.size
    return Visual.to_strips(bar, visualize(bar, bar.render()), width, height, bar.visual_style)


@pytest.mark.anyio
async def test_rows_are_those_of_the_rich_renderer() -> None:
    app = _Panel()
    async with app.run_test(size=(40, 20)) as pilot:
        panel = app.query_one("#panel", VerticalScroll)
        bar = panel.vertical_scrollbar
        draw_in_rows(bar)
        assert bar.renderer is RowsScrollBarRender
        seen = set()
        for lines, y, hover in (
            (200, 0, False),
            (200, 57, False),
            (200, 500, True),
            (60, 5, False),
            (45, 30, False),
        ):
            app.query_one("#text", Static).update("\n".join(f"line {n}" for n in range(lines)))
            await _painted(app)
            await pilot.pause()
            panel.scroll_to(y=y, animate=False, immediate=True)
            bar.mouse_over = hover
            await _painted(app)
            rows = _rows(bar, RowsScrollBarRender)
            assert [list(row) for row in rows] == [list(row) for row in _rows(bar, ScrollBarRender)]
            assert len(rows) == bar.size.height > 0
            seen.add(tuple(row.text for row in rows))
        assert len(seen) >= 3  # the thumb moved and changed size
