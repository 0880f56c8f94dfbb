"""Hanging indents: a wrapped line's continuation rows start under its text, not at column 0.

A line's text starts after its leading spaces and its marker, if it has one: a run of symbols
(`◆`, `❯`, `⚙`, `──`, `⚠`, `-`) or a number with a dot (`1.`), then a space. `hang_rows` wraps a
line as Textual wraps it (`Content.wrap`) and says where each row's text starts in the line, so
a view can paint the continuation rows shifted right and still map each cell to its character.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from textual.content import Content

_LEAD = re.compile(r" *(?:(?:[^\w\s]+|\d+\.) +)?")


def hang_indent(plain: str, width: int) -> int:
    """The cells before a line's text (0 if that would leave less than half of `width`)."""
    lead = _LEAD.match(plain)  # never None: the pattern matches the empty string
    indent = cell_len(lead.group()) if lead is not None else 0
    return indent if indent <= width // 2 else 0


def hang_rows(line: Content, width: int) -> tuple[int, list[tuple[int, Content]]] | None:
    """`(indent, [(offset, row)])`: `line` wrapped in `width` cells, its rows after the first
    wrapped in `width - indent`; `offset` is where a row starts in the line. None when the line
    fits in one row, has no indent, or holds tabs (which the wrap expands)."""
    plain = line.plain
    if line.cell_length <= width or "\t" in plain:
        return None
    indent = hang_indent(plain, width)
    if not indent:
        return None
    first = line.wrap(width)[0]
    rows = [(0, first)]
    position = _next_text(plain, len(first.plain))
    for row in line[position:].wrap(width - indent):
        if plain[position : position + len(row.plain)] != row.plain:
            return None  # a wrap this does not follow: leave the line to the usual one
        rows.append((position, row))
        position = _next_text(plain, position + len(row.plain))
    return indent, rows


def hang(line: Content, width: int) -> list[Content]:
    """`line` as rows of at most `width` cells, continuation rows indented under its text."""
    hung = hang_rows(line, width)
    if hung is None:
        return [line]
    indent, rows = hung
    return [row if not offset else Content(" " * indent) + row for offset, row in rows]


def _next_text(plain: str, position: int) -> int:
    while position < len(plain) and plain[position] == " ":
        position += 1
    return position
