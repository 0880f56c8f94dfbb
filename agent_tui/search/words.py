"""Words as the search index sees them: the Python twin of SQLite FTS5's `unicode61` tokenizer.

The index is built with `tokenize = "unicode61 remove_diacritics 2"`. This module splits text
the same way, so that the results can be highlighted (which words of a line matched) and a
query can be turned into the words the index holds.

Invariants:
- a word is a maximal run of letters and digits (`str.isalnum`); everything else (spaces,
  punctuation, `_`, `/`, `.`, `-`) separates words, so `src/foo_bar.py` is the words `src`,
  `foo`, `bar`, `py`;
- words are compared folded: lower case, with diacritics removed (`É` → `e`), as the index
  compares them;
- `words` returns each word's place in the original text (start, end), never a copy of a
  changed text, so a highlight lands on the characters the user sees.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Word:
    """One word of a text: where it is (`text[start:end]`) and how the index compares it."""

    start: int
    end: int
    folded: str


@lru_cache(maxsize=65_536)
def fold(word: str) -> str:
    """`word` as the index compares it: lower case, diacritics removed."""
    if word.isascii():  # most words: nothing to decompose
        return word.lower()
    decomposed = unicodedata.normalize("NFD", word.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[Word]:
    """The words of `text`, in order, with their places."""
    return [Word(*match.span(), fold(match.group())) for match in _WORD.finditer(text)]


_WORD = re.compile(r"[^\W_]+")
"""A run of letters and digits: `re`'s word characters are `str.isalnum`'s and `_`."""
