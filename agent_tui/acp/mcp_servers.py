"""The user's MCP servers as ACP's `mcpServers`, for the agents we drive (`session/new`).

Invariants:
- an agent gets the servers enabled for its session's directory (`McpServerConfig.enabled_for`,
  with no model profile: the agent picks its own model), in the config file's order;
- a stdio server is handed over as our launcher's command line (`mcp.launch.launch_command`:
  this Python, `-P -m agent_tui.mcp.launch -- COMMAND ARGS`), so wherever the agent starts it
  (its project), the server itself starts in a private empty folder (or the config's `cwd`)
  and its whole process tree ends with it, as our own sessions' servers do;
- a stdio server goes with the values of the variables its config names (those that are set),
  an HTTP one with its headers filled from the environment, and only to an agent that says it
  speaks MCP over HTTP (`mcpCapabilities.http`); the values travel on the agent's pipe and are
  never written to our log.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
)

from agent_tui.engine.vault import ENVIRONMENT
from agent_tui.mcp.config import McpServerConfig, enabled_servers
from agent_tui.mcp.launch import launch_command

__all__ = ["acp_mcp_servers"]


def acp_mcp_servers(
    configs: Mapping[str, McpServerConfig],
    cwd: Path,
    capabilities: AgentCapabilities | None,
    env: Mapping[str, str] = ENVIRONMENT,
) -> list[HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio]:
    """The `mcpServers` of a `session/new` (or `session/load`) for a session working in `cwd`."""
    mcp = capabilities.mcp_capabilities if capabilities is not None else None
    speaks_http = bool(mcp is not None and mcp.http)
    servers: list[HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio] = []
    for config in enabled_servers(configs, None, cwd):
        if config.command is not None:
            variables = [
                EnvVariable(name=name, value=value) for name, value in config.environment(env).items()
            ]
            command, *args = launch_command(config.command, list(config.args), config.cwd)
            servers.append(McpServerStdio(name=config.name, command=command, args=args, env=variables))
        elif speaks_http and config.url is not None:
            headers = [
                HttpHeader(name=name, value=value) for name, value in config.header_values(env).items()
            ]
            servers.append(HttpMcpServer(type="http", name=config.name, url=config.url, headers=headers))
    return servers
