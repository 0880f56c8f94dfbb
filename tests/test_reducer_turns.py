"""A turn in the dashboard's views: its phase, its text and transcript, and how it ends.

The phase after each phase event is the one the turn registry's frames show for it; the text and
transcript keep their last characters and entries; the way a turn ends sets the session's status
and clears the approvals it left waiting. A log read from the middle (events of a session or a
turn whose start was never seen, a header that comes late) still folds: the views are created
with what is known.
"""

from __future__ import annotations

from support_frames import as_transition
from support_reducer import SessionLog, tokens, ts

from agent_tui.events import Event, payload_from
from agent_tui.reducer import TEXT_CHARS, DashboardState, TranscriptEntry, apply_event, project_state
from agent_tui.turns.projection import command_for, frames_from_log

# -- phases, text and transcript ----------------------------------------------------------------


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
        frames = [(as_transition(f).turn_id, as_transition(f).to) for f in frames_from_log(log.events)]
        # Pinned too, so the comparison cannot pass with both sides empty.
        assert [to for _, to in frames] == [
            "start", "executing", "compress", "executing", "end", "start", "executing", "end",
        ]  # fmt: skip
        assert phases == frames
        assert state.sessions["sess_p"].turns[0].compactions == 1


class TestTurnText:
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


# -- tolerance: a log read from the middle, events out of their chain ---------------------------


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
                    "costUsd": 0.0,
                    "tokens": {"prompt": 0, "completion": 0},
                    "treeCostUsd": 0.0,
                    "treeTokens": {"prompt": 0, "completion": 0},
                    "budget": None,
                    "turns": [
                        {
                            "turnId": "turn_9",
                            "stopReason": "final",
                            # read from the middle: the turn starts at the first event seen
                            "startedAt": "2026-11-29T00:02:22.000Z",
                            "endedAt": "2026-11-29T00:02:25.000Z",
                            "durationMs": 3000,
                            # seen without its request or any decision
                            "toolCalls": [
                                {
                                    "toolCallId": "c",
                                    "tool": "grep",
                                    "status": "completed",
                                    "decision": None,
                                    "decidedBy": None,
                                }
                            ],
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
