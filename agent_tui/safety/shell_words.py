"""Shell words: what one word of a command line is once quotes and escapes are resolved.

Invariants:
- `Word.literal` is true only when the value is known from the text alone: no expansion of any
  kind; otherwise `expansions` names the kinds (`variable`, `substitution`, `arithmetic`,
  `glob`, `brace`, `tilde`, `ansi-c`, `other`);
- the helpers follow bash: outside quotes a backslash escapes any character and a
  backslash-newline disappears; inside double quotes a backslash escapes only `$`, a backquote,
  `"`, `\\` and newline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "MAX_BRACE_SPELLINGS",
    "Word",
    "bare_word",
    "brace_spellings",
    "expanding_characters",
    "names",
    "quoted_delimiter",
    "shape",
    "unescape_double_quoted",
]

# `{…,…}` or `{…..…}` with no brace inside: a brace expansion. Written so that a search takes
# time linear in the word (the look-ahead finds the closing brace once, the lazy run stops at
# the first `,` or `..`): the plain `\{[^{}]*(?:,|\.\.)[^{}]*\}` backtracks quadratically on
# `{,,,,…` with no `}`, and a model can send a command of megabytes.
BRACE = re.compile(r"\{(?=[^{}]*\})[^{}]*?(?:,|\.\.)")
_GLOB_CHARS = frozenset("*?[")
MAX_BRACE_SPELLINGS = 64
_BRACE_GROUP = re.compile(r"\{([^{}]*,[^{}]*)\}")


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word. `value` has quotes removed; `source` is the word as written."""

    value: str
    source: str
    expansions: frozenset[str] = frozenset()

    @property
    def literal(self) -> bool:
        return not self.expansions


def names(text: str) -> frozenset[str]:
    """A set of names written as one string, space-separated: how the rule tables list them."""
    return frozenset(text.split())


def quoted_delimiter(delimiter: str) -> bool:
    return any(char in delimiter for char in "'\"\\")


def shape(source: str) -> str:
    """An unquoted word with escaped characters masked, for finding brace expansions."""
    return re.sub(r"\\.", "x", source, flags=re.DOTALL)


def bare_word(source: str) -> Word:
    """An unquoted word: backslash escapes resolved; globs, braces, tilde and `$` noticed."""
    if "\\" not in source and not any(char in _GLOB_CHARS or char in "{}~$(`" for char in source):
        return Word(source, source)
    out: list[str] = []
    expansions: set[str] = set()
    index = 0
    while index < len(source):
        char = source[index]
        if char == "\\":
            following = source[index + 1 : index + 2]
            if following != "\n":
                out.append(following)
            index += 2
            continue
        if char in _GLOB_CHARS:
            expansions.add("glob")
        elif char == "$":
            expansions.add("variable")
        elif char == "`":
            expansions.add("substitution")  # tree-sitter keeps some backquotes inside words
        elif char == "(":
            expansions.add("other")  # extended globs `@(…)`, `!(…)`
        elif char == "~" and index == 0:
            expansions.add("tilde")
        out.append(char)
        index += 1
    if BRACE.search(shape(source)):
        expansions.add("brace")
    return Word("".join(out), source, frozenset(expansions))


_DOUBLE_QUOTE_ESCAPES = frozenset('$`"\\')


def unescape_double_quoted(text: str) -> str:
    """Inside double quotes a backslash escapes only `$`, a backquote, `"`, `\\` and newline."""
    if "\\" not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        following = text[index + 1 : index + 2]
        if char == "\\" and following == "\n":
            index += 2
            continue
        if char == "\\" and following in _DOUBLE_QUOTE_ESCAPES and following:
            out.append(following)
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def expanding_characters(text: str) -> bool:
    """Whether bash would expand anything in `text` read as a heredoc body or double-quoted text.

    There a backslash escapes `$`, a backquote, `\\` and a newline (which then disappears, so
    `$\\<newline>(cmd)` is `$(cmd)`); any other `$` or backquote starts an expansion. A lone `$`
    that bash would print as it is still counts: we leave no room for a misreading.
    """
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char in "$`":
            return True
        index += 1
    return False


def brace_spellings(word: str) -> list[str]:
    """`word` with its `{a,b}` groups expanded as bash would (at most `MAX_BRACE_SPELLINGS`)."""
    spellings = [word]
    expanded: list[str] = []
    while spellings:
        spelling = spellings.pop()
        match = _BRACE_GROUP.search(spelling)
        if match is None or len(expanded) + len(spellings) > MAX_BRACE_SPELLINGS:
            expanded.append(spelling)
            continue
        for choice in match.group(1).split(","):
            spellings.append(spelling[: match.start()] + choice + spelling[match.end() :])
    return expanded
