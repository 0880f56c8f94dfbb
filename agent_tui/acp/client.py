"""`AcpAgentSession`: one external ACP agent as one session of our tree.

The agent runs as a subprocess over stdio (`AgentProcess`), speaks ACP through the SDK's
client connection, and everything it does is written to our log (`AcpRecorder`), in the order
it said it (`OrderedWriter`). The session is a turn driver: its turns are `TurnHandle`s of the
engine's own kind, and the engine drives them (`SessionEngine.drive`: claim, arm, the task,
the end's shielding, settling), so `SessionEngine.cancel_turn`/`stop_subtree`, the listeners and
the phase frames treat an ACP-backed session like any other, and this module only converses.

Invariants:
- the agent is started by the session's first turn (after `turn.started` and `user.message`), so
  a program that is missing, hangs in `initialize` (`start_timeout`), speaks another protocol
  version, or refuses `session/new` ends that turn `error/provider_failure` with the reason; an
  agent that refuses for want of a login (`AUTH_REQUIRED`) says how to log in (its `authMethods`'
  names and descriptions), and the next prompt tries again;
- a stop during start-up (before, while or just after `initialize` and `session/new`) ends that
  turn `cancelled`, kills what was started (its process group, reaped) and leaves no failure
  behind: the next prompt starts the agent afresh; a stop that lands once the session is open
  but before the prompt went out ends the turn `cancelled` without sending it;
- a reopened session whose agent cannot load it (`loadSession` false, as the log recorded or as
  `initialize` says) is read-only: `read_only` says why, and a prompt is refused with it;
- a turn's end (a `TurnEnd`) follows the prompt's answer: its `stopReason` (see `mapping`), or an
  error response, or the agent's death (`AgentProcess.describe()`: its exit and stderr tail); a
  turn never stays open in the log;
- stop (`cancel()`, or the engine cancelling the turn) answers every permission question still
  waiting `cancelled`, sends `session/cancel`, and waits `cancel_timeout` for the prompt's
  answer; an agent that does not answer in time is killed and the turn ends `cancelled` saying so;
- session updates are taken off the wire as they are read (`_on_wire`), so the log keeps the
  agent's order even where the SDK dispatches messages out of it, and a prompt's answer is never
  written before the updates sent ahead of it;
- once the agent is gone, each later prompt ends at once `error/provider_failure` with the reason.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import acp
import anyio
from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.core import ClientSideConnection
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    SessionNotification,
)
from pydantic import ValidationError

import agent_tui
from agent_tui.acp.agent_process import AgentProcess
from agent_tui.acp.client_tools import ClientTools
from agent_tui.acp.config import AcpAgentConfig
from agent_tui.acp.mapping import as_sent, stop_reason_from_acp, token_usage
from agent_tui.acp.mcp_servers import acp_mcp_servers
from agent_tui.acp.ordered import OrderedWriter
from agent_tui.acp.questions import AgentQuestions
from agent_tui.acp.recorder import AcpRecorder
from agent_tui.acp.session_side import SessionSide
from agent_tui.engine.clock import new_id
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.session_info import TurnHandle
from agent_tui.events.turn_vocabulary import TurnEnd
from agent_tui.mcp.config import McpServerConfig
from agent_tui.runtime.agent_requests import AgentStartError

T = TypeVar("T")
AUTH_REQUIRED = -32000


class AgentFailure(Exception):
    """The agent cannot go on; the message is the reason, fit for the log and the tree."""


class StartStopped(Exception):
    """The turn was stopped while the agent was starting; what was started is gone."""


class AcpTurn(TurnHandle):
    """A turn of an ACP-backed session: cancelling it asks the agent to stop (`session/cancel`)."""

    def __init__(self, session: AcpAgentSession, turn_id: str, text: str) -> None:
        info = session.engine.session(session.session_id)
        super().__init__(info, turn_id, text, None, session.engine.writer_for(info, turn_id))
        self.stopping = anyio.Event()

    def cancel(self, end: TurnEnd | None = None) -> None:
        super().cancel(end)
        self.stopping.set()


class AgentHub(Protocol):
    """What a session uses of the hub that starts it (`AcpAgents`): the engine, a task group,
    the timeouts, the agents' environment, the wire's observers, the
    user's MCP servers (passed on in `session/new`)."""

    engine: SessionEngine
    start_timeout: float
    cancel_timeout: float
    env: dict[str, str]
    observers: list[Any]
    mcp_servers: Mapping[str, McpServerConfig]

    def spawn(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None: ...


class AcpAgentSession:
    """One external agent, its ACP session, and its session in our log (made by `AcpAgents.start`)."""

    def __init__(self, hub: AgentHub, config: AcpAgentConfig, session_id: str) -> None:
        self.hub = hub
        self.engine = hub.engine
        self.config = config
        self.session_id = session_id
        self.cwd: Path = self.engine.session(session_id).cwd
        self.writer = OrderedWriter()
        self.recorder = AcpRecorder(self.engine.session(session_id), config.name, self.engine.prices)
        side = SessionSide(
            session_id=session_id,
            name=config.name,
            cwd=self.cwd,
            recorder=self.recorder,
            run_in_order=self.writer.run,
            spawn=hub.spawn,
            permissions=self.engine.permissions,
            questions=self.engine.questions,
            agent_path=lambda: self.engine.agent_path(session_id),
        )
        self.questions = AgentQuestions(side)
        self.tools = ClientTools(side, self.questions)
        self.process: AgentProcess | None = None
        self.conn: ClientSideConnection | None = None
        self.acp_session_id: str | None = None
        self.resume_from: str | None = None  # the agent's session to load at start (a reopened log)
        self.failure: str | None = None
        self.read_only: str | None = None
        """Why this reopened session cannot take prompts (its agent cannot load it), if so."""
        self.turn: AcpTurn | None = None
        self._auth_methods: list[str] = []
        self._login_needed = False
        self._closed = False

    @property
    def name(self) -> str:
        return self.config.name

    def write(self, work: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """Run one piece of log writing in this session's order."""
        return self.writer.run(work)

    def spawn(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        self.hub.spawn(fn, *args)

    # -- the public controls -------------------------------------------------------------------
    def prompt(self, text: str) -> AcpTurn:
        """Start a turn: send `text` as `session/prompt` (raises `TurnConflict` while one runs)."""
        if self._closed:
            raise AgentFailure(f"{self.name} was closed")
        if self.read_only is not None:
            raise AgentFailure(self.read_only)
        turn = AcpTurn(self, new_id("turn"), text)
        self.engine.drive(turn, self, self.spawn)  # raises TurnConflict
        self.turn = turn
        return turn

    def cancel(self) -> bool:
        """Stop the running turn (False when none runs: its state machine has ended it)."""
        turn = self.turn
        if turn is None or turn.fsm.is_terminal or turn.cancel_requested:
            return False
        turn.cancel()
        return True

    async def close(self) -> None:
        """Stop the running turn, wait for its end, and end the agent's process."""
        self._closed = True
        turn = self.turn
        if turn is not None:
            turn.cancel()
            await turn.wait()
        try:
            if self.conn is not None:
                await self.conn.close()
        except Exception:
            pass  # the agent is gone already, or its connection broke: it is ended below anyway
        finally:
            if self.process is not None:
                await self.process.close()
            self.writer.close()

    # -- a turn (the driver's side; the engine drives) ------------------------------------------
    async def open_turn(self, turn: TurnHandle) -> None:
        await self.write(lambda: self.recorder.begin_turn(turn))

    async def close_turn(self, turn: TurnHandle, end: TurnEnd) -> None:
        self.questions.withdraw_all()  # questions still waiting leave the queue
        await self.tools.stop_all("the turn ended")
        await self.write(lambda: self.recorder.end_turn(end))

    async def converse(self, turn: TurnHandle) -> TurnEnd:
        """Boot if needed, send the prompt, and wait for its answer or a stop."""
        assert isinstance(turn, AcpTurn)
        if self.failure is not None:
            return TurnEnd.failed("provider_failure", self.failure)
        if self.conn is None:
            try:
                await self._boot(turn)
            except StartStopped:
                return TurnEnd.cancelled(f"stopped while {self.name} was starting")
            except AgentFailure as failure:
                return TurnEnd.failed("provider_failure", str(failure))
        if turn.cancel_requested:  # stopped as the session opened: the prompt never goes out
            return TurnEnd.cancelled(f"stopped before the prompt was sent to {self.name}")
        outcome: dict[str, TurnEnd] = {}
        answered = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(self._ask, turn, outcome, answered)
            await _first_of(answered.wait, turn.stopping.wait)
            if not answered.is_set():
                await self._stop(answered)
                if not answered.is_set():
                    group.cancel_scope.cancel()
                    outcome = {"ending": TurnEnd.cancelled(self._describe())}
        return outcome["ending"]

    async def _ask(self, turn: AcpTurn, outcome: dict[str, TurnEnd], answered: anyio.Event) -> None:
        conn = self.conn
        assert conn is not None and self.acp_session_id is not None
        try:
            response = await conn.prompt(session_id=self.acp_session_id, prompt=[text_block(turn.text)])
        except RequestError as error:
            refusal = f"{self.name} answered the prompt with an error: {_error_text(error)}"
            outcome["ending"] = TurnEnd.failed("provider_failure", refusal)
        except (ConnectionError, OSError):
            await self._agent_gone()
            outcome["ending"] = TurnEnd.failed("provider_failure", self.failure or self._describe())
        else:
            stop_reason, message = stop_reason_from_acp(response.stop_reason)
            if turn.cancel_requested and stop_reason != "cancelled":
                message = f"stopped, but {self.name} finished first ({response.stop_reason})"
            spent = token_usage(response.usage, response.field_meta)
            outcome["ending"] = TurnEnd(stop_reason, message=message, usage=spent)  # type: ignore[arg-type]
        answered.set()

    async def _stop(self, answered: anyio.Event) -> None:
        """Withdraw waiting questions, send `session/cancel`, wait for the prompt's answer."""
        self.questions.withdraw_all()
        conn = self.conn
        if conn is not None and self.acp_session_id is not None:
            with contextlib.suppress(ConnectionError, OSError):
                await conn.cancel(session_id=self.acp_session_id)
        timeout = self.hub.cancel_timeout
        with anyio.move_on_after(timeout):
            await answered.wait()
        if not answered.is_set() and self.process is not None:
            self.process.fail(f"did not answer session/cancel within {timeout:g} s and was killed")
            self.process.kill()
            await self._agent_gone()

    async def _agent_gone(self) -> None:
        process = self.process
        if process is not None:
            with anyio.move_on_after(self.hub.cancel_timeout):
                await process.exited.wait()
            process.kill()
        self.failure = self.failure or self._describe()

    def _describe(self) -> str:
        return self.process.describe() if self.process is not None else f"{self.name} is not running"

    # -- starting the agent --------------------------------------------------------------------
    async def _boot(self, turn: AcpTurn) -> None:
        """Start the agent and open its session.

        Raises:
            StartStopped: the turn was stopped first (what was started is killed; nothing is
                kept, so the next prompt starts afresh).
            AgentFailure: the agent cannot be used; `failure` keeps the reason for later prompts,
                except when it needs a login (the user may log in and prompt again).
        """
        if turn.cancel_requested:
            raise StartStopped
        process = AgentProcess(self.config, self.cwd, self.hub.env)
        try:
            await process.start()
        except AgentStartError as error:
            self.failure = f"{self.name} could not start: {error}"
            raise AgentFailure(self.failure) from None
        self.process = process
        self.spawn(process.run)
        endpoint = cast(acp.Client, self.tools)  # the methods an agent may call of us
        observers = [self._on_wire, *self.hub.observers]
        conn = connect_to_agent(endpoint, process.writer, process.reader, observers=observers)
        self.conn = conn
        self._login_needed = False
        try:
            with anyio.fail_after(self.hub.start_timeout):
                await _first_of(lambda: self._handshake(conn), turn.stopping.wait)
        except TimeoutError:
            process.fail(f"did not answer initialize and session/new within {self.hub.start_timeout:g} s")
        except RequestError as error:
            process.fail(self._refusal(error))
        except (ConnectionError, OSError):
            pass
        if self.acp_session_id is not None:
            return
        stopped = turn.cancel_requested and process.fault is None
        await self._discard(process, conn)
        if stopped:
            raise StartStopped
        reason = process.describe()
        if not self._login_needed:
            self.failure = reason
        raise AgentFailure(reason)

    async def _discard(self, process: AgentProcess, conn: ClientSideConnection) -> None:
        """End an agent that did not open a session: its process group killed and reaped, its
        connection closed; the next prompt starts another."""
        process.kill()
        self.conn = None
        with anyio.CancelScope(shield=True), anyio.move_on_after(self.hub.cancel_timeout):
            await process.exited.wait()
            with contextlib.suppress(Exception):  # its stream is gone with it
                await conn.close()

    async def _handshake(self, conn: ClientSideConnection) -> None:
        process = self.process
        assert process is not None
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
            ),
            client_info=Implementation(name="agent-tui", title="agent-tui", version=agent_tui.__version__),
        )
        if init.protocol_version != PROTOCOL_VERSION:
            process.fail(
                f"speaks ACP protocol version {init.protocol_version}; agent-tui speaks version "
                f"{PROTOCOL_VERSION} (update one of them)"
            )
            return
        self._auth_methods = [_login_hint(method) for method in init.auth_methods or ()]
        earlier = self.resume_from
        capabilities = init.agent_capabilities
        servers = acp_mcp_servers(self.hub.mcp_servers, self.cwd, capabilities, self.hub.env)
        if earlier is not None and not (capabilities is not None and capabilities.load_session):
            self.read_only = cannot_load(self.name)
            process.fail(CANNOT_LOAD)
            return
        if earlier is not None:
            # The agent replays the session's history before it answers; our log has it already.
            self.recorder.expect_replay(_answers(self.engine, self.session_id))
            self.writer.submit(lambda: self.recorder.pause(True))
            try:
                loaded = await conn.load_session(cwd=str(self.cwd), session_id=earlier, mcp_servers=servers)
            finally:
                with anyio.CancelScope(shield=True):  # a stop must not leave the recorder paused
                    await self.write(lambda: self.recorder.pause(False))
            method, session_id = "session/load", earlier
            modes, options = (loaded.modes, loaded.config_options) if loaded is not None else (None, None)
        else:
            created = await conn.new_session(cwd=str(self.cwd), mcp_servers=servers)
            method, session_id = "session/new", created.session_id
            modes, options = created.modes, created.config_options
        data = _started(init, session_id, modes)
        self.recorder.learn_options(options)
        await self.write(lambda: self.recorder.note(method, data))
        self.acp_session_id = session_id

    def _refusal(self, error: RequestError) -> str:
        if error.code == AUTH_REQUIRED:
            self._login_needed = True
            how = "; or ".join(self._auth_methods) or "see its documentation"
            return f"needs you to log in first: {how} (it answered: {_error_text(error)})"
        return f"refused to start a session: {_error_text(error)}"

    def _on_wire(self, event: StreamEvent) -> None:
        """Take each session update off the wire as it is read, in wire order.

        The SDK may hand messages to their handlers in another order than they were read (and
        answers to our requests bypass its queue); here, every update is queued on the writer
        before the message after it is even read, so an answer (a prompt's end) is never written
        before the updates the agent sent ahead of it.
        """
        message = event.message
        if event.direction is not StreamDirection.INCOMING or message.get("method") != "session/update":
            return
        params = message.get("params")
        try:
            update = SessionNotification.model_validate(params).update
        except ValidationError as error:
            data = {"params": params, "error": str(error).splitlines()[0]}
            self.writer.submit(lambda: self.recorder.note("invalid session/update", data))
            return
        self.writer.submit(lambda: self.recorder.apply(update))


async def _first_of(*waits: Callable[[], Awaitable[Any]]) -> None:
    """Return as soon as one of `waits` returns; the others are cancelled. The first error any
    of them raises is raised as it is (not wrapped in an exception group)."""
    errors: list[Exception] = []
    async with anyio.create_task_group() as group:

        async def one(wait: Callable[[], Awaitable[Any]]) -> None:
            try:
                await wait()
            except Exception as error:
                errors.append(error)
            group.cancel_scope.cancel()

        for wait in waits:
            group.start_soon(one, wait)
    if errors:
        raise errors[0]


def _error_text(error: RequestError) -> str:
    data = error.data
    details = data.get("details") if isinstance(data, dict) else None
    return f"{error} ({details})" if details else str(error)


CANNOT_LOAD = (
    "cannot reopen an earlier session (it does not offer session/load), so this session is "
    "read-only: its log stays readable; start a new session to go on"
)


def cannot_load(name: str) -> str:
    """Why a reopened session of agent `name` is read-only."""
    return f"{name} {CANNOT_LOAD}"


def _login_hint(method: Any) -> str:
    """How an `authMethods` entry says to log in: its name, and its description when it has one."""
    description = (method.description or "").strip()
    return f"{method.name} ({description})" if description else str(method.name)


def _started(init: Any, session_id: str, modes: Any = None) -> dict[str, Any]:
    """The `session/new` (or `session/load`) record: the agent's session id, protocol version,
    whether it can load a session later, its identity, and its modes (the reducer shows them)."""
    capabilities = init.agent_capabilities
    data: dict[str, Any] = {
        "sessionId": session_id,
        "protocolVersion": init.protocol_version,
        "loadSession": bool(capabilities is not None and capabilities.load_session),
    }
    if init.agent_info is not None:
        data["agentInfo"] = as_sent(init.agent_info)
    if modes is not None:
        data["modes"] = as_sent(modes)
    return data


def _answers(engine: SessionEngine, session_id: str) -> list[str]:
    """Each turn's answer in a session's log (its `model.delta`s joined), in order: what the
    agent replays when it loads its own session."""
    answers: dict[str, list[str]] = {}
    for event in engine.store.replay(session_id):
        if event.type == "model.delta" and event.turn_id is not None:
            answers.setdefault(event.turn_id, []).append(event.payload["text"])
    return ["".join(parts) for parts in answers.values()]
