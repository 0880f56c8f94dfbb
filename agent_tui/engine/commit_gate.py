"""`CommitGate`: the mutex that serializes one session's commits.

Invariants:
- at most one holder at a time; ownership passes straight to the next waiter, in arrival order;
- taking a free gate costs no coroutine and no checkpoint (anyio's `Lock` checkpoints even
  then, and the engine commits every event through one): take it with
  `if gate.busy: await gate.wait_turn()` / `else: gate.busy = True`, give it back with
  `release()`;
- a waiter cancelled after the gate was handed to it passes the gate on, so a cancellation
  never leaves it held.
"""

from __future__ import annotations

from collections import deque

import anyio


class CommitGate:
    """A mutex that costs nothing when free. Commits of one session go through it: a tool's
    stdout and stderr pumps commit from two tasks."""

    __slots__ = ("_waiters", "busy")

    def __init__(self) -> None:
        self.busy = False
        self._waiters: deque[anyio.Event] = deque()

    async def wait_turn(self) -> None:
        """Wait until the gate is handed to us (call only while it is `busy`)."""
        handed = anyio.Event()
        self._waiters.append(handed)
        try:
            await handed.wait()
        except BaseException:
            if handed.is_set():
                self.release()  # it was ours already: pass it on
            else:
                self._waiters.remove(handed)
            raise

    def release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()
        else:
            self.busy = False
