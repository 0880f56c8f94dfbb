"""`TranscriptLines` measures a line that fits in one row without wrapping it, and wraps it when
it is painted: its height and every row it paints are what wrapping each line gives (a line as
wide as the panel, an empty one, one with a tab, one that wraps with a hanging indent), and a
long text scrolled to its end wraps the rows on screen, not the lines above them. A line that fits
is painted without the wrap, cell for cell (styles and selection offsets) as the wrap paints it."""

from __future__ import annotations

import asyncio
from bisect import bisect_right

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.visual import Visual

from agent_tui.tui.hanging import hang
from agent_tui.tui.widgets.transcript_lines import TranscriptLines, _moved_down

WIDTH = 40
PANEL_HEIGHT = 12
LINES = [
    Content("x" * WIDTH),  # exactly the width: one row
    Content(""),
    Content("a\tb" * 12),  # 35 characters, 96 cells once the tabs are expanded: wraps
    Content("◆ " + "word " * 20),  # wraps, continuation rows under its text
    Content.styled("styled and short", "bold"),
    Content("y" * (WIDTH + 1)),  # one cell too many
]


class _Panel(App[None]):
    def __init__(self, lines: list[Content]) -> None:
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="panel"):
            yield TranscriptLines(id="text")

    def on_mount(self) -> None:
        panel = self.query_one("#panel", VerticalScroll)
        panel.styles.width = WIDTH
        panel.styles.height = PANEL_HEIGHT
        panel.styles.scrollbar_size_vertical = 0
        self.query_one(TranscriptLines).show_lines(self.lines)


def _rows_of(widget: TranscriptLines, lines: list[Content]) -> list[str]:
    """The rows each line wraps into, laid out alone (hanging indents included)."""
    rows: list[str] = []
    for line in lines:
        for part in hang(line, WIDTH):
            strips = Visual.to_strips(widget, part, WIDTH, None, widget.visual_style)
            rows += [strip.text.rstrip() for strip in strips]
    return rows


async def _painted(app: App[None]) -> None:
    await app.workers.wait_for_complete()
    refreshed = asyncio.Event()
    app.screen.call_after_refresh(refreshed.set)
    await refreshed.wait()


@pytest.mark.anyio
async def test_height_and_rows_are_those_of_each_line_wrapped() -> None:
    app = _Panel(LINES)
    async with app.run_test(size=(60, 30)):
        await _painted(app)
        widget = app.query_one(TranscriptLines)
        expected = _rows_of(widget, LINES)
        assert widget.size.height == len(expected) > len(LINES)
        assert [widget.render_line(y).text.rstrip() for y in range(len(expected))] == expected


@pytest.mark.anyio
async def test_a_long_text_at_its_end_wraps_what_shows() -> None:
    lines = [Content(f"line {n} of a long answer") for n in range(500)]
    app = _Panel(lines)
    async with app.run_test(size=(60, 30)) as pilot:
        await _painted(app)
        widget = app.query_one(TranscriptLines)
        assert widget.size.height == 500
        before = widget.wrapped
        app.query_one("#panel", VerticalScroll).scroll_end(animate=False, immediate=True)
        await pilot.pause()
        await _painted(app)
        assert widget.wrapped - before <= 2 * PANEL_HEIGHT  # the rows on screen, not 500 lines
        assert widget.wrapped <= 4 * PANEL_HEIGHT
        assert widget.render_line(499).text.rstrip() == "line 499 of a long answer"


@pytest.mark.anyio
async def test_each_painted_cell_names_its_character_for_text_selection() -> None:
    # Selection reads the `offset` (x, y) a cell's style carries: x is the character's index in
    # its line, y the line's index, as in a `Static` of the lines joined, on every row a line
    # wraps into (hanging rows too) and whatever else the cell's style holds.
    lines = [line for line in LINES if "\t" not in line.plain] + [
        Content.assemble(("- ", "bold"), ("a styled item that runs on " * 3, "italic"))
    ]
    app = _Panel(lines)
    async with app.run_test(size=(60, 30)):
        await _painted(app)
        widget = app.query_one(TranscriptLines)
        checked = 0
        for y in range(widget.size.height):
            index = widget._row_keys[bisect_right(widget._starts, y) - 1][1]
            plain = lines[index].plain
            for segment in widget.render_line(y):
                offset = segment.style.meta.get("offset") if segment.style is not None else None
                if offset is None or not segment.text.strip():
                    continue
                x, line = offset
                assert line == index
                assert plain[x : x + len(segment.text)] == segment.text
                checked += 1
        assert checked > len(lines)


FITTING = [
    Content(""),
    Content("plain text with trailing spaces   "),
    Content.styled("muted by a theme variable", "$text-muted"),
    Content.assemble(("◆ ", "bold $accent"), ("an answer ", ""), ("with code", "italic reverse")),
    Content.assemble(("a link", "link https://example.com"), (" and after it", "underline")),
    Content("wide 漢字 and 🙂 cells"),
    Content("z" * WIDTH),  # exactly the width
]


@pytest.mark.anyio
async def test_a_line_that_fits_paints_as_the_wrap_paints_it() -> None:
    # The rows go under a few others so each line's `y` offset is not its row's index alone.
    lines = [Content("first"), Content("second"), *FITTING]
    app = _Panel(lines)
    async with app.run_test(size=(60, 30)):
        await _painted(app)
        widget = app.query_one(TranscriptLines)
        assert widget.size.height == len(lines)
        for index, line in enumerate(lines):
            wrapped = Visual.to_strips(widget, line, WIDTH, None, widget.visual_style)
            (expected,) = _moved_down(wrapped, index)
            painted = widget.render_line(index)
            assert list(painted) == list(expected), line.plain
            assert painted.cell_length == expected.cell_length
