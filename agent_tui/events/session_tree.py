"""The session tree: who spawned whom, walked one way everywhere, and what a session is called.

A `SessionTree` holds the parent links of sessions and, for each parent, its children in order.
The registry (its lineage), the reducer (the dashboard's tree), the engine, the workbench and the
sub-agent tools keep or build one; none of them walks a tree of its own.

Invariants:
- a session has at most one parent and appears once among that parent's children; linking it
  under another parent moves it; a session linked under itself is a root (a corrupt log must not
  make the tree infinite);
- children keep the order they were linked in, or, when linked with an `order` key, ascending
  order of that key (the dashboard's (created ts, session id), so the tree does not depend on
  the order in which logs were read);
- `descendants` lists every session below one, breadth first, parents before their children,
  each once, and stops at a cycle; `path` names a session and its ancestors root first and
  stops at a cycle too;
- `session_label` is the one rule for what a session is called: its agent name, else its
  title, else its id;
- pure Python, no agent-tui imports: the reducer calls it while folding a million events.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Collection, Iterable
from typing import Any

__all__ = ["SessionTree", "descendants", "path_to_root", "session_label"]


def session_label(agent_name: str | None, title: str | None, session_id: str) -> str:
    """What a session is called: its agent name, else its title, else its id."""
    return agent_name or title or session_id


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


_NO_CHILDREN: tuple[str, ...] = ()


class SessionTree:
    """Parent links and ordered children of sessions (see the module contract)."""

    __slots__ = ("_children", "_order", "_parent")

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}
        self._children: dict[str, list[str]] = {}
        self._order: dict[str, Any] = {}

    @classmethod
    def from_parents(cls, links: Iterable[tuple[str, str | None]]) -> SessionTree:
        """A tree of `(session id, parent id or None)` pairs, children in the pairs' order."""
        tree = cls()
        for session_id, parent in links:
            tree.link(session_id, parent)
        return tree

    # -- writing -----------------------------------------------------------------------------

    def link(self, session_id: str, parent: str | None, order: Any = None) -> None:
        """Make `parent` the session's parent (None: a root), placed among its siblings by
        `order` if given (ascending), else after them. Linking again where it is is a no-op."""
        if parent == session_id:
            parent = None
        old = self._parent.get(session_id)
        if old == parent and (order is None or self._order.get(session_id) == order):
            return
        if old is not None:
            self._unlink(session_id, old)
        if parent is None:
            return
        self._parent[session_id] = parent
        siblings = self._children.get(parent)
        if siblings is None:
            self._children[parent] = [session_id]
            if order is not None:
                self._order[session_id] = order
        elif order is None:
            siblings.append(session_id)
        else:
            self._order[session_id] = order
            insort(siblings, session_id, key=self._order.__getitem__)

    def forget(self, session_id: str) -> None:
        """Drop the session's link to its parent (its children keep theirs to it)."""
        old = self._parent.get(session_id)
        if old is not None:
            self._unlink(session_id, old)

    def _unlink(self, session_id: str, parent: str) -> None:
        del self._parent[session_id]
        self._order.pop(session_id, None)
        siblings = self._children.get(parent)
        if siblings is not None and session_id in siblings:
            siblings.remove(session_id)
            if not siblings:
                del self._children[parent]

    # -- reading -----------------------------------------------------------------------------

    def parent_of(self, session_id: str) -> str | None:
        return self._parent.get(session_id)

    def children(self, session_id: str) -> list[str]:
        """The session's direct children, in order (a new list)."""
        return list(self._children.get(session_id, _NO_CHILDREN))

    def descendants(self, session_id: str) -> list[str]:
        """Every session below `session_id` (not itself), breadth first."""
        children = self._children
        return descendants(session_id, lambda sid: children.get(sid, _NO_CHILDREN))

    def roots(self, known: Iterable[str]) -> list[str]:
        """Those of `known` without a parent, or whose parent is not among `known` (in order)."""
        ids = known if isinstance(known, Collection) else list(known)
        parents = self._parent
        return [sid for sid in ids if (parent := parents.get(sid)) is None or parent not in ids]

    def path(self, session_id: str, label_of: Callable[[str], str]) -> tuple[str, ...]:
        """`label_of` of each session from the root down to `session_id`."""
        return path_to_root(session_id, self._parent.get, label_of)

    def copy(self) -> SessionTree:
        """An independent copy (linking in either never changes the other)."""
        tree = SessionTree.__new__(SessionTree)  # (a replay checkpoint copies one: no spare dicts)
        tree._parent = self._parent.copy()
        tree._children = {parent: ids[:] for parent, ids in self._children.items()}
        tree._order = self._order.copy()
        return tree

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionTree):
            return NotImplemented
        return self._parent == other._parent and self._children == other._children

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        """How many sessions have a parent."""
        return len(self._parent)
