"""A live redraw repaints only what the new events changed, and only what is on screen; the live
run's listener keeps the redraws coming at their rate.

The dashboard is shown the way the live run shows it: each event folded into the screen's state
by the reducer, then `show_state`. A hook counts what the paint after it renders: the tree rows
(by the session on each row), the detail's rows (`TranscriptLines.render_line`) and the lines it
wrapped again (`TranscriptLines.wrapped`). Every wait is for the screen's next refresh
(`call_after_refresh`), never a sleep.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.strip import Strip

from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event, payload_from
from agent_tui.ports import ModelChoice
from agent_tui.reducer import apply_event
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.live import LiveRun
from agent_tui.tui.widgets.session_tree import SessionTree
from agent_tui.tui.widgets.transcript_lines import TranscriptLines

LEAD = "sess_lead"
HELPER = "sess_helper"
LONG_TURN_LINES = 200


class Log:
    """One session's events, numbered from 1, a second apart."""

    def __init__(self, session_id: str, name: str, start: int) -> None:
        self.session_id = session_id
        self.sequence = 0
        self.start = start
        self.events: list[Event] = []
        self.emit("session.created", None, cwd="/work/demo", client="tests", agentName=name, title=name)

    def emit(self, kind: str, turn_id: str | None, **fields: object) -> Event:
        self.sequence += 1
        tick = self.start + self.sequence
        event = Event(
            id=f"evt_{self.session_id}_{self.sequence}",
            session_id=self.session_id,
            turn_id=turn_id,
            sequence=self.sequence,
            ts=f"2026-11-29T10:{tick // 60 % 60:02d}:{tick % 60:02d}.000Z",
            type=kind,
            payload=payload_from(kind, fields),
        )
        self.events.append(event)
        return event

    def running_turn(self, turn_id: str, prompt: str, lines: int) -> None:
        self.emit("turn.started", turn_id, promptPreview=prompt)
        self.emit("user.message", turn_id, content=prompt)
        self.emit(
            "context.built",
            turn_id,
            step=1,
            tokens={"instruction": 10, "transcript": 20, "tools": 5},
            maxContextTokens=8000,
        )
        for n in range(lines):
            self.emit("model.delta", turn_id, text=f"line {n} of what the model is saying\n")


class Paints:
    """What the paints since `reset` rendered (filled by the hooks `paints` installs)."""

    def __init__(self) -> None:
        self.tree_rows: Counter[str] = Counter()
        self.detail_rows: Counter[str] = Counter()
        self.wrapped_before: dict[str, int] = {}

    def reset(self, app: AgentTuiApp) -> None:
        self.tree_rows.clear()
        self.detail_rows.clear()
        self.wrapped_before = {w.id or "": w.wrapped for w in app.dashboard.query(TranscriptLines)}

    def wrapped(self, app: AgentTuiApp) -> dict[str, int]:
        """Lines each part of the detail wrapped since `reset`."""
        return {
            w.id or "": w.wrapped - self.wrapped_before[w.id or ""]
            for w in app.dashboard.query(TranscriptLines)
        }


@pytest.fixture
def paints(monkeypatch: pytest.MonkeyPatch) -> Paints:
    seen = Paints()
    tree_line: Callable[[SessionTree, int], Strip] = SessionTree.render_line
    detail_line: Callable[[TranscriptLines, int], Strip] = TranscriptLines.render_line

    def count_tree_row(tree: SessionTree, y: int) -> Strip:
        node = tree.get_node_at_line(y + tree.scroll_offset.y)
        seen.tree_rows[node.data if node is not None and node.data else "?"] += 1
        return tree_line(tree, y)

    def count_detail_row(part: TranscriptLines, y: int) -> Strip:
        seen.detail_rows[part.id or "?"] += 1
        return detail_line(part, y)

    monkeypatch.setattr(SessionTree, "render_line", count_tree_row)
    monkeypatch.setattr(TranscriptLines, "render_line", count_detail_row)
    return seen


async def painted(pilot: Pilot) -> None:
    """Until the dashboard has handled what is queued and painted the result."""
    await pilot.pause()
    refreshed = asyncio.Event()
    pilot.app.screen.call_after_refresh(refreshed.set)
    await refreshed.wait()


def two_sessions() -> tuple[Log, Log]:
    lead = Log(LEAD, "lead", 0)
    lead.running_turn("turn_lead", "Explain the code base", LONG_TURN_LINES)
    helper = Log(HELPER, "helper", 600)
    helper.running_turn("turn_helper", "Count the files", 1)
    return lead, helper


async def shown(pilot: Pilot, app: AgentTuiApp, *events: Event) -> None:
    """Fold `events` into the screen's state and show it, as a live redraw does."""
    screen = app.dashboard
    for event in events:
        apply_event(screen.state, event)
    screen.show_state(screen.state)
    await painted(pilot)


@pytest.mark.anyio
class TestIncrementalPaint:
    async def test_an_event_of_another_session_repaints_its_row_and_not_the_detail(
        self, paints: Paints
    ) -> None:
        lead, helper = two_sessions()
        app = AgentTuiApp(events=lead.events + helper.events, live=False)
        async with app.run_test(size=(120, 40)) as pilot:
            app.dashboard.select_session(LEAD)
            await painted(pilot)
            await painted(pilot)
            assert app.dashboard.detail.session_id == LEAD
            paints.reset(app)

            await shown(pilot, app, helper.emit("turn.completed", "turn_helper", stopReason="final"))

            assert app.dashboard.state.sessions[HELPER].status == "completed"
            assert set(paints.tree_rows) == {HELPER}  # its row, and no other
            assert not paints.detail_rows  # the detail shows the lead: nothing of it is painted
            assert not any(paints.wrapped(app).values())

    async def test_an_event_of_the_shown_session_wraps_its_changed_line_and_paints_what_shows(
        self, paints: Paints
    ) -> None:
        lead, helper = two_sessions()
        app = AgentTuiApp(events=lead.events + helper.events, live=False)
        async with app.run_test(size=(120, 40)) as pilot:
            app.dashboard.select_session(LEAD)
            await painted(pilot)
            await painted(pilot)
            detail = app.dashboard.detail
            current = detail.query_one("#detail-current", TranscriptLines)
            assert current.size.height > LONG_TURN_LINES  # the turn is far taller than the panel
            paints.reset(app)

            await shown(pilot, app, lead.emit("model.delta", "turn_lead", text="and one more line\n"))

            assert "and one more line" in str(current.content)
            assert detail.scroll_y == detail.max_scroll_y  # still following its end
            wrapped = paints.wrapped(app)
            assert 1 <= wrapped["detail-current"] <= 2  # the line that grew (and a blank after it)
            assert wrapped["detail-history"] == 0
            # Only rows on screen are painted: at most the panel's height, of 200+ rows.
            assert 0 < paints.detail_rows["detail-current"] <= detail.size.height
            assert set(paints.tree_rows) <= {LEAD}


class TestRedrawPacing:
    """The live run's listener redraws on its own once a redraw is due (the app's timer comes
    late under load); periods here are 0 or an hour, so nothing depends on the clock."""

    def live_run(self, tmp_path: Path) -> LiveRun:
        choice = ModelChoice("scripted", "tests", build=ScriptedProvider)
        return LiveRun(None, tmp_path / "sessions", lambda message: None, project=tmp_path, models=[choice])

    def counted_redraws(self, live: LiveRun) -> tuple[list[int], Callable[[], None]]:
        """A redraw as the app's (it shows the state if dirty) and the event counts it showed."""
        redraws: list[int] = []

        def redraw() -> None:
            if live.redraws.dirty:
                live.redraws.dirty = False
                redraws.append(live.state.event_count)

        return redraws, redraw

    def test_the_listener_redraws_once_a_period_and_an_ask_redraws_at_once(self, tmp_path: Path) -> None:
        live = self.live_run(tmp_path)
        redraws, redraw = self.counted_redraws(live)
        live.redraws.every(3600, redraw)
        lead, _helper = two_sessions()
        for event in lead.events[:10]:
            live._on_event(event)
        assert redraws == [1]  # the first event, then nothing for an hour
        assert not live.redraws.dirty  # events came, but the last redraw is not a period old
        live.redraws.dirty = True  # asked for (the app does, e.g. when a request is withdrawn)
        assert live.redraws.dirty

        live.redraws.every(0, redraw)
        for event in lead.events[10:13]:
            live._on_event(event)
        assert redraws == [1, 11, 12, 13]

    def test_a_slower_pace_lengthens_the_period_until_it_is_lifted(self, tmp_path: Path) -> None:
        live = self.live_run(tmp_path)
        redraws, redraw = self.counted_redraws(live)
        live.redraws.every(0, redraw)
        live.redraws.slower(3600)
        assert live.redraws.slowed
        lead, _helper = two_sessions()
        for event in lead.events[:10]:
            live._on_event(event)
        assert redraws == [1]  # the first event, then nothing for the slower period
        live.redraws.slower(None)
        assert not live.redraws.slowed
        for event in lead.events[10:12]:
            live._on_event(event)
        assert redraws == [1, 11, 12]

    def test_a_redraw_that_raises_does_not_cost_the_listener(self, tmp_path: Path) -> None:
        live = self.live_run(tmp_path)

        def broken() -> None:
            raise RuntimeError("a widget bug")

        live.redraws.every(0, broken)
        lead, _helper = two_sessions()
        for event in lead.events[:5]:
            live._on_event(event)  # the engine would drop a listener that raised
        assert live.state.event_count == 5  # every event still folded
        assert live.redraws.dirty  # so the app's timer redraws, and meets (and reports) the error
