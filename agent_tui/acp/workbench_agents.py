"""`AcpWorkbenchAgents`: the ACP agents of the config file, as the workbench's external agents.

```python
agents = AcpWorkbenchAgents(load_acp_agents())
workbench = Workbench.for_project(..., external=agents)
async with workbench.serving():          # the engine open, and `AcpAgents` on it
    await workbench.start_agent(AgentSpec("Fix the tests", project, acp="claude"))
```

It implements `runtime.external_agents.ExternalAgents` on `AcpAgents`: one ACP session per
session of the tree, questions in `engine.questions` (the dashboard's approval queue), stop
through the engine (`session/cancel`), follow-ups as `session/prompt`.

Invariants:
- the agents are those of the mapping given, in its order; a name not in it is refused with the
  names that are (`UnknownAcpAgent`);
- every session started or reopened here is closed (its process group ended) when `serve` is
  left, or earlier by `close`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agent_tui.acp.agents import AcpAgents
from agent_tui.acp.client import AcpAgentSession, AgentFailure
from agent_tui.acp.config import AcpAgentConfig
from agent_tui.engine.engine import SessionEngine
from agent_tui.runtime.external_agents import ExternalAgentGone


class UnknownAcpAgent(KeyError):
    """No `[acp.NAME]` table for that name; the message lists the configured names."""

    def __str__(self) -> str:
        return str(self.args[0])


def unknown_agent_message(name: str, configured: Mapping[str, object], where: object) -> str:
    """`no ACP agent named 'x' in FILE (configured: a, b)`, or how to declare one."""
    if configured:
        return f"no ACP agent named {name!r} in {where} (configured: {', '.join(configured)})"
    return f"no ACP agent named {name!r}: {where} declares none (add an [acp.{name}] table)"


class AcpWorkbenchAgents:
    """Args:
    configs: the agents by name (`load_acp_agents()`), in the order the form lists them.
    where: where they were declared (the config file), for messages.
    agents_options: passed to `AcpAgents` (`start_timeout`, `cancel_timeout`, `env`, `observers`,
        `mcp_servers`).
    """

    def __init__(
        self,
        configs: Mapping[str, AcpAgentConfig],
        *,
        where: object = "the config file",
        **agents_options: Any,
    ) -> None:
        self.configs = dict(configs)
        self.where = where
        self.agents_options = agents_options
        self.hub: AcpAgents | None = None

    def names(self) -> list[str]:
        return list(self.configs)

    def describe(self, name: str) -> str:
        return self.config(name).describe()

    def config(self, name: str) -> AcpAgentConfig:
        try:
            return self.configs[name]
        except KeyError:
            raise UnknownAcpAgent(unknown_agent_message(name, self.configs, self.where)) from None

    @asynccontextmanager
    async def serve(self, engine: SessionEngine) -> AsyncIterator[AcpAgents]:
        async with AcpAgents(engine, **self.agents_options) as hub:
            self.hub = hub
            try:
                yield hub
            finally:
                self.hub = None

    def _hub(self) -> AcpAgents:
        if self.hub is None:
            raise RuntimeError("the ACP agents are not being served (enter `serve(engine)` first)")
        return self.hub

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
        session = await self._hub().start(
            self.config(name), cwd, prompt=prompt, title=title, agent_name=agent_name, **created
        )
        return session.session_id

    async def reopen(self, name: str, session_id: str) -> str | None:
        session = await self._hub().reopen(self.config(name), session_id)
        return session.read_only

    def owns(self, session_id: str) -> bool:
        return self.hub is not None and self.hub.session(session_id) is not None

    def session(self, session_id: str) -> AcpAgentSession:
        session = self._hub().session(session_id)
        if session is None:
            raise KeyError(session_id)
        return session

    def prompt(self, session_id: str, text: str) -> None:
        session = self.session(session_id)
        if session.failure is not None:
            raise ExternalAgentGone(session.failure)
        try:
            session.prompt(text)
        except AgentFailure as failure:
            raise ExternalAgentGone(str(failure)) from None

    async def close(self, session_id: str) -> None:
        if self.hub is not None:
            await self.hub.close(session_id)
