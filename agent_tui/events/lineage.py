"""The session tree, walked one way everywhere: agent paths up, descendants down.

Invariants:
- `path_to_root` names a session and its ancestors root first; a cycle (a corrupt log that makes
  a session its own ancestor) stops the walk instead of looping;
- `descendants` lists every session below one, parents before their children, each once.

The engine (its session table), the registry (its lineage) and the reducer (its views) each know
the tree in their own terms; they pass how to step through it, and the walking is done here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


def path_to_root(
    session_id: str, parent_of: Callable[[str], str | None], label_of: Callable[[str], str]
) -> tuple[str, ...]:
    """`label_of` of the root, …, the parent, the session itself (`lead › explorer`)."""
    path: list[str] = []
    seen: set[str] = set()
    current: str | None = session_id
    while current is not None and current not in seen:
        seen.add(current)
        path.append(label_of(current))
        current = parent_of(current)
    return tuple(reversed(path))


def descendants(session_id: str, children_of: Callable[[str], Iterable[str]]) -> list[str]:
    """Every session below `session_id` (not itself), breadth first."""
    found: list[str] = []
    seen = {session_id}
    frontier = [session_id]
    while frontier:
        nxt: list[str] = []
        for parent in frontier:
            for child in children_of(parent):
                if child not in seen:
                    seen.add(child)
                    found.append(child)
                    nxt.append(child)
        frontier = nxt
    return found
