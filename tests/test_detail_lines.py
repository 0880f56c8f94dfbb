"""The detail's lines: a multi-line tool error and turn end keep their indentation, and one
session's turn headers use one clock format (the day in all of them, or in none)."""

from __future__ import annotations

from pathlib import Path

from replay_logs import BASE_MS, SessionLog

from agent_tui.events import event_from_json
from agent_tui.reducer import SessionView, project_state
from agent_tui.tui.formatting import MESSAGE_LINES, turn_lines, turn_summary

DAY_MS = 86_400_000
TRACEBACK = 'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\nValueError: bad\n'


def session_of(log: SessionLog) -> SessionView:
    state = project_state([event_from_json(line) for line in log.lines])
    return state.sessions[log.session_id]


def failing_log() -> SessionLog:
    log = SessionLog("sess_fail")
    log.created(0, name="lead")
    log.add("turn.started", "turn_1", {"promptPreview": "go"}, 10)
    log.add(
        "model.tool_call_requested", "turn_1", {"toolCallId": "c1", "tool": "shell", "args": {"cmd": "x"}}, 11
    )
    log.add("tool.started", "turn_1", {"toolCallId": "c1", "tool": "shell", "argsPreview": "x"}, 12)
    failure = {"toolCallId": "c1", "tool": "shell", "errorCode": "unknown", "message": TRACEBACK}
    log.add("tool.failed", "turn_1", failure, 13)
    long = "\n".join(f"line {n}" for n in range(30))
    end = {"stopReason": "error", "errorCode": "provider_failure", "message": "HTTP 500\n" + long}
    log.add("turn.completed", "turn_1", end, 14)
    return log


def test_every_line_of_a_multi_line_error_keeps_the_indentation() -> None:
    session = session_of(failing_log())
    lines = [line.plain for line in turn_lines(session.turns[0], 1, session, width=100)]
    at = lines.index("    Traceback (most recent call last):")
    assert lines[at + 1 : at + 3] == ['      File "x.py", line 3, in <module>', "    ValueError: bad"]
    end = lines.index("  HTTP 500")
    shown = lines[end : end + MESSAGE_LINES]
    assert all(line.startswith("  ") for line in shown)
    assert lines[end + MESSAGE_LINES] == f"  … {31 - MESSAGE_LINES} more lines"
    assert all("\n" not in line for line in lines)


def two_day_log() -> SessionLog:
    log = SessionLog("sess_days")
    log.created(0, name="lead")
    for n, at in ((1, 0), (2, DAY_MS + 3_600_000)):
        turn = f"turn_{n}"
        log.add("turn.started", turn, {"promptPreview": f"p{n}"}, at + 10)
        log.add("turn.completed", turn, {"stopReason": "final"}, at + 20)
    return log


def test_one_session_uses_one_clock_format_in_its_turn_headers() -> None:
    session = session_of(two_day_log())
    now = BASE_MS + DAY_MS + 3_700_000  # the second turn's day
    first = turn_summary(session.turns[0], 1, now, session).plain
    second = turn_lines(session.turns[1], 2, session, None, now)[0].plain
    # Both dated (the session began another day), never `12:34:56` beside `Nov 28 12:34`.
    for header in (first, second):
        clock = header.split(" · ")[2]
        assert len(clock.split()) == 3 and clock.count(":") == 1, header
    # A session all of today: the time alone, with seconds.
    today = session_of(two_day_log())
    later = turn_lines(today.turns[0], 1, today, None, BASE_MS + 100)[0].plain
    assert later.split(" · ")[2].count(":") == 2


def test_a_line_that_is_not_json_is_said_in_our_words_with_file_and_line(tmp_path: Path) -> None:
    import pytest

    from agent_tui.events import json_problem
    from agent_tui.store import JsonlEventLog
    from agent_tui.store.errors import EventLogDecodeError

    log = SessionLog("sess_bad")
    log.created(0)
    path = log.write(tmp_path)
    with path.open("ab") as out:
        out.write(b'{"v": 1, "id": nul}\n')
    with pytest.raises(EventLogDecodeError) as caught:
        list(JsonlEventLog(path).replay("strict"))
    said = str(caught.value)
    assert said == (
        f"{path}:2: not JSON at column 16: a bare word where a value belongs "
        "(only true, false and null go without quotes)"
    )
    import orjson

    for line, words in [
        (b'{"a": 1,}', "a comma before a closing bracket"),
        (b'{"a": 1', "the line ends in the middle of a value (cut off?)"),
        (b"{a: 1}", "an object key without double quotes"),
        (b"\xff", "bytes that are not UTF-8 text"),
        (b'{"a": NaN}', "something that is not a JSON value (a string needs double quotes)"),
    ]:
        try:
            orjson.loads(line)
        except orjson.JSONDecodeError as error:
            problem = json_problem(error)
        assert problem.endswith(words) and "expected" not in problem and "char" not in problem
    assert json_problem(ValueError("some new parser words")) == "not JSON"


def test_a_sub_agent_stopped_by_its_budget_says_why_once() -> None:
    log = SessionLog("sess_lead")
    log.created(0, name="lead")
    log.add("turn.started", "turn_1", {"promptPreview": "go"}, 10)
    text = "failed: budget_exceeded (budget exceeded: spent $0.05 of a $0.04 budget)"
    delivered = {"childSessionId": "sess_kid", "agentName": "kid", "status": "failed", "text": text}
    log.add("subagent.delivered", "turn_1", delivered, 11)
    session = session_of(log)
    lines = [line.plain for line in turn_lines(session.turns[0], 1, session, width=100)]
    assert "↳ kid failed: budget_exceeded (budget exceeded: spent $0.05 of a $0.04 budget)" in lines
