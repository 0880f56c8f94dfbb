"""What the engine knows of each session, kept in step with its stored events, and its turn.

A session holds its current turn and a turn its session: the two are one concept (the engine's
session while a turn runs), kept in one module.

Invariants of a session (`SessionInfo`):
- `SessionInfo.track(event)` is called for every event of the session, live or replayed from
  its log, in sequence order; so a hydrated session knows exactly what a live one knew (last
  sequence, transcript, the open turn and its open tool calls);
- the open tool calls (`open_calls`: what was asked, how far each got) are owned here and only
  here, derived from the stored events: the turn loop, the tool runner and the ACP recorder read
  them after each commit and never keep a copy, so a call is open exactly while the log says so;
- the cwd is fixed for the session's life.

Invariants of a turn (`TurnHandle`: one turn as its caller sees it: wait for it, cancel it, or
read its events):
- the turn's run state is its `TurnFsm`, the one the registry's record holds and moves (the
  handle only reads it); how the turn ended is one `TurnEnd` (`end`), set once by the engine
  where it decides the ending (`SessionEngine._live`), None until then;
- the turn's events are written by its `writer` (the one `TurnWriter` of the turn), whoever
  drives it;
- a turn started with `start_turn` buffers nothing: its events reach the log and the engine's
  listeners, and the handle holds only the outcome (stop reason, error code, error). Only a turn
  started by `run_turn` (given an `outbox`) queues its events for `events()`, and the iterator
  takes them as they come, so a turn of any length holds at most what its reader has not read;
- `done` is set once the turn's task has finished every write (including extensions' work on the
  turn's end); `wait()` returns then.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from agent_tui.engine.commit_gate import CommitGate
from agent_tui.engine.context import TranscriptBuilder
from agent_tui.events import Event
from agent_tui.events.model import CALL_PROGRESS_TYPES
from agent_tui.events.session_tree import session_label
from agent_tui.events.turn_vocabulary import TurnEnd
from agent_tui.events.turn_writer import TurnWriter
from agent_tui.store import TailRepair
from agent_tui.turns.turn_fsm import TurnFsm

if TYPE_CHECKING:
    from agent_tui.engine.permissions import PermissionEngine
    from agent_tui.engine.tools.router import ToolRouter


CallStage = Literal["requested", "asking", "running"]


@dataclass(eq=False)
class OpenCall:
    """A tool call the model asked for that has no result yet, as its stored events tell it.

    `stage` is `asking` between the policy's `ask` and the final answer, `running` after
    `tool.started` (and after the answer to a question asked while it runs), else `requested`;
    `request_id` is its latest permission request's, once made; `decision` is the final answer
    (`allow` or `deny`), None before one.
    """

    call_id: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    stage: CallStage = "requested"
    request_id: str | None = None
    decision: str | None = None
    started: bool = False


@dataclass(frozen=True)
class Delivery:
    """A child's result waiting in its parent's mailbox."""

    child_session_id: str
    agent_name: str
    status: str  # completed | failed
    text: str


@dataclass(eq=False)
class SessionInfo:
    """One session: identity, where it works, and the state its log implies."""

    id: str
    cwd: Path
    client: str  # its family is the engine's `SessionIndex` (`engine.budgets.index`)
    agent_name: str | None = None
    title: str | None = None
    last_sequence: int = 0
    transcript: TranscriptBuilder = field(default_factory=TranscriptBuilder)
    open_turn: str | None = None  # a turn started in the log and not completed
    open_calls: dict[str, OpenCall] = field(default_factory=dict)  # by call id, of `open_turn`
    close_code: str = "unknown"  # errorCode used when `open_turn` is closed later
    turn: TurnHandle | None = None  # the current turn, or the last one until the next starts
    mailbox: deque[Delivery] = field(default_factory=deque)
    permissions: PermissionEngine | None = None  # a per-agent policy, if any
    router: ToolRouter | None = None  # its tree's tools (the engine's and its MCP servers'), if any
    commit_gate: CommitGate = field(default_factory=CommitGate)
    event_id_prefix: str = ""  # `evt_<session id without "sess_">_`, the sequence follows

    def __post_init__(self) -> None:
        self.event_id_prefix = f"evt_{self.id.removeprefix('sess_')}_"

    @property
    def live_turn(self) -> TurnHandle | None:
        """The turn that is running now (its state machine is not terminal), if any."""
        turn = self.turn
        return turn if turn is not None and not turn.fsm.is_terminal else None

    @property
    def unfinished_turn(self) -> TurnHandle | None:
        """The turn that has not finished every write yet: running, or ending (its state
        machine may be terminal while its last events are stored), if any. What a caller
        waits for before it may close the store or start what needs the turn gone."""
        turn = self.turn
        return turn if turn is not None and not turn.done.is_set() else None

    @property
    def label(self) -> str:
        """How the session is named in agent paths."""
        return session_label(self.agent_name, self.title, self.id)

    def track(self, event: Event) -> None:
        """Keep what the engine must know across turns in step with the stored events."""
        self.last_sequence = event.sequence
        self.transcript.apply(event)
        kind = event.type
        if kind == "turn.started":
            self.open_turn = event.turn_id
            self.open_calls.clear()
            self.close_code = "unknown"
        elif kind == "model.tool_call_requested":
            payload = event.payload
            call_id = payload["toolCallId"]
            self.open_calls[call_id] = OpenCall(call_id, payload["tool"], payload.get("args") or {})
        elif kind in CALL_PROGRESS_TYPES:
            call = self.open_calls.get(event.payload["toolCallId"])
            if call is None:
                return
            if kind == "permission.requested":
                call.request_id = event.payload["requestId"]
            elif kind == "permission.resolved":
                decision = event.payload["decision"]
                if decision == "ask":
                    call.stage = "asking"
                else:
                    call.stage = "running" if call.started else "requested"
                    call.decision = decision
            elif kind == "tool.started":
                call.stage = "running"
                call.started = True
            elif kind != "tool.delta":  # tool.completed, tool.failed: the call is answered
                del self.open_calls[call.call_id]
        elif kind == "turn.completed":
            self.open_turn = None
            self.open_calls.clear()


class TurnHandle:
    """A running (or finished) turn."""

    def __init__(
        self,
        session: SessionInfo,
        turn_id: str,
        text: str,
        input_id: str | None,
        writer: TurnWriter,
    ) -> None:
        self.session = session
        self.turn_id = turn_id
        self.writer = writer
        self.text = text
        self.input_id = input_id
        self.fsm = TurnFsm()  # idle until `drive` puts the registry's, which moves it
        self.outbox: deque[Event] | None = None  # `run_turn` gives it one: it streams the events
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

    def push(self, outbox: deque[Event], event: Event) -> None:
        """Queue a stored event in the turn's `outbox` for the reader."""
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

    async def events(self) -> AsyncIterator[Event]:
        """Every event this turn stored, in order; raises the turn's `EventStoreFailure`.

        With `lockstep` (`run_turn` sets it), the turn waits after storing each event until this iterator is asked
        for the next one, as a plain generator would: a consumer that cancels on seeing an event
        stops the turn before anything after it is stored.
        """
        outbox = self.outbox
        if outbox is None:
            raise RuntimeError(
                "this turn was started with start_turn and keeps no events: iterate run_turn, "
                "or observe every turn with SessionEngine.subscribe"
            )
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


@dataclass(frozen=True)
class Hydration:
    """What reopening a session from its log found."""

    session_id: str
    events: int
    repair: TailRepair | None
    closed_turn: str | None
    answers_note: str | None = None  # why the log's "for this session" answers were not restored

    def describe(self) -> str:
        parts = [f"reopened {self.session_id} from {self.events} events"]
        if self.repair is not None:
            parts.append(self.repair.describe())
        if self.closed_turn is not None:
            parts.append(f"closed interrupted turn {self.closed_turn}")
        if self.answers_note is not None:
            parts.append(self.answers_note)
        return "; ".join(parts)
