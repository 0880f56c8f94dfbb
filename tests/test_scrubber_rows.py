"""The scrubber paints each of its two lines as one row without Textual's wrap, and keeps its bar
row while what the bar shows is the same: every row it paints is, segment for segment (styles and
selection offsets), the row the wrap paints of its text, as the cursor moves within a cell, to
another, over a mark, while a filter is on and after the bar's marks change."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App, ComposeResult
from textual.content import Content
from textual.visual import Visual

from agent_tui.replay import Cell
from agent_tui.tui.widgets.scrubber import Scrubber

WIDTH = 60


class _Bar(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.cells: list[Cell] = [""] * (WIDTH - 2)
        marks: dict[int, Cell] = {3: "turn", 10: "failure", 20: "approval", 30: "compress", 40: "corrupt"}
        for at, mark in marks.items():
            self.cells[at] = mark

    def compose(self) -> ComposeResult:
        yield Scrubber(id="scrubber")

    def on_mount(self) -> None:
        scrubber = self.query_one(Scrubber)
        scrubber.styles.width = WIDTH
        scrubber.cells_for = lambda width: self.cells[:width]
        scrubber.total = 1000
        scrubber.indexed = 800
        scrubber.label = Content.styled("tool_call · claude · 12:00:01", "$text-accent")


async def _painted(app: App[None]) -> None:
    refreshed = asyncio.Event()
    app.screen.call_after_refresh(refreshed.set)
    await refreshed.wait()


def _wrapped_rows(scrubber: Scrubber) -> list[list[object]]:
    width = scrubber.size.width
    strips = Visual.to_strips(scrubber, scrubber.render(), width, 2, scrubber.visual_style)
    return [list(strip) for strip in strips]


@pytest.mark.anyio
async def test_each_row_is_the_row_the_wrap_paints() -> None:
    app = _Bar()
    async with app.run_test(size=(80, 10)) as pilot:
        await _painted(app)
        scrubber = app.query_one(Scrubber)
        moves = [
            lambda: setattr(scrubber, "position", 100),
            lambda: setattr(scrubber, "position", 101),  # the same cell: the bar row is kept
            lambda: setattr(scrubber, "position", 172),  # onto the failure mark
            lambda: setattr(scrubber, "position", 990),  # past what is indexed
            lambda: setattr(scrubber, "filter_text", "edit"),
            lambda: app.cells.__setitem__(15, "match"),  # new marks, the same counts
            lambda: setattr(scrubber, "revision", scrubber.revision + 1),
        ]
        bars = set()
        for move in moves:
            move()
            await pilot.pause()
            await _painted(app)
            rows = [list(scrubber.render_line(y)) for y in range(2)]
            assert rows == _wrapped_rows(scrubber)
            bars.add("".join(segment.text for segment in rows[0]))
        assert len(bars) >= 5  # the moves changed what the bar shows
