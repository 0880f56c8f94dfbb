"""What a search query means: words, prefixes and phrases, every one of them required.

`parse_query("deploy stag* \\"src foo\\"")` reads:
- a word (`deploy`): that word, anywhere in a line of the log, in any case;
- a prefix (`stag*`): any word that begins so (`staging`, `stage`);
- a phrase (`"src foo"`, also `"src foo"*` with its last word a prefix): those words next to
  each other, in that order; a term with punctuation inside (`foo.py`, `src/app.py`) is the
  phrase of its words, since punctuation is not part of any word.

Invariants:
- a line matches when every term matches it (AND); a term is matched on words (see `words`),
  never on arbitrary substrings: `oo` does not find `foo`;
- the FTS5 expression made here (`fts_expression`) quotes every term, so nothing the user types
  reaches FTS5's own syntax (`NEAR`, `OR`, column filters, `^`);
- a query that cannot be read raises `QueryError` with one sentence saying why (an unbalanced
  quote, nothing to search for); it never becomes an SQLite error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_tui.search.words import words


class QueryError(ValueError):
    """A query that cannot be searched; the message says why, in one sentence."""


@dataclass(frozen=True)
class Term:
    """Folded words that must occur next to each other; `prefix`: the last one may go on."""

    words: tuple[str, ...]
    prefix: bool = False

    def fts(self) -> str:
        phrase = '"' + " ".join(self.words) + '"'
        return phrase + "*" if self.prefix else phrase

    def spans(self, folded: Sequence[str]) -> list[tuple[int, int]]:
        """Where this term occurs in a list of folded words: (first word, one past the last)."""
        size = len(self.words)
        found = []
        *whole, last = self.words
        for start in range(len(folded) - size + 1):
            if all(folded[start + k] == word for k, word in enumerate(whole)):
                candidate = folded[start + size - 1]
                if candidate == last or (self.prefix and candidate.startswith(last)):
                    found.append((start, start + size))
        return found


@dataclass(frozen=True)
class Query:
    """A parsed query: `text` as typed, and its terms (at least one)."""

    text: str
    terms: tuple[Term, ...]

    def fts_expression(self) -> str:
        """The FTS5 MATCH expression: every term quoted, joined by AND."""
        return " AND ".join(term.fts() for term in self.terms)


def parse_query(text: str) -> Query:
    """Read a query (see the module docstring).

    Raises:
        QueryError: an unbalanced quote, or no word to search for.
    """
    terms: list[Term] = []
    index, size = 0, len(text)
    while index < size:
        ch = text[index]
        if ch.isspace():
            index += 1
            continue
        if ch == '"':
            close = text.find('"', index + 1)
            if close < 0:
                raise QueryError(f"the quote at column {index + 1} of {text!r} is never closed")
            raw, index = text[index + 1 : close], close + 1
            prefix = index < size and text[index] == "*"
            if prefix:
                index += 1
        else:
            end = index
            while end < size and not text[end].isspace() and text[end] != '"':
                end += 1
            raw, index = text[index:end], end
            prefix = raw.endswith("*")
        folded = tuple(word.folded for word in words(raw))
        if folded:
            terms.append(Term(folded, prefix=prefix))
    if not terms:
        raise QueryError(f"{text!r} has no words to search for (a word is letters and digits)")
    return Query(text, tuple(terms))
