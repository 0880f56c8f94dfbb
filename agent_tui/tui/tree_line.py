"""One tree line in the room it has: its parts, and how they give way when the line is too long.

A line is built as `LinePiece`s, each with a `role`. A line too long for its room is cut with `…`:
first the end message, then the cost gives its short form (the tree's total, `Σ$1.87`), then the
name is cut (to no fewer than `MIN_NAME_CELLS`), so the status, approvals, phase, time, cost and
budget mark stay in view; where even that is too long (an 80-column screen), the approvals' wait,
the worktree mark and the turn's time are left out, one by one, before the name is cut, then the
phase word takes its short form (`exec`), then the cost goes: the phase word always stays, and a
time is never shown without the word it belongs to (`⚑ 4s` the oldest request's wait,
`executing 5s` the turn's). The budget mark stays (a line that cannot keep it is cut at its end).
Pure: no widget, no Textual.
"""

from __future__ import annotations

from typing import NamedTuple

from rich.style import Style
from rich.text import Text

MIN_NAME_CELLS = 6
"""The fewest cells a cut name keeps."""


def cut_text(text: Text, room: int) -> Text:
    cut = text.copy()
    cut.truncate(room, overflow="ellipsis")
    return cut


class LinePiece(NamedTuple):
    """A part of a tree line: its `role` says how it gives way when the line is too long
    (`fixed` and `budget` never, `note` is cut first, `cost` takes its `short` form, `name` is
    cut, then `wait`, `worktree` and `time` are dropped, `phase` takes its `short` form and
    `cost` is dropped, in that order)."""

    role: str
    text: Text
    short: Text | None = None


class LinePieces:
    """The pieces of one line as they are added; `context` (a dimmed ancestor's style) is laid
    over each."""

    def __init__(self, context: Style | None) -> None:
        self.context = context
        self.pieces: list[LinePiece] = []

    def add(
        self, role: str, text: str, look: Style | str, short: str | None = None, *, gap: bool = False
    ) -> None:
        """Add a piece; `short` is its short form, `gap` puts a space before it (and its short form)."""
        shorter = None if short is None else self._text(short, look, gap)
        self.pieces.append(LinePiece(role, self._text(text, look, gap), shorter))

    def _text(self, text: str, look: Style | str, gap: bool) -> Text:
        piece = Text.assemble(" ", (text, look)) if gap else Text(text, look)
        if self.context is not None:
            piece.stylize(self.context)
        return piece


PHASE_SHORT = {"executing": "exec", "compress": "compr"}
"""The phase words' short forms, for a line too narrow for the whole word."""
GIVING_WAY: tuple[tuple[str, str], ...] = (
    ("drop", "wait"),
    ("drop", "worktree"),
    ("drop", "time"),
    ("short", "phase"),
    ("drop", "cost"),
)
"""What a line too narrow for its cut name does, one step after the other."""


def _joined(pieces: list[LinePiece]) -> Text:
    return Text.assemble(*(piece.text for piece in pieces))


def fit_line(pieces: list[LinePiece], room: int) -> Text:
    """A line in `room` cells (see the module docstring): its note cut or dropped; then its cost
    in its short form; then its name cut (not under `MIN_NAME_CELLS`); then `GIVING_WAY`, step
    by step, each time with the name cut; at last cut at its end. (Each step is measured by its
    pieces' widths, which add up: only the line that fits is assembled.)"""
    head = [piece for piece in pieces if piece.role != "note"]
    width = _width(head)
    if width < room:
        return Text.assemble(_joined(head), cut_text(_joined(pieces[len(head) :]), room - width))
    if width == room:
        return _joined(head)
    kept = [LinePiece(p.role, p.short) if p.role == "cost" and p.short is not None else p for p in head]
    fitted = _name_cut(kept, room)
    for how, role in GIVING_WAY:
        if fitted is not None:
            return fitted
        if how == "drop":
            kept = [piece for piece in kept if piece.role != role]
        else:
            kept = [LinePiece(p.role, p.short) if p.role == role and p.short is not None else p for p in kept]
        fitted = _name_cut(kept, room)
    return fitted if fitted is not None else cut_text(_joined(kept), room)


def _width(pieces: list[LinePiece]) -> int:
    """The cells the pieces take side by side (a line's width is the sum of its parts')."""
    return sum(piece.text.cell_len for piece in pieces)


def _name_cut(pieces: list[LinePiece], room: int) -> Text | None:
    """The pieces in `room` cells by cutting the name, or None if its cut would be too short."""
    width = _width(pieces)
    if width <= room:
        return _joined(pieces)
    name = next((piece for piece in pieces if piece.role == "name"), None)
    if name is None:
        return None
    fixed = width - name.text.cell_len
    if room - fixed < MIN_NAME_CELLS:
        return None
    return Text.assemble(
        *(cut_text(piece.text, room - fixed) if piece is name else piece.text for piece in pieces)
    )
