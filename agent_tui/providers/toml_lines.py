"""Line numbers for TOML keys, so a bad value is reported as `PATH:LINE: reason`.

`tomllib` parses values but keeps no positions. `KeyLines` scans the text once for table headers
(`[profiles.local]`) and `key =` lines (dotted keys included) and answers the line of a key path
such as `("profiles", "local", "model")`. A key it did not see on its own line (inside an inline
table, say) gets the line of its nearest enclosing table or key, so every answer is a real line
of the file. It is a locator, not a parser: the file was already parsed by `tomllib`.
"""

from __future__ import annotations

import re

_PART = r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+'
_DOTTED = rf"(?:{_PART})(?:\s*\.\s*(?:{_PART}))*"
_HEADER = re.compile(rf"^\s*\[\s*({_DOTTED})\s*\]\s*(?:#.*)?$")
_ARRAY_HEADER = re.compile(rf"^\s*\[\[\s*({_DOTTED})\s*\]\]")
_ASSIGN = re.compile(rf"^\s*({_DOTTED})\s*=")
_SPLIT = re.compile(_PART)


def _parts(dotted: str) -> tuple[str, ...]:
    out = []
    for match in _SPLIT.finditer(dotted):
        part = match.group(0)
        if part[:1] in ("'", '"'):
            part = part[1:-1]
        out.append(part)
    return tuple(out)


class KeyLines:
    """Where each table and key of a TOML text starts (1-based lines)."""

    def __init__(self, text: str) -> None:
        self._lines: dict[tuple[str, ...], int] = {}
        table: tuple[str, ...] = ()
        for number, line in enumerate(text.splitlines(), start=1):
            if _ARRAY_HEADER.match(line):
                table = ("\0array",)  # keys of arrays of tables are not located
                continue
            header = _HEADER.match(line)
            if header:
                table = _parts(header.group(1))
                for end in range(1, len(table) + 1):  # `[a.b]` is where `a` is first seen too
                    self._lines.setdefault(table[:end], number)
                continue
            assign = _ASSIGN.match(line)
            if assign:
                self._lines.setdefault(table + _parts(assign.group(1)), number)

    def line(self, *path: str) -> int:
        """The line of `path`, else of its nearest located parent, else 1."""
        key = tuple(path)
        while key:
            found = self._lines.get(key)
            if found is not None:
                return found
            key = key[:-1]
        return 1
