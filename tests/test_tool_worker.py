"""The read tools' worker thread (`agent_tui.engine.tools.worker`): a cancel returns at once and
stops the work at its next checkpoint; big listings are sorted in steps."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

import anyio
import pytest

from agent_tui.engine.tools.worker import SORT_STEP, WorkStopped, run_stoppable, sorted_in_steps

GUARD = 30.0  # how long a held step waits before the test gives up; never reached when all is well


def test_sorting_in_steps_is_sorting() -> None:
    rng = random.Random(7)
    names = [f"{rng.randrange(10**6):06}.txt" for _ in range(SORT_STEP * 3 + 17)]
    checkpoints = 0

    def checkpoint() -> None:
        nonlocal checkpoints
        checkpoints += 1

    assert sorted_in_steps(names, checkpoint) == sorted(names)
    assert checkpoints >= 4  # between the pieces and during the merge
    assert sorted_in_steps(["b", "a"], checkpoint) == ["a", "b"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_cancel_returns_at_once_and_the_next_checkpoint_stops_the_work(anyio_backend: str) -> None:
    started, go, ended = threading.Event(), threading.Event(), threading.Event()
    steps_after_go: list[str] = []

    def work(checkpoint: object) -> str:
        assert callable(checkpoint)
        try:
            started.set()
            assert go.wait(GUARD)  # a step the cancel cannot interrupt
            checkpoint()
            steps_after_go.append("ran on")  # never reached: the checkpoint raised
            return "done"
        except WorkStopped:
            steps_after_go.append("stopped")
            raise
        finally:
            ended.set()

    async with anyio.create_task_group() as group:
        group.start_soon(run_stoppable, work)
        assert await anyio.to_thread.run_sync(started.wait, GUARD)
        group.cancel_scope.cancel()
    # The task group has ended while the work is still held in its step.
    assert not ended.is_set()
    go.set()
    assert await anyio.to_thread.run_sync(ended.wait, GUARD)
    assert steps_after_go == ["stopped"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_work_that_is_not_cancelled_returns_its_result(anyio_backend: str) -> None:
    def work(checkpoint: Callable[[], None]) -> int:
        checkpoint()  # nobody has gone away: it lets the work go on
        return 42

    assert await run_stoppable(work) == 42
