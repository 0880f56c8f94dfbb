"""The throttle's own redraws: at most one a period, and none more until the event loop has
turned (a backlog handled in one go redraws once, for the paint that follows it)."""

from __future__ import annotations

import asyncio

import pytest

from agent_tui.tui.redraw_throttle import RedrawThrottle

pytestmark = pytest.mark.anyio


async def test_changes_in_one_run_of_the_loop_redraw_once_then_again_once_it_turned() -> None:
    throttle = RedrawThrottle()
    redraws: list[int] = []

    def redraw() -> None:
        redraws.append(1)
        throttle.dirty = False

    throttle.every(0.0, redraw)  # every change is due: only the loop's turn holds them
    for _ in range(100):  # a backlog of events handled without yielding
        throttle.changed()
    assert len(redraws) == 1
    await asyncio.sleep(0)  # the loop turns (and paints)
    throttle.changed()
    throttle.changed()
    assert len(redraws) == 2


async def test_a_change_that_waited_for_the_loop_is_still_dirty_for_the_app_timer() -> None:
    throttle = RedrawThrottle()
    throttle.every(0.0, lambda: setattr(throttle, "dirty", False))
    throttle.changed()
    throttle.changed()  # held: the loop has not turned
    assert throttle.dirty  # the app's timer (or the next change) redraws it
