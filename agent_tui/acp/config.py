"""External ACP agents declared in the config file: `[acp.NAME]` tables.

```toml
[acp.claude]
command = "claude-code-acp"
args = []
env = ["ANTHROPIC_API_KEY"]
```

Invariants:
- the file is the one model profiles live in (`providers.config.config_path`: `$AGENT_TUI_CONFIG`,
  else `config.toml` in the platform's config directory), read once per process (`load_config`)
  and handed down as the loaded `Config`; a missing file declares no agents;
- `env` holds variable NAMES only: their values are taken from our environment when the agent
  starts (`engine.vault.ENVIRONMENT`: the keys agent-tui holds count as set; an agent gets only
  the keys it names), never from the file, and a name that is not set is simply not passed on;
- anything wrong is an `AcpConfigError` reading `PATH:LINE: reason`, naming the table or key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_tui.engine.vault import ENVIRONMENT
from agent_tui.providers.config import Config, ConfigError, config_path, read_named_tables
from agent_tui.providers.toml_lines import KeyLines

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEYS = ("command", "args", "env")


class AcpConfigError(ValueError):
    """An `[acp.NAME]` table cannot be used; the message reads `PATH:LINE: reason`."""


@dataclass(frozen=True)
class AcpAgentConfig:
    """How to start one external ACP agent.

    Attributes:
        name: the table's name (`claude` for `[acp.claude]`); the log's `client` and the agent's
            name in the tree.
        command: the program to run (looked up on `PATH` when it has no `/`).
        args: its arguments.
        env: names of environment variables passed on to it (besides a minimal base of `HOME`,
            `PATH`, `USER`, ...).
    """

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[str, ...] = ()

    def environment(self, source: Mapping[str, str] = ENVIRONMENT) -> dict[str, str]:
        """The named variables that are set in `source`, with their values."""
        return {name: source[name] for name in self.env if name in source}

    def missing_env(self, source: Mapping[str, str] = ENVIRONMENT) -> list[str]:
        """The named variables that are not set (mentioned when the agent fails to start)."""
        return [name for name in self.env if name not in source]

    def describe(self) -> str:
        """The command line, as a person would type it."""
        import shlex

        return shlex.join([self.command, *self.args])


def load_acp_agents(source: Path | Config | None = None) -> dict[str, AcpAgentConfig]:
    """Read every `[acp.NAME]` table of the loaded config, or of the file at a path (other tables
    are not looked at).

    Raises:
        AcpConfigError: the file cannot be read, is not TOML, or an `[acp.NAME]` table is wrong.
    """
    source = source if source is not None else config_path()
    path = source.path if isinstance(source, Config) else source
    try:
        tables, lines = read_named_tables(source, "acp")
    except ConfigError as error:
        raise AcpConfigError(str(error)) from None
    return {name: _agent(path, lines, name, table) for name, table in tables.items()}


def _agent(path: Path, lines: KeyLines, name: str, table: Any) -> AcpAgentConfig:
    def fail(reason: str, key: str | None = None) -> AcpConfigError:
        where = ("acp", name, key) if key is not None else ("acp", name)
        return AcpConfigError(f"{path}:{lines.line(*where)}: {reason}")

    if not _NAME.match(name):
        raise fail(f"acp.{name}: an agent's name may use letters, digits, '-' and '_' only")
    if not isinstance(table, dict):
        raise fail(f"acp.{name} must be a table with command, args and env")
    for key in table:
        if key not in _KEYS:
            raise fail(f"acp.{name}.{key}: unknown setting (known: {', '.join(_KEYS)})", key)
    command = table.get("command")
    if not isinstance(command, str) or not command.strip():
        raise fail(f'acp.{name}.command: expected the program to run, e.g. "claude-code-acp"', "command")
    args = table.get("args", [])
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise fail(f"acp.{name}.args: expected a list of strings", "args")
    env = table.get("env", [])
    if not isinstance(env, list) or not all(isinstance(item, str) for item in env):
        raise fail(f"acp.{name}.env: expected a list of environment variable names", "env")
    for item in env:
        if not _ENV_NAME.match(item):
            raise fail(
                f"acp.{name}.env: {item!r} is not a variable name (list names like "
                '"ANTHROPIC_API_KEY"; values come from your environment)',
                "env",
            )
    return AcpAgentConfig(name, command.strip(), tuple(args), tuple(env))
