"""Regression tests for engine bugs a review found: each failed before its fix.

- a turn started with `start_turn` (the dashboard's and the runner's path) kept every event it
  stored in a buffer nobody read;
- an exception raised by a `subscribe` listener ended the turn as the model's failure;
- `SessionEngine(store, provider, registry=r)` raised `AttributeError`;
- a `SystemExit` or `KeyboardInterrupt` raised inside a turn was swallowed as the turn's bug.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from support_engine import collect, make_engine, steps, types, workspace

from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.provider import ModelRequest, ProviderChunk
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.store import JsonlEventLog, JsonlFileEventStore
from agent_tui.turns import EventSink, TurnRegistry

pytestmark = pytest.mark.anyio

DELTAS = 20_000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def live_events() -> int:
    gc.collect()
    return sum(1 for thing in gc.get_objects() if type(thing) is Event)


class TestStartTurnHoldsNoEvents:
    async def test_a_20000_delta_turn_leaves_no_events_behind(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": [f"d{i} " for i in range(DELTAS)]}))
            before = live_events()
            handle = engine.start_turn(sid, "go")
            assert await handle.wait() == "final"
            # The handle is still held, as the dashboard and the runner hold theirs.
            held = live_events() - before
        assert held < 50, f"{held} events are still held after the turn ended"
        log = list(JsonlEventLog(tmp_path / "sessions" / f"{sid}.jsonl").replay("strict"))
        assert sum(1 for event in log if event.type == "model.delta") == DELTAS

    async def test_iterating_a_started_turn_is_refused_with_a_clear_message(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["hi"]}))
            handle = engine.start_turn(sid, "go")
            with pytest.raises(RuntimeError, match="run_turn"):
                await collect(handle.events())
            await handle.wait()


class TestListenerFailures:
    async def test_a_raising_listener_does_not_change_the_turn(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        seen: list[str] = []

        def broken(event: Event) -> None:
            if event.type == "model.delta":
                raise ValueError("the viewer has a bug")

        async with engine:
            engine.subscribe(broken)
            engine.subscribe(lambda event: seen.append(event.type))
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["a", "b"]}))
            events = await collect(engine.run_turn(sid, "go"))
        assert events[-1].payload["stopReason"] == "final"
        assert "errorCode" not in events[-1].payload
        assert types(events).count("model.delta") == 2
        # The other listener heard everything; the broken one was detached and reported.
        assert seen.count("model.delta") == 2 and seen[-1] == "turn.completed"
        [failure] = [record for record in caplog.records if record.name == "agent_tui.engine"]
        said = failure.getMessage()
        assert said.startswith("listener ") and ".broken failed on model.delta #" in said
        assert said.endswith("was detached: ValueError('the viewer has a bug')")
        log = list(JsonlEventLog(tmp_path / "sessions" / f"{sid}.jsonl").replay("strict"))
        assert log[1:] == events
        assert chain_violations(log) == []

    async def test_the_broken_listener_is_detached_after_its_first_failure(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        calls: list[str] = []

        def broken(event: Event) -> None:
            calls.append(event.type)
            raise RuntimeError("boom")

        async with engine:
            engine.subscribe(broken)
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["a"]}))
            await collect(engine.run_turn(sid, "go"))
        assert calls == ["session.created"]


class TestConstruction:
    async def test_a_given_registry_brings_its_sink(self, tmp_path: Path) -> None:
        sink = EventSink()
        registry = TurnRegistry(sink)
        provider = ScriptedProvider()
        engine = SessionEngine(JsonlFileEventStore(tmp_path / "sessions"), provider, registry=registry)
        assert engine.registry is registry
        assert engine.sink is sink
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["ok"]}))
            events = await collect(engine.run_turn(sid, "go"))
        assert events[-1].payload["stopReason"] == "final"
        assert registry.state(sid) == "complete"

    def test_a_registry_and_a_different_sink_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="sink"):
            SessionEngine(
                JsonlFileEventStore(tmp_path / "sessions"),
                ScriptedProvider(),
                registry=TurnRegistry(EventSink()),
                sink=EventSink(),
            )


class ProcessEndingProvider:
    """A model call that raises what the process itself gets (a Ctrl-C, an exit)."""

    max_context_tokens = 100_000

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        raise self.error
        yield  # pragma: no cover - makes this an async generator


class TestProcessEndingErrors:
    """Run with `anyio.run` (not the test's own loop): the error must leave the event loop."""

    @pytest.mark.parametrize("error", [SystemExit(3), KeyboardInterrupt()], ids=["exit", "interrupt"])
    def test_it_goes_on_up_after_settling_the_turn(self, tmp_path: Path, error: BaseException) -> None:
        engine = make_engine(tmp_path, ProcessEndingProvider(error))
        sessions: list[str] = []

        async def main() -> None:
            async with engine:
                sid = await engine.create_session(workspace(tmp_path))
                sessions.append(sid)
                await engine.start_turn(sid, "go").wait()

        with pytest.raises(BaseException) as raised:
            anyio.run(main)
        assert leaves(raised.value) == [error]  # alone, maybe inside the task group's group
        [sid] = sessions
        assert engine.registry.state(sid) == "error"


def leaves(error: BaseException) -> list[BaseException]:
    """The errors inside (nested) exception groups, or the error itself."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]
