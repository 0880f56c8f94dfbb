"""The phase the dashboard shows is a frame, in every mode, and live frames equal projected ones.

Live (the local dashboard): the engine's sink sends the phase frames, and once the sink speaks
for a turn only its frames move the turn's phase. Replay and attached dashboards fold the stored
events, and the reducer applies to each the frame the same projection gives (`transition_for`),
so what they show is what `replay --dump frames` prints.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from support_engine import collect, make_engine, steps, workspace
from support_workbench import agent_script, scripted_models, wait_for

from agent_tui.bus.attach import AttachedBus
from agent_tui.engine.errors import EventStoreFailure
from agent_tui.engine.scenario import Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.events.frames import Frame, Transition
from agent_tui.reducer import DashboardState, TurnView, apply_event, apply_frame, project_state
from agent_tui.store import JsonlEventLog, JsonlFileEventStore
from agent_tui.tui.app import AgentTuiApp
from agent_tui.turns import EventSink
from agent_tui.turns.projection import frames_from_log, transition_dict

pytestmark = pytest.mark.anyio

LIST_THEN_ANSWER = (
    {"text": ["a"], "toolCalls": [{"tool": "list_dir", "args": {"path": "."}}]},
    {"text": ["b"]},
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def logged(tmp_path: Path, session_id: str) -> list[Event]:
    return list(JsonlEventLog(tmp_path / "sessions" / f"{session_id}.jsonl").replay())


def live_dicts(frames: list[Frame], session_id: str) -> list[dict[str, str]]:
    return [transition_dict(f) for f in frames if f.family == "transition" and f.session_id == session_id]


def last_phase_of_each_turn(frames: list[Frame]) -> dict[str, str]:
    last: dict[str, str] = {}
    for frame in frames:
        if isinstance(frame.body, Transition):
            last[frame.body.turn_id] = frame.body.to
    return last


async def test_live_frames_equal_the_frames_projected_from_the_log_of_a_real_run(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider, sink=EventSink())
    frames: list[Frame] = []
    engine.sink.subscribe(frames.append)
    async with engine:
        lead = await engine.create_session(workspace(tmp_path))
        other = await engine.create_session(workspace(tmp_path))
        provider.assign(lead, steps(*LIST_THEN_ANSWER, {"text": ["c"]}))
        provider.assign(other, steps({"text": ["d"]}))
        await collect(engine.run_turn(lead, "go"))
        stopped = engine.start_turn(lead, "stop at once")
        engine.cancel_turn(lead)
        assert await stopped.wait() == "cancelled"
        await collect(engine.run_turn(other, "go"))
    for session_id in (lead, other):
        projected = [transition_dict(f) for f in frames_from_log(logged(tmp_path, session_id))]
        assert live_dicts(frames, session_id) == projected
    assert live_dicts(frames, lead)[-1]["reason"] == "aborted"


async def test_closing_a_turn_a_failed_store_left_open_does_not_end_the_next_turn(tmp_path: Path) -> None:
    class FullOnce(JsonlFileEventStore):
        appends = 0

        async def append(self, event: Event) -> None:
            FullOnce.appends += 1
            if FullOnce.appends == 4:
                raise OSError(28, "No space left on device")
            await super().append(event)

    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider, store=FullOnce(tmp_path / "sessions"), sink=EventSink())
    frames: list[Frame] = []
    engine.sink.subscribe(frames.append)
    async with engine:
        sid = await engine.create_session(workspace(tmp_path))
        provider.assign(sid, steps({"text": ["hi"]}, {"text": ["again"]}))
        with pytest.raises(EventStoreFailure):
            await collect(engine.run_turn(sid, "hello"))
        await collect(engine.run_turn(sid, "hello again"))  # closes the first turn, then runs
        assert engine.registry.state(sid) == "complete"
    projected = [transition_dict(f) for f in frames_from_log(logged(tmp_path, sid))]
    assert live_dicts(frames, sid) == projected
    assert [(d["to"], d.get("reason")) for d in projected] == [
        ("start", None),
        ("end", "error"),
        ("start", None),
        ("executing", None),
        ("end", "done"),
    ]


async def test_the_live_dashboards_phase_is_the_sinks_frames(tmp_path: Path) -> None:
    """Wired as `LiveRun` wires it: events into the reducer, then the sink's frames."""
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider)
    state = DashboardState()
    frames: list[Frame] = []

    def on_event(event: Event) -> None:
        apply_event(state, event)

    def on_frame(frame: Frame) -> None:
        frames.append(frame)
        apply_frame(state, frame)

    engine.subscribe(on_event)
    engine.watch_frames(on_frame)
    seen: list[str] = []  # the phase shown when each phase event was folded, before its frame

    def probe(event: Event) -> None:
        if event.type in ("context.built", "turn.completed"):
            seen.append(state.sessions[event.session_id].turns[-1].phase)

    engine.subscribe(probe)
    async with engine:
        sid = await engine.create_session(workspace(tmp_path))
        provider.assign(sid, steps(*LIST_THEN_ANSWER))
        await collect(engine.run_turn(sid, "go"))
    # The events were folded first; the phase moved only when the sink's frame came.
    assert seen == ["start", "executing", "executing"]
    (turn,) = state.sessions[sid].turns
    assert turn.phase_live and last_phase_of_each_turn(frames) == {turn.turn_id: turn.phase} == {
        turn.turn_id: "end"
    }


async def test_replayed_and_attached_phases_are_the_projected_frames(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider)
    async with engine:
        sid = await engine.create_session(workspace(tmp_path))
        provider.assign(sid, steps(*LIST_THEN_ANSWER, {"text": ["c"]}))
        await collect(engine.run_turn(sid, "go"))
        provider.assign(sid, steps({"text": ["d"]}))
        await collect(engine.run_turn(sid, "more"))
    events = logged(tmp_path, sid)
    # Cut the log inside the second turn's model call too: a replay scrubbed to that point.
    cut = next(
        i for i, e in enumerate(events) if e.type == "context.built" and e.turn_id == events[-1].turn_id
    )
    for folded in (events, events[: cut + 1]):
        state = project_state(folded)
        shown = {turn.turn_id: turn.phase for turn in state.sessions[sid].turns}
        assert shown == last_phase_of_each_turn(frames_from_log(folded))
        assert not any(turn.phase_live for turn in state.sessions[sid].turns)
    assert shown == {events[0 + 1].turn_id: "end", events[-1].turn_id: "executing"}
    # An attached dashboard folds the bus's events with the same reducer step.
    assert inspect.signature(AttachedBus).parameters["fold"].default is apply_event


async def test_the_local_dashboard_shows_the_phases_its_engine_sends(tmp_path: Path) -> None:
    provider = ScriptedProvider(agents={"fix-it": agent_script(Step(text=["On it."]))})
    project = tmp_path / "project"
    project.mkdir()
    app = AgentTuiApp(
        sessions_dir=tmp_path / "sessions", project=project, models=scripted_models(provider), prompt="Fix it"
    )

    def finished() -> list[TurnView]:
        sessions = app.live.state.sessions.values() if app.live is not None else ()
        return [turn for session in sessions for turn in session.turns if turn.stop_reason is not None]

    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: [turn.phase for turn in finished()] == ["end"], "the end frame")
        (turn,) = finished()
        assert turn.phase_live  # moved by the engine's sink, not by folding the events
        await pilot.press("q")
