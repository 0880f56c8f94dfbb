"""MCP servers declared in the config file: `[mcp.NAME]` tables.

```toml
[mcp.github]                       # a stdio server
command = "github-mcp-server"
args = ["stdio"]
env = ["GITHUB_TOKEN"]             # variable NAMES; values come from your environment
cwd = "~/mcp/github"               # where it starts (default: a private empty folder, see mcp.launch)
risk = "execute"                   # the risk of its calls (default), or read/write/network/destructive
tools = { search_issues = "read" } # the risk of single tools
timeout = 60                       # seconds a call may take
startup_timeout = 10               # seconds it may take to start (default: timeout, at least 30)

[mcp.docs]                         # a streamable-HTTP server
url = "https://example.com/mcp"
headers = { Authorization = "Bearer ${DOCS_TOKEN}" }
profiles = ["work"]                # only with these model profiles
projects = ["~/code/site"]         # only for sessions working under these directories
```

Invariants:
- the file is the one model profiles and ACP agents live in (`providers.config.config_path`),
  read once per process (`load_config`) and handed down as the loaded `Config`; a missing file
  declares no servers;
- a secret never comes from the file: `env` holds variable names (as `[acp.NAME] env` does) and
  a header takes its value from `${NAME}` references, which are filled from our environment when
  the server is reached; a header whose name looks secret must use one;
- a stdio server starts where its `cwd` says, else in a private empty folder (`mcp.launch`),
  never in the session's directory; `cwd` is an absolute path (or `~/...`) to a folder;
- a server is enabled for a session when `enabled` is not false, its `profiles` (if any) name
  the profile in use, and its `projects` (if any) hold the session's directory;
- anything wrong is an `McpConfigError` reading `PATH:LINE: reason`, naming the table or key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from agent_tui.engine.vault import ENVIRONMENT, is_secret_name
from agent_tui.events.model import Risk
from agent_tui.providers.config import Config, ConfigError, config_path, is_http_url, read_named_tables

__all__ = [
    "DEFAULT_TIMEOUT",
    "START_TIMEOUT",
    "McpConfigError",
    "McpServerConfig",
    "check_server",
    "enabled_servers",
    "load_mcp_servers",
]

DEFAULT_TIMEOUT = 60.0
"""Seconds a call (and a server's start) may take unless `timeout` says otherwise."""
START_TIMEOUT = 30.0
"""The least time a server gets to start unless `startup_timeout` says otherwise (a short call
timeout must not stop a slow start)."""

NAME = re.compile(r"^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$")
"""A server's name: single `_` between other characters only, so `mcp__NAME__TOOL` names one
server (a server `a_` would share `mcp__a___x` with the tool `_x` of a server `a`)."""
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_KEYS = (
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "enabled",
    "profiles",
    "projects",
    "risk",
    "tools",
    "timeout",
    "startup_timeout",
)
_RISKS: tuple[str, ...] = get_args(Risk)
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})


class McpConfigError(ValueError):
    """An `[mcp.NAME]` table cannot be used; the message reads `PATH:LINE: reason`."""


@dataclass(frozen=True)
class McpServerConfig:
    """How to reach one MCP server, and what its calls risk.

    Attributes:
        name: the table's name (`github` for `[mcp.github]`); tools are offered as
            `mcp__NAME__TOOL`.
        command, args, env: a stdio server: the program, its arguments, and the names of the
            variables passed on to it (besides the clean environment shell commands get).
        cwd: the folder a stdio server starts in (None: a private empty one, `mcp.launch`).
        url, headers: a streamable-HTTP server: its address, and headers whose `${NAME}`
            references are filled from the environment.
        risk: the risk of its calls (`execute` unless set); `tool_risks` per tool.
        timeout: seconds a call may take.
        startup_timeout: seconds the server may take to start and list its tools (None: its
            `timeout`, at least `START_TIMEOUT`).
        given: values an ACP client sent with a server it gave a session (a stdio server's
            variables, an HTTP server's headers), used as they are (no `${NAME}` filled in them);
            never from the file, never written to a log.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    cwd: Path | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    profiles: tuple[str, ...] = ()
    projects: tuple[Path, ...] = ()
    risk: Risk = "execute"
    tool_risks: Mapping[str, Risk] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    startup_timeout: float | None = None
    given: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def start_timeout(self) -> float:
        """Seconds the server has to start and list its tools."""
        if self.startup_timeout is not None:
            return self.startup_timeout
        return max(self.timeout, START_TIMEOUT)

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def risk_of(self, tool: str) -> Risk:
        """The risk the user gave this tool, else the server's."""
        return self.tool_risks.get(tool, self.risk)

    def environment(self, source: Mapping[str, str] = ENVIRONMENT) -> dict[str, str]:
        """The named variables that are set in `source`, with their values (and a stdio
        server's `given` ones)."""
        named = {name: source[name] for name in self.env if name in source}
        return named | dict(self.given) if self.command is not None else named

    def header_values(self, source: Mapping[str, str] = ENVIRONMENT) -> dict[str, str]:
        """The headers with their `${NAME}` references filled (an unset one is empty)."""
        filled = {
            key: REFERENCE.sub(lambda match: source.get(match.group(1), ""), value)
            for key, value in self.headers.items()
        }
        return filled | dict(self.given) if self.url is not None else filled

    def missing_variables(self, source: Mapping[str, str] = ENVIRONMENT) -> list[str]:
        """The variables this server names that are not set (said when it fails to start)."""
        named = list(self.env)
        for value in self.headers.values():
            named.extend(REFERENCE.findall(value))
        return [name for name in dict.fromkeys(named) if name not in source]

    def describe(self) -> str:
        """The command line or the address, as a person would write it."""
        if self.command is None:
            return self.url or ""
        import shlex

        return shlex.join([self.command, *self.args])

    def enabled_for(self, profile: str | None, cwd: Path) -> bool:
        """Whether sessions of this profile working in `cwd` get this server."""
        if not self.enabled:
            return False
        if self.profiles and profile not in self.profiles:
            return False
        if self.projects:
            here = cwd.resolve()
            return any(here == project or here.is_relative_to(project) for project in self.projects)
        return True


def load_mcp_servers(source: Path | Config | None = None) -> dict[str, McpServerConfig]:
    """Every `[mcp.NAME]` table of the loaded config (or of the file at a path), checked; other
    tables are not looked at.

    Raises:
        McpConfigError: the file cannot be read, is not TOML, or an `[mcp.NAME]` table is wrong.
    """
    source = source if source is not None else config_path()
    path = source.path if isinstance(source, Config) else source
    try:
        tables, lines = read_named_tables(source, "mcp")
    except ConfigError as error:
        raise McpConfigError(str(error)) from None

    def where_in(name: str) -> Callable[..., str]:
        return lambda *keys: f"{path}:{lines.line('mcp', name, *keys)}"

    return {name: check_server(name, table, where_in(name)) for name, table in tables.items()}


def enabled_servers(
    servers: Mapping[str, McpServerConfig], profile: str | None, cwd: Path
) -> list[McpServerConfig]:
    """The servers a session of `profile` working in `cwd` gets, in the file's order."""
    return [server for server in servers.values() if server.enabled_for(profile, cwd)]


def check_server(name: str, table: Any, where: Callable[..., str]) -> McpServerConfig:
    """One server's table, checked; `where(*keys)` says where a key is (`PATH:LINE`).

    Raises:
        McpConfigError: naming the key and what it should be.
    """

    def fail(reason: str, key: str | None = None) -> McpConfigError:
        return McpConfigError(f"{where(key) if key is not None else where()}: mcp.{name}{reason}")

    if not NAME.match(name):
        raise fail(": a server's name may use letters, digits, '-' and single '_' between them only")
    if not isinstance(table, dict):
        raise fail(" must be a table with command (a stdio server) or url (an HTTP server)")
    for key in table:
        if key not in _KEYS:
            raise fail(f".{key}: unknown setting (known: {', '.join(_KEYS)})", key)
    transport = _transport(table, fail)
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise fail(".enabled: expected true or false", "enabled")
    profiles = _strings(table, "profiles", "a list of profile names", fail)
    projects = _strings(table, "projects", "a list of directories", fail)
    risk, tools = _risks(table, fail)
    timeout = _seconds(table.get("timeout", DEFAULT_TIMEOUT), "timeout", fail)
    startup = table.get("startup_timeout")
    if startup is not None:
        startup = _seconds(startup, "startup_timeout", fail)
    return McpServerConfig(
        name=name,
        **transport,
        enabled=enabled,
        profiles=profiles,
        projects=tuple(Path(project).expanduser().resolve() for project in projects),
        risk=risk,
        tool_risks=dict(tools),
        timeout=timeout,
        startup_timeout=startup,
    )


def _transport(table: dict[str, Any], fail: Callable[..., McpConfigError]) -> dict[str, Any]:
    """How the server is reached, checked: `command`, `args`, `env` and `cwd` of a stdio server,
    or `url` and `headers` of an HTTP one."""
    command = table.get("command")
    url = table.get("url")
    if (command is None) == (url is None):
        raise fail(": set command (a stdio server) or url (a streamable-HTTP server), not both")
    if command is not None and (not isinstance(command, str) or not command.strip()):
        raise fail('.command: expected the program to run, e.g. "github-mcp-server"', "command")
    if url is not None and not is_http_url(url):
        raise fail(".url: expected an http:// or https:// address", "url")
    if command is None and ("args" in table or "env" in table):
        key = "args" if "args" in table else "env"
        raise fail(f".{key}: only a stdio server (command) takes {key}", key)
    if command is None and "cwd" in table:
        raise fail(".cwd: only a stdio server (command) takes cwd", "cwd")
    cwd = table.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str) or not Path(cwd).expanduser().is_absolute():
            raise fail('.cwd: expected an absolute folder, e.g. "~/mcp/github"', "cwd")
        cwd = Path(cwd).expanduser()
    if url is None and "headers" in table:
        raise fail(".headers: only an HTTP server (url) takes headers", "headers")
    args = _strings(table, "args", "a list of strings", fail)
    env = _strings(table, "env", "a list of variable names", fail)
    for item in env:
        if not ENV_NAME.match(item):
            raise fail(
                f'.env: {item!r} is not a variable name (list names like "GITHUB_TOKEN"; values come '
                "from your environment)",
                "env",
            )
    headers = _headers(table.get("headers", {}), lambda reason: fail(f".headers{reason}", "headers"))
    command = command.strip() if command is not None else None
    return {"command": command, "args": args, "env": env, "cwd": cwd, "url": url, "headers": headers}


def _risks(table: dict[str, Any], fail: Callable[..., McpConfigError]) -> tuple[Any, dict[str, Any]]:
    """`risk` (of every call) and `tools` (the risk of single tools), checked."""
    risk = table.get("risk", "execute")
    if risk not in _RISKS:
        raise fail(f".risk: expected one of {', '.join(_RISKS)}, got {risk!r}", "risk")
    tools = table.get("tools", {})
    if not isinstance(tools, dict):
        raise fail('.tools: expected a table of tool risks, e.g. { search = "read" }', "tools")
    for tool, tool_risk in tools.items():
        if tool_risk not in _RISKS:
            raise fail(f".tools.{tool}: expected one of {', '.join(_RISKS)}, got {tool_risk!r}", "tools")
    return risk, tools


def _seconds(value: Any, key: str, fail: Callable[[str, str], McpConfigError]) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86_400:
        raise fail(f".{key}: expected seconds (more than 0, at most a day), got {value!r}", key)
    return float(value)


def is_secret_header(name: str) -> bool:
    """Whether a header holds a secret (`Authorization`, `Cookie`, `X-Api-Key`, ...): its value
    must come from a `${NAME}` reference, never from the file."""
    return name.lower() in _SECRET_HEADERS or is_secret_name(name.replace("-", "_"))


def _strings(
    table: dict[str, Any], key: str, what: str, fail: Callable[..., McpConfigError]
) -> tuple[str, ...]:
    """`table[key]` (none: empty), checked to be `what`: a list of strings."""
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise fail(f".{key}: expected {what}", key)
    return tuple(value)


def _headers(value: Any, fail: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
        raise fail(': expected a table of header values, e.g. { Authorization = "Bearer ${TOKEN}" }')
    for key, text in value.items():
        if is_secret_header(key) and not REFERENCE.search(text):
            raise fail(
                f".{key}: a secret is never written in the config; take it from a variable, "
                f'e.g. {key} = "Bearer ${{TOKEN_VARIABLE}}"'
            )
    return dict(value)
