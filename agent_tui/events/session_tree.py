"""The session tree: who spawned whom, walked one way everywhere, and what a session is called.

A `SessionTree` holds the parent links of sessions and, for each parent, its children in order.
A `SessionIndex` is a tree folded from stored events that also answers what each session is
called, which model it runs on, its budget, and what it and its tree spent. The
reducer keeps a tree (the dashboard's); the engine's budget keeper keeps the index that is the
one owner of its engine's family, asked by the engine, the registry (which walks it and links
nothing), the workbench, the model router, the sub-agent tools and the bus host; attention keeps
one of the events it watches; none of them walks a tree of its own.

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
- the index's answers are those of a fold of its events in order: a `session.created` (a log
  read again) starts the session over (its link, label, model, budget, spend); a
  `session.budget` replaces the budget and a `model.usage` adds to the spend of a session it
  knows (one whose `session.created` it saw); `tree_spend` is the sum of the own spends of the
  session and every session below it; what a budget or a spend is, and how spends add, is the
  caller's (`costs.budgets` for the engine and attention): the index holds no money arithmetic;
- pure Python, no agent-tui imports: the reducer calls it while folding a million events.
"""

from __future__ import annotations

import operator
from bisect import insort
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Generic, Protocol, TypeVar

T = TypeVar("T")

__all__ = ["SessionIndex", "SessionTree", "descendants", "path_to_root", "session_label"]


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

    def chain(self, session_id: str) -> tuple[str, ...]:
        """The ids of the session's root, …, its parent, the session itself."""
        return path_to_root(session_id, self._parent.get, _itself)

    def subtree(self, session_id: str) -> list[str]:
        """The session and every session below it, breadth first."""
        return [session_id, *self.descendants(session_id)]

    def total(self, session_id: str, own: Callable[[str], T], add: Callable[[T, T], T]) -> T:
        """`own` of the session and of every session below it, added up (a tree's spend)."""
        found = own(session_id)
        for sid in self.descendants(session_id):
            found = add(found, own(sid))
        return found

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


def _itself(session_id: str) -> str:
    return session_id


class Summable(Protocol):
    def __add__(self, other: Any, /) -> Any: ...


Budget = TypeVar("Budget")
Spend = TypeVar("Spend", bound=Summable)


class SessionIndex(SessionTree, Generic[Budget, Spend]):
    """A session tree folded from stored events, with each session's label, model, budget,
    own spend (see the module contract).

    Args:
        budget_of: the budget a `session.created.budget` or `session.budget` payload states
            (None: none); never raises.
        spend_of: the spend of one `model.usage` payload.
        zero: nothing spent (spends add with `+`).
    """

    __slots__ = ("_budget_of", "_spend_of", "_zero", "budgets", "labels", "models", "spent")

    def __init__(
        self,
        budget_of: Callable[[Any], Budget | None],
        spend_of: Callable[[Mapping[str, Any]], Spend],
        zero: Spend,
    ) -> None:
        super().__init__()
        self._budget_of = budget_of
        self._spend_of = spend_of
        self._zero = zero
        self.labels: dict[str, str] = {}  # a session is known once its creation was seen
        self.models: dict[str, str | None] = {}
        self.budgets: dict[str, Budget] = {}
        self.spent: dict[str, Spend] = {}  # each known session's own (not its sub-agents')

    def track(self, event: Any) -> None:
        """Fold one stored event (an `Event`: `type`, `session_id`, `turn_id`, `payload`)."""
        kind = event.type
        sid = event.session_id
        if kind == "model.usage":
            if sid in self.spent:
                self.spent[sid] = self.spent[sid] + self._spend_of(event.payload)
        elif kind == "session.created":  # a log read again starts over
            payload = event.payload
            self.labels[sid] = session_label(payload.get("agentName"), payload.get("title"), sid)
            self.models[sid] = payload.get("model")
            self.spent[sid] = self._zero
            self._set_budget(sid, payload.get("budget"))
            self.link(sid, payload.get("parentSessionId"))
        elif kind == "session.budget":
            if sid in self.spent:
                self._set_budget(sid, event.payload)

    def _set_budget(self, session_id: str, payload: Any) -> None:
        budget = self._budget_of(payload)
        if budget is None:
            self.budgets.pop(session_id, None)
        else:
            self.budgets[session_id] = budget

    def label(self, session_id: str) -> str:
        """What the session is called (its id, if its creation was not seen)."""
        return self.labels.get(session_id, session_id)

    def agent_path(self, session_id: str) -> tuple[str, ...]:
        """The labels from the root down to the session (`lead › explorer`)."""
        return self.path(session_id, self.label)

    def budget(self, session_id: str) -> Budget | None:
        """The session's own budget (an ancestor's may count for it too: `chain`)."""
        return self.budgets.get(session_id)

    def tree_spend(self, session_id: str) -> Spend:
        """What the session and every session below it spent."""
        spent, zero = self.spent, self._zero
        return self.total(session_id, lambda sid: spent.get(sid, zero), operator.add)
