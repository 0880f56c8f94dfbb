"""`agent-tui mcp list`: each configured server, whether it started here, and its tools.

Invariants:
- a server enabled for the directory and profile is started exactly as a session starts it
  (`McpServers`: the directory, the clean environment plus its named variables) and stopped
  before this returns; one that is not enabled is listed with why, and not started;
- every line is one server or one tool; a tool whose offered name (`tool_name`) an earlier
  tool already has says it is not offered, as the session leaves it out (`tools_of`); what a server said (names, descriptions, reasons) is
  cut to one line here and made visible (no control codes) by the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import anyio

from agent_tui.events.terminal_text import one_line
from agent_tui.mcp.config import McpServerConfig, enabled_servers
from agent_tui.mcp.servers import McpServers
from agent_tui.mcp.tool import tool_name

__all__ = ["servers_report"]

_SESSION = "mcp-list"


async def servers_report(configs: Mapping[str, McpServerConfig], cwd: Path, profile: str | None) -> str:
    """The report `agent-tui mcp list` prints (see the module docstring)."""
    if not configs:
        return "No MCP servers are configured (add [mcp.NAME] tables to the config file, see docs/mcp.md).\n"
    servers = McpServers(configs, lambda session_id: profile)
    async with anyio.create_task_group() as group:
        await servers.open(_SESSION, cwd, group)
        started = {server.name: server for server in servers.started(_SESSION)}
        running = {name for name, server in started.items() if server.status == "running"}
        servers.close(_SESSION)
    enabled = {config.name for config in enabled_servers(configs, profile, cwd)}
    lines: list[str] = []
    offered: dict[str, str] = {}  # name -> the server whose tool has it (the first, as `tools_of`)
    for config in configs.values():
        lines.append(f"{config.name} ({config.transport}: {config.describe()})")
        server = started.get(config.name)
        if config.name not in enabled or server is None:
            lines.append(f"  not started: {_why_not_enabled(config, profile, cwd)}")
            continue
        if config.name not in running:
            lines.append(f"  not started: {one_line(server.reason or server.status, 400)}")
            continue
        lines.append(f"  started, {len(server.tools)} tool{'s' if len(server.tools) != 1 else ''}")
        for tool in server.tools:
            risk = config.risk_of(tool.name)
            hint = ", says read-only" if tool.annotations and tool.annotations.read_only_hint else ""
            about = one_line(tool.description or "", 100)
            name = tool_name(config.name, tool.name)
            label = f"{config.name}'s {one_line(tool.name, 60)}"
            first = offered.setdefault(name, label)
            if first != label:
                about = f"not offered: {first} has the same name. {about}"
            lines.append(f"    {name}  [{risk}{hint}]  {about}".rstrip())
    return "\n".join(lines) + "\n"


def _why_not_enabled(config: McpServerConfig, profile: str | None, cwd: Path) -> str:
    if not config.enabled:
        return "enabled = false"
    if config.profiles and profile not in config.profiles:
        using = f"profile {profile}" if profile else "no profile"
        return f"only with profiles {', '.join(config.profiles)} ({using} here)"
    return f"only in {', '.join(str(project) for project in config.projects)} (not {cwd})"
