"""The reducer: events → dashboard state, one fold shared by the live view and the scrubber."""

from __future__ import annotations

from collections.abc import Iterable

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_tui.events import Event, event_from_dict, event_from_json, payload_from
from agent_tui.reducer import (
    OUTPUT_CHARS,
    RESULT_CHARS,
    TEXT_CHARS,
    DashboardState,
    PermissionView,
    TranscriptEntry,
    TurnUsage,
    apply_event,
    project_state,
)
from agent_tui.turns.projection import command_for, frames_from_log


def ts(tick: int) -> str:
    """A log timestamp `tick` seconds into the day (ISO strings sort like the times they name)."""
    return f"2026-11-29T{tick // 3600:02d}:{tick // 60 % 60:02d}:{tick % 60:02d}.000Z"


class SessionLog:
    """The events of one session as the store writes them: numbered from 1, no gaps.

    Each event goes through its JSON line and back, so the reducer sees what a replay decodes.
    """

    def __init__(
        self,
        session_id: str,
        *,
        clock: int = 0,
        parent: str | None = None,
        agent: str | None = None,
        title: str | None = None,
        cwd: str = "/work/demo",
        created: bool = True,
    ) -> None:
        self.session_id = session_id
        self.clock = clock
        self.events: list[Event] = []
        self.sequence = 0
        if created:
            self.emit(
                "session.created",
                None,
                cwd=cwd,
                client="test",
                parentSessionId=parent,
                agentName=agent,
                title=title,
            )

    def emit(self, kind: str, turn_id: str | None, **fields: object) -> Event:
        self.sequence += 1
        event = Event(
            id=f"evt_{self.session_id}_{self.sequence}",
            session_id=self.session_id,
            turn_id=turn_id,
            sequence=self.sequence,
            ts=ts(self.clock + self.sequence),
            type=kind,
            payload=payload_from(kind, fields),
        )
        decoded = event_from_json(event.to_json())
        self.events.append(decoded)
        return decoded

    # A few chains that many tests need.

    def request(self, turn_id: str, call_id: str, tool: str, risk: str, preview: str = "") -> None:
        self.emit(
            "permission.requested",
            turn_id,
            requestId="req_" + call_id,
            toolCallId=call_id,
            tool=tool,
            risk=risk,
            argsPreview=preview,
        )

    def resolve(self, turn_id: str, call_id: str, decision: str, actor: str) -> Event:
        return self.emit(
            "permission.resolved",
            turn_id,
            requestId="req_" + call_id,
            toolCallId=call_id,
            decision=decision,
            actor=actor,
        )

    def simple_turn(self, turn_id: str, prompt: str, *chunks: str, stop: str = "final") -> None:
        self.emit("turn.started", turn_id, promptPreview=prompt[:80])
        self.emit("user.message", turn_id, content=prompt)
        self.emit("context.built", turn_id, step=1, tokens=tokens(100), maxContextTokens=8000)
        for chunk in chunks:
            self.emit("model.delta", turn_id, text=chunk)
        self.emit("turn.completed", turn_id, stopReason=stop)

    def allowed_call(self, turn_id: str, call_id: str, tool: str, args: dict, *out: str) -> None:
        self.emit("model.tool_call_requested", turn_id, toolCallId=call_id, tool=tool, args=args)
        self.emit(
            "permission.requested",
            turn_id,
            requestId="req_" + call_id,
            toolCallId=call_id,
            tool=tool,
            risk="read",
            argsPreview=str(args),
        )
        self.emit(
            "permission.resolved",
            turn_id,
            requestId="req_" + call_id,
            toolCallId=call_id,
            decision="allow",
            actor="policy",
        )
        self.emit("tool.started", turn_id, toolCallId=call_id, tool=tool, argsPreview=str(args))
        for text in out:
            self.emit("tool.delta", turn_id, toolCallId=call_id, stream="stdout", text=text)
        self.emit(
            "tool.completed",
            turn_id,
            toolCallId=call_id,
            tool=tool,
            result="".join(out),
            exitCode=0,
            truncated=False,
        )


def tokens(total: int) -> dict[str, int]:
    return {"instruction": total - 30, "transcript": 20, "tools": 10}


def fold(events: Iterable[Event]) -> DashboardState:
    """apply_event one by one, as the live view does."""
    state = DashboardState()
    for event in events:
        assert apply_event(state, event) is state
    return state


def tree(state: DashboardState) -> dict[str, object]:
    return {
        "roots": state.roots(),
        "children": {sid: state.children(sid) for sid in sorted(state.sessions)},
        "paths": {sid: state.agent_path(sid) for sid in sorted(state.sessions)},
    }


# -- a turn with a tool call that needs the user's approval ------------------------------------


class TestApprovalHappyPath:
    def build(self) -> SessionLog:
        log = SessionLog("sess_lead", title="lead")
        t = "turn_1"
        log.emit("turn.started", t, promptPreview="Rename src/foo.py to bar.py")
        log.emit("user.message", t, content="Rename src/foo.py to bar.py")
        log.emit("context.built", t, step=1, tokens=tokens(500), maxContextTokens=8000)
        log.emit("model.delta", t, text="Renaming ")
        log.emit("model.delta", t, text="now.")
        args = {"cmd": "mv src/foo.py src/bar.py"}
        log.emit("model.tool_call_requested", t, toolCallId="call_1", tool="shell", args=args)
        log.emit(
            "permission.requested",
            t,
            requestId="req_1",
            toolCallId="call_1",
            tool="shell",
            risk="destructive",
            argsPreview="mv src/foo.py src/bar.py",
        )
        log.emit(
            "permission.resolved",
            t,
            requestId="req_1",
            toolCallId="call_1",
            decision="ask",
            actor="policy",
            reason="moves a file over another",
        )
        log.emit(
            "permission.resolved",
            t,
            requestId="req_1",
            toolCallId="call_1",
            decision="allow",
            actor="user",
            remember="once",
        )
        log.emit("tool.started", t, toolCallId="call_1", tool="shell", argsPreview="mv …")
        log.emit("tool.delta", t, toolCallId="call_1", stream="stdout", text="renamed\n")
        log.emit(
            "tool.completed",
            t,
            toolCallId="call_1",
            tool="shell",
            result="renamed\n",
            exitCode=0,
            truncated=False,
        )
        log.emit("context.built", t, step=2, tokens=tokens(700), maxContextTokens=8000)
        log.emit("model.delta", t, text=" Done.")
        log.emit(
            "turn.completed",
            t,
            stopReason="final",
            usage={"promptTokens": 1200, "completionTokens": 40},
        )
        return log

    def test_pending_appears_after_the_ask_and_leaves_after_the_users_allow(self) -> None:
        log = self.build()
        state = DashboardState()
        seen: dict[str, tuple[list[PermissionView], str]] = {}
        for event in log.events:
            apply_event(state, event)
            turns = state.sessions["sess_lead"].turns
            call = turns[-1].tool_calls.get("call_1") if turns else None
            key = event.type
            if key == "permission.resolved":
                key += ":" + event.payload["decision"]
            seen[key] = (state.pending_permissions(), call.status if call else "-")

        assert seen["permission.requested"] == ([], "requested")
        pending, status = seen["permission.resolved:ask"]
        assert status == "asking"
        assert pending == [
            PermissionView(
                session_id="sess_lead",
                turn_id="turn_1",
                request_id="req_1",
                tool_call_id="call_1",
                tool="shell",
                risk="destructive",
                args_preview="mv src/foo.py src/bar.py",
                reason="moves a file over another",
                policy=None,
                sequence=9,
                order=1,
                asked_ts="2026-11-29T00:00:09.000Z",
            )
        ]
        assert state.sessions["sess_lead"].pending == {}
        assert seen["permission.resolved:allow"] == ([], "running")
        assert seen["tool.completed"] == ([], "completed")

    def test_the_finished_turn(self) -> None:
        state = project_state(self.build().events)
        session = state.sessions["sess_lead"]
        assert (session.status, session.phase, session.last_sequence) == ("completed", "end", 16)
        assert session.event_count == state.event_count == 16
        assert state.running_count() == 0
        turn = session.turns[0]
        assert turn.prompt_preview == "Rename src/foo.py to bar.py"
        assert (turn.stop_reason, turn.error_code) == ("final", None)
        assert (turn.step, turn.steps, turn.tokens, turn.max_context_tokens) == (2, 2, 700, 8000)
        assert turn.usage == TurnUsage(1200, 40)
        assert (turn.started_sequence, turn.ended_sequence) == (2, 16)
        assert turn.text == "Renaming now. Done."
        assert [(m.role, m.text) for m in turn.transcript] == [
            ("user", "Rename src/foo.py to bar.py"),
            ("assistant", "Renaming now."),
            ("tool", "renamed\n"),
            ("assistant", " Done."),
        ]
        assert turn.transcript[2].ref == "call_1"
        call = turn.tool_calls["call_1"]
        assert call.args == {"cmd": "mv src/foo.py src/bar.py"}
        assert call.risk == "destructive"
        assert call.decisions == [("ask", "policy"), ("allow", "user")]
        assert (call.status, call.exit_code, call.result, call.output) == (
            "completed",
            0,
            "renamed\n",
            "renamed\n",
        )

    def test_live_fold_and_replay_agree(self) -> None:
        events = self.build().events
        assert fold(events) == project_state(events)

    def test_a_running_turn_is_counted(self) -> None:
        events = self.build().events[:8]
        state = project_state(events)
        assert state.sessions["sess_lead"].status == "running"
        assert state.sessions["sess_lead"].phase == "executing"
        assert state.running_count() == 1
        assert state.sessions["sess_lead"].turns[0].text == "Renaming now."


class TestPhases:
    def test_phases_follow_the_frame_projection(self) -> None:
        """One projection: the reducer's phase after each phase event is that event's frame."""
        log = SessionLog("sess_p")
        t = "turn_1"
        log.emit("turn.started", t, promptPreview="p")
        log.emit("context.built", t, step=1, tokens=tokens(9000), maxContextTokens=8000)
        log.emit("context.compacted", t, step=1, beforeTokens=9000, afterTokens=2000, summary="s")
        log.emit("context.built", t, step=1, tokens=tokens(2000), maxContextTokens=8000)
        log.emit("model.delta", t, text="ok")
        log.emit("turn.completed", t, stopReason="final")
        log.simple_turn("turn_2", "again", "fine", stop="max_steps")

        state = DashboardState()
        phases = []
        for event in log.events:
            apply_event(state, event)
            if command_for(event) is not None:
                phases.append((event.turn_id, state.sessions["sess_p"].phase))
        frames = [(f.body.turn_id, f.body.to) for f in frames_from_log(log.events)]
        assert phases == frames
        assert state.sessions["sess_p"].turns[0].compactions == 1


# -- tool output and the caps -------------------------------------------------------------------


class TestToolOutput:
    def test_output_keeps_the_tail_of_stdout_and_stderr_interleaved(self) -> None:
        log = SessionLog("sess_out")
        t = "turn_1"
        log.emit("turn.started", t, promptPreview="build")
        log.emit("model.tool_call_requested", t, toolCallId="c", tool="shell", args={"cmd": "make"})
        log.emit("tool.started", t, toolCallId="c", tool="shell", argsPreview="make")
        streamed = []
        for i in range(300):
            stream = "stderr" if i % 3 == 0 else "stdout"
            text = f"{stream} line {i:04d}\n"
            streamed.append(text)
            log.emit("tool.delta", t, toolCallId="c", stream=stream, text=text)
        whole = "".join(streamed)
        assert len(whole) > 2 * OUTPUT_CHARS

        running = project_state(log.events)
        call = running.sessions["sess_out"].turns[0].tool_calls["c"]
        assert call.status == "running"
        assert call.output == whole[-OUTPUT_CHARS:]

        log.emit(
            "tool.completed",
            t,
            toolCallId="c",
            tool="shell",
            result="R" * 5000 + "tail",
            exitCode=2,
            truncated=True,
        )
        call = project_state(log.events).sessions["sess_out"].turns[0].tool_calls["c"]
        assert call.output == whole[-OUTPUT_CHARS:]
        assert call.result == "R" * RESULT_CHARS
        assert (call.exit_code, call.truncated, call.status) == (2, True, "completed")

    def test_short_output_is_kept_whole(self) -> None:
        log = SessionLog("sess_out")
        log.emit("turn.started", "t", promptPreview="x")
        log.allowed_call("t", "c", "read_file", {"path": "a"}, "one\n", "two\n")
        call = project_state(log.events).sessions["sess_out"].turns[0].tool_calls["c"]
        assert call.output == "one\ntwo\n"
        assert call.decisions == [("allow", "policy")]

    def test_turn_text_keeps_its_last_characters_and_messages_their_last_entries(self) -> None:
        log = SessionLog("sess_long")
        t = "turn_1"
        log.emit("turn.started", t, promptPreview="long")
        chunks = []
        for step in range(1, 251):
            log.emit("context.built", t, step=step, tokens=tokens(100), maxContextTokens=8000)
            chunk = f"[step {step:03d}]" + "." * 40
            chunks.append(chunk)
            log.emit("model.delta", t, text=chunk)
        turn = project_state(log.events).sessions["sess_long"].turns[0]
        assert turn.text == "".join(chunks)[-TEXT_CHARS:]
        assert len(turn.transcript) == 200
        assert turn.transcript[-1] == TranscriptEntry("assistant", chunks[-1])
        assert turn.transcript[0] == TranscriptEntry("assistant", chunks[50])

    def test_a_denied_call_never_runs(self) -> None:
        log = SessionLog("sess_d")
        t = "turn_1"
        log.emit("turn.started", t, promptPreview="x")
        log.emit("model.tool_call_requested", t, toolCallId="c", tool="shell", args={"cmd": "rm a"})
        log.request(t, "c", "shell", "destructive", "rm a")
        log.resolve(t, "c", "ask", "policy")
        log.resolve(t, "c", "deny", "user")
        log.emit(
            "tool.failed",
            t,
            toolCallId="c",
            tool="shell",
            errorCode="permission_denied",
            message="the user denied it",
        )
        state = project_state(log.events)
        call = state.sessions["sess_d"].turns[0].tool_calls["c"]
        assert (call.status, call.error_code, call.message) == (
            "denied",
            "permission_denied",
            "the user denied it",
        )
        assert state.pending_permissions() == []
        assert state.sessions["sess_d"].turns[0].transcript[-1] == TranscriptEntry(
            "tool", "the user denied it", False, "c"
        )


# -- how turns end ------------------------------------------------------------------------------


class TestTurnEnds:
    def test_a_cancelled_turn_drops_its_pending_approval(self) -> None:
        log = SessionLog("sess_c")
        t = "turn_1"
        log.emit("turn.started", t, promptPreview="x")
        log.emit("context.built", t, step=1, tokens=tokens(100), maxContextTokens=8000)
        log.emit("model.delta", t, text="Let me ")
        log.emit("model.tool_call_requested", t, toolCallId="c", tool="write_file", args={})
        log.request(t, "c", "write_file", "write")
        log.resolve(t, "c", "ask", "policy")
        assert len(project_state(log.events).pending_permissions()) == 1
        log.resolve(t, "c", "deny", "system")
        log.emit(
            "tool.failed",
            t,
            toolCallId="c",
            tool="write_file",
            errorCode="cancelled",
            message="cancelled",
        )
        log.emit("turn.completed", t, stopReason="cancelled")

        state = project_state(log.events)
        session = state.sessions["sess_c"]
        assert (session.status, session.phase) == ("cancelled", "end")
        assert state.pending_permissions() == [] and session.pending == {}
        call = session.turns[0].tool_calls["c"]
        assert call.status == "failed" and call.error_code == "cancelled"
        assert call.decisions == [("ask", "policy"), ("deny", "system")]
        assert session.turns[0].text == "Let me "
        assert state.to_state_dump()["sessions"][0]["status"] == "cancelled"

    def test_the_message_a_turn_ended_with_stays_with_that_turn(self) -> None:
        log = SessionLog("sess_m")
        log.emit("turn.started", "turn_1", promptPreview="x")
        log.emit(
            "turn.completed",
            "turn_1",
            stopReason="error",
            errorCode="provider_failure",
            message="401: bad key",
        )
        log.emit("turn.started", "turn_2", promptPreview="y")
        state = project_state(log.events)
        first, second = state.sessions["sess_m"].turns
        assert (first.end_message, second.end_message) == ("401: bad key", None)

    def test_turn_end_clears_an_approval_left_pending(self) -> None:
        log = SessionLog("sess_c")
        t = "turn_1"
        log.emit("turn.started", t, promptPreview="x")
        log.request(t, "c", "shell", "execute", "ls")
        log.resolve(t, "c", "ask", "policy")
        log.emit("turn.completed", t, stopReason="cancelled")
        state = project_state(log.events)
        assert state.pending_permissions() == []
        assert state.sessions["sess_c"].pending == {}

    def test_a_failed_turn_then_a_turn_that_works(self) -> None:
        log = SessionLog("sess_f")
        t = "turn_1"
        log.emit("turn.started", t, promptPreview="x")
        log.emit("user.message", t, content="x")
        log.emit("context.built", t, step=1, tokens=tokens(100), maxContextTokens=8000)
        log.emit("turn.completed", t, stopReason="error", errorCode="provider_failure")
        state = project_state(log.events)
        session = state.sessions["sess_f"]
        assert (session.status, session.phase) == ("failed", "end")
        turn = session.turns[0]
        assert (turn.stop_reason, turn.error_code, turn.text) == ("error", "provider_failure", "")
        assert turn.transcript == [TranscriptEntry("user", "x")]

        log.emit("turn.started", "turn_2", promptPreview="again")
        assert project_state(log.events).sessions["sess_f"].status == "running"
        log.emit("user.message", "turn_2", content="and more", steered=True)
        log.emit("context.built", "turn_2", step=1, tokens=tokens(100), maxContextTokens=8000)
        log.emit("model.delta", "turn_2", text="ok")
        log.emit("turn.completed", "turn_2", stopReason="final")
        session = project_state(log.events).sessions["sess_f"]
        assert session.status == "completed"
        assert [turn.turn_id for turn in session.turns] == ["turn_1", "turn_2"]
        assert session.turns[1].transcript[0] == TranscriptEntry("user", "and more", True)

    def test_max_steps_counts_as_completed(self) -> None:
        log = SessionLog("sess_m")
        log.simple_turn("turn_1", "x", "partial", stop="max_steps")
        assert project_state(log.events).sessions["sess_m"].status == "completed"

    def test_a_session_without_turns_is_idle(self) -> None:
        state = project_state(SessionLog("sess_i").events)
        assert (state.sessions["sess_i"].status, state.sessions["sess_i"].phase) == ("idle", None)


# -- the session tree ---------------------------------------------------------------------------


def family() -> tuple[SessionLog, SessionLog, SessionLog]:
    lead = SessionLog("sess_lead", clock=0, title="lead")
    lead.emit("turn.started", "turn_l", promptPreview="split the work")
    explorer = SessionLog("sess_zz_explorer", clock=10, parent="sess_lead", agent="explorer")
    explorer.simple_turn("turn_e", "look around", "Found 3 files.")
    # Created later but with a smaller id: siblings follow creation time, not id.
    tester = SessionLog("sess_aa_tester", clock=20, parent="sess_lead", agent="tester")
    tester.simple_turn("turn_t", "run tests", "All green.")
    lead.emit(
        "subagent.delivered",
        "turn_l",
        childSessionId="sess_zz_explorer",
        agentName="explorer",
        status="completed",
        text="Found 3 files.",
    )
    lead.emit("model.delta", "turn_l", text="Both done.")
    lead.emit("turn.completed", "turn_l", stopReason="final")
    return lead, explorer, tester


class TestSessionTree:
    def test_parent_with_two_children(self) -> None:
        lead, explorer, tester = family()
        state = project_state(lead.events + explorer.events + tester.events)
        assert state.roots() == ["sess_lead"]
        assert state.children("sess_lead") == ["sess_zz_explorer", "sess_aa_tester"]
        assert state.children("sess_zz_explorer") == []
        assert state.agent_path("sess_aa_tester") == ("lead", "tester")
        delivery = state.sessions["sess_lead"].deliveries[0]
        assert (delivery.child_session_id, delivery.agent_name, delivery.status) == (
            "sess_zz_explorer",
            "explorer",
            "completed",
        )
        assert state.sessions["sess_lead"].turns[0].transcript[0] == TranscriptEntry(
            "subagent", "Found 3 files.", False, "sess_zz_explorer"
        )

    def test_child_first_replay_gives_the_same_tree(self) -> None:
        lead, explorer, tester = family()
        parent_first = project_state(lead.events + explorer.events + tester.events)
        child_first = project_state(tester.events + explorer.events + lead.events)
        assert list(child_first.sessions) == ["sess_aa_tester", "sess_zz_explorer", "sess_lead"]
        assert tree(child_first) == tree(parent_first)
        assert child_first == parent_first
        assert child_first.to_state_dump() == parent_first.to_state_dump()

    def test_interleaved_live_arrival_gives_the_same_tree(self) -> None:
        lead, explorer, tester = family()
        mixed = [e for trio in zip(tester.events, lead.events, explorer.events, strict=False) for e in trio]
        mixed += tester.events[len(mixed) // 3 :] + lead.events[len(mixed) // 3 :]
        mixed += explorer.events[len(mixed) // 3 :]
        assert sorted(e.id for e in mixed) == sorted(
            e.id for e in lead.events + explorer.events + tester.events
        )
        in_order = lead.events + explorer.events + tester.events
        assert tree(fold(mixed)) == tree(project_state(in_order))

    def test_child_before_its_parent_is_known_is_a_root_for_now(self) -> None:
        _, explorer, _ = family()
        state = project_state(explorer.events)
        assert state.roots() == ["sess_zz_explorer"]
        assert state.children("sess_lead") == ["sess_zz_explorer"]
        assert state.agent_path("sess_zz_explorer") == ("sess_lead", "explorer")


class TestAgentPath:
    def test_names_from_root_to_leaf(self) -> None:
        root = SessionLog("sess_1", title="lead")
        mid = SessionLog("sess_2", clock=5, parent="sess_1", agent="planner", title="ignored")
        leaf = SessionLog("sess_3", clock=9, parent="sess_2")  # neither name nor title
        state = project_state(leaf.events + root.events + mid.events)
        assert state.agent_path("sess_3") == ("lead", "planner", "sess_3")
        assert state.agent_path("sess_1") == ("lead",)
        assert state.agent_path("sess_unknown") == ("sess_unknown",)

    def test_a_self_parent_does_not_loop(self) -> None:
        odd = SessionLog("sess_x", parent="sess_x", agent="x")
        state = project_state(odd.events)
        assert state.roots() == ["sess_x"]
        assert state.children("sess_x") == []
        assert state.agent_path("sess_x") == ("x",)


class TestPendingAcrossSessions:
    def test_ordered_by_when_they_were_asked(self) -> None:
        a = SessionLog("sess_a", title="lead")
        b = SessionLog("sess_b", parent="sess_a", agent="writer")
        for log in (a, b):
            log.emit("turn.started", "t_" + log.session_id, promptPreview="x")

        def ask(log: SessionLog, request: str) -> None:
            turn = "t_" + log.session_id
            log.emit(
                "permission.requested",
                turn,
                requestId=request,
                toolCallId="c" + request,
                tool="write_file",
                risk="write",
                argsPreview=request,
            )
            log.emit(
                "permission.resolved",
                turn,
                requestId=request,
                toolCallId="c" + request,
                decision="ask",
                actor="policy",
            )

        state = project_state(a.events + b.events)
        for log, request in ((b, "r1"), (a, "r2"), (b, "r3")):
            before = len(log.events)
            ask(log, request)
            for event in log.events[before:]:
                apply_event(state, event)
        pending = state.pending_permissions()
        assert [(p.request_id, p.order) for p in pending] == [("r1", 1), ("r2", 2), ("r3", 3)]
        assert [state.agent_path(p.session_id) for p in pending] == [
            ("lead", "writer"),
            ("lead",),
            ("lead", "writer"),
        ]
        allow = b.emit(
            "permission.resolved",
            "t_sess_b",
            requestId="r1",
            toolCallId="cr1",
            decision="allow",
            actor="user",
        )
        apply_event(state, allow)
        assert [p.request_id for p in state.pending_permissions()] == ["r2", "r3"]
        assert list(state.sessions["sess_b"].pending) == ["r3"]


# -- the state dump -----------------------------------------------------------------------------


class TestStateDump:
    def test_shape(self) -> None:
        lead, explorer, tester = family()
        idle = SessionLog("sess_0_idle", clock=30, cwd="/elsewhere")
        state = project_state(explorer.events + lead.events[:3] + tester.events + idle.events)
        assert state.to_state_dump() == {
            "sessions": [
                {
                    "sessionId": "sess_0_idle",
                    "parentSessionId": None,
                    "agentName": None,
                    "cwd": "/elsewhere",
                    "status": "idle",
                    "turns": [],
                },
                {
                    "sessionId": "sess_aa_tester",
                    "parentSessionId": "sess_lead",
                    "agentName": "tester",
                    "cwd": "/work/demo",
                    "status": "completed",
                    "turns": [
                        {
                            "turnId": "turn_t",
                            "stopReason": "final",
                            "startedAt": "2026-11-29T00:00:22.000Z",
                            "endedAt": "2026-11-29T00:00:26.000Z",
                            "durationMs": 4000,
                        }
                    ],
                },
                {
                    "sessionId": "sess_lead",
                    "parentSessionId": None,
                    "agentName": None,
                    "cwd": "/work/demo",
                    "status": "running",
                    "turns": [
                        {
                            "turnId": "turn_l",
                            "stopReason": None,
                            "startedAt": "2026-11-29T00:00:02.000Z",
                            "endedAt": None,
                            "durationMs": None,
                        }
                    ],
                },
                {
                    "sessionId": "sess_zz_explorer",
                    "parentSessionId": "sess_lead",
                    "agentName": "explorer",
                    "cwd": "/work/demo",
                    "status": "completed",
                    "turns": [
                        {
                            "turnId": "turn_e",
                            "stopReason": "final",
                            "startedAt": "2026-11-29T00:00:12.000Z",
                            "endedAt": "2026-11-29T00:00:16.000Z",
                            "durationMs": 4000,
                        }
                    ],
                },
            ]
        }
        first = state.to_state_dump()["sessions"][0]
        assert list(first) == [
            "sessionId",
            "parentSessionId",
            "agentName",
            "cwd",
            "status",
            "turns",
        ]

    def test_same_events_same_bytes_whatever_the_session_order(self) -> None:
        lead, explorer, tester = family()

        def dump(state: DashboardState) -> bytes:
            return orjson.dumps(state.to_state_dump())

        one = dump(project_state(lead.events + explorer.events + tester.events))
        two = dump(project_state(tester.events + lead.events + explorer.events))
        three = dump(fold(lead.events + explorer.events + tester.events))
        assert one == two == three


# -- copies -------------------------------------------------------------------------------------


class TestCopy:
    def test_a_copy_is_independent_both_ways(self) -> None:
        log = TestApprovalHappyPath().build()
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


SAMPLE_PAYLOADS: dict[str, dict] = {
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


@pytest.mark.parametrize("kind", sorted(SAMPLE_PAYLOADS))
@pytest.mark.parametrize("turn_id", ["turn_1", None])
def test_any_late_event_for_a_finished_turn_stays_out_of_copies(kind: str, turn_id: str | None) -> None:
    log = SessionLog("sess_late")
    log.simple_turn("turn_1", "x", "done")
    before = project_state(log.events)
    late = log.emit(kind, turn_id, **SAMPLE_PAYLOADS[kind])

    state = project_state(log.events[:-1])
    snapshot = state.copy()
    apply_event(state, late)
    assert snapshot == before
    assert state == project_state(log.events)

    other = state.copy()
    apply_event(state, log.emit(kind, turn_id, **SAMPLE_PAYLOADS[kind]))
    assert other == project_state(log.events[:-1])


# -- tolerance ----------------------------------------------------------------------------------


class TestLazyViews:
    def test_events_of_a_session_never_created(self) -> None:
        log = SessionLog("sess_mid", clock=100, created=False)
        log.sequence = 41  # a log read from the middle
        state = DashboardState()
        apply_event(state, log.emit("model.delta", "turn_9", text="half a sentence"))
        session = state.sessions["sess_mid"]
        assert not session.created_seen
        assert (session.cwd, session.parent_session_id, session.agent_name) == (None, None, None)
        assert (session.status, session.phase, session.last_sequence) == ("running", "start", 42)
        assert session.turns[0].turn_id == "turn_9" and session.turns[0].started_sequence == 42
        assert session.turns[0].text == "half a sentence"
        assert state.agent_path("sess_mid") == ("sess_mid",)

        apply_event(state, log.emit("tool.delta", "turn_9", toolCallId="c", stream="stderr", text="e"))
        apply_event(
            state,
            log.emit(
                "tool.completed",
                "turn_9",
                toolCallId="c",
                tool="grep",
                result="r",
                truncated=False,
            ),
        )
        apply_event(state, log.emit("turn.completed", "turn_9", stopReason="final"))
        call = session.turns[0].tool_calls["c"]
        assert (call.tool, call.status, call.output, call.result) == ("grep", "completed", "e", "r")
        assert session.status == "completed"
        assert state.to_state_dump() == {
            "sessions": [
                {
                    "sessionId": "sess_mid",
                    "parentSessionId": None,
                    "agentName": None,
                    "cwd": None,
                    "status": "completed",
                    "turns": [
                        {
                            "turnId": "turn_9",
                            "stopReason": "final",
                            # read from the middle: the turn starts at the first event seen
                            "startedAt": "2026-11-29T00:02:22.000Z",
                            "endedAt": "2026-11-29T00:02:25.000Z",
                            "durationMs": 3000,
                        }
                    ],
                }
            ]
        }

    def test_a_late_header_fills_in_the_session(self) -> None:
        state = DashboardState()
        body = SessionLog("sess_kid", created=False)
        apply_event(state, body.emit("turn.started", "t", promptPreview="x"))
        header = Event(
            id="evt_h",
            session_id="sess_kid",
            turn_id=None,
            sequence=1,
            ts=ts(0),
            type="session.created",
            payload=payload_from(
                "session.created", dict(cwd="/w", client="c", parentSessionId="sess_p", agentName="kid")
            ),
        )
        apply_event(state, header)
        assert state.children("sess_p") == ["sess_kid"]
        assert state.agent_path("sess_kid") == ("sess_p", "kid")
        assert state.sessions["sess_kid"].cwd == "/w"

    def test_event_without_turn_id_and_unknown_combinations(self) -> None:
        state = DashboardState()
        odd = [
            ("user.message", None, {"content": "no turn"}),
            ("tool.started", "t", {"toolCallId": "c", "tool": "ls", "argsPreview": ""}),
            (
                "permission.resolved",
                "t",
                {"requestId": "r", "toolCallId": "c", "decision": "allow", "actor": "user"},
            ),
            ("turn.completed", "t", {"stopReason": "final"}),
            ("turn.completed", "t", {"stopReason": "error"}),
            ("turn.started", "t", {"promptPreview": "again?"}),
        ]
        for i, (kind, turn, fields) in enumerate(odd, start=1):
            apply_event(
                state,
                Event(
                    id=f"e{i}",
                    session_id="s",
                    turn_id=turn,
                    sequence=i,
                    ts=ts(i),
                    type=kind,
                    payload=payload_from(kind, fields),
                ),
            )
        session = state.sessions["s"]
        assert [t.turn_id for t in session.turns] == ["", "t"]
        assert session.turns[1].stop_reason == "error"
        assert state.event_count == 6


# -- properties ---------------------------------------------------------------------------------

SESSIONS = ("sess_a", "sess_b", "sess_c")
TURNS = ("turn_1", "turn_2", "turn_3")
CALLS = ("call_1", "call_2")
REQUESTS = ("req_1", "req_2")
small = st.integers(0, 9)
texts = st.one_of(st.text(max_size=6), st.integers(0, 9_000).map(lambda n: "x" * n))


def fixed(required: dict, optional: dict | None = None) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(required, optional=optional or {})


PAYLOAD_STRATEGIES: dict[str, st.SearchStrategy[dict]] = {
    "session.created": fixed(
        {"cwd": st.just("/w"), "client": st.just("t")},
        {
            "parentSessionId": st.sampled_from(SESSIONS),
            "agentName": st.sampled_from(["a", "b"]),
            "title": st.just("lead"),
        },
    ),
    "turn.started": fixed({"promptPreview": st.text(max_size=4)}),
    "user.message": fixed({"content": texts}, {"steered": st.booleans()}),
    "context.built": fixed(
        {
            "step": small,
            "tokens": fixed({"instruction": small, "transcript": small, "tools": small}),
            "maxContextTokens": small,
        }
    ),
    "context.compacted": fixed(
        {"step": small, "beforeTokens": small, "afterTokens": small, "summary": st.just("s")}
    ),
    "model.delta": fixed({"text": texts}),
    "model.tool_call_requested": fixed(
        {"toolCallId": st.sampled_from(CALLS), "tool": st.just("shell"), "args": st.just({"cmd": "ls"})}
    ),
    "permission.requested": fixed(
        {
            "requestId": st.sampled_from(REQUESTS),
            "toolCallId": st.sampled_from(CALLS),
            "tool": st.just("shell"),
            "risk": st.sampled_from(["read", "destructive"]),
            "argsPreview": st.just("ls"),
        }
    ),
    "permission.resolved": fixed(
        {
            "requestId": st.sampled_from(REQUESTS),
            "toolCallId": st.sampled_from(CALLS),
            "decision": st.sampled_from(["ask", "allow", "deny"]),
            "actor": st.sampled_from(["policy", "user", "system"]),
        },
        {"reason": st.just("careful"), "policy": st.just("default")},
    ),
    "tool.started": fixed(
        {"toolCallId": st.sampled_from(CALLS), "tool": st.just("shell"), "argsPreview": st.just("ls")}
    ),
    "tool.delta": fixed(
        {
            "toolCallId": st.sampled_from(CALLS),
            "stream": st.sampled_from(["stdout", "stderr"]),
            "text": texts,
        }
    ),
    "tool.completed": fixed(
        {
            "toolCallId": st.sampled_from(CALLS),
            "tool": st.just("shell"),
            "result": texts,
            "truncated": st.booleans(),
        },
        {"exitCode": small},
    ),
    "tool.failed": fixed(
        {
            "toolCallId": st.sampled_from(CALLS),
            "tool": st.just("shell"),
            "errorCode": st.sampled_from(["permission_denied", "timeout"]),
            "message": st.just("m"),
        }
    ),
    "subagent.delivered": fixed(
        {
            "childSessionId": st.sampled_from(SESSIONS),
            "agentName": st.just("a"),
            "status": st.sampled_from(["completed", "failed"]),
            "text": texts,
        }
    ),
    "turn.completed": fixed(
        {"stopReason": st.sampled_from(["final", "cancelled", "error", "max_steps"])},
        {"errorCode": st.just("unknown"), "usage": fixed({"promptTokens": small, "completionTokens": small})},
    ),
}

# Deltas are most of a real log, so they are drawn more often.
KINDS = list(PAYLOAD_STRATEGIES) + ["model.delta"] * 4 + ["tool.delta"] * 2
raw_event = st.tuples(
    st.sampled_from(SESSIONS),
    st.one_of(st.sampled_from(TURNS), st.none()),
    st.sampled_from(KINDS).flatmap(lambda kind: st.tuples(st.just(kind), PAYLOAD_STRATEGIES[kind])),
)


@st.composite
def event_logs(draw: st.DrawFn) -> list[Event]:
    """Any interleaving of valid events of three sessions, in no particular chain order."""
    raws = draw(st.lists(raw_event, max_size=80))
    sequences = dict.fromkeys(SESSIONS, 0)
    events = []
    for session_id, turn_id, (kind, payload) in raws:
        sequences[session_id] += 1
        seq = sequences[session_id]
        events.append(
            event_from_dict(
                {
                    "v": 1,
                    "id": f"evt_{session_id}_{seq}",
                    "sessionId": session_id,
                    "turnId": None if kind == "session.created" else turn_id,
                    "sequence": seq,
                    "ts": ts(seq),
                    "type": kind,
                    "payload": payload,
                }
            )
        )
    return events


def assert_same_views(one: DashboardState, two: DashboardState) -> None:
    assert one == two
    assert one.pending_permissions() == two.pending_permissions()
    assert tree(one) == tree(two)
    assert one.to_state_dump() == two.to_state_dump()
    assert one.running_count() == two.running_count()
    for session_id, session in one.sessions.items():
        for mine, theirs in zip(session.turns, two.sessions[session_id].turns, strict=True):
            assert (mine.text, mine.transcript) == (theirs.text, theirs.transcript)
            for call_id, call in mine.tool_calls.items():
                assert call.output == theirs.tool_calls[call_id].output


PROPERTY = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(events=event_logs(), split=st.integers(0, 10_000))
def test_reducing_a_prefix_then_a_copy_then_the_rest_equals_reducing_all(
    events: list[Event], split: int
) -> None:
    cut = split % (len(events) + 1)
    whole = project_state(events)

    prefix = project_state(events[:cut])
    resumed = prefix.copy()
    for event in events[cut:]:
        apply_event(resumed, event)
    assert_same_views(resumed, whole)
    assert_same_views(prefix, project_state(events[:cut]))  # the rest did not leak back

    kept = prefix.copy()
    for event in events[cut:]:
        apply_event(prefix, event)
    assert_same_views(prefix, whole)
    assert_same_views(kept, project_state(events[:cut]))


@PROPERTY
@given(events=event_logs())
def test_apply_event_one_by_one_equals_project_state(events: list[Event]) -> None:
    folded = fold(events)
    assert_same_views(folded, project_state(events))
    assert folded.event_count == len(events)
    assert sum(s.event_count for s in folded.sessions.values()) == len(events)
    orjson.dumps(folded.to_state_dump())  # JSON-ready
    asked = [p.order for p in folded.pending_permissions()]
    assert asked == sorted(asked)
