"""`ExternalAgents`: agents that are not our engine (ACP agents), as the workbench sees them.

The workbench starts, prompts, stops and closes sessions; some of them are run by a program of
their own (Claude Code through its ACP adapter, say) instead of by our engine's turn loop. This
port is what the workbench needs of whoever runs them; `agent_tui.acp` implements it on the
Agent Client Protocol. Such a session is still a session of the same engine: its events go
through the engine's log, listeners and registry, so stopping it with `stop_subtree` and
counting its running turns work as for our own agents.

Invariants:
- `serve(engine)` is entered once, after the engine is open and before any other call; leaving
  it stops every turn of every external agent and ends their processes;
- `start` returns only once `session.created` is stored (`client` is the agent's name), and
  starts the first turn when given a prompt;
- `prompt` raises `TurnConflict` while the session's turn runs (an external agent cannot be
  steered) and `ExternalAgentGone` when its agent cannot take prompts any more.

An external agent's question reaches `engine.questions` as an `AcpPermissionRequest`: a
`PermissionRequest` that also carries the agent's own options (`AgentOption`: an id, the name the
agent gives it, and its kind: `allow_once`, `allow_always`, `reject_once` or `reject_always`).
An `AcpPermissionAnswer` may pick one of them by id; a plain `PermissionAnswer` is mapped onto
them by kind (`agent_tui.acp.permissions.choose_option`).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest


@dataclass(frozen=True, slots=True)
class AgentOption:
    """One option an ACP agent offers for a permission request."""

    option_id: str
    name: str
    kind: str  # allow_once | allow_always | reject_once | reject_always


@dataclass(frozen=True, slots=True)
class AcpPermissionRequest(PermissionRequest):
    """A request from an external ACP agent, with the agent's own options (in its order)."""

    options: tuple[AgentOption, ...] = ()


@dataclass(frozen=True, slots=True)
class AcpPermissionAnswer(PermissionAnswer):
    """An answer that names one of the agent's options (`option_id`)."""

    option_id: str | None = None


class ExternalAgentGone(Exception):
    """The session's agent cannot take prompts any more; the message says why."""


class ExternalAgents(Protocol):
    """Agents declared outside our engine (see the module docstring)."""

    def names(self) -> list[str]:
        """The agents that can be started, in the order the form lists them."""
        ...

    def describe(self, name: str) -> str:
        """What runs for `name` (its command line), for the form."""
        ...

    def serve(self, engine: SessionEngine) -> AbstractAsyncContextManager[object]:
        """Run agents as sessions of `engine` while inside."""
        ...

    async def start(
        self,
        name: str,
        cwd: Path,
        *,
        prompt: str | None,
        agent_name: str,
        title: str | None,
        created: Mapping[str, Any],
    ) -> str:
        """A new session of agent `name` in `cwd`, with `prompt` its first turn started (without
        one it waits for its first prompt); returns its id.

        `created` are further `session.created` fields (`worktree`).
        """
        ...

    async def reopen(self, name: str, session_id: str) -> str | None:
        """Take over a session of an earlier run from its log (its next prompt restarts the agent).

        Returns None, or why the session is read-only (its agent cannot load an earlier session).
        """
        ...

    def owns(self, session_id: str) -> bool:
        """Whether an external agent runs `session_id`."""
        ...

    def prompt(self, session_id: str, text: str) -> None:
        """Start the session's next turn with `text`."""
        ...

    async def close(self, session_id: str) -> None:
        """Stop the session's turn and end its agent (the log stays)."""
        ...
