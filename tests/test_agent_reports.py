"""An ACP agent's plan and mode, folded by the reducer from the records its session keeps.

A real run of the test agent (`acp_startup_agent.py --modes`, prompt `plan`) gives the records;
the fold of its log (`project_state`) is what the dashboard and `replay --dump state` show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_support import Harness, QueuePrompter
from test_acp_startup import startup_agent

from agent_tui.reducer import AgentModeView, PlanEntryView, project_state

pytestmark = pytest.mark.anyio

PLAN = (
    PlanEntryView("read the file", "completed", "high"),
    PlanEntryView("edit it", "in_progress", "medium"),
    PlanEntryView("run the tests", "pending", "low"),
)


async def test_the_latest_plan_and_the_current_mode_are_on_the_sessions_view(tmp_path: Path) -> None:
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None)) as harness:
        session = await harness.agents.start(startup_agent("--modes"), tmp_path, prompt="hello")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        started = project_state(harness.log(session.session_id)).sessions[session.session_id]
        assert await session.prompt("plan").wait() == "final"
        planned = project_state(harness.log(session.session_id))
        assert await session.prompt("plan text").wait() == "final"
        texted = project_state(harness.log(session.session_id)).sessions[session.session_id]
        assert await session.prompt("no plan").wait() == "final"
        removed = project_state(harness.log(session.session_id)).sessions[session.session_id]
    # session/new's modes: the current one, and those offered.
    assert (started.mode, started.mode_name, started.plan) == ("ask", "Ask first", ())
    assert started.modes == (AgentModeView("ask", "Ask first"), AgentModeView("code", "Code"))
    view = planned.sessions[session.session_id]
    assert (view.plan, view.mode, view.mode_name) == (PLAN, "code", "Code")
    [dumped] = planned.to_state_dump()["sessions"]
    assert dumped["plan"][0] == {"content": "read the file", "status": "completed", "priority": "high"}
    assert dumped["mode"] == "code"
    assert (texted.plan, texted.plan_text) == (PLAN, "# Plan")
    assert (removed.plan, removed.plan_text, removed.mode) == ((), None, "code")


def test_records_of_other_shapes_are_ignored(make_event: Any) -> None:
    def record(sequence: int, record_type: str, data: Any, fmt: str = "acp") -> Any:
        return make_event(sequence, "source.record", format=fmt, recordType=record_type, data=data)

    events = [
        make_event(1, "session.created"),
        make_event(2, "turn.started"),
        record(3, "plan", {"entries": [{"content": 1}, "x", {"content": "ok", "status": 7}]}),
        record(4, "current_mode_update", {"currentModeId": ["not", "a", "mode"]}),
        record(5, "session/new", {"modes": {"currentModeId": "ask", "availableModes": [{"name": "x"}]}}),
        record(6, "plan", {"entries": [{"content": "theirs"}]}, fmt="claude-code"),
        record(7, "plan_update", {"plan": {"type": "markdown", "content": "# Plan"}}),
    ]
    view = project_state(events).sessions["sess_test"]
    assert view.plan == (PlanEntryView("ok", "pending", "medium"),)
    assert (view.mode, view.modes, view.plan_text) == ("ask", (), "# Plan")
    assert project_state(events).to_state_dump()["sessions"][0]["planText"] == "# Plan"
