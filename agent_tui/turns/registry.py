"""The turn registry: is this session running, stop it and what it spawned, wait for it, which phase.

Invariants this module guarantees:
- two orthogonal axes: `state` (`running | complete | interrupt | error`) is the only thing
  liveness reads; `reason` exists on terminal records only. The state is the record's
  `TurnFsm`, made by `claim` (which hands it to the caller to read) and moved only by the
  registry's commands;
- at most one running record per session: `claim` returns None while one exists, and a
  terminal record is replaced by a fresh one (with fresh `ended`/`delivered` events);
- every state change goes through the one `transition(session_id, command)`; a command for an
  unknown session, for another turn than the record's, or for a record that is no longer
  running, is a no-op;
- phase frames go out through the sink only, from here: start → `start` (with the turn id),
  running → `executing` (with `responded`), compressing → `compress`, and an `End` (`End("error", error)` for a
  turn that failed before its `turn.completed` was stored) → exactly one `end`, whose reason is the end reason of its stop reason's row of `ENDINGS`
  (with the error for a failed one);
- settling is idempotent: only a running record settles; it writes state and reason, sends one
  `end` frame, wakes `wait`ers, and drops this session's finished child records (live ones stay);
- the record's state and what `wait` answers are the `registry_state` and `wait_outcome` of the
  row its turn ended by (`TurnFsm.ending`), never a mapping of this module's own; a session with
  a parent returns only once its result was delivered (`mark_delivered`), never before it ended;
- the session family is not the registry's: it reads the tree it was given (`family`, the
  engine's `SessionIndex`) and never links or forgets in it. The tree outlives reclaimed and
  disposed records, so `stop_children` reaches every running descendant even through a finished
  middle session, and `dispose` forgets the records of a whole subtree (its sessions' turns; what
  the tree says of them, a closed sub-agent's spend included, stays its owner's); each armed
  running record is stopped at most once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeAlias, assert_never

import anyio

from agent_tui.events.frames import EndReasonKind, FrameError, ResponseMeta, Transition
from agent_tui.events.model import StopReason
from agent_tui.events.session_tree import SessionTree
from agent_tui.events.turn_vocabulary import (
    RUNNING_REGISTRY_STATE,
    Ending,
    RegistryState,
    WaitOutcome,
    ending_for,
)
from agent_tui.turns.sink import EventSink
from agent_tui.turns.turn_fsm import TurnFsm

StopHandle = Callable[[], None]


@dataclass(frozen=True, slots=True)
class EndReason:
    """Why a turn ended; `error` is set only for `kind="error"`."""

    kind: EndReasonKind
    error: FrameError | None = None


# -- commands: the only way to move a record ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Start:
    """The turn begins (send after `sink.attach`, or the `start` frame is dropped)."""


@dataclass(frozen=True, slots=True)
class Running:
    """A model call (step) begins; `responded` carries model/usage meta when known."""

    responded: ResponseMeta | None = None


@dataclass(frozen=True, slots=True)
class Compressing:
    """The transcript is being compacted before a model call."""


@dataclass(frozen=True, slots=True)
class End:
    """The turn ended with `stop_reason` (what its `turn.completed` records); `error` is what
    went wrong, for a stop reason whose row is a failure (None for the others)."""

    stop_reason: StopReason
    error: FrameError | None = None


TurnCommand: TypeAlias = Start | Running | Compressing | End


# -- steer input -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PendingInput:
    """User input sent while a turn runs; `id` is made by the client and echoed on `user_input`."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class Attached:
    """`submit` found a running turn and queued the input for its next step boundary."""

    turn_id: str


@dataclass(frozen=True, slots=True)
class NoActiveTurn:
    """`submit` found no running turn; the caller should start one with the input."""


SubmitResult: TypeAlias = Attached | NoActiveTurn


# -- records -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """A read-only snapshot of one session's current (or last) turn record."""

    session_id: str
    turn_id: str
    state: RegistryState
    reason: EndReason | None
    armed: bool
    stopping: bool
    delivered: bool
    pending_inputs: int


@dataclass(eq=False, slots=True)
class _Record:
    session_id: str
    turn_id: str
    fsm: TurnFsm = field(default_factory=TurnFsm)
    reason: EndReason | None = None
    ended: anyio.Event = field(default_factory=anyio.Event)
    delivered: anyio.Event = field(default_factory=anyio.Event)
    pending: list[PendingInput] = field(default_factory=list)
    stop: StopHandle | None = None
    stopping: bool = False

    @property
    def running(self) -> bool:
        return not self.fsm.is_terminal

    @property
    def state(self) -> RegistryState:
        ending = self.fsm.ending
        return RUNNING_REGISTRY_STATE if ending is None else ending.registry_state

    def snapshot(self) -> TurnRecord:
        return TurnRecord(
            session_id=self.session_id,
            turn_id=self.turn_id,
            state=self.state,
            reason=self.reason,
            armed=self.stop is not None,
            stopping=self.stopping,
            delivered=self.delivered.is_set(),
            pending_inputs=len(self.pending),
        )


class TurnRegistry:
    """The authority on which session runs which turn, in which phase.

    Args:
        sink: where phase frames are emitted (the registry is its only source of `transition`
            frames).
        family: the session tree it walks to reach a session's sub-agents, linked by its owner
            (the engine gives its `SessionIndex`); an empty tree when not given: no session has
            a parent.
    """

    def __init__(self, sink: EventSink, family: SessionTree | None = None) -> None:
        self.sink = sink
        """Where this registry sends its phase frames."""
        self._records: dict[str, _Record] = {}
        self.family = family if family is not None else SessionTree()

    # -- birth ---------------------------------------------------------------------------------

    def claim(self, session_id: str, *, turn_id: str) -> TurnFsm | None:
        """Register a new running turn for `session_id`, before anything is written to disk.

        Returns:
            None if the session already has a running turn (the caller raises `TurnConflict`);
            otherwise the new turn's state machine, which only this registry moves (the caller
            keeps it to read), in a fresh record replacing any terminal one.
        """
        current = self._records.get(session_id)
        if current is not None and current.running:
            return None
        record = self._records[session_id] = _Record(session_id, turn_id)
        return record.fsm

    # -- the one transition ----------------------------------------------------------------------

    def transition(self, session_id: str, command: TurnCommand, turn_id: str | None = None) -> bool:
        """Apply `command` to the session's record and send its frame.

        `turn_id`: the turn the command is for (what a stored event says); a command for another
        turn than the record's (the closing of a turn a reopened log left open) does nothing.

        Returns:
            True if the command took effect (a frame was sent); False for an unknown session, a
            record that is no longer running or is another turn's, or a terminal command after
            the turn settled.
        """
        record = self._records.get(session_id)
        if record is None or not record.running or (turn_id is not None and turn_id != record.turn_id):
            return False
        match command:
            case Start():
                if record.fsm.state == "idle":
                    record.fsm.start()
                self.sink.emit(record.session_id, Transition("start", record.turn_id))
            case Running(responded=responded):
                self.sink.emit(
                    record.session_id, Transition("executing", record.turn_id, responded=responded)
                )
            case Compressing():
                self.sink.emit(record.session_id, Transition("compress", record.turn_id))
            case End(stop_reason=stop_reason, error=error):
                self._settle(record, ending_for(stop_reason), error)
            case _:
                assert_never(command)
        return True

    def _settle(self, record: _Record, ending: Ending, error: FrameError | None) -> None:
        if record.fsm.state == "idle":  # failed before its first event was stored
            record.fsm.start()
        record.fsm.finish(ending.stop_reason)
        reason = record.reason = EndReason(ending.end_reason, error if ending.failed else None)
        self.sink.emit(record.session_id, Transition("end", record.turn_id, reason.kind, reason.error))
        record.ended.set()
        for child_id in self.family.children(record.session_id):
            child = self._records.get(child_id)
            if child is not None and not child.running:
                del self._records[child_id]

    # -- steer input -----------------------------------------------------------------------------

    def submit(self, session_id: str, pending: PendingInput) -> SubmitResult:
        """Attach `pending` to the session's running turn, or say there is none."""
        record = self._records.get(session_id)
        if record is None or not record.running:
            return NoActiveTurn()
        record.pending.append(pending)
        return Attached(record.turn_id)

    def drain(self, session_id: str) -> list[PendingInput]:
        """Take every input submitted since the last drain (oldest first)."""
        record = self._records.get(session_id)
        if record is None:
            return []
        taken, record.pending = record.pending, []
        return taken

    # -- waiting ---------------------------------------------------------------------------------

    async def wait(self, session_id: str, timeout: float | None = None) -> WaitOutcome | None:
        """Wait until the session's current turn ends (and, for a child, is delivered).

        Args:
            session_id: the session to wait for.
            timeout: seconds; None waits without limit.

        Returns:
            None for an unknown session; "timeout" if the limit passed first; otherwise the
            `wait_outcome` of the row of `ENDINGS` the turn ended by ("failed" for a record
            disposed before it ended).
        """
        record = self._records.get(session_id)
        if record is None:
            return None
        if not self._settled_for_wait(record):
            with anyio.move_on_after(math.inf if timeout is None else timeout):
                await record.ended.wait()
                if self.family.parent_of(session_id) is not None:
                    await record.delivered.wait()
            # Checked again rather than trusting the scope: a zero timeout on a turn that ended
            # meanwhile still reports the outcome.
            if not self._settled_for_wait(record):
                return "timeout"
        ending = record.fsm.ending
        return "failed" if ending is None else ending.wait_outcome

    def _settled_for_wait(self, record: _Record) -> bool:
        return record.ended.is_set() and (
            record.delivered.is_set() or self.family.parent_of(record.session_id) is None
        )

    def mark_delivered(self, session_id: str) -> None:
        """The session's result reached its parent's mailbox: release `wait`. Unknown: no-op."""
        record = self._records.get(session_id)
        if record is not None:
            record.delivered.set()

    # -- stopping --------------------------------------------------------------------------------

    def arm(self, session_id: str, stop: StopHandle) -> None:
        """Register how to stop the session's running turn (right after it is spawned)."""
        record = self._records.get(session_id)
        if record is not None:
            record.stop = stop

    def running_children(self, parent_session_id: str) -> int:
        """How many direct child sessions of `parent_session_id` have a running turn."""
        return sum(
            1
            for child_id in self.family.children(parent_session_id)
            if (child := self._records.get(child_id)) is not None and child.running
        )

    def stop_children(self, parent_session_id: str) -> int:
        """Stop every running, armed, not-yet-stopping descendant of `parent_session_id`.

        Returns:
            How many stop handles were called (a record already stopping is not counted again).
        """
        targets = [
            record
            for session_id in self.family.descendants(parent_session_id)
            if (record := self._records.get(session_id)) is not None
            and record.running
            and record.stop is not None
            and not record.stopping
        ]
        for record in targets:
            record.stopping = True
        # Handles run after marking, so a handle that re-enters the registry sees them stopping.
        for record in targets:
            assert record.stop is not None
            record.stop()
        return len(targets)

    # -- cleanup ---------------------------------------------------------------------------------

    def dispose(self, session_id: str) -> None:
        """Forget the turn records of the session and every session below it (the family stays
        its owner's).

        Running turns are not stopped (call `stop_children` first); anyone waiting on a disposed
        record is released and gets its ending's wait outcome, or "failed" if it had not ended.
        """
        for sid in self.family.subtree(session_id):
            record = self._records.pop(sid, None)
            if record is not None:
                record.ended.set()
                record.delivered.set()

    # -- reading ---------------------------------------------------------------------------------

    def state(self, session_id: str) -> RegistryState | None:
        record = self._records.get(session_id)
        return None if record is None else record.state

    def record(self, session_id: str) -> TurnRecord | None:
        record = self._records.get(session_id)
        return None if record is None else record.snapshot()
