"""How this program runs shell commands: which variables they may see, and whether in a sandbox.

The program that runs sessions (the `agent-tui` command) sets it from the config file's
`[shell_env]` and `[sandbox]` tables for as long as a command runs (`use_shell_setup`); the shell
tool reads it for every call (`current_shell_setup`), so the dashboard, `run`, an ACP agent's
terminals and sub-agents all run commands the same way.

Invariants:
- the setting is a context variable, not a global: it reaches every task started under
  `use_shell_setup` (the event loop copies it), is restored when the block ends, and a program
  embedding the engine without setting it gets the default;
- the default passes no secret-looking variable through and runs commands without a sandbox
  (the engine alone does not know whether the machine has one or the user wants it); the
  `agent-tui` command turns the sandbox on unless the config says `[sandbox] enabled = false`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["ShellSetup", "current_shell_setup", "use_shell_setup"]


@dataclass(frozen=True)
class ShellSetup:
    """Attributes:
    include: variables passed to commands although their names look secret (`shell_env.include`).
    hidden: more variables kept from commands although their names do not look secret (every
        `api_key_env` of the config).
    sandbox: run commands in the sandbox where the machine has one (`sandbox.enabled`).
    secret_files: absolute paths of files agent-tui keeps secrets in that the config names
        (`[bus] creds_file`): hidden and never `read`, like the credential stores.
    """

    include: frozenset[str] = field(default_factory=frozenset)
    hidden: frozenset[str] = field(default_factory=frozenset)
    sandbox: bool = False
    secret_files: frozenset[str] = field(default_factory=frozenset)


_SETUP: ContextVar[ShellSetup] = ContextVar("agent_tui_shell_setup", default=ShellSetup())  # noqa: B039


def current_shell_setup() -> ShellSetup:
    """The setup shell commands run with here and now."""
    return _SETUP.get()


@contextmanager
def use_shell_setup(setup: ShellSetup) -> Iterator[ShellSetup]:
    """Run the block (and every task it starts) with `setup`; the previous one comes back after."""
    token = _SETUP.set(setup)
    try:
        yield setup
    finally:
        _SETUP.reset(token)
