"""`SessionEngine`: sessions, turns and the event log (seed 000), wired to the turn registry (seed 001).

Invariants:
- an event is appended to the store before anyone sees it: before it is yielded by `run_turn`,
  before listeners hear of it, before the frame it stands for is sent;
- sequences rise by exactly one per session; a failed append raises `EventStoreFailure` (cause
  kept), consumes no sequence, and a later turn continues at that same sequence;
- `run_turn` claims the session in the registry before writing anything: a second concurrent
  turn raises `TurnConflict` and writes nothing;
- every started turn ends with exactly one `turn.completed` (a turn that could not be closed
  because the store failed, or whose process died, is closed when the session is next used);
- every requested tool call is answered by exactly one `tool.completed`/`tool.failed` before the
  next model call or the turn's end; `tool.started` only ever follows an `allow`;
- the cancel guard runs before storing each `model.delta`: nothing the model streams after a
  cancel reaches the log;
- provider failures never raise out of `run_turn`: the turn ends `error/provider_failure`;
- phase frames are sent by projecting each stored event (`turns.projection.command_for`), so the
  live frames equal the frames projected from the log.

Turns run as tasks in the engine's task group (`async with SessionEngine(...)`); `run_turn` reads
their events from an outbox, so no cancel scope ever spans a `yield`.
"""

from __future__ import annotations

import inspect
import itertools
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup

from agent_tui.engine.context import DEFAULT_INSTRUCTIONS, ContextBuilder, TranscriptBuilder
from agent_tui.engine.errors import EventStoreFailure, TurnConflict, UnknownSession
from agent_tui.engine.fsm import TurnFsm
from agent_tui.engine.permissions import (
    PermissionAnswer,
    PermissionEngine,
    PermissionRequest,
    Prompter,
)
from agent_tui.engine.provider import (
    Message,
    ModelProvider,
    ModelRequest,
    StepDone,
    TextDelta,
    ToolCall,
)
from agent_tui.engine.tools.base import ToolContext, ToolError
from agent_tui.engine.tools.router import ToolRouter
from agent_tui.events import Event, payload_from
from agent_tui.store import EventStore, TailRepair
from agent_tui.turns import (
    EventSink,
    Fail,
    FrameError,
    PendingInput,
    TurnRegistry,
)
from agent_tui.turns.frames import Fatal, RuntimeEvent
from agent_tui.turns.projection import command_for
from agent_tui.turns.registry import Attached, NoActiveTurn

EventListener = Callable[[Event], None]
PREVIEW_CHARS = 80


_MILLIS = tuple(f".{milli:03d}Z" for milli in range(1000))
_second_cache: tuple[int, str] = (-1, "")


def _now() -> str:
    """UTC time with milliseconds, e.g. `2026-11-29T22:17:03.120Z` (formatted once per second)."""
    global _second_cache
    second, milli = divmod(time.time_ns() // 1_000_000, 1000)
    cached_second, text = _second_cache
    if cached_second != second:
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _second_cache = (second, text)
    return text + _MILLIS[milli]


class CommitGate:
    """A mutex that costs nothing when free (anyio's Lock checkpoints even then).

    Commits of one session are serialized through it: a tool's stdout and stderr pumps commit
    from two tasks. Ownership passes straight to the next waiter, in arrival order. Take it with
    `if gate.busy: await gate.wait_turn()` / `else: gate.busy = True`, so the free case costs no
    coroutine, and give it back with `release()`.
    """

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


def _new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(6)}"


@dataclass(eq=False)
class _OpenCall:
    call_id: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    stage: str = "requested"  # requested → asking → running
    request_id: str | None = None


@dataclass(eq=False)
class SessionInfo:
    """What the engine knows of a session (kept in memory; rebuilt from the log on hydration)."""

    id: str
    cwd: Path
    client: str
    parent_id: str | None = None
    agent_name: str | None = None
    title: str | None = None
    depth: int = 0
    last_sequence: int = 0
    transcript: TranscriptBuilder = field(default_factory=TranscriptBuilder)
    open_turn: str | None = None  # a turn started in the log and not completed
    open_calls: dict[str, str] = field(default_factory=dict)  # call id → tool, of `open_turn`
    close_code: str = "unknown"  # errorCode used when `open_turn` is closed later
    turn: TurnHandle | None = None
    mailbox: deque[Delivery] = field(default_factory=deque)
    permissions: PermissionEngine | None = None  # a per-agent policy, if any
    # Serializes commits: tool output streams (stdout, stderr) commit from concurrent tasks.
    commit_lock: CommitGate = field(default_factory=lambda: CommitGate())
    event_id_prefix: str = ""  # `evt_<session id without "sess_">_`, the sequence follows

    def __post_init__(self) -> None:
        self.event_id_prefix = f"evt_{self.id.removeprefix('sess_')}_"

    @property
    def agent_path(self) -> tuple[str, ...]:
        return (self.agent_name or self.title or self.id,)


@dataclass(frozen=True)
class Delivery:
    """A child's result waiting in its parent's mailbox."""

    child_session_id: str
    agent_name: str
    status: str  # completed | failed
    text: str


@dataclass(frozen=True)
class Hydration:
    """What reopening a session from its log found."""

    session_id: str
    events: int
    repair: TailRepair | None
    closed_turn: str | None

    def describe(self) -> str:
        parts = [f"reopened {self.session_id} from {self.events} events"]
        if self.repair is not None:
            parts.append(self.repair.describe())
        if self.closed_turn is not None:
            parts.append(f"closed interrupted turn {self.closed_turn}")
        return "; ".join(parts)


class TurnHandle:
    """A running (or finished) turn. Iterate `events()` to see its stored events in order."""

    def __init__(self, session: SessionInfo, turn_id: str, text: str, input_id: str | None) -> None:
        self.session = session
        self.turn_id = turn_id
        self.text = text
        self.input_id = input_id
        self.fsm = TurnFsm()
        self.outbox: deque[Event] = deque()
        self.scope: anyio.CancelScope | None = None
        self.cancel_requested = False
        self.stop_reason: str | None = None
        self.error_code: str | None = None
        self.error: BaseException | None = None
        self.step = 0
        self.open_calls: dict[str, _OpenCall] = {}
        self.done = anyio.Event()
        self.lockstep = False
        self._wakeup: anyio.Event | None = None
        self._drained: anyio.Event | None = None

    @property
    def session_id(self) -> str:
        return self.session.id

    def _push(self, event: Event) -> None:
        self.outbox.append(event)
        if self._wakeup is not None:
            self._wakeup.set()

    def _finish(self) -> None:
        self.done.set()
        if self._wakeup is not None:
            self._wakeup.set()

    def cancel(self) -> None:
        self.cancel_requested = True
        if self.scope is not None:
            self.scope.cancel()

    async def wait(self) -> str | None:
        """Wait for the end; returns the stop reason (None if the store failed before it)."""
        await self.done.wait()
        return self.stop_reason

    async def events(self, *, lockstep: bool = False) -> AsyncIterator[Event]:
        """Every event this turn stored, in order; raises the turn's `EventStoreFailure`.

        With `lockstep`, the turn waits after storing each event until this iterator is asked
        for the next one, as a plain generator would: a consumer that cancels on seeing an event
        stops the turn before anything after it is stored.
        """
        self.lockstep = lockstep
        try:
            while True:
                while self.outbox:
                    yield self.outbox.popleft()
                    if not self.outbox and self._drained is not None:
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
        """Stop waiting for a consumer (it left): the turn runs on at its own pace."""
        self.lockstep = False
        if self._drained is not None:
            self._drained.set()

    async def _await_consumer(self) -> None:
        if self.lockstep and self.outbox:
            self._drained = anyio.Event()
            await self._drained.wait()


class _Cancelled(Exception):
    """Raised inside a turn when the cancel guard trips (no anyio cancellation involved)."""


class SessionEngine:
    """Runs sessions' turns against a model provider, storing every event first.

    Args:
        store: where events go (`JsonlFileEventStore`).
        provider: the model (`ScriptedProvider` for demos and tests).
        registry: the turn registry (one is made with `sink` if not given).
        sink: per-session frame streams (one is made if not given).
        router: the tools (built-ins if not given).
        permissions: the policy (default policy if not given).
        prompter: who answers `ask` (without one, asks are denied by `system`).
        client: recorded in `session.created`.
        max_steps: model calls per turn before it ends `max_steps`.
        clock: returns the `ts` of each event (tests pin it).
    """

    def __init__(
        self,
        store: EventStore,
        provider: ModelProvider,
        *,
        registry: TurnRegistry | None = None,
        sink: EventSink | None = None,
        router: ToolRouter | None = None,
        permissions: PermissionEngine | None = None,
        prompter: Prompter | None = None,
        client: str = "agent-tui",
        max_steps: int = 250,
        instructions: str | None = None,
        clock: Callable[[], str] = _now,
    ) -> None:
        self.store = store
        self.provider = provider
        self.sink = sink if sink is not None else (registry.sink if registry is not None else EventSink())
        self.registry = registry if registry is not None else TurnRegistry(self.sink)
        self.router = router if router is not None else ToolRouter()
        self.permissions = permissions if permissions is not None else PermissionEngine()
        self.prompter = prompter
        self.client = client
        self.max_steps = max_steps
        self.clock = clock
        self._instructions = instructions
        self._builder: ContextBuilder | None = None
        self._sessions: dict[str, SessionInfo] = {}
        self._listeners: list[EventListener] = []
        self._task_group: TaskGroup | None = None
        self._input_ids = itertools.count(1)
        self.extensions: list[EngineExtension] = []

    # -- lifecycle -----------------------------------------------------------------------------
    async def __aenter__(self) -> SessionEngine:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        group, self._task_group = self._task_group, None
        assert group is not None
        if exc[0] is not None:
            group.cancel_scope.cancel()
        return await group.__aexit__(*exc)

    def spawn_background(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn(*args)` in the engine's task group (extensions use this for child turns)."""
        if self._task_group is None:
            raise RuntimeError("use `async with SessionEngine(...)` before running turns")
        self._task_group.start_soon(fn, *args)

    # -- observation ---------------------------------------------------------------------------
    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Call `listener(event)` for every event stored, of every session, in store order."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def session(self, session_id: str) -> SessionInfo:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise UnknownSession(session_id) from None

    def sessions(self) -> list[SessionInfo]:
        return list(self._sessions.values())

    # -- sessions ------------------------------------------------------------------------------
    async def create_session(
        self,
        cwd: Path | str,
        *,
        client: str | None = None,
        parent_session_id: str | None = None,
        agent_name: str | None = None,
        title: str | None = None,
        session_id: str | None = None,
    ) -> str:
        """Create a session bound to `cwd` for its whole life; stores `session.created`."""
        session_id = session_id or _new_id("sess")
        if session_id in self._sessions:
            raise ValueError(f"session {session_id} exists")
        parent = self._sessions.get(parent_session_id) if parent_session_id else None
        info = SessionInfo(
            id=session_id,
            cwd=Path(cwd).resolve(),
            client=client or self.client,
            parent_id=parent_session_id,
            agent_name=agent_name,
            title=title,
            depth=parent.depth + 1 if parent is not None else 0,
        )
        await self._commit(
            info,
            None,
            "session.created",
            cwd=str(info.cwd),
            client=info.client,
            parentSessionId=parent_session_id,
            agentName=agent_name,
            title=title,
        )
        self._sessions[session_id] = info
        return session_id

    async def open_session(self, session_id: str) -> Hydration:
        """Hydrate a session from its log (a new process continuing an old session).

        A torn final line left by a crash is cut off (and reported in the result); a turn the
        log started but never completed is closed with `turn.completed{error}`.
        """
        if session_id in self._sessions:
            return Hydration(session_id, self._sessions[session_id].last_sequence, None, None)
        repair = self.store.repair(session_id)
        info: SessionInfo | None = None
        count = 0
        for event in self.store.replay(session_id):
            count += 1
            if info is None:
                if event.type != "session.created":
                    raise ValueError(f"log of {session_id} does not start with session.created")
                payload = event.payload
                parent = self._sessions.get(payload.get("parentSessionId") or "")
                info = SessionInfo(
                    id=session_id,
                    cwd=Path(payload["cwd"]),
                    client=payload["client"],
                    parent_id=payload.get("parentSessionId"),
                    agent_name=payload.get("agentName"),
                    title=payload.get("title"),
                    depth=parent.depth + 1 if parent else 0,
                )
            self._track(info, event)
        if info is None:
            raise UnknownSession(session_id)
        self._sessions[session_id] = info
        closed = info.open_turn
        if closed is not None:
            await self._close_open_turn(info)
        return Hydration(session_id, count, repair, closed)

    def _track(self, info: SessionInfo, event: Event) -> None:
        """Keep what the engine must know across turns in step with the stored events."""
        info.last_sequence = event.sequence
        info.transcript.apply(event)
        kind = event.type
        if kind == "turn.started":
            info.open_turn = event.turn_id
            info.open_calls.clear()
            info.close_code = "unknown"
        elif kind == "model.tool_call_requested":
            info.open_calls[event.payload["toolCallId"]] = event.payload["tool"]
        elif kind in ("tool.completed", "tool.failed"):
            info.open_calls.pop(event.payload["toolCallId"], None)
        elif kind == "turn.completed":
            info.open_turn = None
            info.open_calls.clear()

    async def _close_open_turn(self, info: SessionInfo) -> None:
        turn_id = info.open_turn
        for call_id, tool in list(info.open_calls.items()):
            await self._commit(
                info,
                turn_id,
                "tool.failed",
                toolCallId=call_id,
                tool=tool,
                errorCode="cancelled",
                message="the turn was interrupted before this call finished",
            )
        await self._commit(info, turn_id, "turn.completed", stopReason="error", errorCode=info.close_code)

    # -- the store -----------------------------------------------------------------------------
    async def _commit(self, info: SessionInfo, turn_id: str | None, kind: str, **fields: Any) -> Event:
        """Store one event (append, then keep the engine's state in step), then show it."""
        gate = info.commit_lock
        if gate.busy:
            await gate.wait_turn()
        else:
            gate.busy = True
        try:
            sequence = info.last_sequence + 1
            event = Event(
                id=f"{info.event_id_prefix}{sequence}",
                session_id=info.id,
                turn_id=turn_id,
                sequence=sequence,
                ts=self.clock(),
                type=kind,
                payload=payload_from(kind, fields),
            )
            try:
                await self.store.append(event)
            except Exception as error:
                raise EventStoreFailure(info.id, sequence, kind) from error
            self._track(info, event)
            if self._listeners:
                for listener in tuple(self._listeners):
                    listener(event)
            if turn_id is not None:
                command = command_for(event)
                if command is not None:
                    self.registry.transition(info.id, command)
        finally:
            gate.release()
        turn = info.turn
        if turn is not None and turn.turn_id == turn_id:
            turn._push(event)
            if turn.lockstep:
                await turn._await_consumer()
        return event

    # -- turns ---------------------------------------------------------------------------------
    def start_turn(self, session_id: str, text: str, *, input_id: str | None = None) -> TurnHandle:
        """Start a turn in the background and return its handle (raises `TurnConflict`)."""
        if self._task_group is None:
            raise RuntimeError("use `async with SessionEngine(...)` before running turns")
        info = self.session(session_id)
        turn_id = _new_id("turn")
        if not self.registry.claim(
            session_id, turn_id=turn_id, parent_session_id=info.parent_id, agent_name=info.agent_name
        ):
            raise TurnConflict(session_id)
        handle = TurnHandle(info, turn_id, text, input_id)
        info.turn = handle
        self.registry.arm(session_id, handle.cancel)
        self._task_group.start_soon(self._drive, handle)
        return handle

    async def run_turn(
        self, session_id: str, text: str, *, input_id: str | None = None
    ) -> AsyncIterator[Event]:
        """Run one turn, yielding each event after it was stored.

        Cancelling the caller (or leaving the loop early) cancels the turn; the turn's last events
        are still written before this returns, so the log stays whole.
        """
        handle = self.start_turn(session_id, text, input_id=input_id)
        handle.lockstep = True
        finished = False
        try:
            async for event in handle.events(lockstep=True):
                yield event
            finished = True
        finally:
            if not finished:
                handle.release()
                handle.cancel()
                with anyio.CancelScope(shield=True):
                    await handle.done.wait()

    def cancel_turn(self, session_id: str, turn_id: str | None = None) -> bool:
        """Cancel the session's running turn (only that one if `turn_id` is given).

        Idempotent; a no-op (returning False) for an unknown session, a finished turn or another
        turn's id.
        """
        info = self._sessions.get(session_id)
        turn = info.turn if info is not None else None
        if turn is None or turn.done.is_set() or (turn_id is not None and turn_id != turn.turn_id):
            return False
        turn.cancel()
        return True

    def deliver(self, parent_id: str, delivery: Delivery) -> bool:
        """Put a child's result in its parent's mailbox (taken at the parent's next step
        boundary). False if the parent is not known to this engine."""
        parent = self._sessions.get(parent_id)
        if parent is None:
            return False
        parent.mailbox.append(delivery)
        return True

    def stop_subtree(self, session_id: str) -> int:
        """Stop the session's running turn and every running descendant. Returns how many."""
        stopped = 1 if self.cancel_turn(session_id) else 0
        return stopped + self.registry.stop_children(session_id)

    def dispose_session(self, session_id: str) -> None:
        """Stop and forget a session and its whole subtree (their logs stay on disk)."""
        self.stop_subtree(session_id)
        doomed = {session_id}
        changed = True
        while changed:
            changed = False
            for info in self._sessions.values():
                if info.parent_id in doomed and info.id not in doomed:
                    doomed.add(info.id)
                    changed = True
        self.registry.dispose(session_id)
        for sid in doomed:
            info = self._sessions.get(sid)
            if info is not None and info.turn is None:
                del self._sessions[sid]
            self.permissions.forget_session(sid)

    def submit(self, session_id: str, text: str, *, input_id: str | None = None) -> Attached | NoActiveTurn:
        """Steer a running turn: the text is absorbed at its next step boundary."""
        input_id = input_id or f"input_{next(self._input_ids)}"
        return self.registry.submit(session_id, PendingInput(input_id, text))

    # -- one turn ------------------------------------------------------------------------------
    async def _drive(self, turn: TurnHandle) -> None:
        info = turn.session
        self.sink.attach(info.id)
        try:
            await self._play(turn)
        except EventStoreFailure as failure:
            turn.error = failure
            info.close_code = "store_failure"
            cause = failure.__cause__
            message = f"{failure}: {cause}" if cause else str(failure)
            self.sink.emit(info.id, Fatal("store_failure", message))
            self.registry.transition(info.id, Fail(FrameError("store_failure", message)))
            if not turn.fsm.is_terminal and turn.fsm.state == "running":
                turn.fsm.move("failed")
        except BaseException as error:  # a bug must not kill the engine; it ends this turn
            if isinstance(error, anyio.get_cancelled_exc_class()):
                self.registry.transition(info.id, Fail(FrameError("unknown", "engine shut down")))
                raise
            turn.error = error
            self.sink.emit(info.id, Fatal("unknown", repr(error)))
            self.registry.transition(info.id, Fail(FrameError("unknown", repr(error))))
        finally:
            if info.turn is turn:
                info.turn = None
            self.sink.detach(info.id)
            turn._finish()

    async def _play(self, turn: TurnHandle) -> None:
        info = turn.session
        if info.open_turn is not None:
            await self._close_open_turn(info)
        turn.fsm.start()
        await self._commit(info, turn.turn_id, "turn.started", promptPreview=turn.text[:PREVIEW_CHARS])
        await self._commit(info, turn.turn_id, "user.message", content=turn.text, inputId=turn.input_id)
        stop_reason, error_code = "cancelled", None
        shutdown: BaseException | None = None
        try:
            with anyio.CancelScope() as scope:
                turn.scope = scope
                if turn.cancel_requested:
                    scope.cancel()
                try:
                    stop_reason, error_code = await self._steps(turn)
                except _Cancelled:
                    stop_reason = "cancelled"
        except anyio.get_cancelled_exc_class() as cancelled:
            # Cancelled from outside the turn (the engine's task group is shutting down): close
            # the turn like any cancelled one, then let the cancellation go on.
            shutdown = cancelled
        turn.scope = None
        if shutdown is not None or scope.cancelled_caught or turn.cancel_requested:
            stop_reason, error_code = "cancelled", None
            # Stopping a turn stops everything it spawned, however deep.
            self.registry.stop_children(info.id)
        with anyio.CancelScope(shield=True):
            await self._answer_open_calls(turn, stop_reason)
            await self._commit(
                info, turn.turn_id, "turn.completed", stopReason=stop_reason, errorCode=error_code
            )
            turn.stop_reason = stop_reason
            turn.error_code = error_code
            turn.fsm.finish(stop_reason)
            for extension in self.extensions:
                await extension.turn_ended(self, turn)
        if shutdown is not None:
            raise shutdown

    async def _answer_open_calls(self, turn: TurnHandle, stop_reason: str) -> None:
        info = turn.session
        for call in list(turn.open_calls.values()):
            if call.stage == "asking":
                await self._commit(
                    info,
                    turn.turn_id,
                    "permission.resolved",
                    requestId=call.request_id,
                    toolCallId=call.call_id,
                    decision="deny",
                    actor="system",
                    reason="cancelled" if stop_reason == "cancelled" else "turn ended",
                )
            code = "cancelled" if stop_reason == "cancelled" else "unknown"
            message = (
                "the turn was cancelled before this call finished"
                if code == "cancelled"
                else "the turn ended before this call ran"
            )
            await self._commit(
                info,
                turn.turn_id,
                "tool.failed",
                toolCallId=call.call_id,
                tool=call.tool,
                errorCode=code,
                message=message,
            )
        turn.open_calls.clear()

    async def _boundary(self, turn: TurnHandle) -> bool:
        """Absorb steer input and mailbox deliveries. Returns True if anything arrived."""
        info = turn.session
        arrived = False
        for pending in self.registry.drain(info.id):
            await self._commit(
                info,
                turn.turn_id,
                "user.message",
                content=pending.text,
                inputId=pending.id,
                steered=True,
            )
            self.sink.emit(
                info.id,
                RuntimeEvent(
                    "user_input", {"inputId": pending.id, "text": pending.text, "turnId": turn.turn_id}
                ),
            )
            arrived = True
        while info.mailbox:
            delivery = info.mailbox.popleft()
            await self._commit(
                info,
                turn.turn_id,
                "subagent.delivered",
                childSessionId=delivery.child_session_id,
                agentName=delivery.agent_name,
                status=delivery.status,
                text=delivery.text,
            )
            arrived = True
        return arrived

    async def _steps(self, turn: TurnHandle) -> tuple[str, str | None]:
        info = turn.session
        builder = self._context_builder()
        limit = self.provider.max_context_tokens
        while True:
            if turn.step >= self.max_steps:
                return "max_steps", None
            await self._boundary(turn)
            turn.step += 1
            step = turn.step
            transcript = info.transcript
            estimate = builder.estimate_tokens(transcript.tokens)
            if estimate.total > limit:
                summary = builder.compact(transcript.messages)
                after = builder.estimate([Message("user", summary)])
                await self._commit(
                    info,
                    turn.turn_id,
                    "context.compacted",
                    step=step,
                    beforeTokens=estimate.total,
                    afterTokens=after.total,
                    summary=summary,
                )
                estimate = builder.estimate_tokens(transcript.tokens)
                if estimate.total > limit:
                    return "error", "context_overflow"
            messages = transcript.messages
            await self._commit(
                info,
                turn.turn_id,
                "context.built",
                step=step,
                tokens=estimate.as_payload(),
                maxContextTokens=limit,
            )
            request = ModelRequest(
                session_id=info.id,
                turn_id=turn.turn_id,
                step=step,
                messages=builder.request_messages(messages),
                tools=builder.tool_schemas,
                agent_name=info.agent_name,
            )
            calls, deltas, failed = await self._model_call(turn, request)
            if failed:
                return "error", "provider_failure"
            for call in calls:
                await self._tool_call(turn, call)
            if calls:
                continue
            if deltas == 0:
                await self._commit(info, turn.turn_id, "model.delta", text="")
            # The model answered: input that arrived meanwhile keeps the same turn going.
            if await self._boundary(turn):
                if turn.step >= self.max_steps:
                    return "max_steps", None
                continue
            return "final", None

    async def _model_call(self, turn: TurnHandle, request: ModelRequest) -> tuple[list[_OpenCall], int, bool]:
        info = turn.session
        calls: list[_OpenCall] = []
        deltas = 0
        finished = False
        stream = self.provider.stream(request)
        try:
            async for chunk in stream:
                if turn.cancel_requested:  # the guard: nothing streamed after a cancel is stored
                    raise _Cancelled
                if isinstance(chunk, TextDelta):
                    if not chunk.text:
                        continue
                    await self._commit(info, turn.turn_id, "model.delta", text=chunk.text)
                    deltas += 1
                elif isinstance(chunk, ToolCall):
                    call = _OpenCall(_new_id("call"), chunk.tool, dict(chunk.args))
                    turn.open_calls[call.call_id] = call
                    await self._commit(
                        info,
                        turn.turn_id,
                        "model.tool_call_requested",
                        toolCallId=call.call_id,
                        tool=chunk.tool,
                        args=call.args,
                    )
                    calls.append(call)
                elif isinstance(chunk, StepDone):
                    pass
            finished = True
        except (_Cancelled, EventStoreFailure, anyio.get_cancelled_exc_class()):
            raise
        except Exception:
            return calls, deltas, True
        finally:
            # An async generator run to its end has nothing left to close; any other iterator
            # may hold a connection until `aclose`.
            aclose = getattr(stream, "aclose", None)
            if aclose is not None and not (finished and inspect.isasyncgen(stream)):
                with anyio.CancelScope(shield=True):
                    try:
                        await aclose()
                    except Exception:
                        pass
        if turn.cancel_requested:
            raise _Cancelled
        return calls, deltas, False

    async def _tool_call(self, turn: TurnHandle, call: _OpenCall) -> None:
        info = turn.session
        args = call.args
        if turn.cancel_requested:
            raise _Cancelled
        try:
            tool, parsed = self.router.parse(call.tool, args)
        except ToolError as error:
            await self._fail_call(turn, call, error.code, error.message)
            return
        risk = self.router.risk(call.tool, parsed)
        preview = self.router.preview(args)
        call.request_id = _new_id("perm")
        await self._commit(
            info,
            turn.turn_id,
            "permission.requested",
            requestId=call.request_id,
            toolCallId=call.call_id,
            tool=call.tool,
            risk=risk,
            argsPreview=preview,
        )
        permissions = info.permissions or self.permissions
        verdict = permissions.evaluate(info.id, call.tool, args, risk)
        if verdict.decision == "ask":
            await self._commit(
                info,
                turn.turn_id,
                "permission.resolved",
                requestId=call.request_id,
                toolCallId=call.call_id,
                decision="ask",
                actor="policy",
                policy=verdict.policy,
                reason=verdict.warning or verdict.reason,
            )
            call.stage = "asking"
            answer = await self._ask(turn, call, risk, preview, args, verdict.warning)
            call.stage = "requested"
            await self._commit(
                info,
                turn.turn_id,
                "permission.resolved",
                requestId=call.request_id,
                toolCallId=call.call_id,
                decision=answer.decision,
                actor="user" if self.prompter is not None else "system",
                remember=answer.remember if self.prompter is not None else None,
                reason=answer.reason,
            )
            if self.prompter is not None:
                permissions.remember(info.id, call.tool, args, risk, answer)
            allowed = answer.decision == "allow"
        else:
            await self._commit(
                info,
                turn.turn_id,
                "permission.resolved",
                requestId=call.request_id,
                toolCallId=call.call_id,
                decision=verdict.decision,
                actor="policy",
                policy=verdict.policy,
                reason=verdict.reason,
            )
            allowed = verdict.decision == "allow"
        if not allowed:
            await self._fail_call(turn, call, "permission_denied", f"{call.tool} was denied permission")
            return
        if turn.cancel_requested:
            raise _Cancelled
        await self._commit(
            info,
            turn.turn_id,
            "tool.started",
            toolCallId=call.call_id,
            tool=call.tool,
            argsPreview=preview,
        )
        call.stage = "running"

        async def on_output(stream: str, text: str) -> None:
            await self._commit(
                info, turn.turn_id, "tool.delta", toolCallId=call.call_id, stream=stream, text=text
            )

        context = ToolContext(
            cwd=info.cwd,
            session_id=info.id,
            turn_id=turn.turn_id,
            tool_call_id=call.call_id,
            on_output=on_output,
        )
        result = await self.router.run(tool, parsed, context)
        turn.open_calls.pop(call.call_id, None)
        if result.ok:
            await self._commit(
                info,
                turn.turn_id,
                "tool.completed",
                toolCallId=call.call_id,
                tool=call.tool,
                result=result.text,
                exitCode=result.exit_code,
                truncated=result.truncated,
            )
        else:
            await self._commit(
                info,
                turn.turn_id,
                "tool.failed",
                toolCallId=call.call_id,
                tool=call.tool,
                errorCode=result.error_code or "unknown",
                message=result.text,
            )

    async def _fail_call(self, turn: TurnHandle, call: _OpenCall, code: str, message: str) -> None:
        turn.open_calls.pop(call.call_id, None)
        await self._commit(
            turn.session,
            turn.turn_id,
            "tool.failed",
            toolCallId=call.call_id,
            tool=call.tool,
            errorCode=code,
            message=message,
        )

    async def _ask(
        self,
        turn: TurnHandle,
        call: _OpenCall,
        risk: str,
        preview: str,
        args: Mapping[str, Any],
        warning: str | None,
    ) -> PermissionAnswer:
        if self.prompter is None:
            return PermissionAnswer("deny", reason="no one to ask")
        request = PermissionRequest(
            session_id=turn.session_id,
            turn_id=turn.turn_id,
            request_id=call.request_id or "",
            tool_call_id=call.call_id,
            tool=call.tool,
            risk=risk,
            args_preview=preview,
            args=dict(args),
            agent_path=self.agent_path(turn.session_id),
            warning=warning,
        )
        return await self.prompter.ask(request)

    def _context_builder(self) -> ContextBuilder:
        schemas = self.router.schemas()
        builder = self._builder
        if builder is None or builder.tool_schemas != tuple(schemas):
            builder = self._builder = ContextBuilder(self._instructions or DEFAULT_INSTRUCTIONS, schemas)
        return builder

    def agent_path(self, session_id: str) -> tuple[str, ...]:
        """Names from the root session down to this one (`lead › explorer › grep-helper`)."""
        path: list[str] = []
        current = self._sessions.get(session_id)
        while current is not None:
            path.append(current.agent_name or current.title or current.id)
            current = self._sessions.get(current.parent_id) if current.parent_id else None
        return tuple(reversed(path))


class EngineExtension:
    """A hook into turn ends (sub-agents use it to deliver a child's result)."""

    async def turn_ended(self, engine: SessionEngine, turn: TurnHandle) -> None:  # pragma: no cover
        return None
