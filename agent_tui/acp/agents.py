"""`AcpAgents`: the external ACP agents of one program (the dashboard, a test), as sessions of its engine.

```python
async with SessionEngine(store, provider, questions=Questions(None)) as engine:
    async with AcpAgents(engine) as agents:
        session = await agents.start(load_acp_agents()["claude"], cwd, prompt="Fix the tests")
        await session.turn.wait()
        session.prompt("Now the docs")      # a follow-up turn; stop it with session.cancel()
```

Invariants:
- one task group owns every background task of every agent (its process pumps, its turns, its
  terminals, its ordered writer); leaving the `async with` stops every running turn (each writes
  its `turn.completed`), ends every agent process (its whole process group) and waits for all
  of it, so no child process outlives the block;
- a session appears in the log (`session.created{client: <agent name>}`) as soon as `start`
  returns, before its program is even started: the first turn starts it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

import anyio
from acp.connection import StreamObserver
from anyio.abc import TaskGroup

from agent_tui.acp.client import AcpAgentSession, cannot_load
from agent_tui.acp.config import AcpAgentConfig
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.vault import ENVIRONMENT
from agent_tui.mcp.config import McpServerConfig


class AcpAgents:
    """Args:
    engine: the engine whose log, listeners, registry, permission policy and questions the
        agents share.
    start_timeout: seconds an agent has to answer `initialize` and `session/new`.
    cancel_timeout: seconds an agent has to answer a prompt after `session/cancel`.
    env: where the variables named in an agent's `env` come from (default: our environment).
    observers: called with every JSON-RPC message in either direction (tests validate them).
    mcp_servers: the MCP servers an agent is given in `session/new` (those enabled for its
        directory): the loaded config's `[mcp.NAME]` (`load_mcp_servers`); default: none.
    """

    def __init__(
        self,
        engine: SessionEngine,
        *,
        start_timeout: float = 30.0,
        cancel_timeout: float = 10.0,
        env: dict[str, str] | None = None,
        observers: list[StreamObserver] | None = None,
        mcp_servers: Mapping[str, McpServerConfig] | None = None,
    ) -> None:
        self.engine = engine
        self.start_timeout = start_timeout
        self.cancel_timeout = cancel_timeout
        self.env = env if env is not None else dict(ENVIRONMENT)
        self.observers = list(observers or ())
        self.mcp_servers: Mapping[str, McpServerConfig] = dict(mcp_servers or {})
        self.sessions: dict[str, AcpAgentSession] = {}
        self._group: TaskGroup | None = None

    async def __aenter__(self) -> AcpAgents:
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        group = self._group
        assert group is not None
        try:
            with anyio.CancelScope(shield=True):
                await self.close_all()
        finally:
            self._group = None
            result = await group.__aexit__(*exc)
        return result

    def spawn(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        """Run `fn(*args)` in the agents' task group."""
        self._running().start_soon(fn, *args)

    def _running(self) -> TaskGroup:
        if self._group is None:
            raise RuntimeError("use `async with AcpAgents(engine)` before starting agents")
        return self._group

    async def _serve(self, session: AcpAgentSession) -> AcpAgentSession:
        """Start the session's ordered writer and list it."""
        await self._running().start(session.writer.serve)
        self.sessions[session.session_id] = session
        return session

    async def start(
        self,
        config: AcpAgentConfig,
        cwd: Path | str,
        *,
        prompt: str | None = None,
        title: str | None = None,
        agent_name: str | None = None,
        **created: Any,
    ) -> AcpAgentSession:
        """A new session for `config`'s agent in `cwd`; with `prompt`, its first turn starts too.

        `agent_name` is its name in the tree (default: the agent's); `created` are further
        `session.created` fields (`worktree={"path", "branch"}`).

        Raises:
            RuntimeError: outside `async with`. `EventStoreFailure` if `session.created` cannot
                be stored.
        """
        self._running()  # outside `async with`: RuntimeError, before anything is written
        session_id = await self.engine.create_session(
            cwd,
            client=config.name,
            agent_name=agent_name or config.name,
            title=title or (prompt or "")[:60] or None,
            **created,
        )
        session = await self._serve(AcpAgentSession(self, config, session_id))
        if prompt is not None:
            session.prompt(prompt)
        return session

    async def reopen(self, config: AcpAgentConfig, session_id: str) -> AcpAgentSession:
        """An ACP-backed session of an earlier run, from its log: its next prompt starts the agent
        again and loads the agent's own session (`session/load`), so the agent remembers it. When
        the agent cannot (the log recorded `loadSession` false, or `initialize` says so later),
        the session is read-only: `read_only` says why, and prompts are refused with it.

        Raises:
            UnknownSession: no log for `session_id`. `EventLogDecodeError` for a corrupt log.
        """
        self._running()  # outside `async with`: RuntimeError, before anything is written
        await self.engine.open_session(session_id)
        session = AcpAgentSession(self, config, session_id)
        started = _agent_session(self.engine, session_id)
        session.resume_from = started.get("sessionId") if isinstance(started.get("sessionId"), str) else None
        if session.resume_from is not None and started.get("loadSession") is False:
            session.read_only = cannot_load(config.name)
        return await self._serve(session)

    def session(self, session_id: str) -> AcpAgentSession | None:
        """The ACP-backed session with that id (None for our own agents' sessions)."""
        return self.sessions.get(session_id)

    async def close(self, session_id: str) -> None:
        """Stop the session's turn and end its agent (its log stays)."""
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await session.close()

    async def close_all(self) -> None:
        """Stop every turn and end every agent, all at once."""
        sessions, self.sessions = list(self.sessions.values()), {}
        async with anyio.create_task_group() as group:
            for session in sessions:
                group.start_soon(session.close)


def _agent_session(engine: SessionEngine, session_id: str) -> dict[str, Any]:
    """The agent's own session as the log last recorded it (`session/new` or `session/load`): its
    `sessionId`, and whether the agent said it can load it (`loadSession`, in logs that have it)."""
    found: dict[str, Any] = {}
    for event in engine.store.replay(session_id):
        if event.type == "source.record" and event.payload["recordType"] in ("session/new", "session/load"):
            data = event.payload["data"]
            found = {**found, **data} if event.payload["recordType"] == "session/load" else dict(data)
    return found
