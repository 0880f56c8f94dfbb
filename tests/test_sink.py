"""The event sink: one totally ordered queue per attached session, listeners see every frame."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from support_frames import as_event, as_transition

from agent_tui.events.frames import Fatal, Frame, FrameBody, FrameError, RuntimeEvent, Transition, is_turn_end
from agent_tui.turns import EventSink


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def read_all(stream) -> list[Frame]:
    with anyio.fail_after(2):
        return [frame async for frame in stream]


@asynccontextmanager
async def reading(stream) -> AsyncIterator[list[Frame]]:
    """Run the body while a reader is already blocked on `stream`; yield the frames it gets."""
    got: list[Frame] = []

    async def reader() -> None:
        async for frame in stream:
            got.append(frame)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            # The reader has run until it waits for a frame (or ended, for a closed stream).
            await anyio.wait_all_tasks_blocked()
            yield got


class TestFrames:
    def test_family_follows_the_body(self) -> None:
        assert Frame.of("s", Transition("start", "t1")).family == "transition"
        assert Frame.of("s", RuntimeEvent("user_input", {"text": "hi"})).family == "event"
        assert Frame.of("s", Fatal("store_failure", "disk full")).family == "fatal"

    def test_mismatched_family_is_refused(self) -> None:
        with pytest.raises(ValueError):
            Frame("s", "event", Transition("start", "t1"))

    def test_reason_only_on_end(self) -> None:
        with pytest.raises(ValueError):
            Transition("start", "t1", reason="done")
        with pytest.raises(ValueError):
            Transition("end", "t1")
        with pytest.raises(ValueError):
            Transition("end", "t1", reason="done", error=FrameError("x", "y"))

    def test_runtime_event_data_is_a_frozen_copy(self) -> None:
        data = {"text": "hi"}
        event = RuntimeEvent("user_input", data)
        data["text"] = "changed"
        assert event.data == {"text": "hi"}
        with pytest.raises(TypeError):
            event.data["text"] = "x"  # type: ignore[index]

    def test_is_turn_end_only_for_end_transitions(self) -> None:
        assert is_turn_end(Frame.of("s", Transition("end", "t1", "aborted")))
        assert not is_turn_end(Frame.of("s", Transition("executing", "t1")))
        assert not is_turn_end(Frame.of("s", RuntimeEvent("end")))
        assert not is_turn_end(Frame.of("s", Fatal("end", "end")))


class TestOrder:
    @pytest.mark.anyio
    async def test_mixed_families_arrive_in_emit_order(self) -> None:
        sink = EventSink()
        stream = sink.attach("s1")
        bodies: list[FrameBody] = [
            Transition("start", "t1"),
            RuntimeEvent("user_input", {"inputId": "in1", "text": "go", "turnId": "t1"}),
            Transition("executing", "t1"),
            Fatal("store_failure", "disk full"),
            RuntimeEvent("event", {"type": "model.delta"}),
            Transition("end", "t1", reason="error", error=FrameError("store_failure", "disk")),
        ]
        for body in bodies:
            assert sink.emit("s1", body) is True
        frames = await read_all(stream)
        assert [f.body for f in frames] == bodies
        assert [f.family for f in frames] == [
            "transition",
            "event",
            "transition",
            "fatal",
            "event",
            "transition",
        ]
        assert all(f.session_id == "s1" for f in frames)

    @pytest.mark.anyio
    async def test_reader_waiting_before_emits_gets_them_in_order(self) -> None:
        sink = EventSink()
        stream = sink.attach("s1")
        async with reading(stream) as got:
            for i in range(5):
                sink.emit("s1", RuntimeEvent("tick", {"i": i}))
                await anyio.sleep(0)
            sink.emit("s1", Transition("end", "t1", reason="done"))
        assert [as_event(f).data["i"] for f in got[:-1]] == [0, 1, 2, 3, 4]
        assert is_turn_end(got[-1])

    @pytest.mark.anyio
    async def test_sessions_have_separate_queues(self) -> None:
        sink = EventSink()
        a, b = sink.attach("a"), sink.attach("b")
        sink.emit("a", Transition("start", "ta"))
        sink.emit("b", Transition("start", "tb"))
        sink.emit("b", Transition("end", "tb", reason="done"))
        sink.emit("a", Transition("end", "ta", reason="aborted"))
        assert [as_transition(f).turn_id for f in await read_all(a)] == ["ta", "ta"]
        assert [as_transition(f).turn_id for f in await read_all(b)] == ["tb", "tb"]


class TestDropping:
    @pytest.mark.anyio
    async def test_emits_before_attach_and_after_detach_are_dropped(self) -> None:
        sink = EventSink()
        assert sink.emit("s1", Transition("start", "early")) is False
        stream = sink.attach("s1")
        sink.emit("s1", RuntimeEvent("kept", {}))
        sink.detach("s1")
        assert sink.emit("s1", RuntimeEvent("late", {})) is False
        frames = await read_all(stream)
        assert [as_event(f).kind for f in frames] == ["kept"]

    @pytest.mark.anyio
    async def test_detach_lets_the_reader_drain_then_ends(self) -> None:
        sink = EventSink()
        stream = sink.attach("s1")
        sink.emit("s1", Transition("start", "t1"))
        sink.emit("s1", Transition("executing", "t1"))
        sink.detach("s1")
        assert not sink.is_attached("s1")
        assert [as_transition(f).to for f in await read_all(stream)] == ["start", "executing"]

    @pytest.mark.anyio
    async def test_detach_wakes_a_blocked_reader(self) -> None:
        sink = EventSink()
        stream = sink.attach("s1")
        async with reading(stream) as got:
            sink.detach("s1")
        assert got == []

    @pytest.mark.anyio
    async def test_reattach_replaces_and_closes_the_old_stream(self) -> None:
        sink = EventSink()
        old = sink.attach("s1")
        sink.emit("s1", RuntimeEvent("for-old", {}))
        new = sink.attach("s1")
        sink.emit("s1", RuntimeEvent("for-new", {}))
        sink.detach("s1")
        assert [as_event(f).kind for f in await read_all(old)] == ["for-old"]  # and then it ends
        assert [as_event(f).kind for f in await read_all(new)] == ["for-new"]

    @pytest.mark.anyio
    async def test_closing_an_old_stream_does_not_detach_its_replacement(self) -> None:
        sink = EventSink()
        old = sink.attach("s1")
        sink.attach("s1")
        await old.aclose()
        assert sink.is_attached("s1")

    @pytest.mark.anyio
    async def test_leaving_the_stream_context_detaches(self) -> None:
        sink = EventSink()
        async with sink.attach("s1"):
            assert sink.is_attached("s1")
        assert not sink.is_attached("s1")
        assert sink.emit("s1", RuntimeEvent("late", {})) is False


class TestTurnEnd:
    @pytest.mark.anyio
    async def test_stream_ends_after_the_end_frame(self) -> None:
        sink = EventSink()
        stream = sink.attach("s1")
        sink.emit("s1", Transition("start", "t1"))
        sink.emit("s1", Transition("end", "t1", reason="done"))
        sink.emit("s1", RuntimeEvent("after-end", {}))
        frames = await read_all(stream)  # no detach: the end frame alone ends it, nothing behind it
        assert [as_transition(f).to for f in frames] == ["start", "end"]
        with pytest.raises(StopAsyncIteration):
            await stream.__anext__()

    @pytest.mark.anyio
    async def test_a_new_attach_starts_a_fresh_turn_stream(self) -> None:
        sink = EventSink()
        first = sink.attach("s1")
        sink.emit("s1", Transition("start", "t1"))
        sink.emit("s1", Transition("end", "t1", reason="done"))
        second = sink.attach("s1")
        sink.emit("s1", Transition("start", "t2"))
        sink.emit("s1", Transition("end", "t2", reason="maxSteps"))
        assert [as_transition(f).turn_id for f in await read_all(first)] == ["t1", "t1"]
        assert [(as_transition(f).turn_id, as_transition(f).reason) for f in await read_all(second)] == [
            ("t2", None),
            ("t2", "maxSteps"),
        ]


class TestListeners:
    def test_listeners_see_every_attached_sessions_frames_in_order(self) -> None:
        sink = EventSink()
        seen: list[tuple[str, str]] = []
        unsubscribe = sink.subscribe(lambda f: seen.append((f.session_id, f.family)))
        sink.emit("ghost", RuntimeEvent("dropped", {}))
        sink.attach("a")
        sink.attach("b")
        sink.emit("a", Transition("start", "ta"))
        sink.emit("b", RuntimeEvent("user_input", {}))
        sink.emit("a", Fatal("x", "y"))
        unsubscribe()
        unsubscribe()  # harmless twice
        sink.emit("b", Transition("start", "tb"))
        assert seen == [("a", "transition"), ("b", "event"), ("a", "fatal")]

    def test_a_listener_that_emits_keeps_the_order(self) -> None:
        sink = EventSink()
        sink.attach("s1")
        first: list[str] = []
        second: list[str] = []

        def echo(frame: Frame) -> None:
            first.append(as_event(frame).kind)
            if as_event(frame).kind == "ping":
                sink.emit("s1", RuntimeEvent("pong", {}))

        sink.subscribe(echo)
        sink.subscribe(lambda f: second.append(as_event(f).kind))
        sink.emit("s1", RuntimeEvent("ping", {}))
        assert first == ["ping", "pong"]
        assert second == ["ping", "pong"]

    def test_a_failing_listener_does_not_break_emit_or_others(self) -> None:
        sink = EventSink()
        sink.attach("s1")
        seen: list[str] = []

        def broken(frame: Frame) -> None:
            raise RuntimeError("boom")

        sink.subscribe(broken)
        sink.subscribe(lambda f: seen.append(as_event(f).kind))
        assert sink.emit("s1", RuntimeEvent("ok", {})) is True
        assert seen == ["ok"]

    def test_listeners_still_see_frames_after_a_streams_end_until_detach(self) -> None:
        sink = EventSink()
        sink.attach("s1")
        seen: list[str] = []
        sink.subscribe(lambda f: seen.append(f.family))
        sink.emit("s1", Transition("end", "t1", reason="done"))
        sink.emit("s1", RuntimeEvent("event", {}))
        sink.detach("s1")
        sink.emit("s1", RuntimeEvent("event", {}))
        assert seen == ["transition", "event"]
