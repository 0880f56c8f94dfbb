"""The MCP servers of each root session: started with it, shared by its sub-agents, stopped with it.

Invariants:
- `open` starts every server enabled for the session (`McpServerConfig.enabled_for`: the
  profile in use, the session's directory) in the task group it is given, waits until each
  listed its tools or failed (each within its own timeout), and returns the tools of those
  that run; a server that fails is left out with its reason kept (`started`), the session goes
  on without it;
- `close` and `close_all` only ask the servers to stop; each server's task then closes its
  connection and its process group, so the task group that holds them can finish;
- a root session may also be `give`n servers of its own (an ACP client's `mcpServers`): they
  start after the configured ones, and one whose name a configured server has is left out,
  with a notice;
- this is the engine's `SessionTools` port: the engine never imports this package; the SDK is
  imported only when a session has a server to start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from anyio.abc import TaskGroup

from agent_tui.engine.tools.base import Tool
from agent_tui.mcp.config import McpServerConfig, enabled_servers

if TYPE_CHECKING:
    from agent_tui.mcp.connection import McpServer

__all__ = ["McpServers", "tools_of"]


class McpServers:
    """Starts and stops the configured servers for root sessions.

    Args:
        configs: every `[mcp.NAME]` of the config file.
        profile_of: the model profile a session uses (None: none), which decides the servers
            whose `profiles` are set.
        notice: told, in one line, of each server that did not start.
    """

    def __init__(
        self,
        configs: Mapping[str, McpServerConfig],
        profile_of: Callable[[str], str | None] = lambda session_id: None,
        *,
        notice: Callable[[str], object] = lambda text: None,
    ) -> None:
        self.configs = dict(configs)
        self.profile_of = profile_of
        self.notice = notice
        self._running: dict[str, list[McpServer]] = {}
        self._given: dict[str, list[McpServerConfig]] = {}

    def give(self, session_id: str, configs: Sequence[McpServerConfig]) -> None:
        """Servers of a root session's own, started with the configured ones at its first turn."""
        self._given[session_id] = list(configs)

    def started(self, session_id: str) -> list[McpServer]:
        """The servers of a root session (running or not, with their reasons)."""
        return list(self._running.get(session_id, ()))

    async def open(self, session_id: str, cwd: Path, group: TaskGroup) -> Sequence[Tool]:
        configs = enabled_servers(self.configs, self.profile_of(session_id), cwd)
        names = {config.name for config in configs}
        for config in self._given.pop(session_id, ()):
            if config.name in names:
                self.notice(f"MCP server {config.name} was given twice; the config file's is used")
                continue
            names.add(config.name)
            configs.append(config)
        if not configs:
            return []
        from agent_tui.mcp.connection import McpServer  # the SDK, only when a server is wanted

        servers = [McpServer(config) for config in configs]
        self._running[session_id] = servers
        for server in servers:
            group.start_soon(server.serve, name=f"mcp server {server.name}")
        for server in servers:
            await server.ready.wait()
            if server.status != "running":
                self.notice(f"MCP server {server.name} did not start: {server.reason}")
        return tools_of(servers)

    def close(self, session_id: str) -> None:
        self._given.pop(session_id, None)
        for server in self._running.pop(session_id, ()):
            server.stop()

    def close_all(self) -> None:
        for session_id in list(self._running):
            self.close(session_id)


def tools_of(servers: Sequence[McpServer]) -> list[Tool]:
    """The tools of the servers that run, each once (a second tool with the same name is left out)."""
    from agent_tui.mcp.tool import McpTool

    tools: dict[str, Tool] = {}
    for server in servers:
        if server.status != "running":
            continue
        for listed in server.tools:
            tool = McpTool(server, listed)
            tools.setdefault(tool.name, tool)
    return list(tools.values())
