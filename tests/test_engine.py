"""The session engine against real JSONL logs: plain turns, cancel, provider and store failures, preflight."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from support_engine import EndlessProvider, collect, make_engine, steps, types, workspace
from support_frames import as_event, as_transition

from agent_tui.engine.errors import EventStoreFailure, TurnConflict
from agent_tui.engine.provider import StepDone, TextDelta
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.events.frames import Frame
from agent_tui.store import JsonlEventLog, JsonlFileEventStore
from agent_tui.turns import EventSink
from agent_tui.turns.turn_fsm import IllegalTransition, TurnFsm

pytestmark = pytest.mark.anyio


def dropped(result: object) -> None:
    """A provider hook that calls the engine returns nothing (what the call returned is not the hook's)."""
    return None


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def stored(tmp_path: Path, session_id: str) -> list:
    return list(JsonlEventLog(tmp_path / "sessions" / f"{session_id}.jsonl").replay("strict"))


class TestHappyPath:
    async def test_a_plain_turn_stores_its_events_in_sequence(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path), client="test")
            provider.assign(sid, steps({"text": ["hi", " there"]}))
            events = await collect(engine.run_turn(sid, "hello"))
        assert types(events) == [
            "turn.started",
            "user.message",
            "context.built",
            "model.delta",
            "model.delta",
            "model.usage",  # the scripted model reports usage: one per model call
            "turn.completed",
        ]
        assert [e.sequence for e in events] == [2, 3, 4, 5, 6, 7, 8]
        assert events[0].payload == {"promptPreview": "hello"}
        assert [e.payload["text"] for e in events if e.type == "model.delta"] == ["hi", " there"]
        assert events[-1].payload["stopReason"] == "final"
        log = stored(tmp_path, sid)
        assert log[0].type == "session.created" and log[0].turn_id is None
        assert log[1:] == events  # stored events equal yielded events
        assert chain_violations(log) == []

    async def test_second_turn_continues_the_sequence(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["one"]}, {"text": ["two"]}))
            first = await collect(engine.run_turn(sid, "a"))
            second = await collect(engine.run_turn(sid, "b"))
        assert second[0].sequence == first[-1].sequence + 1
        assert first[0].turn_id != second[0].turn_id
        assert [e.sequence for e in stored(tmp_path, sid)] == list(range(1, 1 + 1 + len(first) + len(second)))

    async def test_second_concurrent_turn_conflicts_and_writes_nothing(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["a", "b", "c"], "delayMs": 50}))
            handle = engine.start_turn(sid, "first")
            before = len(stored(tmp_path, sid))
            with pytest.raises(TurnConflict):
                await collect(engine.run_turn(sid, "second"))
            assert len(stored(tmp_path, sid)) == before
            await handle.wait()
        assert chain_violations(stored(tmp_path, sid)) == []


class TestCancel:
    async def test_cancel_after_first_delta(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["a", "b", "c"], "delayMs": 30}))
            events = []
            async for event in engine.run_turn(sid, "go"):
                events.append(event)
                if event.type == "model.delta":
                    assert engine.cancel_turn(sid) is True
        assert types(events)[-2:] == ["model.delta", "turn.completed"]
        assert sum(e.type == "model.delta" for e in events) == 1
        assert events[-1].payload["stopReason"] == "cancelled"
        assert chain_violations(stored(tmp_path, sid)) == []

    async def test_cancel_turn_is_a_noop_for_unknown_finished_and_wrong_ids(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            assert engine.cancel_turn("sess_nope") is False
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["a", "b"], "delayMs": 40}))
            handle = engine.start_turn(sid, "go")
            assert engine.cancel_turn(sid, "turn_other") is False
            assert engine.cancel_turn(sid, handle.turn_id) is True
            assert engine.cancel_turn(sid, handle.turn_id) is True  # idempotent while stopping
            assert await handle.wait() == "cancelled"
            count = len(stored(tmp_path, sid))
            assert engine.cancel_turn(sid, handle.turn_id) is False
            assert engine.cancel_turn(sid) is False
        log = stored(tmp_path, sid)
        assert len(log) == count
        assert sum(e.type == "turn.completed" for e in log) == 1

    async def test_provider_that_keeps_streaming_after_cancel_leaks_no_delta(self, tmp_path: Path) -> None:
        provider = EndlessProvider(chunks=20)
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            events = []
            async for event in engine.run_turn(sid, "go"):
                events.append(event)
                if event.type == "model.delta" and event.payload["text"] == "chunk2 ":
                    engine.cancel_turn(sid)
        deltas = [e.payload["text"] for e in stored(tmp_path, sid) if e.type == "model.delta"]
        assert deltas == ["chunk0 ", "chunk1 ", "chunk2 "]
        assert events[-1].payload["stopReason"] == "cancelled"

    async def test_scripted_cancel_after_chunks_keeps_streaming_but_nothing_leaks(
        self, tmp_path: Path
    ) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        provider.on_cancel = lambda sid, tid: dropped(engine.cancel_turn(sid, tid))
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["a", "b", "c", "d"], "cancelAfterChunks": 2}))
            events = await collect(engine.run_turn(sid, "go"))
        assert [e.payload["text"] for e in events if e.type == "model.delta"] == ["a", "b"]
        assert events[-1].payload["stopReason"] == "cancelled"

    async def test_caller_cancellation_cancels_the_turn_and_keeps_the_log_whole(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["a", "b", "c", "d"], "delayMs": 100}))
            with anyio.move_on_after(0.15):
                await collect(engine.run_turn(sid, "go"))
        log = stored(tmp_path, sid)
        assert log[-1].type == "turn.completed" and log[-1].payload["stopReason"] == "cancelled"
        assert chain_violations(log) == []


class _ClassStream:
    """A provider stream that is not an async generator and holds a connection until `aclose`."""

    def __init__(self, owner: _ConnectionProvider) -> None:
        self.owner = owner
        self.items: list[TextDelta | StepDone] = [TextDelta("hi"), StepDone()]
        owner.open += 1

    def __aiter__(self) -> _ClassStream:
        return self

    async def __anext__(self) -> TextDelta | StepDone:
        if not self.items:
            raise StopAsyncIteration
        return self.items.pop(0)

    async def aclose(self) -> None:
        self.owner.open -= 1


class _ConnectionProvider:
    max_context_tokens = 100_000

    def __init__(self) -> None:
        self.open = 0

    def stream(self, request: object) -> _ClassStream:
        return _ClassStream(self)


class TestStreams:
    async def test_a_stream_that_is_not_a_generator_is_closed_after_a_normal_end(
        self, tmp_path: Path
    ) -> None:
        provider = _ConnectionProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            events = await collect(engine.run_turn(sid, "go"))
        assert events[-1].payload["stopReason"] == "final"
        assert provider.open == 0


class TestFailures:
    async def test_provider_failure_ends_the_turn_with_error_and_the_next_turn_works(
        self, tmp_path: Path
    ) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"fail": "provider_failure"}, {"text": ["fine"]}))
            first = await collect(engine.run_turn(sid, "a"))
            second = await collect(engine.run_turn(sid, "b"))
        assert first[-1].payload == {
            "stopReason": "error",
            "errorCode": "provider_failure",
            "message": "scripted provider_failure at step 1",
        }
        assert second[-1].payload["stopReason"] == "final"
        assert chain_violations(stored(tmp_path, sid)) == []

    async def test_store_failing_on_fourth_append_keeps_sequences_and_retry_continues(
        self, tmp_path: Path
    ) -> None:
        class FlakyStore(JsonlFileEventStore):
            appends = 0

            async def append(self, event):
                FlakyStore.appends += 1
                if FlakyStore.appends == 4:
                    raise OSError(28, "No space left on device")
                await super().append(event)

        store = FlakyStore(tmp_path / "sessions")
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider, store=store)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["hi"]}, {"text": ["again"]}))
            with pytest.raises(EventStoreFailure) as caught:
                await collect(engine.run_turn(sid, "hello"))
            assert isinstance(caught.value.__cause__, OSError)
            assert caught.value.sequence == 4
            assert [e.sequence for e in stored(tmp_path, sid)] == [1, 2, 3]
            retry = await collect(engine.run_turn(sid, "hello again"))
        log = stored(tmp_path, sid)
        # The next append reuses sequence 4: it closes the broken turn, then the retry follows.
        assert log[3].sequence == 4
        assert log[3].type == "turn.completed" and log[3].payload["errorCode"] == "store_failure"
        assert retry[0].sequence == 5 and retry[-1].payload["stopReason"] == "final"
        assert [e.sequence for e in log] == list(range(1, len(log) + 1))
        assert chain_violations(log) == []


class TestTurnFsm:
    @pytest.mark.parametrize(
        ("path", "target"),
        [
            ((), "completed"),
            ((), "cancelled"),
            ((), "failed"),
            ((), "idle"),
            (("running",), "running"),
            (("running",), "idle"),
            (("running", "completed"), "running"),
            (("running", "completed"), "failed"),
            (("running", "cancelled"), "completed"),
            (("running", "failed"), "running"),
            (("running", "failed"), "idle"),
        ],
    )
    def test_illegal_moves_raise(self, path: tuple[str, ...], target: str) -> None:
        fsm = TurnFsm()
        for state in path:
            fsm.move(state)  # type: ignore[arg-type]
        before = fsm.state
        with pytest.raises(IllegalTransition):
            fsm.move(target)  # type: ignore[arg-type]
        assert fsm.state == before

    @pytest.mark.parametrize(
        ("reason", "state"),
        [("final", "completed"), ("max_steps", "completed"), ("cancelled", "cancelled"), ("error", "failed")],
    )
    def test_legal_moves(self, reason: str, state: str) -> None:
        fsm = TurnFsm()
        fsm.start()
        fsm.finish(reason)
        assert fsm.state == state and fsm.is_terminal


class TestSteps:
    async def test_max_steps_ends_the_turn(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider, max_steps=2)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            call = {"tool": "list_dir", "args": {"path": "."}}
            provider.assign(sid, steps(*[{"text": ["again"], "toolCalls": [call]}] * 5))
            events = await collect(engine.run_turn(sid, "loop"))
        assert events[-1].payload["stopReason"] == "max_steps"
        assert sum(e.type == "context.built" for e in events) == 2
        assert chain_violations(stored(tmp_path, sid)) == []

    async def test_steer_is_absorbed_at_the_next_step_boundary(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        provider.on_steer = lambda sid, text: dropped(engine.submit(sid, text, input_id="in_1"))
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(
                sid,
                steps(
                    {
                        "text": ["looking"],
                        "steer": "also check tests",
                        "toolCalls": [{"tool": "list_dir", "args": {"path": "."}}],
                    },
                    {"text": ["ok, tests too"]},
                ),
            )
            events = await collect(engine.run_turn(sid, "look"))
        steered = [e for e in events if e.type == "user.message" and e.payload.get("steered")]
        assert [e.payload for e in steered] == [
            {"content": "also check tests", "inputId": "in_1", "steered": True}
        ]
        built = [i for i, e in enumerate(events) if e.type == "context.built"]
        assert built[0] < events.index(steered[0]) < built[1]

    async def test_input_after_the_final_answer_keeps_the_turn_going(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        provider.on_steer = lambda sid, text: dropped(engine.submit(sid, text))
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            provider.assign(sid, steps({"text": ["done"], "steer": "one more thing"}, {"text": ["did it"]}))
            events = await collect(engine.run_turn(sid, "go"))
        assert sum(e.type == "turn.started" for e in events) == 1
        assert sum(e.type == "context.built" for e in events) == 2
        assert events[-1].payload["stopReason"] == "final"

    async def test_submit_without_a_turn_says_so(self, tmp_path: Path) -> None:
        engine = make_engine(tmp_path)
        async with engine:
            sid = await engine.create_session(workspace(tmp_path))
            assert type(engine.submit(sid, "hi")).__name__ == "NoActiveTurn"


class TestConcurrency:
    async def test_fifty_sessions_run_concurrently_and_every_log_is_gap_free(self, tmp_path: Path) -> None:
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider)
        async with engine:
            sids = []
            for index in range(50):
                sid = await engine.create_session(workspace(tmp_path))
                provider.assign(
                    sid,
                    steps(
                        {
                            "text": [f"s{index} ", "reads"],
                            "delayMs": 1 + index % 3,
                            "toolCalls": [{"tool": "list_dir", "args": {"path": "."}}],
                        },
                        {"text": ["done ", "now"], "delayMs": 1},
                    ),
                )
                sids.append(sid)
            handles = [engine.start_turn(sid, "go") for sid in sids]
            assert [await handle.wait() for handle in handles] == ["final"] * 50
        for sid in sids:
            log = stored(tmp_path, sid)
            assert [e.sequence for e in log] == list(range(1, len(log) + 1))
            assert chain_violations(log) == []


async def test_steered_input_is_echoed_as_a_user_input_frame(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider, sink=EventSink())
    provider.on_steer = lambda sid, text: dropped(engine.submit(sid, text, input_id="in_7"))
    frames: list[Frame] = []
    engine.sink.subscribe(frames.append)
    async with engine:
        sid = await engine.create_session(workspace(tmp_path))
        provider.assign(
            sid,
            steps(
                {"text": ["a"], "steer": "more", "toolCalls": [{"tool": "list_dir", "args": {"path": "."}}]},
                {"text": ["b"]},
            ),
        )
        events = await collect(engine.run_turn(sid, "go"))
    echoes = [as_event(f) for f in frames if f.family == "event" and as_event(f).kind == "user_input"]
    assert [dict(e.data) for e in echoes] == [
        {"inputId": "in_7", "text": "more", "turnId": events[0].turn_id}
    ]
    order = [f.family if f.family != "transition" else as_transition(f).to for f in frames]
    assert order.index("event") < order.index("executing", order.index("executing") + 1)


async def test_cancelling_the_engine_itself_closes_every_running_turn(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider)
    sids = []
    streaming: set[str] = set()
    all_streaming = anyio.Event()

    def on_event(event: Event) -> None:
        if event.type == "model.delta":
            streaming.add(event.session_id)
            if len(streaming) == 3:
                all_streaming.set()

    with anyio.fail_after(30), anyio.CancelScope() as outside:
        async with engine:
            engine.subscribe(on_event)
            for _ in range(3):
                sid = await engine.create_session(workspace(tmp_path))
                provider.assign(sid, steps({"text": ["slow"] * 50, "delayMs": 50}))
                engine.start_turn(sid, "go")
                sids.append(sid)
            await all_streaming.wait()  # every turn is mid-stream, with 49 chunks to go
            outside.cancel()
            await anyio.sleep_forever()
    assert outside.cancelled_caught
    for sid in sids:
        log = stored(tmp_path, sid)
        assert log[-1].type == "turn.completed" and log[-1].payload["stopReason"] == "cancelled"
        assert chain_violations(log) == []
