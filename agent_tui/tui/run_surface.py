"""`Run`: what the dashboard's screens use of the run they show and control.

Two runs fit it: `LiveRun` (the engine in this process) and `AttachedRun` (hosts on a bus, by
control requests). The screens hold a `Run`, so the same keys, dialogs and notices work in both;
where they differ (`remote`: closing a session, previews of local files) the screen asks.
Every control action is a `Command` the screen gives through the run's `commands` (a
`CommandClient`: the executor itself locally, requests to the hosts when attached), and its
`Reply` is what the screen says; finishing a session's work (review, commit, merge, discard,
rewind, reopen) too.

Invariants: a `Run` never blocks the UI (a command is awaited in a worker), and every method
works before the run is up (a command is refused with a sentence, a query says nothing waits).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from textual.message import Message

from agent_tui.ports import (
    AgentSpec,
    CommandClient,
    ModelChoice,
    NewAgent,
    ProjectRulesState,
    RunResult,
)
from agent_tui.reducer import DashboardState
from agent_tui.tui.messages import AgentStarted, AgentStartFailed
from agent_tui.tui.redraw_throttle import RedrawThrottle


class Run(Protocol):
    remote: bool
    """Whether the sessions run elsewhere (on hosts of a bus)."""
    project: Path | None
    models: list[ModelChoice]
    finished: bool
    redraws: RedrawThrottle
    """When the screen redraws `state` (every change of the run is told to it)."""

    @property
    def commands(self) -> CommandClient:
        """Where the screens give their commands (stop, send, answer, budgets, new agents,
        closing and finishing sessions)."""

    @property
    def sessions_dir(self) -> Path | None: ...

    @property
    def state(self) -> DashboardState: ...

    async def play(self) -> RunResult | None: ...
    async def shutdown(self, timeout: float = 5.0) -> None: ...
    def log_of(self, session_id: str) -> Path | None: ...
    def is_external(self, client: str | None) -> bool: ...
    def external_agents(self) -> list[tuple[str, str]]: ...
    def project_rules(self) -> ProjectRulesState | None: ...
    def check_project_rules(self) -> None: ...
    def is_waiting(self, session_id: str, request_id: str) -> bool: ...
    def running_turns(self) -> int: ...
    def session_chosen(self, session_id: str) -> None:
        """The user chose the session in the tree (a finished one may be read now)."""

    def agent_hosts(self) -> tuple[dict[str, str | None], str | None]:
        """The hosts a new agent may start on, each with its own directory (None: not known),
        and the one the form offers first (a local run: none, None)."""
        ...


async def start_agent(
    run: Run, post: Callable[[Message], object], spec: AgentSpec, host: str | None = None
) -> str | None:
    """Start a new agent (on `host`, for a remote run); the UI hears `AgentStarted`, or
    `AgentStartFailed` with the spec kept for the form. Returns its session, or None."""
    reply = await run.commands.send(NewAgent.of(spec), host)
    session_id = reply.detail.get("sessionId")
    if not reply.ok or not isinstance(session_id, str):
        post(AgentStartFailed(spec, reply.message or "the host did not say which session it started"))
        return None
    post(AgentStarted(session_id))
    return session_id
