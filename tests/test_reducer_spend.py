"""What agents spend, in the dashboard's views: per model call, per turn, per session, per tree, per
day, and the budget the log recorded.

Totals move as each `model.usage` arrives; a turn's `turn.completed` usage settles the turn
without counting anything twice, and an old log that has only the turn's total still counts.
"""

from __future__ import annotations

import pytest
from support_reducer import SessionLog, fold

from agent_tui.events import Event
from agent_tui.reducer import (
    NO_SPEND,
    DashboardState,
    Spend,
    apply_event,
    project_state,
)
from agent_tui.reducer.earlier_spend import add_earlier_spend, earlier_spend, usage_events


def _call(log: SessionLog, turn_id: str, step: int, prompt: int, completion: int, **extra: object) -> None:
    log.emit(
        "context.built", turn_id, step=step, tokens={"instruction": 1, "transcript": 1, "tools": 1},
        maxContextTokens=1000,
    )  # fmt: skip
    log.emit("model.delta", turn_id, text=f"step {step}")
    log.emit("model.usage", turn_id, step=step, promptTokens=prompt, completionTokens=completion, **extra)


def _turn(log: SessionLog, turn_id: str) -> None:
    log.emit("turn.started", turn_id, promptPreview="go")
    log.emit("user.message", turn_id, content="go")


class TestPerCall:
    def test_the_session_total_moves_with_each_model_call_before_the_turn_ends(self) -> None:
        log = SessionLog("sess_a", agent="lead")
        _turn(log, "turn_1")
        _call(log, "turn_1", 1, 1000, 50, cachedTokens=400, costUsd=0.25)
        _call(log, "turn_1", 2, 2000, 80, cacheWriteTokens=300, costUsd=0.5)
        state = DashboardState()
        totals = []
        for event in log.events:
            apply_event(state, event)
            if event.type == "model.usage":
                totals.append(state.sessions["sess_a"].spend.cost_usd)
        assert totals == [0.25, 0.75]
        session = state.sessions["sess_a"]
        assert session.spend == Spend(3000, 130, 400, 300, 0.75, 0)
        assert session.turns[0].usage == session.spend
        assert session.running  # still running: the spend is visible mid-turn

    def test_a_turn_total_after_its_calls_is_counted_once(self) -> None:
        log = SessionLog("sess_a")
        _turn(log, "turn_1")
        _call(log, "turn_1", 1, 1000, 50, costUsd=0.25)
        _call(log, "turn_1", 2, 2000, 80, costUsd=0.5)
        log.emit(
            "turn.completed", "turn_1", stopReason="final",
            usage={"promptTokens": 3000, "completionTokens": 130, "costUsd": 0.75},
        )  # fmt: skip
        state = project_state(log.events)
        assert state.sessions["sess_a"].spend == Spend(3000, 130, cost_usd=0.75)
        assert state.sessions["sess_a"].turns[0].usage == Spend(3000, 130, cost_usd=0.75)
        assert state.spend_by_day == {"2026-11-29": Spend(3000, 130, cost_usd=0.75)}

    def test_an_old_log_with_only_the_turns_total_still_counts(self) -> None:
        log = SessionLog("sess_a")
        _turn(log, "turn_1")
        log.emit("model.delta", "turn_1", text="done")
        log.emit(
            "turn.completed", "turn_1", stopReason="final",
            usage={"promptTokens": 500, "completionTokens": 20, "cachedTokens": 100},
        )  # fmt: skip
        spend = project_state(log.events).sessions["sess_a"].spend
        assert spend == Spend(500, 20, 100, 0, 0.0, 520)
        assert spend.known_cost_usd is None  # tokens, and "price unknown"
        assert not spend.fully_priced

    def test_a_crash_mid_turn_keeps_the_calls_already_recorded(self) -> None:
        log = SessionLog("sess_a")
        _turn(log, "turn_1")
        _call(log, "turn_1", 1, 1000, 50, costUsd=0.25)
        log.emit("turn.completed", "turn_1", stopReason="error", errorCode="provider_failure")
        state = project_state(log.events)
        assert state.sessions["sess_a"].spend == Spend(1000, 50, cost_usd=0.25)
        assert state.sessions["sess_a"].turns[0].usage == Spend(1000, 50, cost_usd=0.25)


class TestUnknownPrice:
    def test_calls_without_a_cost_are_tokens_without_a_made_up_number(self) -> None:
        log = SessionLog("sess_a")
        _turn(log, "turn_1")
        _call(log, "turn_1", 1, 1000, 50)
        spend = project_state(log.events).sessions["sess_a"].spend
        assert (spend.tokens, spend.cost_usd, spend.unpriced_tokens, spend.known_cost_usd) == (
            1050,
            0,
            1050,
            None,
        )
        dump = project_state(log.events).to_state_dump()["sessions"][0]
        assert dump["costUsd"] is None
        assert dump["tokens"] == {"prompt": 1000, "completion": 50, "unpriced": 1050}

    def test_a_mix_keeps_the_known_part_and_says_how_much_is_unpriced(self) -> None:
        log = SessionLog("sess_a")
        _turn(log, "turn_1")
        _call(log, "turn_1", 1, 1000, 50, costUsd=0.1)
        _call(log, "turn_1", 2, 300, 10)
        spend = project_state(log.events).sessions["sess_a"].spend
        assert (spend.known_cost_usd, spend.unpriced_tokens) == (0.1, 310)


def _family() -> tuple[SessionLog, ...]:
    """lead → planner → coder → tester: three levels of sub-agents, each with a priced call."""
    lead = SessionLog("sess_lead", agent="lead")
    planner = SessionLog("sess_planner", clock=100, parent="sess_lead", agent="planner")
    coder = SessionLog("sess_coder", clock=200, parent="sess_planner", agent="coder")
    tester = SessionLog("sess_tester", clock=300, parent="sess_coder", agent="tester")
    for number, (log, cost) in enumerate(((lead, 0.5), (planner, 0.25), (coder, 1.0), (tester, 0.125))):
        turn_id = f"turn_{number}"
        _turn(log, turn_id)
        _call(log, turn_id, 1, 1000 * (number + 1), 10, costUsd=cost)
        log.emit("turn.completed", turn_id, stopReason="final")
    return lead, planner, coder, tester


class TestTree:
    def test_the_subtree_total_rolls_up_three_levels_of_sub_agents(self) -> None:
        lead, planner, coder, tester = _family()
        state = project_state(tester.events + coder.events + lead.events + planner.events)
        assert state.tree_spend("sess_tester").cost_usd == 0.125
        assert state.tree_spend("sess_coder").cost_usd == 1.125
        assert state.tree_spend("sess_planner").cost_usd == 1.375
        assert state.tree_spend("sess_lead") == Spend(10_000, 40, cost_usd=1.875)
        assert state.sessions["sess_lead"].spend.cost_usd == 0.5
        assert state.total_spend() == state.tree_spend("sess_lead")
        assert state.tree_spend("sess_unknown") == NO_SPEND

    def test_the_state_dump_has_each_sessions_cost_and_its_trees(self) -> None:
        lead, planner, coder, tester = _family()
        dump = project_state(lead.events + planner.events + coder.events + tester.events).to_state_dump()
        costs = {s["agentName"]: (s["costUsd"], s["treeCostUsd"]) for s in dump["sessions"]}
        assert costs == {
            "lead": (0.5, 1.875),
            "planner": (0.25, 1.375),
            "coder": (1.0, 1.125),
            "tester": (0.125, 0.125),
        }
        lead_dump = next(s for s in dump["sessions"] if s["agentName"] == "lead")
        assert lead_dump["turns"][0]["costUsd"] == 0.5
        assert lead_dump["treeTokens"] == {"prompt": 10_000, "completion": 40}


class TestPerDay:
    def test_each_call_counts_on_the_day_it_ended(self) -> None:
        log = SessionLog("sess_a")
        _turn(log, "turn_1")
        _call(log, "turn_1", 1, 100, 10, costUsd=1.0)
        _call(log, "turn_1", 2, 200, 20, costUsd=2.0)
        log.emit("turn.completed", "turn_1", stopReason="final")
        # the turn runs past midnight: its second call and its end are on the next day
        events = [
            e
            if e.sequence < 7
            else Event.from_checked({**e.to_dict(), "ts": f"2026-11-30T00:00:{e.sequence:02d}.000Z"})
            for e in log.events
        ]
        state = project_state(events)
        assert state.spend_by_day == {
            "2026-11-29": Spend(100, 10, cost_usd=1.0),
            "2026-11-30": Spend(200, 20, cost_usd=2.0),
        }


class TestBudget:
    def test_the_budget_is_what_the_log_last_recorded(self) -> None:
        log = SessionLog("sess_a", created=False)
        log.emit("session.created", None, cwd="/w", client="test", budget={"usd": 2.5})
        state = project_state(log.events)
        session = state.sessions["sess_a"]
        assert (session.budget_usd, session.budget_tokens) == (2.5, None)
        apply_event(state, log.emit("session.budget", None, usd=4.0, tokens=90_000, by="dashboard"))
        assert (session.budget_usd, session.budget_tokens) == (4.0, 90_000)
        _turn(log, "turn_1")
        for event in log.events[-2:]:
            apply_event(state, event)
        apply_event(state, log.emit("session.budget", "turn_1", tokens=1000, by="dashboard"))
        assert (session.budget_usd, session.budget_tokens) == (None, 1000)
        assert state.to_state_dump()["sessions"][0]["budget"] == {"usd": None, "tokens": 1000}


@pytest.mark.parametrize("cut", range(1, 30))
def test_a_copy_at_any_point_folds_on_to_the_same_totals(cut: int) -> None:
    lead, planner, coder, tester = _family()
    events = lead.events + planner.events + coder.events + tester.events
    whole = project_state(events)
    prefix = fold(events[:cut])
    copy = prefix.copy()
    for event in events[cut:]:
        apply_event(copy, event)
    assert copy == whole
    assert copy.spend_by_day == whole.spend_by_day
    assert copy.tree_spend("sess_lead") == whole.tree_spend("sess_lead")
    assert prefix == fold(events[:cut])  # folding the copy on never changed the original


def _told(state: DashboardState, events: list[Event], tail: list[Event]) -> None:
    """What the workbench and the replay's list do: the whole log's spend (the search index
    keeps it) less its folded tail's, added to the state."""
    whole = earlier_spend("sess_a", events)
    assert whole is not None
    add_earlier_spend(state, "sess_a", whole.minus(earlier_spend("sess_a", tail)))


class TestListedFromItsLastTurn:
    """A session listed from its head and last turn, then told what its earlier turns spent."""

    def _three_turns(self, budget_in_last: bool) -> list[Event]:
        log = SessionLog("sess_a", created=False)
        log.emit("session.created", None, cwd="/w", client="test", budget={"usd": 0.5})
        _turn(log, "turn_1")
        _call(log, "turn_1", 1, 100, 10, costUsd=0.25)
        _call(log, "turn_1", 2, 300, 30, cachedTokens=200, costUsd=0.3)
        log.emit("turn.completed", "turn_1", stopReason="error", errorCode="budget_exceeded")
        log.emit("session.budget", None, usd=2.0, by="dashboard")
        _turn(log, "turn_2")  # an old writer's turn: its total only
        log.emit("model.delta", "turn_2", text="ok")
        usage = {"promptTokens": 50, "completionTokens": 5}
        log.emit("turn.completed", "turn_2", stopReason="final", usage=usage)
        _turn(log, "turn_3")
        if budget_in_last:
            log.emit("session.budget", "turn_3", tokens=9000, by="dashboard")
        _call(log, "turn_3", 1, 40, 4, costUsd=0.01)
        log.emit("turn.completed", "turn_3", stopReason="final")
        return log.events

    def test_a_last_turn_folded_from_its_middle_counts_once(self) -> None:
        """A turn longer than the tail read: the tail starts after its first call, and its
        total (on turn.completed) settles it; the call before the tail is not counted again."""
        log = SessionLog("sess_a", created=False)
        log.emit("session.created", None, cwd="/w", client="test")
        _turn(log, "turn_1")
        _call(log, "turn_1", 1, 100, 10, costUsd=0.1)
        log.emit("turn.completed", "turn_1", stopReason="final")
        _turn(log, "turn_2")
        _call(log, "turn_2", 1, 200, 20, costUsd=0.2)
        _call(log, "turn_2", 2, 300, 30, costUsd=0.3)
        _call(log, "turn_2", 3, 400, 40, costUsd=0.4)
        total = {"promptTokens": 900, "completionTokens": 90, "costUsd": 0.9}
        log.emit("turn.completed", "turn_2", stopReason="final", usage=total)
        events = log.events
        cut = [i for i, e in enumerate(events) if e.type == "model.usage"][2]  # turn 2's second call
        listed = project_state([events[0], *events[cut:]])
        _told(listed, events, events[cut:])
        whole = project_state(events).sessions["sess_a"].spend
        assert listed.sessions["sess_a"].spend == whole
        assert whole.cost_usd == pytest.approx(1.0)
        assert listed.spend_by_day == project_state(events).spend_by_day

    @pytest.mark.parametrize("budget_in_last", [False, True])
    def test_its_totals_and_budget_are_the_whole_logs(self, budget_in_last: bool) -> None:
        events = self._three_turns(budget_in_last)
        whole = project_state(events)
        last = max(i for i, e in enumerate(events) if e.type == "turn.started")
        listed = project_state([events[0], *events[last:]])
        _told(listed, events, events[last:])
        session, full = listed.sessions["sess_a"], whole.sessions["sess_a"]
        assert session.spend == full.spend
        assert session.spend._replace(cost_usd=0.0) == Spend(490, 49, 200, unpriced_tokens=55)
        assert session.spend.cost_usd == pytest.approx(0.56)
        assert listed.spend_by_day == whole.spend_by_day
        assert (session.budget_usd, session.budget_tokens) == (full.budget_usd, full.budget_tokens)
        assert len(session.turns) == 1  # the earlier turns' spend, not the turns themselves

    @pytest.mark.parametrize("budget_in_last", [False, True])
    def test_told_as_usage_events_it_folds_to_the_same_spend(self, budget_in_last: bool) -> None:
        """The listeners that count spend from events (budgets, attention) are told an earlier
        spend as usage events: they fold to it, its unpriced tokens unpriced."""
        found = earlier_spend("sess_a", self._three_turns(budget_in_last))
        assert found is not None and found.spend.unpriced_tokens and found.budget is not None
        again = earlier_spend("sess_a", usage_events("sess_a", found))
        assert again is not None
        assert again.spend._replace(cost_usd=0.0) == found.spend._replace(cost_usd=0.0)
        assert again.spend.cost_usd == pytest.approx(found.spend.cost_usd)
        assert [day for day, _ in again.by_day] == [day for day, _ in found.by_day]
        assert again.budget == found.budget
