"""Running a tool's blocking work in a worker thread that a cancel stops.

Invariants:
- the work runs in an anyio worker thread, so the event loop never waits on it; it gets a
  `checkpoint` to call between steps (files, chunks, batches of lines), each of which takes a
  bounded time;
- a cancel of the awaiting task returns at once (the thread is let go), and the thread's next
  `checkpoint` raises `WorkStopped`, so it stops within one step and its result is dropped;
  the same happens once the awaiting task is gone for any other reason;
- `sorted_in_steps` sorts in pieces of `SORT_STEP` items merged lazily, so sorting a huge
  directory listing never holds the GIL (and freezes the event loop) for long.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Iterable
from functools import partial
from typing import TypeVar

import anyio

__all__ = ["SORT_STEP", "Checkpoint", "WorkStopped", "run_stoppable", "sorted_in_steps"]

Result = TypeVar("Result")
Checkpoint = Callable[[], None]

SORT_STEP = 20_000  # one `sorted` of this many names takes a few milliseconds


class WorkStopped(Exception):
    """Raised by a checkpoint once nobody waits for the work any more."""


async def run_stoppable(work: Callable[[Checkpoint], Result]) -> Result:
    """`work(checkpoint)` in a worker thread; a cancel returns at once and stops the thread."""
    stop = threading.Event()

    def checkpoint() -> None:
        if stop.is_set():
            raise WorkStopped

    try:
        return await anyio.to_thread.run_sync(partial(work, checkpoint), abandon_on_cancel=True)
    finally:
        stop.set()


def sorted_in_steps(items: Iterable[str], checkpoint: Checkpoint) -> list[str]:
    """`sorted(items)`, never holding the GIL for more than one `SORT_STEP`-item sort."""
    whole = list(items)
    if len(whole) <= SORT_STEP:
        return sorted(whole)
    runs = []
    for start in range(0, len(whole), SORT_STEP):
        checkpoint()
        runs.append(sorted(whole[start : start + SORT_STEP]))
    merged = []
    for count, item in enumerate(heapq.merge(*runs), start=1):
        if count % SORT_STEP == 0:
            checkpoint()
        merged.append(item)
    return merged
