"""`SessionEngine`: the session table, the commit pipeline, and the turn API.

Invariants:
- an event is appended to the store before anyone sees it: before it is yielded by `run_turn`,
  before listeners hear of it, before the frame it stands for is sent;
- sequences rise by exactly one per session; a failed append raises `EventStoreFailure` (cause
  kept), consumes no sequence, and a later turn continues at that same sequence;
- a turn claims its session in the registry before writing anything: a second concurrent turn
  raises `TurnConflict` and writes nothing;
- a turn that could not be closed because the store failed, or whose process died, is closed
  when the session is next used (or reopened);
- the registry's commands come from projecting each stored event (`turns.projection`), so the
  turn's state machine, the registry and any frames follow the log, and equal what replay
  projects from it afterwards;
- the engine gives the event loop a turn every `YIELD_EVERY` commits, so a fast model and a
  store that never blocks cannot starve the dashboard;
- frames go to a sink only when the embedding program asked for them (`sink=`, a `registry=`
  with its sink, or `watch_frames`), through the `LiveFrames` listener; the local dashboard
  watches them: they are the phases it shows;
- an event worded elsewhere (a terminal agent's log, built by the importers from its CLI's
  transcript) is stored with `store_built` only for a session no turn of this engine runs, after
  the chain checker (`ChainCheck`) accepted it, and then told to the listeners like any other;
- a turn's life is written here once, for every driver (the model loop, an ACP agent): `drive`
  claims the session in the registry (or raises `TurnConflict`), arms its stop and starts its
  task; the task closes a turn a reopened log left open, lets the driver open and converse,
  decides the turn's ending once (what the driver reports, or the ending a stop carried: a spent
  budget's), lets the driver close the turn with it through the turn's `TurnWriter` (shielded
  from cancellation, so a turn cancelled from outside still closes its log), stops the turn's
  sub-agents when it was cancelled, and settles it: its `TurnEnd` on the handle, the extensions
  told (the one notification of a turn's end beside the registry's settle). A store failure
  leaves the turn for the next use to close (`store_failure`); a bug (an `Exception`) ends only
  its turn, `error/unknown` saying what failed; `KeyboardInterrupt` and `SystemExit` settle the
  turn the same way, then go on up: they stop the process;
- a tree's own tools (`session_tools`: its MCP servers) are opened once, for its root, at the
  tree's first model turn in this process; every session of the tree is offered the engine's
  tools and those; they are closed when the root is disposed and before the engine's task
  group is left, so nothing they run outlives the engine.

How the engine's own turns converse (steps, model calls, tools, permissions) is `turn_loop.py`.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from agent_tui.costs.budgets import BudgetLimit
from agent_tui.costs.prices import PriceTable, shipped_prices
from agent_tui.engine.budgets import BudgetExceeded, BudgetKeeper
from agent_tui.engine.clock import new_id, utc_now
from agent_tui.engine.context import DEFAULT_INSTRUCTIONS, ContextBuilders, InstructionsFor
from agent_tui.engine.errors import EventStoreFailure, TurnConflict, UnknownSession
from agent_tui.engine.listeners import EventListener, Listeners
from agent_tui.engine.log_trust import log_inside_project
from agent_tui.engine.permissions import PermissionEngine, SessionAnswers
from agent_tui.engine.provider import ModelProvider
from agent_tui.engine.questions import Questions
from agent_tui.engine.session_info import Delivery, Hydration, SessionInfo, TurnHandle
from agent_tui.engine.tool_calls import ToolCallRunner
from agent_tui.engine.tools.router import ToolRouter
from agent_tui.engine.tree_tools import SessionTools, TreeTools
from agent_tui.engine.turn_loop import ModelLoop
from agent_tui.events import Event, payload_from
from agent_tui.events.chains import ChainCheck
from agent_tui.events.frames import Fatal, FrameError
from agent_tui.events.turn_vocabulary import PHASE_OF_EVENT, TurnEnd
from agent_tui.events.turn_writer import INTERRUPTED, TurnWriter
from agent_tui.events.wording import counted
from agent_tui.store import EventStore
from agent_tui.turns import End, EventSink, FrameListener, PendingInput, TurnRegistry
from agent_tui.turns.live_frames import LiveFrames
from agent_tui.turns.projection import command_for
from agent_tui.turns.registry import Attached, NoActiveTurn

__all__ = ["Delivery", "EngineExtension", "SessionEngine", "TurnDriver", "TurnHandle"]

YIELD_EVERY = 32
"""Commits between two checkpoints that let the rest of the event loop run."""

Spawn = Callable[..., object]
"""Starts a task: `spawn(fn, *args)` (a task group's `start_soon`)."""


class TurnDriver(Protocol):
    """Who converses during a turn (the model loop, an ACP agent), writing through `turn.writer`.

    `open_turn` writes the turn's start, `converse` runs it and returns how it ended,
    `close_turn` writes that end (after answering the calls still open); `drive` calls them in
    that order, `close_turn` shielded from cancellation, and also after a bug, with the bug as
    the ending.
    """

    async def open_turn(self, turn: TurnHandle) -> None: ...
    async def converse(self, turn: TurnHandle) -> TurnEnd: ...
    async def close_turn(self, turn: TurnHandle, end: TurnEnd) -> None: ...


class SessionEngine:
    """Runs sessions' turns against a model provider, storing every event first.

    Args:
        store: where events go (`JsonlFileEventStore`).
        provider: the model (`ScriptedProvider` for demos and tests).
        registry: the turn registry (one is made if not given). Its sink is the engine's sink.
        sink: where phase frames go. Frames are sent only when a sink or a registry is given.
        router: the tools (built-ins if not given).
        permissions: the policy (default policy if not given).
        questions: who holds and answers the tool calls' questions (`engine.questions`; by
            default every question is denied by `system`: no one to ask).
        client: recorded in `session.created`.
        max_steps: model calls per turn before it ends `max_steps`.
        instructions: the system text every model call starts with: one text for every session,
            or a function of a session's directory and the tools' schemas (`system_prompt`), so
            each session is told its own directory and reads its own `AGENTS.md`; it is asked
            once per directory and tool set.
        clock: returns the `ts` of each event (tests pin it).
        prices: what models cost (the shipped table with the user's `[prices]`); the shipped
            table if not given.
        session_tools: more tools for each root session and its sub-agents (MCP servers),
            started at the root's first turn in this process and stopped with it.
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
        questions: Questions | None = None,
        client: str = "agent-tui",
        max_steps: int = 250,
        instructions: str | InstructionsFor | None = None,
        clock: Callable[[], str] = utc_now,
        prices: PriceTable | None = None,
        session_tools: SessionTools | None = None,
    ) -> None:
        if registry is not None and sink is not None and registry.sink is not sink:
            raise ValueError("the registry sends frames to its own sink: pass the registry, or the sink")
        self.sends_frames = registry is not None or sink is not None
        self.sink = registry.sink if registry is not None else (sink if sink is not None else EventSink())
        self.store = store
        self.provider = provider
        self.prices = prices if prices is not None else shipped_prices()
        self.budgets = BudgetKeeper(self._stop_for_budget, self._output_limit, self.prices)
        """Each tree's budget and spend; stops a tree that spent its budget (`engine.budgets`).
        Its `index` is the one owner of the engine's session family (the registry walks it)."""
        self.registry = registry if registry is not None else TurnRegistry(self.sink)
        self.registry.family = self.budgets.index  # (a given registry walks this engine's family too)
        self.router = router if router is not None else ToolRouter()
        self.permissions = permissions if permissions is not None else PermissionEngine()
        self.questions = questions if questions is not None else Questions()
        """The questions waiting for an answer, and who answers them besides the people."""
        self._tools = ToolCallRunner(self.router, self.permissions, self.questions, self.agent_path)
        self.client = client
        self.clock = clock
        self.builders = ContextBuilders(instructions or DEFAULT_INSTRUCTIONS, self.router)
        self.extensions: list[EngineExtension] = []
        self._sessions: dict[str, SessionInfo] = {}
        self._built_chains: dict[str, ChainCheck] = {}  # the sessions `store_built` writes
        self._listeners = Listeners()
        self._task_group: TaskGroup | None = None
        self._input_ids = itertools.count(1)
        self.session_tools = session_tools
        self._tree_tools = TreeTools(session_tools) if session_tools is not None else None
        self._loop = ModelLoop(
            provider,
            self.registry,
            self._tools,
            self.builders.get,
            self.context_window,
            self.tree_tools,
            max_steps,
            self.prices,
        )
        self._commits_since_yield = 0
        self.subscribe(self.budgets.hear)
        if self.sends_frames:
            self.subscribe(LiveFrames(self.sink))

    def watch_frames(self, listener: FrameListener) -> Callable[[], None]:
        """Call `listener` with every live frame (sending them from now on, if not yet): the
        local dashboard's phases. Returns a function that unsubscribes."""
        if not self.sends_frames:
            self.sends_frames = True
            self.subscribe(LiveFrames(self.sink))
        return self.sink.subscribe(listener)

    # -- lifecycle -----------------------------------------------------------------------------
    async def __aenter__(self) -> SessionEngine:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        group, self._task_group = self._task_group, None
        assert group is not None
        if self.session_tools is not None:
            self.session_tools.close_all()  # they hold tasks in the group until told to stop
        if exc[0] is not None:
            group.cancel_scope.cancel()
        return await group.__aexit__(*exc)

    def _group(self) -> TaskGroup:
        if self._task_group is None:
            raise RuntimeError("use `async with SessionEngine(...)` before running turns")
        return self._task_group

    # -- observation ---------------------------------------------------------------------------
    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Call `listener(event)` for every event stored, of every session, in store order.

        A listener that raises is detached and its failure logged; the turn goes on unchanged. Returns a function that unsubscribes.
        """
        return self._listeners.add(listener)

    def session(self, session_id: str) -> SessionInfo:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise UnknownSession(session_id) from None

    def sessions(self) -> list[SessionInfo]:
        return list(self._sessions.values())

    def unfinished_turns(self) -> list[TurnHandle]:
        """Every session's turn that has not finished its writes (see `unfinished_turn`)."""
        return [turn for info in self._sessions.values() if (turn := info.unfinished_turn) is not None]

    def agent_path(self, session_id: str) -> tuple[str, ...]:
        """Names from the root session down to this one (`lead › explorer › grep-helper`)."""
        return self.budgets.index.agent_path(session_id) if session_id in self._sessions else ()

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
        **extra: Any,
    ) -> str:
        """Create a session bound to `cwd` for its whole life; stores `session.created`.

        `extra` are further optional `session.created` fields (`provider`, `model`,
        `worktree={"path", "branch"}`).
        """
        session_id = session_id or new_id("sess")
        if session_id in self._sessions:
            raise ValueError(f"session {session_id} exists")
        info = SessionInfo(
            id=session_id,
            cwd=Path(cwd).resolve(),
            client=client or self.client,
            agent_name=agent_name,
            title=title,
        )
        await self.commit(
            info,
            None,
            "session.created",
            cwd=str(info.cwd),
            client=info.client,
            parentSessionId=parent_session_id,
            agentName=agent_name,
            title=title,
            **extra,
        )
        self._sessions[session_id] = info
        return session_id

    async def tree_tools(self, info: SessionInfo) -> ToolRouter | None:
        """The tools of `info`'s tree: its root's own (its MCP servers, started at the root's
        first turn of this process and shared by every sub-agent) over the engine's, or None
        when the tree has none of its own."""
        if self._tree_tools is None:
            return None
        sessions = self._sessions
        root = next((sessions[sid] for sid in self.budgets.index.chain(info.id) if sid in sessions), info)
        return await self._tree_tools.open(root, self.router, self._group())

    async def open_session(self, session_id: str) -> Hydration:
        """Hydrate a session from its log (a new process continuing an old session).

        A torn final line left by a crash is cut off (and reported in the result); a turn the
        log started but never completed is closed with `turn.completed{error}`.
        """
        hydration = self.load_session(session_id)
        info = self._sessions[session_id]
        closed = info.open_turn
        await self.close_open_turn(info)
        return replace(hydration, closed_turn=closed)

    def load_session(self, session_id: str) -> Hydration:
        """`open_session` without closing an unfinished turn: the session is read and known to
        the engine, and a turn its log left open stays open (`SessionInfo.open_turn`); the
        caller closes it (`close_open_turn`) or lets go of the session (`forget_session`)."""
        if session_id in self._sessions:
            return Hydration(session_id, self._sessions[session_id].last_sequence, None, None)
        repair = self.store.repair(session_id)
        info: SessionInfo | None = None
        count = 0
        answers = SessionAnswers()  # "allow for this session" outlives the process
        for event in self.store.replay(session_id):
            count += 1
            if info is None:
                info = self._session_from_created(session_id, event)
            info.track(event)
            answers.track(event)
            self.budgets.track(event)
        if info is None:
            raise UnknownSession(session_id)
        self._sessions[session_id] = info
        planted = log_inside_project(self.store, session_id, info.cwd)
        if planted is None:
            answers.restore(info.permissions or self.permissions, session_id)
        note = None
        if planted is not None and answers.answers:
            note = (
                f'{counted(len(answers.answers), "answer")} "for this session" not restored: '
                f"the log {planted} lies inside the project, where anyone with the repository "
                "(or an agent's write) could have put them"
            )
        return Hydration(session_id, count, repair, None, note)

    def forget_session(self, session_id: str) -> None:
        """Let go of one idle session read from its log (its log, and what the budgets counted
        of it, stay): a later `load_session` reads it again. The caller lets a session go after
        the sub-agents read under it; a root's tools (its MCP servers) are closed with it.

        Raises:
            TurnConflict: a turn of the session has not finished its writes.
        """
        info = self._sessions.get(session_id)
        if info is None:
            return
        if info.unfinished_turn is not None or info.open_turn is not None:
            raise TurnConflict(f"{session_id} has a turn that is not finished")
        del self._sessions[session_id]
        self._built_chains.pop(session_id, None)
        self.permissions.forget_session(session_id)
        if self.budgets.index.parent_of(session_id) is None:  # a root: its tree's servers go
            self._close_tree_tools(session_id, info)  # (none of its tree is read now)

    def _session_from_created(self, session_id: str, event: Event) -> SessionInfo:
        if event.type != "session.created":
            raise ValueError(f"log of {session_id} does not start with session.created")
        payload = event.payload
        return SessionInfo(
            id=session_id,
            cwd=Path(payload["cwd"]),
            client=payload["client"],
            agent_name=payload.get("agentName"),
            title=payload.get("title"),
        )

    async def close_open_turn(self, info: SessionInfo) -> None:
        """Close a turn the log started but never completed (a crash, a failed store)."""
        turn_id = info.open_turn
        if turn_id is None:
            return
        end = TurnEnd.failed(info.close_code)  # type: ignore[arg-type]
        await self.writer_for(info, turn_id).end(end, info.open_calls.values(), INTERRUPTED)

    def writer_for(self, info: SessionInfo, turn_id: str) -> TurnWriter:
        """The writer of one turn of `info`, over this engine's commit pipeline."""
        return TurnWriter(partial(self.commit_fields, info), turn_id)

    # -- the commit pipeline -------------------------------------------------------------------
    async def commit(self, info: SessionInfo, turn_id: str | None, kind: str, **fields: Any) -> Event:
        """Store one event, keep the session in step, then tell listeners, registry and reader.

        For the engine's own parts; `None` fields are left out of the payload. A turn's events
        go through its `TurnWriter` (`writer_for`), which calls `commit_fields`.
        """
        return await self.commit_fields(info, turn_id, kind, fields)

    async def commit_fields(
        self, info: SessionInfo, turn_id: str | None, kind: str, fields: dict[str, Any]
    ) -> Event:
        """`commit` with the fields as one dict (the writers' path)."""
        gate = info.commit_gate
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
            await self._append_tracked(info, event)
            if self._listeners.registered:  # a list check, not a method call: once per event
                self._listeners.tell(event)
            if turn_id is not None and kind in PHASE_OF_EVENT:  # most events move no phase
                command = command_for(event)
                if command is not None:
                    self.registry.transition(info.id, command, turn_id)
        finally:
            gate.release()
        turn = info.turn
        if turn is not None and turn.turn_id == turn_id and (outbox := turn.outbox) is not None:
            turn.push(outbox, event)
            if turn.lockstep:
                await turn.await_consumer()
        self._commits_since_yield += 1
        if self._commits_since_yield >= YIELD_EVERY:
            self._commits_since_yield = 0
            await anyio.lowlevel.checkpoint()
        return event

    async def store_built(self, event: Event) -> None:
        """Store an event worded elsewhere, of a session no turn of this engine runs (a terminal
        agent's log, built from its CLI's transcript by the importers), then tell the listeners,
        as `commit_fields` does for the engine's own. A `session.created` makes the session known
        to the engine; any other event continues a session it knows (created, or read with
        `load_session`).

        Raises:
            ValueError: the event breaks its log's chain rules (`events/chains.py`: its sequence,
                its turn, its tool call's chain) or names a session a turn of this engine runs;
                nothing is stored.
            EventStoreFailure: the store failed (nothing is stored).
        """
        session_id = event.session_id
        info = self._sessions.get(session_id)
        if event.type == "session.created":
            if info is not None:
                raise ValueError(f"session {session_id} exists")
            info = self._session_from_created(session_id, event)
        elif info is None:
            raise UnknownSession(session_id)
        elif info.unfinished_turn is not None:
            raise ValueError(f"a turn of this engine runs in {session_id}")
        check = self._built_chains.get(session_id)
        if check is None:
            check = self._built_chains[session_id] = ChainCheck()
            if event.type != "session.created":
                for stored in self.store.replay(session_id):
                    check.check(stored)
        problems = check.check(event)
        if problems:
            del self._built_chains[session_id]  # read again from the log at the next event
            raise ValueError("; ".join(problems))
        gate = info.commit_gate
        if gate.busy:
            await gate.wait_turn()
        else:
            gate.busy = True
        try:
            try:
                await self._append_tracked(info, event)
            except EventStoreFailure:
                self._built_chains.pop(session_id, None)
                raise
            self._sessions[session_id] = info
            if self._listeners.registered:
                self._listeners.tell(event)
        finally:
            gate.release()

    async def _append_tracked(self, info: SessionInfo, event: Event) -> None:
        """Store `event` and keep its session in step; the caller holds the session's gate."""
        try:
            await self.store.append(event)
        except Exception as error:
            raise EventStoreFailure(info.id, event.sequence, event.type) from error
        info.track(event)

    # -- turns ---------------------------------------------------------------------------------
    def start_turn(self, session_id: str, text: str, *, input_id: str | None = None) -> TurnHandle:
        """Start a turn in the background and return its handle (raises `TurnConflict`).

        The handle keeps no events (observe them with `subscribe`); iterate `run_turn` instead
        to read a turn's events as they are stored.
        """
        spawn = self._group().start_soon
        info = self.session(session_id)
        turn_id = new_id("turn")
        handle = TurnHandle(info, turn_id, text, input_id, self.writer_for(info, turn_id))
        self.drive(handle, self._loop, spawn)
        return handle

    # -- a turn's life, for every driver --------------------------------------------------------
    def drive(self, turn: TurnHandle, driver: TurnDriver, spawn: Spawn | None = None) -> None:
        """Claim `turn`'s session, arm its stop, and start its life in a task (`spawn`, else the
        engine's task group). Raises `TurnConflict` while another turn runs there."""
        info = turn.session
        session_id = info.id
        refusal = self.budgets.refusal(session_id)
        if refusal is not None:
            raise BudgetExceeded(session_id, refusal)
        fsm = self.registry.claim(session_id, turn_id=turn.turn_id)
        if fsm is None:
            raise TurnConflict(session_id)
        turn.fsm = fsm
        info.turn = turn
        self.registry.arm(session_id, turn.cancel)
        (spawn or self._group().start_soon)(self._live, turn, driver)

    async def _live(self, turn: TurnHandle, driver: TurnDriver) -> None:
        """The turn's task: open, converse, close, settle; whatever happens, the turn settles."""
        info = turn.session
        try:
            await self.close_open_turn(info)  # one a reopened log, or a failed store, left open
            await driver.open_turn(turn)
            shutdown: BaseException | None = None
            try:
                end = await driver.converse(turn)
            except anyio.get_cancelled_exc_class() as cancelled:
                # Cancelled from outside the turn (the engine's task group is shutting down):
                # close the turn like any cancelled one, then let the cancellation go on.
                shutdown, end = cancelled, TurnEnd.cancelled()
            if turn.stopped_with is not None and end.stop_reason == "cancelled":
                end = replace(turn.stopped_with, usage=end.usage)  # how the stop said it ends
            if end.stop_reason == "cancelled":
                self.registry.stop_children(info.id)  # stopping a turn stops all it spawned
            with anyio.CancelScope(shield=True):
                await driver.close_turn(turn, end)
                await self._settle(turn, end)
            if shutdown is not None:
                raise shutdown
        except EventStoreFailure as failure:
            turn.error = failure
            info.close_code = "store_failure"
            cause = failure.__cause__
            self._fail(turn, "store_failure", f"{failure}: {cause}" if cause else str(failure))
        except BaseException as error:  # a bug must not kill the engine; it ends this turn
            if isinstance(error, anyio.get_cancelled_exc_class()):
                self._fail(turn, "unknown", "engine shut down", fatal=False)
                raise
            turn.error = error
            with anyio.CancelScope(shield=True):
                await self._close_after_bug(turn, driver, error)
            self._fail(turn, "unknown", repr(error))
            if not isinstance(error, Exception):  # KeyboardInterrupt, SystemExit: the process's
                raise
        finally:
            turn.finish()

    async def _settle(self, turn: TurnHandle, end: TurnEnd) -> None:
        turn.end = end
        if not turn.fsm.is_terminal:  # its record was disposed while it ran: nobody else will
            turn.fsm.finish(end.stop_reason)
        for extension in self.extensions:
            await extension.turn_ended(self, turn)

    async def _close_after_bug(self, turn: TurnHandle, driver: TurnDriver, error: BaseException) -> None:
        """Write the end of a turn a bug broke, if its log still has it open (else it is closed
        when the session is next used)."""
        if turn.session.open_turn != turn.turn_id:
            return
        end = TurnEnd.failed("unknown", f"agent-tui failed: {error!r}")
        try:
            await driver.close_turn(turn, end)
            await self._settle(turn, end)
        except Exception:
            pass

    def _fail(self, turn: TurnHandle, code: str, message: str, *, fatal: bool = True) -> None:
        """A turn that failed off the log: its fatal frame, and its registry entry settled."""
        session_id = turn.session_id
        if fatal and self.sends_frames:
            self.sink.emit(session_id, Fatal(code, message))
        self.registry.transition(session_id, End("error", FrameError(code, message)), turn.turn_id)

    async def run_turn(
        self, session_id: str, text: str, *, input_id: str | None = None
    ) -> AsyncIterator[Event]:
        """Run one turn, yielding each event after it was stored.

        Cancelling the caller (or leaving the loop early) cancels the turn; the turn's last events
        are still written before this returns, so the log stays whole.
        """
        handle = self.start_turn(session_id, text, input_id=input_id)
        handle.outbox = deque()  # before its task first runs: it queues every event it stores
        handle.lockstep = True
        finished = False
        try:
            async for event in handle.events():
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
        turn = info.live_turn if info is not None else None
        if turn is None or (turn_id is not None and turn_id != turn.turn_id):
            return False
        turn.cancel()
        return True

    # -- budgets -------------------------------------------------------------------------------
    async def set_budget(
        self, session_id: str, budget: BudgetLimit | None, *, by: str | None = None
    ) -> Event:
        """Set the session's whole budget (None: none), for it and its sub-agents: stores
        `session.budget` (in the running turn, if one runs, else between turns).

        A budget below what the tree already spent stops the tree's running turns; a raised one
        lets its next turns start again.
        """
        info = self.session(session_id)
        turn = info.live_turn
        fields: dict[str, Any] = budget.payload() if budget is not None else {}
        return await self.commit_fields(
            info, turn.turn_id if turn is not None else None, "session.budget", {**fields, "by": by}
        )

    def _stop_for_budget(self, session_ids: Iterable[str], message: str) -> None:
        """End the running turns of these sessions `error/budget_exceeded` with `message`."""
        for session_id in session_ids:
            info = self._sessions.get(session_id)
            turn = info.live_turn if info is not None else None
            if turn is not None and turn.stopped_with is None:
                turn.cancel(TurnEnd.failed("budget_exceeded", message))

    def _output_limit(self, session_id: str) -> int | None:
        """The most output tokens the model of `session_id` answers with (None: not known)."""
        output_for = getattr(self.provider, "output_for", None)
        if output_for is not None:
            return output_for(session_id)
        limit = getattr(getattr(self.provider, "settings", None), "max_output_tokens", None)
        return limit if isinstance(limit, int) else None

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

    def stop_all(self) -> int:
        """Stop every running turn. Returns how many."""
        return sum(1 for info in self.sessions() if self.cancel_turn(info.id))

    def dispose_session(self, session_id: str) -> None:
        """Stop and forget a session and its whole subtree (their logs stay on disk)."""
        self.stop_subtree(session_id)
        sessions = self._sessions
        self.registry.dispose(session_id)
        disposed = sessions.get(session_id)
        for sid in self.budgets.index.subtree(session_id):
            doomed_info = sessions.get(sid)
            if doomed_info is not None and doomed_info.live_turn is None:
                del sessions[sid]
            self.permissions.forget_session(sid)
        self._close_tree_tools(session_id, disposed)

    def _close_tree_tools(self, session_id: str, info: SessionInfo | None) -> None:
        """Close the tools of the tree rooted at `session_id` (its MCP servers: its next turn
        opens them again), and its model calls' builder."""
        root = self.budgets.index.parent_of(session_id) is None
        tree_router = info.router if info is not None and root else None
        if self._tree_tools is not None:
            self._tree_tools.close(session_id)
        if tree_router is not None:
            self.builders.forget(tree_router)

    def submit(self, session_id: str, text: str, *, input_id: str | None = None) -> Attached | NoActiveTurn:
        """Steer a running turn: the text is absorbed at its next step boundary."""
        input_id = input_id or f"input_{next(self._input_ids)}"
        return self.registry.submit(session_id, PendingInput(input_id, text))

    def context_window(self, session_id: str) -> int:
        """The context window of the model that answers `session_id` (providers that route
        sessions to several models say it per session with `window_for`)."""
        window_for = getattr(self.provider, "window_for", None)
        if window_for is not None:
            return int(window_for(session_id))
        return self.provider.max_context_tokens


class EngineExtension:
    """A hook into turn ends (sub-agents use it to deliver a child's result)."""

    async def turn_ended(self, engine: SessionEngine, turn: TurnHandle) -> None:  # pragma: no cover
        return None
