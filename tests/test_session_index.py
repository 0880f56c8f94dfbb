"""The session index (`events/session_tree.py` `SessionIndex`): its answers equal a brute-force
fold of the same events, over random session trees (cycles and logs read again included)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_tui.costs.budgets import BudgetLimit, BudgetSpend
from agent_tui.events.session_tree import SessionIndex, session_label

IDS = ("a", "b", "c", "d", "e")


@dataclass(frozen=True)
class FakeEvent:
    type: str
    session_id: str
    payload: dict[str, Any] = field(default_factory=dict)
    turn_id: str | None = None


def _created(sid: str, parent: str | None, name: str | None, usd: float | None) -> FakeEvent:
    payload: dict[str, Any] = {"parentSessionId": parent, "agentName": name, "model": f"m-{sid}"}
    if usd is not None:
        payload["budget"] = {"usd": usd}
    return FakeEvent("session.created", sid, payload)


_sid = st.sampled_from(IDS)
_cost = st.sampled_from([None, 0.5, 1.0, 2.25])  # (sums of these are exact in any order)
_event = st.one_of(
    st.builds(
        _created, _sid, st.none() | _sid, st.none() | st.sampled_from(["lead", "helper"]), st.none() | _cost
    ),
    st.builds(
        lambda sid, usd, tokens: FakeEvent("session.budget", sid, {"usd": usd, "tokens": tokens}),
        _sid,
        _cost,
        st.none() | st.integers(1, 50),
    ),
    st.builds(
        lambda sid, cost, prompt, completion: FakeEvent(
            "model.usage", sid, {"promptTokens": prompt, "completionTokens": completion, "costUsd": cost}
        ),
        _sid,
        _cost,
        st.integers(0, 9),
        st.integers(0, 9),
    ),
    st.builds(lambda sid, n: FakeEvent("turn.started", sid, turn_id=f"turn_{n}"), _sid, st.integers(0, 3)),
    st.builds(lambda sid: FakeEvent("turn.completed", sid), _sid),
)


def _brute(events: list[FakeEvent]) -> dict[str, Any]:
    """Each fact the index answers, refolded the plain way from the whole list."""
    parent: dict[str, str] = {}
    since: dict[str, int] = {}  # when the session was last linked under its present parent
    label: dict[str, str] = {}
    budget: dict[str, BudgetLimit] = {}
    spent: dict[str, BudgetSpend] = {}
    for at, event in enumerate(events):
        sid, payload = event.session_id, event.payload
        if event.type == "session.created":
            linked = payload["parentSessionId"] if payload["parentSessionId"] != sid else None
            if parent.get(sid) != linked:
                since[sid] = at
            if linked is None:
                parent.pop(sid, None)
            else:
                parent[sid] = linked
            label[sid] = session_label(payload["agentName"], None, sid)
            spent[sid] = BudgetSpend()
            budget.pop(sid, None)
            if payload.get("budget"):
                budget[sid] = BudgetLimit(payload["budget"]["usd"])
        elif event.type == "session.budget" and sid in label:
            budget.pop(sid, None)
            if payload["usd"] is not None or payload["tokens"] is not None:
                budget[sid] = BudgetLimit(payload["usd"], payload["tokens"])
        elif event.type == "model.usage" and sid in label:
            cost = payload["costUsd"]
            tokens = payload["promptTokens"] + payload["completionTokens"]
            old = spent[sid]
            spent[sid] = BudgetSpend(
                old.usd + (cost or 0.0), old.tokens + tokens, old.unpriced or cost is None
            )

    def chain(sid: str) -> tuple[str, ...]:
        found = [sid]
        while (up := parent.get(found[-1])) is not None and up not in found:
            found.append(up)
        return tuple(reversed(found))

    every = set(IDS)
    below = {s: {t for t in every if t != s and s in chain(t)} for s in every}

    def total(sids: set[str]) -> BudgetSpend:
        usd = sum(spent[t].usd for t in sids if t in spent)
        tokens = sum(spent[t].tokens for t in sids if t in spent)
        return BudgetSpend(usd, tokens, any(spent[t].unpriced for t in sids if t in spent))

    return {
        "parent": {s: parent.get(s) for s in every},
        "children": {s: sorted((t for t in parent if parent[t] == s), key=since.__getitem__) for s in every},
        "chain": {s: chain(s) for s in every},
        "below": below,
        "label": {s: label.get(s, s) for s in every},
        "budget": {s: budget.get(s) for s in every},
        "tree_spend": {s: total({s} | below[s]) for s in every},
    }


def _answers(index: SessionIndex[BudgetLimit, BudgetSpend]) -> dict[str, Any]:
    every = set(IDS)
    return {
        "parent": {s: index.parent_of(s) for s in every},
        "children": {s: index.children(s) for s in every},
        "chain": {s: index.chain(s) for s in every},
        "below": {s: set(index.descendants(s)) for s in every},
        "label": {s: index.label(s) for s in every},
        "budget": {s: index.budget(s) for s in every},
        "tree_spend": {s: index.tree_spend(s) for s in every},
    }


@settings(max_examples=300, deadline=None)
@given(st.lists(_event, max_size=40))
def test_the_index_answers_what_a_brute_force_fold_of_its_events_does(events: list[FakeEvent]) -> None:
    index: SessionIndex[BudgetLimit, BudgetSpend] = SessionIndex(
        BudgetLimit.of, BudgetSpend.of, BudgetSpend()
    )
    for event in events:
        index.track(event)
    assert _answers(index) == _brute(events)


@settings(max_examples=100, deadline=None)
@given(st.lists(_event, max_size=40))
def test_descendants_list_each_once_parents_before_children_and_subtree_starts_with_itself(
    events: list[FakeEvent],
) -> None:
    index: SessionIndex[BudgetLimit, BudgetSpend] = SessionIndex(
        BudgetLimit.of, BudgetSpend.of, BudgetSpend()
    )
    for event in events:
        index.track(event)
    for sid in IDS:
        below = index.descendants(sid)
        assert len(below) == len(set(below)) and sid not in below
        for at, child in enumerate(below):
            up = index.parent_of(child)
            assert up == sid or up in below[:at]
        assert index.subtree(sid) == [sid, *below]
        assert index.agent_path(sid) == tuple(index.label(s) for s in index.chain(sid))


def test_a_log_read_again_starts_its_session_over_and_a_budget_needs_its_session() -> None:
    index: SessionIndex[BudgetLimit, BudgetSpend] = SessionIndex(
        BudgetLimit.of, BudgetSpend.of, BudgetSpend()
    )
    usage = {"promptTokens": 3, "completionTokens": 4, "costUsd": 0.5}
    index.track(FakeEvent("session.budget", "a", {"usd": 1.0}))  # before its creation: not known
    index.track(FakeEvent("model.usage", "a", usage))
    assert index.budget("a") is None and index.tree_spend("a") == BudgetSpend()
    index.track(_created("a", None, "lead", 2.0))
    index.track(_created("b", "a", None, None))
    index.track(FakeEvent("model.usage", "b", usage))
    assert index.tree_spend("a") == BudgetSpend(0.5, 7)
    assert index.budget("a") == BudgetLimit(2.0) and index.models["a"] == "m-a"
    index.track(_created("b", "a", None, None))  # its log read again
    assert index.tree_spend("a") == BudgetSpend()
    assert index.agent_path("b") == ("lead", "b")
    index.track(FakeEvent("session.budget", "a", {"by": "user"}))  # no limit left: no budget
    assert index.budget("a") is None
