"""The keys agent-tui holds for itself, out of its process environment and out of its tools' reach.

A model key (`OPENAI_API_KEY`, an `api_key_env` of the config) or any variable that looks secret
(by its name: `*TOKEN*`, `*SECRET*`, `*_KEY`, `AUTHORIZATION`, `*_WEBHOOK_URL`, …; or by its
value: a URL with credentials, a token's shape; the rules are `engine.secret_rules`) is taken
out of the environment when the program starts (`agent_tui.cli.entry`) and kept here instead,
so no child process inherits it and no tool reads it from `/proc/<agent-tui>/environ`.

Invariants:
- `is_secret` (name or value) is the one definition of a secret variable, shared by the start-up
  hand-over and every environment agent-tui builds for a child (`engine/tools/tool_env.py`);
  `GIT_CONFIG_KEY_<n>` names a git setting, not a secret (the pair is judged by its values,
  whole, by the shell's environment);
- `ENVIRONMENT` is what readers of keys consult instead of `os.environ` (the providers' key,
  the variables an ACP agent is configured to get, `agent-tui models`): a name held here wins
  over the process environment, every other name reads through to `os.environ`, live;
- `without_secrets` is the filter for a child whose environment is built elsewhere (a web tab,
  an ACP agent's inherited basics); the shell's own, richer filter is `tool_env`;
- values enter only through `keep` (once, at start-up, or by an embedding program) and are
  never written to a log, an error message or a child's environment by this module.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

from agent_tui.engine import secret_rules

__all__ = [
    "ENVIRONMENT",
    "KNOWN_KEY_NAMES",
    "SECRETS_FD_ENV",
    "held_names",
    "is_secret",
    "is_secret_name",
    "keep",
    "without_secrets",
]

SECRETS_FD_ENV = "AGENT_TUI_SECRETS_FD"
"""Names the inherited file descriptor the restarted process reads its keys from (start-up only)."""

KNOWN_KEY_NAMES = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
"""The vendors' own key variables: always held, whatever the pattern says."""

_held: dict[str, str] = {}


def is_secret_name(name: str) -> bool:
    """A variable name that looks like it holds a secret (a vendor's key variable, or a name the
    rules of `secret_rules.is_secret_name` find a secret word in)."""
    return name in KNOWN_KEY_NAMES or secret_rules.is_secret_name(name)


def is_secret(name: str, value: str) -> bool:
    """A variable that holds a secret: by its name (`is_secret_name`), or by its value (a URL
    with credentials, a token's shape: `secret_rules.secret_in_value`)."""
    return is_secret_name(name) or secret_rules.secret_in_value(value)


def without_secrets(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without its secret variables (`is_secret`) and without any name held here: for a
    child agent-tui starts with an environment built elsewhere (a web tab, an ACP agent)."""
    return {name: value for name, value in env.items() if not (is_secret(name, value) or name in _held)}


def keep(values: Mapping[str, str]) -> None:
    """Hold these variables (they are no longer expected in `os.environ`)."""
    _held.update(values)


def held_names() -> frozenset[str]:
    """The names of the variables held here (never their values)."""
    return frozenset(_held)


class _KeyedEnvironment(Mapping[str, str]):
    """The process environment with the held keys laid over it (read-only, always current)."""

    def __getitem__(self, name: str) -> str:
        if name in _held:
            return _held[name]
        return os.environ[name]

    def __iter__(self) -> Iterator[str]:
        yield from _held
        yield from (name for name in os.environ if name not in _held)

    def __len__(self) -> int:
        return len(_held) + sum(1 for name in os.environ if name not in _held)

    def __repr__(self) -> str:
        return f"<environment with {len(_held)} held keys>"  # never the values


ENVIRONMENT: Mapping[str, str] = _KeyedEnvironment()
