"""The spend chart of a tree: one row per agent that spent, each only climbing, all on one scale,
in dollars (or in tokens when nothing had a price), read from the folded state of real logs."""

from __future__ import annotations

from pathlib import Path

from support_workbench import NOW, Log, at, fake_home, recorded_project

from agent_tui.reducer import DashboardState, project_state
from agent_tui.tui.widgets.spend_chart import BARS, MAX_ROWS, bars, chart_content, spend_rows

NOW_MS = int(NOW.timestamp() * 1000)


def _state(tmp_path: Path) -> DashboardState:
    return project_state(recorded_project(fake_home(tmp_path)))


def _sid(state: DashboardState, name: str) -> str:
    return next(sid for sid, s in state.sessions.items() if s.display_name == name)


def test_each_agent_of_the_tree_gets_a_climbing_row_ending_at_what_it_spent(tmp_path: Path) -> None:
    state = _state(tmp_path)
    lead = _sid(state, "fix-login")
    data = spend_rows(state, lead, NOW_MS, 40)
    assert data is not None and data.in_usd
    assert [row.name for row in data.rows] == ["fix-login", "explorer"]  # the bigger spender first
    for row in data.rows:
        assert row.columns == sorted(row.columns)
        assert row.total == state.sessions[row.session_id].spend.cost_usd
    line = bars(data.rows[0].columns, data.rows[0].total)
    assert line.endswith(BARS[-1]) and len(line) == 40


def test_the_chart_names_the_tree_and_the_amounts(tmp_path: Path) -> None:
    state = _state(tmp_path)
    content = chart_content(state, _sid(state, "fix-login"), NOW_MS, 70)
    assert content is not None
    lines = content.plain.splitlines()
    assert lines[0] == "Spend · fix-login's tree · 14:10:01–14:20:00"
    assert lines[1].startswith("fix-login ") and lines[1].endswith(" $0.34")
    assert lines[2].startswith("explorer ") and lines[2].endswith(" $0.08")
    assert all(len(line) <= 70 for line in lines)


def test_a_tree_that_spent_nothing_has_no_chart(tmp_path: Path) -> None:
    state = _state(tmp_path)
    assert chart_content(state, _sid(state, "docs"), NOW_MS, 70) is None  # its only call failed


def test_tokens_without_a_price_are_charted_as_tokens_and_said_so() -> None:
    log = Log("sess_9a9a9a9a9a9a", at(10, 0), cwd="/tmp", agentName="local", billed="a-model-nobody-prices")
    log.start("turn_x1", "Try the local model")
    log.step("turn_x1", 1, "Thinking.")
    log.end("turn_x1", after=30)
    state = project_state(log.events)
    content = chart_content(state, log.session_id, NOW_MS, 70)
    assert content is not None
    assert "tokens, price unknown" in content.plain.splitlines()[0]
    assert content.plain.splitlines()[1].endswith(" 23.9k")
    assert "$" not in content.plain


def test_past_the_biggest_spenders_the_rest_are_counted() -> None:
    lead = Log("sess_0000000000aa", at(9, 0), cwd="/tmp", agentName="lead", billed="gpt-4.1-mini")
    lead.start("turn_a", "Fan out")
    lead.step("turn_a", 1, "Spawning.")
    lead.end("turn_a")
    events = list(lead.events)
    for index in range(MAX_ROWS + 2):
        child = Log(
            f"sess_00000000{index:04d}",
            at(9, 1 + index),
            cwd="/tmp",
            agentName=f"helper-{index}",
            parentSessionId=lead.session_id,
            billed="gpt-4.1-mini",
        )
        child.start(f"turn_c{index}", "Help")
        for step in range(1, index + 2):  # later helpers make more calls: they spend more
            child.step(f"turn_c{index}", step, "Working.")
        child.end(f"turn_c{index}")
        events += child.events
    events.sort(key=lambda e: e.ts)
    state = project_state(events)
    content = chart_content(state, lead.session_id, NOW_MS, 80)
    assert content is not None
    lines = content.plain.splitlines()
    assert lines[0].endswith("· 3 more agents")
    assert [line.split()[0] for line in lines[1:]] == [f"helper-{i}" for i in range(MAX_ROWS + 1, 1, -1)]
