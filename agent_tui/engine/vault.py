"""The keys agent-tui holds for itself, out of its process environment and out of its tools' reach.

A model key (`OPENAI_API_KEY`, an `api_key_env` of the config) or any variable whose name looks
secret (`*KEY*`, `*SECRET*`, `*TOKEN*`, `*PASSWORD*`, `*CREDENTIAL*`, in any case) is taken out
of the environment when the program starts (`agent_tui.cli.entry`) and kept here instead, so no
child process inherits it and no tool reads it from `/proc/<agent-tui>/environ`.

Invariants:
- `is_secret_name` is the one definition of a secret-looking name, shared by the start-up
  hand-over and the shell's environment (`engine/tools/tool_env.py`); `GIT_CONFIG_KEY_<n>`
  names a git setting, not a secret (its value, `GIT_CONFIG_VALUE_<n>`, is not held either,
  so the pair stays whole);
- `ENVIRONMENT` is what readers of keys consult instead of `os.environ` (the providers' key,
  the variables an ACP agent is configured to get, `agent-tui models`): a name held here wins
  over the process environment, every other name reads through to `os.environ`, live;
- values enter only through `keep` (once, at start-up, or by an embedding program) and are
  never written to a log, an error message or a child's environment by this module.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping

__all__ = [
    "ENVIRONMENT",
    "KNOWN_KEY_NAMES",
    "SECRETS_FD_ENV",
    "held_names",
    "is_secret",
    "is_secret_name",
    "keep",
]

SECRETS_FD_ENV = "AGENT_TUI_SECRETS_FD"
"""Names the inherited file descriptor the restarted process reads its keys from (start-up only)."""

KNOWN_KEY_NAMES = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
"""The vendors' own key variables: always held, whatever the pattern says."""

_SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASS|CREDENTIAL", re.IGNORECASE)
"""Codex's default exclusion, with `PASS` for `PASSWORD` and its shorter spellings (`PGPASS`)."""
_SECRET_WORDS = frozenset({"PWD", "PAT", "DSN", "AUTH", "CREDS", "PRIVATE", "SIGNING"})
"""Whole words of a name that say it holds a secret (`MYSQL_PWD`, `GITHUB_PAT`, `SENTRY_DSN`)."""
_NOT_SECRET = re.compile(r"^(?:GIT_CONFIG_KEY_[0-9]+|PWD|OLDPWD|SSH_AUTH_SOCK)$")
"""Names that match but hold none: a git setting's name, the working directory, a socket path."""
_URL_WITH_PASSWORD = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@")
"""A value that is a URL carrying a password (`postgres://app:hunter2@db/app`), whatever its name."""

_held: dict[str, str] = {}


def is_secret_name(name: str) -> bool:
    """A variable name that looks like it holds a secret (`*KEY*`, `*TOKEN*`, `*PASS*`, … in any
    case, or a whole word such as `PWD`, `PAT`, `DSN`, `AUTH`)."""
    if name in KNOWN_KEY_NAMES:
        return True
    if _NOT_SECRET.match(name) is not None:
        return False
    return _SECRET_NAME.search(name) is not None or not _SECRET_WORDS.isdisjoint(name.upper().split("_"))


def is_secret(name: str, value: str) -> bool:
    """A variable that holds a secret: by its name (`is_secret_name`), or a URL with a password."""
    return is_secret_name(name) or _URL_WITH_PASSWORD.match(value) is not None


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
