"""A tool call's second line in the detail: risk, decision and outcome, only what is known.

A call our engine judged shows its risk first. A call from another tool's log (Claude Code,
Codex) was never judged by us, and a call that failed before it was judged (an unknown tool,
arguments that do not parse) has no risk either: those show what happened, not "risk ?".
"""

from __future__ import annotations

from agent_tui.reducer.views import ToolCallView
from agent_tui.tui.formatting import tool_call_lines


def second_line(call: ToolCallView) -> str:
    return tool_call_lines(call)[1].plain


def test_a_judged_call_shows_its_risk_decision_and_exit() -> None:
    call = ToolCallView(
        "call_1", tool="shell", risk="read", status="completed", exit_code=0, decisions=[("allow", "policy")]
    )
    assert second_line(call) == "    read · allowed by policy · exit 0"


def test_an_imported_call_shows_only_how_it_ended() -> None:
    call = ToolCallView("toolu_1", tool="Edit", status="completed")
    assert second_line(call) == "    done"


def test_a_call_that_failed_before_it_was_judged_shows_its_error_and_message() -> None:
    call = ToolCallView(
        "call_2",
        tool="read_file",
        status="failed",
        error_code="unknown",
        message="read_file: path: Field required",
    )
    lines = [line.plain for line in tool_call_lines(call)]
    assert lines[1:] == ["    ✗ unknown", "    read_file: path: Field required"]


def test_a_call_not_judged_yet_says_so() -> None:
    assert second_line(ToolCallView("call_3", tool="shell")) == "    requested"


def test_a_requested_call_s_arguments_read_as_they_will_once_it_runs() -> None:
    from agent_tui.events import args_preview

    args = {"path": "src/a.py", "old": "x = 'y'\n", "count": 2}
    requested = ToolCallView("call_4", tool="edit_file", args=args)
    running = ToolCallView("call_4", tool="edit_file", args=args, args_preview=args_preview(args))
    first = tool_call_lines(requested)[0].plain
    assert first == tool_call_lines(running)[0].plain
    assert first == '  ⚙ edit_file path="src/a.py" old="x = \'y\'\\n" count=2'
