"""The line of a hit to show, and where in it the query's words are.

A hit's text may be long (a tool's whole output, a many-line answer); a result shows one line of
it: the first line where a term of the query matches, clipped around the first match, with the
matching words marked. Marking uses the same words as the index (`words`), so what is marked is
what matched.

Invariants:
- the line shown is the first where a term matches whole; failing that (a phrase over a line
  break), the first holding one of the terms' words, those words marked;
- `Excerpt.text` is one line (no newline) of the hit's text, at most about `width` characters;
  `marks` are (start, end) places in `Excerpt.text`, in order, not overlapping;
- the text is returned raw: the caller passes it through `visible` before it reaches a screen
  (`Excerpt.visible_parts` does both: it makes each part visible and says which are marked).
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_tui.events import visible
from agent_tui.search.query import Query, Term
from agent_tui.search.words import words

WIDTH = 160


@dataclass(frozen=True)
class Excerpt:
    """One line of a hit, clipped, with the places the query matched."""

    text: str
    marks: tuple[tuple[int, int], ...]
    line: int
    """Which line of the hit's text (0-based)."""
    clipped_left: bool = False
    clipped_right: bool = False

    def visible_parts(self) -> list[tuple[str, bool]]:
        """The excerpt as (text made visible, marked?) parts, in order; left-clipped text starts
        with `…`, right-clipped ends with it."""
        parts: list[tuple[str, bool]] = []
        if self.clipped_left:
            parts.append(("…", False))
        at = 0
        for start, end in self.marks:
            if start > at:
                parts.append((visible(self.text[at:start]), False))
            parts.append((visible(self.text[start:end]), True))
            at = end
        if at < len(self.text):
            parts.append((visible(self.text[at:]), False))
        if self.clipped_right:
            parts.append(("…", False))
        return parts


def _marks(line: str, query: Query) -> list[tuple[int, int]]:
    found = words(line)
    folded = [word.folded for word in found]
    spans = sorted({span for term in query.terms for span in term.spans(folded)})
    marks: list[tuple[int, int]] = []
    for first, last in spans:
        start, end = found[first].start, found[last - 1].end
        if marks and start <= marks[-1][1]:
            marks[-1] = (marks[-1][0], max(end, marks[-1][1]))
        else:
            marks.append((start, end))
    return marks


def _word_by_word(query: Query) -> Query:
    """`query` with each phrase taken apart into its words (the last keeps its prefix)."""
    terms = tuple(
        Term((word,), prefix=term.prefix and place == len(term.words) - 1)
        for term in query.terms
        for place, word in enumerate(term.words)
    )
    return Query(query.text, terms)


def excerpt(text: str, query: Query, width: int = WIDTH) -> Excerpt:
    """The line of `text` to show for `query` (the first with a match, else the first line)."""
    lines = text.split("\n")
    chosen, marks = 0, []
    # A phrase the index matched may run over a line break: then mark its words one by one.
    for terms in (query, _word_by_word(query)):
        for number, line in enumerate(lines):
            found = _marks(line, terms)
            if found:
                chosen, marks = number, found
                break
        if marks:
            break
    line = lines[chosen]
    if len(line) <= width:
        return Excerpt(line, tuple(marks), chosen)
    first = marks[0][0] if marks else 0
    start = max(0, min(first - width // 4, len(line) - width))
    end = start + width
    kept = tuple((max(s, start) - start, min(e, end) - start) for s, e in marks if s < end and e > start)
    return Excerpt(line[start:end], kept, chosen, clipped_left=start > 0, clipped_right=end < len(line))
