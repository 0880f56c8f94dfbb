"""How counts read in what users see: `1 session`, `2 sessions`, `0 sessions`.

One function, so every summary line (the CLI's, the importer's, the dashboard's) agrees on it.
"""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, the noun in the plural unless the count is exactly one.

    Args:
        count: how many.
        noun: the singular (`session`).
        plural: the plural when it is not the noun plus `s` (`entries`).
    """
    if count == 1:
        return f"1 {noun}"
    return f"{count:,} {plural or noun + 's'}"
