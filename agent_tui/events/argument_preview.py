"""The one-line preview of a tool call's arguments: the log's `argsPreview`, and how a call whose
preview is not stored yet (the model has only asked for it) is shown.

Invariants:
- keys keep their order; each value is compact JSON (strings in double quotes, line breaks
  written `\\n`, spaces kept), so a call reads the same while it is requested and once it runs;
- the line holds no control character and is at most `PREVIEW_LIMIT` characters, cut with a
  trailing `…`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

__all__ = ["PREVIEW_LIMIT", "args_preview"]

PREVIEW_LIMIT = 120


def args_preview(args: Mapping[str, Any]) -> str:
    """`key=value` pairs of `args`, e.g. `cmd="ls src/foo.py"` (see the module's invariants)."""
    parts = []
    for key, value in args.items():
        rendered = orjson.dumps(value, default=str, option=orjson.OPT_SORT_KEYS).decode()
        parts.append(f"{key}={rendered}")
    line = " ".join(parts)
    if not line.isprintable():  # only a key can hold a raw control character (JSON escapes)
        line = "".join(char if char.isprintable() else " " for char in line)
    if len(line) > PREVIEW_LIMIT:
        line = line[: PREVIEW_LIMIT - 1] + "…"
    return line
