"""The engine drives the registry and the sink: claim first, one `end` whatever happens."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from support_engine import collect, make_engine, steps, workspace
from support_frames import as_transition

from agent_tui.engine.errors import EventStoreFailure
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events.frames import Fatal, Frame, is_turn_end
from agent_tui.store import JsonlEventLog, JsonlFileEventStore
from agent_tui.turns import EventSink
from agent_tui.turns.projection import frames_from_log, transition_dict

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def record_frames(engine) -> list[Frame]:
    frames: list[Frame] = []
    engine.sink.subscribe(frames.append)
    return frames


def phases(frames: list[Frame]) -> list[str]:
    return [
        as_transition(f).to + (f":{as_transition(f).reason}" if as_transition(f).reason else "")
        for f in frames
        if f.family == "transition"
    ]


async def test_a_turn_sends_start_executing_per_call_and_one_end(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider, sink=EventSink())
    frames = record_frames(engine)
    async with engine:
        sid = await engine.create_session(workspace(tmp_path))
        provider.assign(
            sid,
            steps(
                {"text": ["a"], "toolCalls": [{"tool": "list_dir", "args": {"path": "."}}]}, {"text": ["b"]}
            ),
        )
        events = await collect(engine.run_turn(sid, "go"))
    assert phases(frames) == ["start", "executing", "executing", "end:done"]
    start = as_transition(frames[0])
    assert start.turn_id == events[0].turn_id
    executing = [
        as_transition(f) for f in frames if f.family == "transition" and as_transition(f).to == "executing"
    ]
    assert all(e.responded is not None and (e.responded.prompt_tokens or 0) > 0 for e in executing)
    log = list(JsonlEventLog(tmp_path / "sessions" / f"{sid}.jsonl").replay())
    assert [transition_dict(f) for f in frames if f.family == "transition"] == [
        transition_dict(f) for f in frames_from_log(log)
    ]


async def test_max_steps_ends_with_reason_max_steps(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider, max_steps=1, sink=EventSink())
    frames = record_frames(engine)
    async with engine:
        sid = await engine.create_session(workspace(tmp_path))
        provider.assign(
            sid,
            steps(
                {"text": ["a"], "toolCalls": [{"tool": "list_dir", "args": {"path": "."}}]}, {"text": ["b"]}
            ),
        )
        await collect(engine.run_turn(sid, "go"))
    assert phases(frames)[-1] == "end:maxSteps"


async def test_compaction_sends_a_compress_frame(tmp_path: Path) -> None:
    cwd = workspace(tmp_path)
    (cwd / "big.txt").write_text("word " * 3000)
    provider = ScriptedProvider(max_context_tokens=3000)
    engine = make_engine(tmp_path, provider, sink=EventSink())
    frames = record_frames(engine)
    async with engine:
        sid = await engine.create_session(cwd)
        provider.assign(
            sid,
            steps(
                {"text": ["x"], "toolCalls": [{"tool": "read_file", "args": {"path": "big.txt"}}]},
                {"text": ["y"]},
            ),
        )
        await collect(engine.run_turn(sid, "go"))
    assert phases(frames) == ["start", "executing", "compress", "executing", "end:done"]


async def test_store_failure_sends_a_fatal_frame_and_one_end(tmp_path: Path) -> None:
    class BrokenAfter(JsonlFileEventStore):
        left = 4

        async def append(self, event):
            BrokenAfter.left -= 1
            if BrokenAfter.left < 0:
                raise OSError(28, "No space left on device")
            await super().append(event)

    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider, store=BrokenAfter(tmp_path / "sessions"), sink=EventSink())
    frames = record_frames(engine)
    async with engine:
        sid = await engine.create_session(workspace(tmp_path))
        provider.assign(sid, steps({"text": ["a", "b", "c"]}))
        with pytest.raises(EventStoreFailure):
            await collect(engine.run_turn(sid, "go"))
    fatal = [f.body for f in frames if isinstance(f.body, Fatal)]
    assert len(fatal) == 1 and fatal[0].code == "store_failure" and "No space left" in fatal[0].message
    ends = [f for f in frames if is_turn_end(f)]
    assert len(ends) == 1 and as_transition(ends[0]).reason == "error"
    assert engine.registry.state(sid) == "error"


@pytest.mark.parametrize("delay", [0.0, 0.001, 0.003, 0.006])
async def test_cancel_racing_the_end_never_sends_two_end_frames(tmp_path: Path, delay: float) -> None:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider, sink=EventSink())
    frames = record_frames(engine)
    async with engine:
        sid = await engine.create_session(workspace(tmp_path))
        provider.assign(sid, steps(*[{"text": ["a", "b"]}] * 30))
        for _ in range(30):
            handle = engine.start_turn(sid, "go")
            await anyio.sleep(delay)
            engine.cancel_turn(sid)
            engine.cancel_turn(sid, handle.turn_id)
            await handle.wait()
            engine.cancel_turn(sid, handle.turn_id)
    per_turn: dict[str, int] = {}
    for frame in frames:
        if is_turn_end(frame):
            per_turn[as_transition(frame).turn_id] = per_turn.get(as_transition(frame).turn_id, 0) + 1
    assert len(per_turn) == 30 and set(per_turn.values()) == {1}
    log = list(JsonlEventLog(tmp_path / "sessions" / f"{sid}.jsonl").replay())
    assert sum(e.type == "turn.completed" for e in log) == 30


async def test_stop_is_armed_in_the_registry(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider, sink=EventSink())
    async with engine:
        sid = await engine.create_session(workspace(tmp_path))
        provider.assign(sid, steps({"text": ["a", "b", "c"], "delayMs": 100}))
        handle = engine.start_turn(sid, "go")
        record = engine.registry.record(sid)
        assert record is not None and record.armed and record.state == "running"
        assert await engine.registry.wait(sid, 0.01) == "timeout"
        engine.registry.dispose(sid)  # dispose does not stop; the armed stop does
        handle.cancel()
        assert await handle.wait() == "cancelled"
