"""Wrapped lines hang under their text: the detail's answers and tool lines, a model retry's
reason, the approval queue's entries; a write waiting in the queue shows its content's first
lines with their indentation.

Read as painted at 80x24 on the workbench (lint selected, two requests waiting), and from
the queue's text for a write built from a real log.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support_reducer import SessionLog, fold
from support_workbench import armed, recorded_app
from textual.content import Content
from textual.pilot import Pilot
from textual.widget import Widget

from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.formatting import approval_prompt, turn_lines
from agent_tui.tui.hanging import hang

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    yield


def rows(widget: Widget) -> list[str]:
    """A widget's rows as painted, trailing blanks dropped."""
    return [widget.render_line(y).text.rstrip() for y in range(widget.size.height)]


def row_after(lines: list[str], start: str) -> str:
    index = next(i for i, line in enumerate(lines) if line.startswith(start))
    return lines[index + 1]


async def armed_workbench(pilot: Pilot) -> AgentTuiApp:
    app = pilot.app
    assert isinstance(app, AgentTuiApp)
    await armed(pilot)
    return app


async def test_a_wrapped_answer_continues_under_its_text(tmp_path: Path) -> None:
    app = recorded_app(tmp_path)
    async with app.run_test(size=(72, 24)) as pilot:  # narrow enough for the answer to wrap
        await armed_workbench(pilot)
        lines = [
            line
            for part in ("#detail-history", "#detail-current")
            for line in rows(app.screen.query_one(part))
        ]
        assert row_after(lines, "◆ No warnings left; checking") == "  too."
        assert row_after(lines, "── turn 1 · executing") == "   / 850 out · $0.01 · 14:19:01"


async def test_a_wrapped_queue_entry_continues_under_the_agent_path(tmp_path: Path) -> None:
    app = recorded_app(tmp_path)
    async with app.run_test(size=(72, 24)) as pilot:  # narrow enough for the command to wrap
        await armed_workbench(pilot)
        lines = rows(app.dashboard.queue)
        assert row_after(lines, " 1. fix-login › explorer  shell") == "    · 9m21s"
        assert row_after(lines, "    · 9m21s") == '    cmd="grep -rn check_login src tests |'
        assert row_after(lines, '    cmd="grep') == '    sort"'


def test_a_tool_line_continues_under_its_indent() -> None:
    line = Content("    execute · allowed by you · ✗ cancelled")
    assert [row.plain for row in hang(line, 34)] == ["    execute · allowed by you · ✗", "    cancelled"]


def test_a_waiting_write_shows_its_content_lines_as_they_are() -> None:
    log = SessionLog("sess_docs", agent="docs")
    log.emit("turn.started", "turn_1", promptPreview="usage")
    log.emit("user.message", "turn_1", content="usage")
    args = {"path": "USAGE.md", "content": "# Usage\n\n    python src/app.py\n"}
    log.emit("model.tool_call_requested", "turn_1", toolCallId="call_1", tool="write_file", args=args)
    preview = (
        'path="USAGE.md" content="# Usage\\n\\n python src/app.py\\n"'  # as older logs hold it (squeezed)
    )
    log.request("turn_1", "call_1", "write_file", "write", preview=preview)
    log.resolve("turn_1", "call_1", "ask", "policy")
    state = fold(log.events)
    (view,) = state.pending_permissions()
    lines = approval_prompt(state, view, 1, width=40).plain.splitlines()
    assert lines[1:] == ['   path="USAGE.md"', "   │ # Usage", "   │ ", "   │     python src/app.py"]


def test_a_model_retry_says_why_in_full_under_its_text() -> None:
    log = SessionLog("sess_slow", agent="slow")
    log.emit("turn.started", "turn_1", promptPreview="go")
    log.emit("user.message", "turn_1", content="go")
    reason = "RateLimitError: 429 slow down (Retry-After: 20 s)"
    log.emit("model.retry", "turn_1", attempt=1, delayMs=20000, reason=reason)
    state = fold(log.events)
    session = state.sessions["sess_slow"]
    (turn,) = session.turns
    (line,) = [line for line in turn_lines(turn, 1, session, width=40) if "retrying" in line.plain]
    rows = [row.plain for row in hang(line, 40)]
    assert " ".join(row.strip() for row in rows[1:]).endswith("(Retry-After: 20 s)")  # not cut
    assert all(row.startswith("    ") for row in rows[1:])  # under the text, after `  · `
