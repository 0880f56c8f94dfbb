"""The config file's `[shell_env]` and `[sandbox]` tables, turned into how shell commands run.

Invariants:
- `shell_setup_for` hides every variable the config names as a model key (each profile's
  `api_key_env`, and `$AGENT_TUI_API_KEY_ENV`'s), passes the names of `shell_env.include`, and
  wants the sandbox unless `[sandbox] enabled = false`, and keeps the bus's `creds_file` among
  the secret files commands never see;
- `sandbox_state` is the one sentence every surface uses to say where commands run (`agent-tui
  models` always, the dashboard's top line when the sandbox is wanted but cannot run); it names
  the file and line that turned the sandbox off, or why bwrap does not work.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from agent_tui.engine.tools.sandbox import sandbox_status
from agent_tui.engine.tools.shell_setup import ShellSetup
from agent_tui.engine.vault import ENVIRONMENT
from agent_tui.providers.config import ENV_SETTINGS, Config

__all__ = ["sandbox_problem", "sandbox_state", "shell_setup_for"]


def shell_setup_for(config: Config, env: Mapping[str, str] = ENVIRONMENT) -> ShellSetup:
    """How shell commands run under this config (see the module docstring)."""
    hidden = set(config.key_variables())
    named = env.get(ENV_SETTINGS["api_key_env"], "").strip()
    if named:
        hidden.add(named)
    creds = config.bus.get("creds_file")
    secret_files = frozenset(
        {os.path.abspath(os.path.expanduser(creds))} if isinstance(creds, str) and creds else ()
    )
    return ShellSetup(
        include=frozenset(config.shell_include),
        hidden=frozenset(hidden),
        sandbox=config.sandbox_enabled,
        secret_files=secret_files,
    )


def sandbox_problem(config: Config) -> str | None:
    """Why commands run without the sandbox although the config wants one (None: they do not)."""
    if not config.sandbox_enabled:
        return None
    status = sandbox_status()
    if status.available:
        return None
    return f"Shell commands run without a sandbox: {status.problem}."


def sandbox_state(config: Config) -> str:
    """Where shell commands run, in one sentence."""
    if not config.sandbox_enabled:
        return f"off ([sandbox] enabled = false in {config.where_set('sandbox', 'enabled')})"
    status = sandbox_status()
    if status.available:
        return (
            f"bwrap ({status.bwrap}): commands write only in the session's directory, see their "
            "own processes, and reach the network only when classified network"
        )
    return f"not available, commands run without one: {status.problem}"
