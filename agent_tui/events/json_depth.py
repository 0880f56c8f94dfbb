"""How deep a JSON value from outside may nest: `nested_deeper(value)`.

A value read from a pipe, a model or a peer can nest arrays and objects deeper than the code
after the parser can follow: Python's recursion limit (the standard `json` module, pydantic's
walks) or orjson's when the value is written back into a log (255 levels). Readers at the edge
refuse such a value with a sentence instead of failing later with a traceback.

Invariants:
- `nested_deeper` walks with a stack of its own, so no depth exhausts Python's;
- `MAX_DEPTH` leaves room for the levels a log line wraps around a value (event, payload).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_DEPTH", "nested_deeper"]

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a value from outside may have: the protocols we
speak go a few levels deep."""


def nested_deeper(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests arrays and objects (lists and dicts) more than `limit` levels deep."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
