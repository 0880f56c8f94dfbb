"""`Run`: what the dashboard's screens use of the run they show and control.

Two runs fit it: `LiveRun` (the engine in this process) and `AttachedRun` (hosts on a bus, by
control requests). The screens hold a `Run`, so the same keys, dialogs and notices work in both;
where they differ (`remote`: closing a session, previews of local files) the screen asks.
Finishing a session's work is the same `Finishing` port on both (`finishing`).

Invariants: a `Run` never blocks the UI (what takes time is awaited in a worker or done in the
background), and every method works before the run is up (it refuses or says nothing waits).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from agent_tui.ports import (
    AcpPermissionRequest,
    AgentSpec,
    BudgetLimit,
    Finishing,
    ModelChoice,
    PermissionAnswer,
    ProjectRulesState,
    RunResult,
    SendRefused,
    Sent,
    Workbench,
)
from agent_tui.reducer import DashboardState
from agent_tui.tui.redraw_throttle import RedrawThrottle


class Run(Protocol):
    @property
    def remote(self) -> bool:
        """Whether the sessions run elsewhere (on hosts of a bus)."""

    @property
    def workbench(self) -> Workbench | None:
        """The local workbench; None for a remote run."""

    @property
    def finishing(self) -> Finishing | None:
        """Finishing sessions' work (review, commit, merge, discard, rewind, reopen): the local
        workbench, or the hosts' by request; None before the run is up."""

    @property
    def sessions_dir(self) -> Path | None: ...

    @property
    def project(self) -> Path | None: ...

    @property
    def models(self) -> list[ModelChoice]: ...

    @property
    def finished(self) -> bool: ...

    @property
    def state(self) -> DashboardState: ...

    @property
    def redraws(self) -> RedrawThrottle:
        """When the screen redraws `state` (every change of the run is told to it)."""

    async def play(self) -> RunResult | None: ...
    async def shutdown(self, timeout: float = 5.0) -> None: ...
    def log_of(self, session_id: str) -> Path | None: ...
    def is_external(self, client: str | None) -> bool: ...
    def external_agents(self) -> list[tuple[str, str]]: ...
    def project_rules(self) -> ProjectRulesState | None: ...
    def check_project_rules(self) -> None: ...
    def accept_project_rules(self, digest: str) -> bool: ...
    def is_waiting(self, session_id: str, request_id: str) -> bool: ...
    def waiting_request(self, session_id: str, request_id: str) -> AcpPermissionRequest | None: ...
    def answer(self, session_id: str, request_id: str, answer: PermissionAnswer) -> bool: ...
    def stop_subtree(self, session_id: str) -> int: ...
    def stop_all(self) -> int: ...
    def running_turns(self) -> int: ...
    def send(self, session_id: str, text: str) -> Sent | SendRefused: ...
    def session_chosen(self, session_id: str) -> None:
        """The user chose the session in the tree (a finished one may be read now)."""

    async def start_agent(self, spec: AgentSpec, host: str | None = None) -> str | None:
        """Start a new agent (on `host`, for a remote run; a local run has none)."""
        ...

    def agent_hosts(self) -> tuple[dict[str, str | None], str | None]:
        """The hosts a new agent may start on, each with its own directory (None: not known),
        and the one the form offers first (a local run: none, None)."""
        ...

    async def set_budget(self, session_id: str, budget: BudgetLimit | None) -> str | None:
        """Set the whole budget of the session's tree (None: none): None when done, else why not."""
        ...

    async def close_session(self, session_id: str) -> str | None:
        """A remote run's close (its host stops the subtree and forgets it): a problem in one
        sentence, or None. A local run closes through its workbench instead (worktree choices)."""
