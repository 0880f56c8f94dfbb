"""`TurnHandle`: one turn as its caller sees it: wait for it, cancel it, or read its events.

Invariants:
- the turn's run state is its `TurnFsm`, the one the registry's record holds and moves (the
  handle only reads it); how the turn ended is one `TurnEnd` (`end`), set once by the engine
  where it decides the ending (`SessionEngine._live`), None until then;
- the turn's events are written by its `writer` (the one `TurnWriter` of the turn), whoever
  drives it;
- a turn started with `start_turn` buffers nothing: its events reach the log and the engine's
  listeners, and the handle holds only the outcome (stop reason, error code, error). Only a turn
  started by `run_turn` (`streaming=True`) queues its events for `events()`, and the iterator
  takes them as they come, so a turn of any length holds at most what its reader has not read;
- `done` is set once the turn's task has finished every write (including extensions' work on the
  turn's end); `wait()` returns then.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import anyio

from agent_tui.events import Event
from agent_tui.events.turn_vocabulary import TurnEnd
from agent_tui.events.turn_writer import TurnWriter
from agent_tui.turns.turn_fsm import TurnFsm

if TYPE_CHECKING:
    from agent_tui.engine.session_info import SessionInfo


class TurnHandle:
    """A running (or finished) turn."""

    def __init__(
        self,
        session: SessionInfo,
        turn_id: str,
        text: str,
        input_id: str | None,
        writer: TurnWriter,
        *,
        streaming: bool = False,
    ) -> None:
        self.session = session
        self.turn_id = turn_id
        self.writer = writer
        self.text = text
        self.input_id = input_id
        self.fsm = TurnFsm()  # idle until `drive` puts the registry's, which moves it
        self.outbox: deque[Event] | None = deque() if streaming else None
        self.scope: anyio.CancelScope | None = None
        self.cancel_requested = False
        self.stopped_with: TurnEnd | None = None  # the ending a stop asked for (a spent budget's)
        self.end: TurnEnd | None = None
        self.error: BaseException | None = None
        self.step = 0
        self.call_ids: set[str] = set()  # every tool-call id this turn has stored
        self.done = anyio.Event()
        self.lockstep = False
        self._wakeup: anyio.Event | None = None
        self._drained: anyio.Event | None = None

    @property
    def session_id(self) -> str:
        return self.session.id

    def push(self, event: Event) -> None:
        """Queue a stored event for the reader (a no-op for a turn nobody streams)."""
        outbox = self.outbox
        if outbox is None:
            return
        outbox.append(event)
        if self._wakeup is not None:
            self._wakeup.set()

    def finish(self) -> None:
        self.done.set()
        if self._wakeup is not None:
            self._wakeup.set()

    def cancel(self, end: TurnEnd | None = None) -> None:
        """Stop the turn: it ends `end` if given (the first stop that gives one), else cancelled."""
        if end is not None and self.stopped_with is None:
            self.stopped_with = end
        self.cancel_requested = True
        if self.scope is not None:
            self.scope.cancel()

    async def wait(self) -> str | None:
        """Wait for the end; returns the stop reason (None if the store failed before it)."""
        await self.done.wait()
        return None if self.end is None else self.end.stop_reason

    async def events(self, *, lockstep: bool = False) -> AsyncIterator[Event]:
        """Every event this turn stored, in order; raises the turn's `EventStoreFailure`.

        With `lockstep`, the turn waits after storing each event until this iterator is asked
        for the next one, as a plain generator would: a consumer that cancels on seeing an event
        stops the turn before anything after it is stored.
        """
        outbox = self.outbox
        if outbox is None:
            raise RuntimeError(
                "this turn was started with start_turn and keeps no events: iterate run_turn, "
                "or observe every turn with SessionEngine.subscribe"
            )
        self.lockstep = lockstep
        try:
            while True:
                while outbox:
                    yield outbox.popleft()
                    if not outbox and self._drained is not None:
                        self._drained.set()
                if self.done.is_set():
                    break
                self._wakeup = anyio.Event()
                await self._wakeup.wait()
                self._wakeup = None
        finally:
            self.release()
        if self.error is not None:
            raise self.error

    def release(self) -> None:
        """Stop waiting for a consumer (it left): the turn runs on at its own pace, and queues
        nothing more."""
        self.lockstep = False
        self.outbox = None
        if self._drained is not None:
            self._drained.set()

    async def await_consumer(self) -> None:
        """In lockstep, wait until the reader has taken everything queued."""
        if self.lockstep and self.outbox:
            self._drained = anyio.Event()
            await self._drained.wait()
