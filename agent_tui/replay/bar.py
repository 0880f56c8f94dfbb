"""What the scrubber bar shows in each of its cells: the most telling mark among its events.

A bar of `width` cells over `total` events gives cell `c` the events `[c*total//width,
(c+1)*total//width)` (at least one). A cell shows, in this order of precedence: a corrupt line,
a failure, an approval, a compression, a turn start; or, while a filter is on, whether any event
of the cell matches. Finding a mark in a cell is a bisection in that mark's sorted indices, so a
bar costs `width × marks × log(n)` whatever the size of the log.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Literal

Cell = Literal["corrupt", "failure", "approval", "compress", "turn", "match", ""]
PRECEDENCE: tuple[Cell, ...] = ("corrupt", "failure", "approval", "compress", "turn")


def cell_span(cell: int, width: int, total: int) -> tuple[int, int]:
    """The event indices `[start, end)` under `cell` (a cell over an empty timeline is empty)."""
    if total <= 0 or width <= 0:
        return (0, 0)
    start = cell * total // width
    end = max(start + 1, (cell + 1) * total // width)
    return (start, min(end, total))


def bar_cells(
    width: int, total: int, marks: Mapping[str, Sequence[int]], matches: Sequence[int] | None = None
) -> list[Cell]:
    """One `Cell` per bar cell; with `matches` (a filter's sorted event indices) only those."""
    out: list[Cell] = []
    for cell in range(width):
        start, end = cell_span(cell, width, total)
        if start >= end:
            out.append("")
            continue
        if matches is not None:
            out.append("match" if _any_in(matches, start, end) else "")
            continue
        out.append(next((name for name in PRECEDENCE if _any_in(marks.get(name, ()), start, end)), ""))
    return out


def _any_in(indices: Sequence[int], start: int, end: int) -> bool:
    at = bisect_left(indices, start)
    return at < len(indices) and indices[at] < end
