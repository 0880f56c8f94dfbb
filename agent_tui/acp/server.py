"""`agent-tui acp`: our engine served as an ACP agent over stdio, for Zed, Toad or any ACP client.

The client creates sessions (`session/new`) or reopens ours (`session/load`, from the JSONL
logs in the sessions directory), sends prompts (`session/prompt`, one turn of our engine each),
and cancels them (`session/cancel`). Our permission asks go to the client as
`session/request_permission`. Everything is written to our logs exactly as the dashboard's own
sessions are, so `agent-tui replay` shows what the client did.

Invariants:
- `initialize` answers with the protocol version this agent speaks (`PROTOCOL_VERSION`), as the
  protocol says: a client that asked for another version gets ours and a line on stderr saying
  so (the client decides whether to go on);
- a prompt streams each stored event's updates (`UpdateTranslator`) before it answers; its stop
  reason is the turn's (`final` → `end_turn`, `cancelled`, `max_steps` → `max_turn_requests`);
  a turn that ends `error` answers a JSON-RPC error carrying the turn's message;
- the answerer (`ask_client`) never raises: a client that cannot answer a permission request (gone, or it
  answered `cancelled`) denies it, so our turn still ends with its `turn.completed`;
- sub-agents' permission requests go to the client under the root session it knows, their
  title prefixed with the agent path;
- a session gets the config file's MCP servers enabled for its directory and those the client
  sent in `session/new` or `session/load` (`served_mcp_servers`), started at its first prompt
  and stopped with the server; their calls ask like any other;
- a notice on stderr is one line with its control codes made visible (`visible`);
- nothing but JSON-RPC reaches stdout: stray writes to it go to stderr (`serve.protect_stdio`);
- a new session gets the config's budget (`[budget]`, the profile's), for it and its
  sub-agents; a prompt in a session whose tree spent its budget is refused with what was spent
  and allowed (an invalid-request error, `errorCode: budget_exceeded`), and nothing is written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import acp
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ToolCallUpdate,
)

import agent_tui
from agent_tui.acp.mapping import ContentBlock, acp_usage, kind_for_tool, prompt_text
from agent_tui.acp.permissions import SERVER_OPTIONS, answer_for_option, describe_request
from agent_tui.acp.served_mcp_servers import served_mcp_servers
from agent_tui.acp.server_updates import UpdateTranslator
from agent_tui.costs.budgets import BudgetLimit
from agent_tui.engine.budgets import BudgetExceeded
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.errors import TurnConflict, UnknownSession
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest
from agent_tui.engine.scenario import Scenario
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events.terminal_text import visible
from agent_tui.events.turn_vocabulary import ending_for
from agent_tui.mcp.servers import McpServers
from agent_tui.store import EventLogDecodeError, JsonlFileEventStore, SessionLockedError


class EngineAgent:
    """The ACP `Agent` in front of a `SessionEngine` (set `engine` before the client connects).

    Args:
        scenario: with the scripted provider, the scripts: the n-th new session plays
            `scenario.sessions[n].steps` (a session past the last one, or a loaded one, answers
            with the scripted model's out-of-script text).
        log: where notices go (stderr).
        budget: what each new session's tree may spend (None: no budget).
    """

    def __init__(
        self, *, scenario: Scenario | None = None, log: Any = None, budget: BudgetLimit | None = None
    ) -> None:
        self.budget = budget
        self.engine: SessionEngine | None = None
        self.conn: acp.Client | None = None
        self.scenario = scenario
        self.log = log if log is not None else sys.stderr
        self.client_capabilities: ClientCapabilities | None = None
        self._translators: dict[str, UpdateTranslator] = {}
        self._created = 0

    def on_connect(self, conn: acp.Client) -> None:
        self.conn = conn

    async def ask_client(self, request: PermissionRequest) -> PermissionAnswer:
        """The engine's answerer (`Questions`): each question is a `session/request_permission`."""
        conn = self.conn
        if conn is None:
            return PermissionAnswer("deny", reason="no client is connected")
        root = self.root_of(request.session_id)
        title = describe_request(request)
        if root != request.session_id:
            title = f"{' › '.join(request.agent_path[1:])} › {title}"
        if request.warning:
            title = f"{title} ({request.warning})"
        tool_call = ToolCallUpdate(
            tool_call_id=request.tool_call_id,
            title=title,
            kind=kind_for_tool(request.tool),  # type: ignore[arg-type]
            status="pending",
            raw_input=dict(request.args),
        )
        try:
            response = await conn.request_permission(
                session_id=root, tool_call=tool_call, options=list(SERVER_OPTIONS)
            )
        except Exception as error:  # the client is gone or answered an error: deny, never raise
            return PermissionAnswer("deny", reason=f"the client did not answer ({error})")
        outcome = response.outcome
        return answer_for_option(outcome.option_id if isinstance(outcome, AllowedOutcome) else None)

    def _engine(self) -> SessionEngine:
        if self.engine is None:
            raise RequestError.internal_error({"details": "the engine is not running"})
        return self.engine

    def root_of(self, session_id: str) -> str:
        """The session the client knows for `session_id` (sub-agents report under their root)."""
        return self._engine().budgets.index.chain(session_id)[0]

    # -- the protocol --------------------------------------------------------------------------
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        if protocol_version != PROTOCOL_VERSION:
            who = f"{client_info.name} " if client_info is not None else ""
            self.notice(
                f"the client {who}asked for ACP protocol version {protocol_version}; agent-tui "
                f"speaks version {PROTOCOL_VERSION} and answered with it (the client decides "
                "whether to go on)"
            )
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            agent_info=Implementation(name="agent-tui", title="agent-tui", version=agent_tui.__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        engine = self._engine()
        directory = _directory(cwd)
        budget = self.budget.payload() if self.budget is not None else None
        session_id = await engine.create_session(directory, budget=budget)
        self._give_servers(session_id, mcp_servers)
        self._translators[session_id] = UpdateTranslator(engine.session(session_id).cwd)
        self._assign_script(session_id)
        return NewSessionResponse(session_id=session_id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        engine = self._engine()
        directory = _directory(cwd)
        try:
            await engine.open_session(session_id)
        except UnknownSession:
            raise RequestError.invalid_params(
                {"details": f"no session {session_id} in the sessions directory"}
            ) from None
        except (EventLogDecodeError, SessionLockedError, ValueError) as error:
            raise RequestError.invalid_params({"details": f"cannot load {session_id}: {error}"}) from None
        info = engine.session(session_id)
        if info.cwd != directory:
            raise RequestError.invalid_params(
                {"details": f"session {session_id} works in {info.cwd}, not in {directory}"}
            )
        self._give_servers(session_id, mcp_servers)
        translator = UpdateTranslator(info.cwd)
        self._translators[session_id] = translator
        conn = self.conn
        assert conn is not None
        for event in engine.store.replay(session_id):
            for update in translator.updates_for(event, history=True):
                await conn.session_update(session_id=session_id, update=update)
        return LoadSessionResponse()

    async def prompt(self, prompt: list[ContentBlock], session_id: str, **kwargs: Any) -> PromptResponse:
        engine = self._engine()
        conn = self.conn
        assert conn is not None
        translator = self._translators.get(session_id)
        if translator is None:
            raise RequestError.invalid_params({"details": f"unknown session {session_id}"})
        text = prompt_text(prompt)
        if isinstance(engine.store, JsonlFileEventStore):  # one writer per session: say who has it
            try:
                engine.store.claim(session_id)
            except SessionLockedError as error:
                raise RequestError.invalid_request({"details": str(error)}) from None
        ending: dict[str, Any] = {"stopReason": "cancelled"}
        try:
            async for event in engine.run_turn(session_id, text):
                for update in translator.updates_for(event):
                    await conn.session_update(session_id=session_id, update=update)
                if event.type == "turn.completed":
                    ending = dict(event.payload)
        except TurnConflict:
            raise RequestError.invalid_request(
                {"details": f"a prompt is already running in session {session_id}; cancel it first"}
            ) from None
        except BudgetExceeded as over:
            raise RequestError.invalid_request(
                {"details": f"{over.message}; raise the budget to go on", "errorCode": "budget_exceeded"}
            ) from None
        answer = ending_for(ending["stopReason"]).acp_stop_reason
        if answer is None:  # a failed turn: the prompt answers a JSON-RPC error
            message = ending.get("message") or ending.get("errorCode") or "the turn failed"
            raise RequestError.internal_error({"details": message, "errorCode": ending.get("errorCode")})
        return PromptResponse(stop_reason=answer, usage=acp_usage(ending.get("usage")))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if self.engine is not None:
            self.engine.stop_subtree(session_id)

    # -- helpers -------------------------------------------------------------------------------
    def _give_servers(self, session_id: str, servers: list[Any] | None) -> None:
        """The client's MCP servers for this session, started at its first turn with ours."""
        configs, left_out = served_mcp_servers(servers)
        for line in left_out:
            self.notice(line)
        tools = self._engine().session_tools
        if configs and isinstance(tools, McpServers):
            tools.give(session_id, configs)

    def _assign_script(self, session_id: str) -> None:
        engine = self._engine()
        scenario = self.scenario
        provider = engine.provider
        if scenario is None or not isinstance(provider, ScriptedProvider):
            return
        if self._created < len(scenario.sessions):
            provider.assign(session_id, scenario.sessions[self._created].steps)
        self._created += 1

    def notice(self, text: str) -> None:
        """One line on stderr, its control codes made visible (it may quote the client's words or
        an MCP server's)."""
        print(visible(f"agent-tui acp: {text}"), file=self.log, flush=True)


def _directory(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError.invalid_params({"details": f"cwd must be an absolute path, got {cwd!r}"})
    if not path.is_dir():
        raise RequestError.invalid_params({"details": f"cwd {cwd} is not a directory"})
    return path.resolve()
