"""A tool call in the dashboard's views: its request, its approval, its run and its result.

A call's status goes requested → asking → running → completed | failed | denied. The approval
queue holds exactly the `ask`s not yet answered, across all sessions in the order they were asked;
an answer, or the call's end, takes a request out. A call keeps bounded memory: the tail of its
output (stdout and stderr interleaved, as they came) and the head of its result.
"""

from __future__ import annotations

from support_reducer import SessionLog, approved_rename_log, fold

from agent_tui.reducer import (
    OUTPUT_CHARS,
    RESULT_CHARS,
    DashboardState,
    PermissionView,
    TranscriptEntry,
    TurnUsage,
    apply_event,
    project_state,
)

# -- approvals: one call's, and the queue across sessions ---------------------------------------


class TestApprovalHappyPath:
    def test_pending_appears_after_the_ask_and_leaves_after_the_users_allow(self) -> None:
        log = approved_rename_log()
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
        state = project_state(approved_rename_log().events)
        session = state.sessions["sess_lead"]
        assert (session.status, session.phase, session.last_sequence) == ("completed", "end", 16)
        assert session.event_count == state.event_count == 16
        assert state.running_count() == 0
        turn = session.turns[0]
        assert turn.prompt_preview == "Rename src/foo.py to bar.py"
        assert (turn.stop_reason, turn.error_code) == ("final", None)
        assert (turn.step, turn.steps, turn.tokens, turn.max_context_tokens) == (2, 2, 700, 8000)
        assert turn.usage == TurnUsage(1200, 40, unpriced_tokens=1240)  # no costUsd: price unknown
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
        events = approved_rename_log().events
        assert fold(events) == project_state(events)

    def test_a_running_turn_is_counted(self) -> None:
        events = approved_rename_log().events[:8]
        state = project_state(events)
        assert state.sessions["sess_lead"].status == "running"
        assert state.sessions["sess_lead"].phase == "executing"
        assert state.running_count() == 1
        assert state.sessions["sess_lead"].turns[0].text == "Renaming now."


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


# -- tool output, its caps, and a denied call ---------------------------------------------------


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
