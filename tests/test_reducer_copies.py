"""The reducer's copies and constructors: they cover every field of every view, and a copy is its own.

`DashboardState.copy()` and the fold's constructors of turns and tool calls are generated from
the dataclass fields (`agent_tui.reducer.field_copy`), not written out. These tests hold them to
that: a copy equals its original on every field (derived indexes included), owns what the fold
may still write to, and the fold's constructors equal the dataclass constructors. The sample
state sets every field of every view away from its default, so a copy that dropped or reset a
field would be seen (a new field must be set by the sample too: the first test says which).

A copy is also independent of its original: folding the rest of a log into either leaves the
other as it was, including for a late event of a turn that already finished (copies share
finished turns, so the fold must clone one before writing to it).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from support_reducer import SessionLog, approved_rename_log, tokens

from agent_tui.events import Event
from agent_tui.events.frames import Frame, Transition
from agent_tui.reducer import (
    DashboardState,
    SessionView,
    ToolCallView,
    TurnView,
    apply_event,
    apply_frame,
    project_state,
)
from agent_tui.reducer.field_copy import compiled_copy, compiled_new
from agent_tui.reducer.tool_events import new_tool_call
from agent_tui.reducer.turn_writes import new_turn

VIEWS = (DashboardState, SessionView, TurnView, ToolCallView)


def rich_events() -> list[Event]:
    """A lead with a finished turn and a running one, and a child it delivered from."""
    lead = SessionLog("sess_lead", created=False)
    lead.emit(
        "session.created", None, cwd="/w", client="test", agentName="lead", title="Lead", model="m1",
        worktree={"path": "/w/.wt/lead", "branch": "agent/lead"}, budget={"usd": 5.0},
    )  # fmt: skip
    lead.emit("source.record", None, format="claude", recordType="summary", data={})
    modes = {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]}
    lead.emit("source.record", None, format="acp", recordType="session/new", data={"modes": modes})
    entry = {"content": "read it", "status": "pending", "priority": "high"}
    lead.emit("source.record", None, format="acp", recordType="plan", data={"entries": [entry]})
    plan = {"type": "markdown", "content": "# Plan"}
    lead.emit("source.record", None, format="acp", recordType="plan_update", data={"plan": plan})
    t1 = "turn_1"
    lead.emit("turn.started", t1, promptPreview="first")
    lead.emit("user.message", t1, content="first")
    lead.emit(
        "context.built",
        t1,
        step=1,
        tokens={"instruction": 1, "transcript": 2, "tools": 3},
        maxContextTokens=99,
    )
    lead.emit("context.compacted", t1, step=1, beforeTokens=9, afterTokens=3, summary="s")
    lead.emit("model.delta", t1, text="Looking.")
    lead.emit("model.tool_call_requested", t1, toolCallId="call_1", tool="shell", args={"cmd": "ls"})
    lead.emit(
        "permission.requested", t1, requestId="req_1", toolCallId="call_1", tool="shell", risk="execute",
        argsPreview="ls", reason="runs a program",
        options=[{"optionId": "yes", "name": "Yes", "kind": "allow_once"}],
    )  # fmt: skip
    lead.emit(
        "permission.resolved", t1, requestId="req_1", toolCallId="call_1", decision="ask", actor="policy"
    )
    lead.emit(
        "permission.resolved", t1, requestId="req_1", toolCallId="call_1", decision="allow", actor="user",
        reason="looks fine",
    )  # fmt: skip
    lead.emit("tool.started", t1, toolCallId="call_1", tool="shell", argsPreview="ls")
    lead.emit("tool.delta", t1, toolCallId="call_1", stream="stdout", text="a\n")
    lead.emit(
        "tool.completed", t1, toolCallId="call_1", tool="shell", result="a\n", exitCode=2, truncated=True
    )
    lead.emit("tool.failed", t1, toolCallId="call_2", tool="read_file", errorCode="not_found", message="gone")
    lead.emit(
        "subagent.delivered", t1, childSessionId="sess_kid", agentName="kid", status="completed", text="ok"
    )
    lead.emit("model.usage", t1, step=1, promptTokens=10, completionTokens=2, cachedTokens=4, costUsd=0.5)
    lead.emit(
        "turn.completed", t1, stopReason="error", errorCode="provider_failure",
        usage={"promptTokens": 10, "completionTokens": 2}, message="429: slow down",
    )  # fmt: skip
    t2 = "turn_2"
    lead.emit("turn.started", t2, promptPreview="second")
    lead.emit("session.budget", t2, usd=7.5, tokens=9000, by="dashboard")
    lead.emit("model.tool_call_requested", t2, toolCallId="call_3", tool="shell", args={"cmd": "rm x"})
    lead.emit(
        "permission.resolved", t2, requestId="req_3", toolCallId="call_3", decision="ask", actor="policy"
    )
    lead.emit("model.delta", t2, text="Still streaming")
    kid = SessionLog("sess_kid", clock=5, created=False)
    kid.emit("session.created", None, cwd="/w", client="test", parentSessionId="sess_lead", agentName="kid")
    return lead.events + kid.events


def every_view(state: DashboardState) -> list[Any]:
    views: list[Any] = [state]
    for session in state.sessions.values():
        views.append(session)
        for turn in session.turns:
            views.append(turn)
            views.extend(turn.tool_calls.values())
    return views


def field_values(view: Any) -> dict[str, Any]:
    """Every field, derived indexes and private ones included (AttributeError if one is unset)."""
    return {f.name: getattr(view, f.name) for f in dataclasses.fields(view)}


def test_the_sample_sets_every_field_of_every_view_away_from_its_default() -> None:
    state = project_state(rich_events())
    # `phase_live` is set by a frame from the engine's sink, never by an event.
    apply_frame(state, Frame.of("sess_lead", Transition("executing", "turn_2")))
    for cls in VIEWS:
        args: list[Any] = ["x"] if cls in (SessionView, TurnView, ToolCallView) else []
        defaults = field_values(cls(*args))
        seen = [field_values(view) for view in every_view(state) if type(view) is cls]
        never_set = [
            name for name in defaults if name not in ("session_id", "turn_id", "call_id")
            if all(values[name] == defaults[name] for values in seen)
        ]  # fmt: skip
        assert never_set == [], f"{cls.__name__}: make rich_events() set {never_set}"


def test_a_copy_equals_its_original_on_every_field() -> None:
    state = project_state(rich_events())
    copy = state.copy()
    originals, copies = every_view(state), every_view(copy)
    assert [type(v) for v in originals] == [type(v) for v in copies]
    for original, copied in zip(originals, copies, strict=True):
        assert field_values(copied) == field_values(original), type(original).__name__


def test_a_copy_owns_what_the_fold_may_still_write_to() -> None:
    state = project_state(rich_events())
    copy = state.copy()
    lead, lead_copy = state.sessions["sess_lead"], copy.sessions["sess_lead"]
    assert lead_copy.turns[0] is lead.turns[0]  # finished: shared (the fold clones before writing)
    running, running_copy = lead.turns[1], lead_copy.turns[1]
    assert running_copy is not running
    assert running_copy._open is not running._open
    assert running_copy.tool_calls is not running.tool_calls
    call, call_copy = running.tool_calls["call_3"], running_copy.tool_calls["call_3"]
    assert call_copy is not call and call_copy.decisions is not call.decisions
    assert call_copy.args is call.args  # a payload value, never written to
    for owned in ("turns", "deliveries", "pending"):
        assert getattr(lead_copy, owned) is not getattr(lead, owned), owned
    assert copy._tree is not state._tree
    children = state.children("sess_lead")
    copy._tree.link("sess_new", "sess_lead")
    assert state.children("sess_lead") == children
    assert copy._pending is not state._pending


def test_the_folds_constructors_equal_the_dataclass_constructors() -> None:
    ts = "2026-11-29T10:00:00.000Z"
    assert field_values(new_turn("turn_1", 7, ts)) == field_values(
        TurnView("turn_1", started_sequence=7, started_ts=ts)
    )
    assert field_values(new_tool_call("call_1", "shell")) == field_values(ToolCallView("call_1", "shell"))
    first, second = new_tool_call("a", ""), new_tool_call("b", "")
    assert first.decisions is not second.decisions and first._out_parts is not second._out_parts
    assert new_turn("a", 1, ts).tool_calls is not new_turn("b", 1, ts).tool_calls


@dataclasses.dataclass(slots=True)
class Sample:
    name: str
    notes: list[str] = dataclasses.field(default_factory=list)
    seen: set[str] = dataclasses.field(default_factory=set)
    count: int = 3


class TestGeneratedFromTheFields:
    def test_a_copy_takes_every_field_and_makes_its_own_where_told(self) -> None:
        copy = compiled_copy(Sample, fresh={"notes": list.copy}, shared=("seen",))
        original = Sample("a", ["n"], {"s"}, 9)
        copied = copy(original)
        assert copied == original
        assert copied.notes is not original.notes and copied.seen is original.seen

    def test_a_mutable_field_nobody_said_how_to_copy_is_refused(self) -> None:
        with pytest.raises(TypeError, match=r"Sample\.seen has a mutable default"):
            compiled_copy(Sample, fresh={"notes": list.copy})

    def test_a_field_that_does_not_exist_is_refused(self) -> None:
        with pytest.raises(TypeError, match="has no field nots"):
            compiled_copy(Sample, fresh={"nots": list.copy, "notes": list.copy}, shared=("seen",))

    def test_a_constructor_gives_every_other_field_its_default(self) -> None:
        new = compiled_new(Sample, ("name",))
        built = new("b")
        assert built == Sample("b")
        assert built.notes is not new("c").notes and type(built.seen) is set

    def test_a_frozen_class_is_refused(self) -> None:
        @dataclasses.dataclass(frozen=True)
        class Frozen:
            name: str

        with pytest.raises(TypeError, match="not a mutable dataclass"):
            compiled_new(Frozen, ("name",))


# -- folding into a copy or its original --------------------------------------------------------


class TestCopy:
    def test_a_copy_is_independent_both_ways(self) -> None:
        log = approved_rename_log()
        cut = 9  # after the ask: a pending approval, an open tool call, an open model call
        original = project_state(log.events[:cut])
        snapshot = original.copy()
        assert snapshot == original and snapshot is not original
        assert len(snapshot.pending_permissions()) == 1

        for event in log.events[cut:]:
            apply_event(snapshot, event)
        assert original == project_state(log.events[:cut])
        assert len(original.pending_permissions()) == 1
        assert snapshot == project_state(log.events)

        again = original.copy()
        for event in log.events[cut:]:
            apply_event(original, event)
        assert again == project_state(log.events[:cut])
        assert again.pending_permissions()[0].request_id == "req_1"
        assert again.sessions["sess_lead"].turns[0].tool_calls["call_1"].status == "asking"

    def test_a_late_event_for_a_finished_turn_does_not_leak_into_a_copy(self) -> None:
        log = SessionLog("sess_late")
        log.simple_turn("turn_1", "x", "done")
        state = project_state(log.events)
        snapshot = state.copy()
        late = log.emit("model.delta", "turn_1", text=" and more")
        also = log.emit("tool.delta", "turn_1", toolCallId="c", stream="stdout", text="o")
        apply_event(state, late)
        apply_event(state, also)
        assert state.sessions["sess_late"].turns[0].text == "done and more"
        assert snapshot.sessions["sess_late"].turns[0].text == "done"
        assert snapshot.sessions["sess_late"].turns[0].tool_calls == {}
        # and the other way round, from a copy taken while the late model call is open
        second = state.copy()
        apply_event(state, log.emit("model.delta", "turn_1", text="!"))
        assert second.sessions["sess_late"].turns[0].text == "done and more"
        assert state.sessions["sess_late"].turns[0].text == "done and more!"


# A valid payload for every event type a turn may bring late (any but `session.created`).
LATE_PAYLOADS: dict[str, dict] = {
    "turn.started": {"promptPreview": "again"},
    "user.message": {"content": "late", "steered": True},
    "context.built": {"step": 9, "tokens": tokens(50), "maxContextTokens": 10},
    "context.compacted": {"step": 9, "beforeTokens": 9, "afterTokens": 1, "summary": "s"},
    "model.delta": {"text": "late"},
    "model.tool_call_requested": {"toolCallId": "c", "tool": "ls", "args": {}},
    "permission.requested": {
        "requestId": "r",
        "toolCallId": "c",
        "tool": "ls",
        "risk": "read",
        "argsPreview": "",
    },
    "permission.resolved": {
        "requestId": "r",
        "toolCallId": "c",
        "decision": "ask",
        "actor": "policy",
    },
    "tool.started": {"toolCallId": "c", "tool": "ls", "argsPreview": ""},
    "tool.delta": {"toolCallId": "c", "stream": "stdout", "text": "o"},
    "tool.completed": {"toolCallId": "c", "tool": "ls", "result": "r", "truncated": False},
    "tool.failed": {"toolCallId": "c", "tool": "ls", "errorCode": "timeout", "message": "m"},
    "subagent.delivered": {
        "childSessionId": "k",
        "agentName": "a",
        "status": "failed",
        "text": "t",
    },
    "turn.completed": {"stopReason": "error"},
}


@pytest.mark.parametrize("kind", sorted(LATE_PAYLOADS))
@pytest.mark.parametrize("turn_id", ["turn_1", None])
def test_any_late_event_for_a_finished_turn_stays_out_of_copies(kind: str, turn_id: str | None) -> None:
    log = SessionLog("sess_late")
    log.simple_turn("turn_1", "x", "done")
    before = project_state(log.events)
    late = log.emit(kind, turn_id, **LATE_PAYLOADS[kind])

    state = project_state(log.events[:-1])
    snapshot = state.copy()
    apply_event(state, late)
    assert snapshot == before
    assert state == project_state(log.events)

    other = state.copy()
    apply_event(state, log.emit(kind, turn_id, **LATE_PAYLOADS[kind]))
    assert other == project_state(log.events[:-1])
