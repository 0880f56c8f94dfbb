"""The turn registry: liveness, phase frames, steer input, waiting, stopping, cleanup."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from support_frames import as_transition

from agent_tui.events.frames import Frame, FrameError, ResponseMeta, Transition
from agent_tui.events.session_tree import SessionTree
from agent_tui.turns import (
    Attached,
    Compressing,
    End,
    EndReason,
    EventSink,
    NoActiveTurn,
    PendingInput,
    Running,
    Start,
    TurnRegistry,
)
from agent_tui.turns.registry import TurnRecord


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Harness:
    """A registry over a real sink and a family of sessions it is given (as the engine gives its
    index), with every session attached and every frame recorded."""

    def __init__(self) -> None:
        self.sink = EventSink()
        self.family = SessionTree()
        self.registry = TurnRegistry(self.sink, self.family)
        self.frames: list[Frame] = []
        self.sink.subscribe(self.frames.append)

    def begin(self, session_id: str, turn_id: str, parent_session_id: str | None = None) -> None:
        if parent_session_id is not None:  # the family's owner links it (the engine: at creation)
            self.family.link(session_id, parent_session_id)
        assert self.registry.claim(session_id, turn_id=turn_id)
        self.sink.attach(session_id)
        self.registry.transition(session_id, Start())

    def snapshot(self, session_id: str) -> TurnRecord:
        record = self.registry.record(session_id)
        assert record is not None
        return record

    def transitions(self, session_id: str | None = None) -> list[Transition]:
        return [
            f.body
            for f in self.frames
            if isinstance(f.body, Transition) and (session_id is None or f.session_id == session_id)
        ]

    def ends(self, session_id: str) -> list[Transition]:
        return [t for t in self.transitions(session_id) if t.to == "end"]

    @asynccontextmanager
    async def waiting(self, session_id: str) -> AsyncIterator[list[str | None]]:
        """Run the body while a `wait` on the session is pending; yield its outcome once set."""
        outcome: list[str | None] = []

        async def waiter() -> None:
            outcome.append(await self.registry.wait(session_id, timeout=10))

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter)
            # The waiter has run until it blocks in `wait` (or returned, if nothing is pending).
            await anyio.wait_all_tasks_blocked()
            yield outcome


@pytest.fixture
def h() -> Harness:
    return Harness()


class TestClaim:
    def test_second_claim_while_running_fails(self, h: Harness) -> None:
        assert h.registry.claim("s1", turn_id="t1")
        assert not h.registry.claim("s1", turn_id="t2")
        assert h.snapshot("s1").turn_id == "t1"
        assert h.registry.state("s1") == "running"

    def test_claim_after_terminal_state_works_and_start_carries_new_turn_id(self, h: Harness) -> None:
        h.begin("s1", "t1")
        h.registry.transition("s1", End("final"))
        assert h.registry.claim("s1", turn_id="t2")
        h.sink.attach("s1")
        h.registry.transition("s1", Start())
        assert [(t.to, t.turn_id) for t in h.transitions("s1")] == [
            ("start", "t1"),
            ("end", "t1"),
            ("start", "t2"),
        ]
        assert h.registry.state("s1") == "running"
        assert h.snapshot("s1").reason is None

    def test_a_claim_reads_the_family_it_was_given_and_writes_none(self, h: Harness) -> None:
        h.family.link("child", "p")
        h.registry.claim("child", turn_id="t")
        record = h.registry.record("child")
        assert record is not None and record.state == "running"
        assert h.registry.family is h.family and h.registry.running_children("p") == 1
        assert h.family.children("p") == ["child"] and len(h.family) == 1
        alone = TurnRegistry(EventSink())  # no family given: no session has a parent
        assert alone.claim("child", turn_id="t") and alone.running_children("p") == 0

    def test_claim_sends_no_frame(self, h: Harness) -> None:
        h.sink.attach("s1")
        h.registry.claim("s1", turn_id="t1")
        assert h.frames == []


class TestTransitions:
    def test_phase_commands_send_their_frames_and_stay_running(self, h: Harness) -> None:
        meta = ResponseMeta(model="scripted", prompt_tokens=12, completion_tokens=3)
        h.begin("s1", "t1")
        h.registry.transition("s1", Running(responded=meta))
        assert h.registry.state("s1") == "running"
        h.registry.transition("s1", Compressing())
        assert h.registry.state("s1") == "running"
        h.registry.transition("s1", Running())
        assert h.transitions("s1") == [
            Transition("start", "t1"),
            Transition("executing", "t1", responded=meta),
            Transition("compress", "t1"),
            Transition("executing", "t1"),
        ]
        assert h.registry.state("s1") == "running"
        assert h.snapshot("s1").reason is None

    @pytest.mark.parametrize(
        ("command", "state", "reason"),
        [
            (End("final"), "complete", EndReason("done")),
            (End("max_steps"), "complete", EndReason("maxSteps")),
            (End("cancelled"), "interrupt", EndReason("aborted")),
            (
                End("error", FrameError("provider_failure", "503")),
                "error",
                EndReason("error", FrameError("provider_failure", "503")),
            ),
        ],
    )
    def test_each_terminal_command_twice_sends_one_end(self, h: Harness, command, state, reason) -> None:
        h.begin("s1", "t1")
        assert h.registry.transition("s1", command) is True
        assert h.registry.transition("s1", command) is False
        assert h.registry.transition("s1", End("cancelled")) is False
        assert h.ends("s1") == [Transition("end", "t1", reason.kind, reason.error)]
        assert h.registry.state("s1") == state
        assert h.snapshot("s1").reason == reason
        assert h.registry.state("s1") != "running"

    def test_phase_commands_after_the_end_send_nothing(self, h: Harness) -> None:
        h.begin("s1", "t1")
        h.registry.transition("s1", End("final"))
        before = list(h.frames)
        assert h.registry.transition("s1", Running()) is False
        assert h.registry.transition("s1", Start()) is False
        assert h.frames == before

    def test_transition_for_unknown_session_is_a_noop(self, h: Harness) -> None:
        h.sink.attach("nobody")
        for command in (Start(), Running(), Compressing(), End("final"), End("cancelled")):
            assert h.registry.transition("nobody", command) is False
        assert h.frames == []
        assert h.registry.state("nobody") is None

    def test_start_before_attach_is_dropped_by_the_sink(self, h: Harness) -> None:
        h.registry.claim("s1", turn_id="t1")
        h.registry.transition("s1", Start())
        assert h.frames == []

    @pytest.mark.anyio
    async def test_the_sessions_stream_carries_the_turn_and_ends(self, h: Harness) -> None:
        h.registry.claim("s1", turn_id="t1")
        stream = h.sink.attach("s1")
        h.registry.transition("s1", Start())
        h.registry.transition("s1", Running())
        h.registry.transition("s1", End("error", FrameError("unknown", "boom")))
        with anyio.fail_after(2):
            got = [as_transition(f).to async for f in stream]
        assert got == ["start", "executing", "end"]


class TestSteer:
    def test_submit_around_a_turn(self, h: Harness) -> None:
        assert h.registry.submit("s1", PendingInput("in0", "too early")) == NoActiveTurn()
        h.begin("s1", "t1")
        assert h.registry.submit("s1", PendingInput("in1", "also check tests")) == Attached("t1")
        h.registry.transition("s1", End("final"))
        assert h.registry.submit("s1", PendingInput("in2", "too late")) == NoActiveTurn()

    def test_drain_takes_everything_once(self, h: Harness) -> None:
        h.begin("s1", "t1")
        h.registry.submit("s1", PendingInput("in1", "a"))
        h.registry.submit("s1", PendingInput("in2", "b"))
        assert h.registry.drain("s1") == [PendingInput("in1", "a"), PendingInput("in2", "b")]
        assert h.registry.drain("s1") == []
        assert h.registry.drain("unknown") == []

    def test_a_new_claim_starts_with_an_empty_input_slot(self, h: Harness) -> None:
        h.begin("s1", "t1")
        h.registry.submit("s1", PendingInput("in1", "a"))
        h.registry.transition("s1", End("cancelled"))
        h.registry.claim("s1", turn_id="t2")
        assert h.registry.drain("s1") == []


class TestWait:
    @pytest.mark.anyio
    async def test_wait_blocks_until_the_end_and_says_completed(self, h: Harness) -> None:
        h.begin("s1", "t1")
        async with h.waiting("s1") as outcome:
            assert outcome == []  # still blocked while running
            h.registry.transition("s1", End("final"))
        assert outcome == ["completed"]

    @pytest.mark.anyio
    @pytest.mark.parametrize("command", [End("error", FrameError("unknown", "x")), End("cancelled")])
    async def test_wait_says_failed_for_a_failed_or_interrupted_turn(self, h: Harness, command) -> None:
        h.begin("s1", "t1")
        h.registry.transition("s1", command)
        assert await h.registry.wait("s1", timeout=1) == "failed"

    @pytest.mark.anyio
    async def test_zero_timeout_on_an_ended_turn_reports_the_outcome(self, h: Harness) -> None:
        h.begin("s1", "t1")
        assert await h.registry.wait("s1", timeout=0) == "timeout"
        h.registry.transition("s1", End("max_steps"))
        assert await h.registry.wait("s1", timeout=0) == "completed"

    @pytest.mark.anyio
    async def test_wait_for_unknown_id_is_none(self, h: Harness) -> None:
        assert await h.registry.wait("nobody", timeout=1) is None

    @pytest.mark.anyio
    async def test_short_wait_times_out(self, h: Harness) -> None:
        h.begin("s1", "t1")
        with anyio.fail_after(2):
            assert await h.registry.wait("s1", timeout=0.01) == "timeout"
        assert h.registry.state("s1") == "running"

    @pytest.mark.anyio
    async def test_a_child_waits_for_mark_delivered(self, h: Harness) -> None:
        h.begin("parent", "tp")
        h.begin("child", "tc", parent_session_id="parent")
        h.registry.transition("child", End("final"))
        # Ended but not delivered: still waiting.
        assert await h.registry.wait("child", timeout=0.02) == "timeout"
        async with h.waiting("child") as outcome:
            assert outcome == []
            h.registry.mark_delivered("child")
        assert outcome == ["completed"]

    @pytest.mark.anyio
    async def test_delivery_before_the_end_does_not_release_a_child_wait(self, h: Harness) -> None:
        h.begin("child", "tc", parent_session_id="parent")
        h.registry.mark_delivered("child")
        assert await h.registry.wait("child", timeout=0.02) == "timeout"
        h.registry.transition("child", End("error", FrameError("unknown", "x")))
        assert await h.registry.wait("child", timeout=1) == "failed"

    @pytest.mark.anyio
    async def test_dispose_releases_a_waiter(self, h: Harness) -> None:
        h.begin("s1", "t1")
        async with h.waiting("s1") as outcome:
            h.registry.dispose("s1")
        assert outcome == ["failed"]


class TestChildren:
    def test_settling_drops_finished_children_and_keeps_live_ones(self, h: Harness) -> None:
        h.begin("p", "tp")
        h.begin("done-child", "t1", parent_session_id="p")
        h.begin("live-child", "t2", parent_session_id="p")
        h.begin("other", "t3", parent_session_id="q")
        h.registry.transition("other", End("final"))
        h.registry.transition("done-child", End("final"))
        assert h.registry.record("done-child") is not None  # not before the parent settles
        h.registry.transition("p", End("final"))
        assert h.registry.record("done-child") is None
        live = h.registry.record("live-child")
        assert live is not None and live.state == "running"
        assert h.registry.record("other") is not None  # another parent's child is untouched
        assert h.registry.running_children("p") == 1

    def test_running_children_counts_direct_running_children(self, h: Harness) -> None:
        h.begin("p", "tp")
        h.begin("c1", "t1", parent_session_id="p")
        h.begin("c2", "t2", parent_session_id="p")
        h.begin("g1", "t3", parent_session_id="c1")
        h.begin("x", "t4", parent_session_id="q")
        assert h.registry.running_children("p") == 2
        h.registry.transition("c2", End("final"))
        assert h.registry.running_children("p") == 1
        assert h.registry.running_children("c1") == 1
        assert h.registry.running_children("nobody") == 0


class TestStopChildren:
    def test_stops_exactly_the_armed_running_descendants(self, h: Harness) -> None:
        stopped: list[str] = []

        def arm(session_id: str) -> None:
            h.registry.arm(session_id, lambda: stopped.append(session_id))

        h.begin("p", "tp")
        arm("p")
        h.begin("armed", "t1", parent_session_id="p")
        arm("armed")
        h.begin("unarmed", "t2", parent_session_id="p")
        h.begin("finished", "t3", parent_session_id="p")
        arm("finished")
        h.registry.transition("finished", End("final"))
        h.begin("grandchild", "t4", parent_session_id="armed")
        arm("grandchild")
        h.begin("stranger", "t5", parent_session_id="q")
        arm("stranger")

        assert h.registry.stop_children("p") == 2
        assert sorted(stopped) == ["armed", "grandchild"]
        record = h.registry.record("armed")
        assert record is not None and record.stopping and record.state == "running"

        # Already stopping: not stopped or counted again.
        assert h.registry.stop_children("p") == 0
        assert sorted(stopped) == ["armed", "grandchild"]
        assert h.registry.stop_children("nobody") == 0

    def test_reaches_descendants_through_a_finished_middle_session(self, h: Harness) -> None:
        stopped: list[str] = []
        h.begin("p", "tp")
        h.begin("middle", "t1", parent_session_id="p")
        h.begin("deep", "t2", parent_session_id="middle")
        h.registry.arm("deep", lambda: stopped.append("deep"))
        h.registry.transition("middle", End("final"))
        h.registry.transition("p", End("final"))  # drops middle's finished record
        assert h.registry.record("middle") is None
        assert h.registry.stop_children("p") == 1
        assert stopped == ["deep"]

    def test_a_stop_handle_that_interrupts_synchronously(self, h: Harness) -> None:
        h.begin("p", "tp")
        h.begin("c", "t1", parent_session_id="p")

        def interrupt() -> None:
            h.registry.transition("c", End("cancelled"))

        h.registry.arm("c", interrupt)
        assert h.registry.stop_children("p") == 1
        assert h.registry.state("c") == "interrupt"
        assert [t.reason for t in h.ends("c")] == ["aborted"]

    def test_a_new_turn_can_be_stopped_again(self, h: Harness) -> None:
        stopped: list[str] = []
        h.begin("c", "t1", parent_session_id="p")
        h.registry.arm("c", lambda: stopped.append("t1"))
        h.registry.stop_children("p")
        h.registry.transition("c", End("cancelled"))
        h.begin("c", "t2", parent_session_id="p")
        h.registry.arm("c", lambda: stopped.append("t2"))
        assert h.registry.stop_children("p") == 1
        assert stopped == ["t1", "t2"]


class TestDispose:
    def test_dispose_removes_the_parent_and_its_subtree(self, h: Harness) -> None:
        h.begin("p", "tp")
        h.begin("c1", "t1", parent_session_id="p")
        h.begin("c2", "t2", parent_session_id="p")
        h.registry.transition("c2", End("final"))
        h.begin("g", "t3", parent_session_id="c1")
        h.begin("other", "t4", parent_session_id="q")
        h.registry.dispose("p")
        for sid in ("p", "c1", "c2", "g"):
            assert h.registry.record(sid) is None
            assert h.registry.state(sid) is None
        assert h.registry.record("other") is not None
        # The family is its owner's: the registry forgets turns, never who spawned whom (the
        # engine's index keeps a closed sub-agent's spend).
        assert h.family.children("p") == ["c1", "c2"] and h.family.parent_of("g") == "c1"
        # A disposed session can be claimed afresh.
        assert h.registry.claim("p", turn_id="tp2")

    def test_dispose_of_unknown_session_is_harmless(self, h: Harness) -> None:
        h.registry.dispose("nobody")
        assert h.registry.record("nobody") is None
