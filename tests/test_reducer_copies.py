"""The reducer's copies and constructors cover every field of every view.

`DashboardState.copy()` and the fold's constructors of turns and tool calls are generated from
the dataclass fields (`agent_tui.reducer.field_copy`), not written out. These tests hold them to
that: a copy equals its original on every field (derived indexes included), owns what the fold
may still write to, and the fold's constructors equal the dataclass constructors. The sample
state sets every field of every view away from its default, so a copy that dropped or reset a
field would be seen (a new field must be set by the sample too: the first test says which).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agent_tui.events import Event, event_from_json, payload_from
from agent_tui.reducer import DashboardState, SessionView, ToolCallView, TurnView, project_state
from agent_tui.reducer.field_copy import compiled_copy, compiled_new
from agent_tui.reducer.tool_events import new_tool_call
from agent_tui.reducer.turn_writes import new_turn

VIEWS = (DashboardState, SessionView, TurnView, ToolCallView)


class Log:
    """One session's events, each through its JSON line and back, one second apart."""

    def __init__(self, session_id: str, start: int) -> None:
        self.session_id = session_id
        self.clock = start
        self.events: list[Event] = []

    def emit(self, kind: str, turn_id: str | None, **fields: Any) -> None:
        self.clock += 1
        event = Event(
            id=f"evt_{self.session_id}_{len(self.events) + 1}",
            session_id=self.session_id,
            turn_id=turn_id,
            sequence=len(self.events) + 1,
            ts=f"2026-11-29T10:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z",
            type=kind,
            payload=payload_from(kind, fields),
        )
        self.events.append(event_from_json(event.to_json()))


def rich_events() -> list[Event]:
    """A lead with a finished turn and a running one, and a child it delivered from."""
    lead = Log("sess_lead", 0)
    lead.emit(
        "session.created", None, cwd="/w", client="test", agentName="lead", title="Lead", model="m1",
        worktree={"path": "/w/.wt/lead", "branch": "agent/lead"},
    )  # fmt: skip
    lead.emit("source.record", None, format="claude", recordType="summary", data={})
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
    lead.emit(
        "turn.completed", t1, stopReason="error", errorCode="provider_failure",
        usage={"promptTokens": 10, "completionTokens": 2}, message="429: slow down",
    )  # fmt: skip
    t2 = "turn_2"
    lead.emit("turn.started", t2, promptPreview="second")
    lead.emit("model.tool_call_requested", t2, toolCallId="call_3", tool="shell", args={"cmd": "rm x"})
    lead.emit(
        "permission.resolved", t2, requestId="req_3", toolCallId="call_3", decision="ask", actor="policy"
    )
    lead.emit("model.delta", t2, text="Still streaming")
    kid = Log("sess_kid", 5)
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
    for cls in VIEWS:
        defaults = field_values(cls(*(["x"] if cls in (SessionView, TurnView, ToolCallView) else [])))
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
    assert (
        copy._children is not state._children
        and copy._children["sess_lead"] is not state._children["sess_lead"]
    )
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
