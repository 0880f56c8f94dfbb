"""An ACP client's `mcpServers` as our MCP server settings, for the sessions `agent-tui acp` serves.

An editor sends the MCP servers it wants a session to have in `session/new` (and
`session/load`): stdio ones with their command, arguments and variables, HTTP ones with their
address and headers. The session gets them besides the config file's `[mcp.NAME]` servers.

Invariants:
- a stdio server and a streamable-HTTP one are taken (this agent says `mcpCapabilities.http`);
  an SSE one is not (the transport is deprecated and not spoken here): it is left out with a
  line saying so;
- the variables' and headers' values are the client's, used as they are (`McpServerConfig.given`:
  no `${NAME}` of ours is filled in them, no key of ours is added): they go to that server's
  process or requests alone and are never written to a log;
- a client's name becomes a valid server name (`mcp.config.NAME`: other characters made `-`),
  each name once (a later one gets `-2`, `-3`, ...), so its tools are `mcp__NAME__TOOL`;
- a client's stdio server starts as every stdio server does (`mcp.stdio`): under our launcher,
  in a private empty folder, never the session's directory, its whole tree ended with it;
- the calls of a client's server go through the permission engine like any MCP call: `execute`
  risk, a `readOnlyHint` shown but not trusted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer

from agent_tui.mcp.config import McpServerConfig
from agent_tui.providers.config import is_http_url

__all__ = ["served_mcp_servers"]

_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9-]+")


def served_mcp_servers(servers: Sequence[Any] | None) -> tuple[list[McpServerConfig], list[str]]:
    """The servers of a `session/new` (or `session/load`), and a line for each one left out."""
    configs: list[McpServerConfig] = []
    left_out: list[str] = []
    taken: set[str] = set()
    for server in servers or ():
        name = _unique(_name(getattr(server, "name", "")), taken)
        if isinstance(server, McpServerStdio):
            given = {variable.name: variable.value for variable in server.env}
            configs.append(
                McpServerConfig(name, command=server.command, args=tuple(server.args), given=given)
            )
        elif isinstance(server, HttpMcpServer):
            if not is_http_url(server.url):
                left_out.append(f"MCP server {name} left out: its url is not an http:// or https:// address")
                continue
            given = {header.name: header.value for header in server.headers}
            configs.append(McpServerConfig(name, url=server.url, given=given))
        elif isinstance(server, SseMcpServer):
            left_out.append(
                f"MCP server {name} left out: SSE servers are not supported (use streamable HTTP)"
            )
        else:
            left_out.append(f"MCP server {name} left out: its transport is not supported")
    return configs, left_out


def _name(given: str) -> str:
    return _NOT_IN_NAME.sub("-", given).strip("-")[:40] or "server"


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}-{n}"
    taken.add(candidate)
    return candidate
