"""The environment a shell command gets: ours without the keys, and git made safe to run.

Invariants:
- no secret variable (`vault.is_secret`: by its name or by its value, the rules of
  `engine.secret_rules`), none held in the vault, and none the setup hides (every
  `api_key_env` of the config) is passed, unless the setup's `include` names it
  (`shell_env.include`); an included variable's value comes from the vault when it is held
  there, so passing one through works after the start-up hand-over too;
- the user's own `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` settings are passed as whole pairs:
  a pair either half of which carries a credential (`url.https://TOKEN@host/.insteadOf`), or
  that is incomplete, is left out and the rest renumbered, so git never meets a half pair;
- git never takes an optional lock (`GIT_OPTIONAL_LOCKS=0`: `git status` does not rewrite the
  index), never asks on a terminal (`GIT_TERMINAL_PROMPT=0`, no `GIT_ASKPASS`/`SSH_ASKPASS`),
  never pages (`GIT_PAGER`, `PAGER` and `core.pager` are `cat`), never starts a repository's
  fsmonitor program (`core.fsmonitor=false`) and never uses a bare repository it was not
  pointed at (`safe.bareRepository=explicit`); the three config settings are passed as
  `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` after any the user already set (`GIT_CONFIG_COUNT`
  grows by three), and environment settings beat every config file of the repository;
- the result is a fresh dict: the process environment is never changed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from agent_tui.engine import secret_rules, vault
from agent_tui.engine.tools.shell_setup import ShellSetup

__all__ = ["shell_environment"]

GIT_HARDENING: Mapping[str, str] = {
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
}
"""Variables every command gets, whatever the user's environment says."""

GIT_SETTINGS: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("safe.bareRepository", "explicit"),
)
"""git config settings every command gets, through `GIT_CONFIG_COUNT`."""

DROPPED = frozenset({"GIT_ASKPASS", "SSH_ASKPASS", vault.SECRETS_FD_ENV})
"""Variables never passed (a prompt program a command could drive; our start-up hand-over)."""


def shell_environment(setup: ShellSetup, source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for one shell command (see the module docstring).

    Args:
        setup: which names are passed through or hidden on purpose.
        source: the environment to start from (default: this process's, `os.environ`).
    """
    source = os.environ if source is None else source
    held = vault.held_names()
    env: dict[str, str] = {}
    for name, value in source.items():
        if name in DROPPED:
            continue
        if name in setup.include or not (
            vault.is_secret(name, value) or name in held or name in setup.hidden
        ):
            env[name] = value
    for name in setup.include:
        if name in held and name not in DROPPED:
            env[name] = vault.ENVIRONMENT[name]
    env.update(GIT_HARDENING)
    _add_git_settings(env)
    return env


def _add_git_settings(env: dict[str, str]) -> None:
    """Put the user's whole, credential-free settings first, renumbered, then ours."""
    text = env.get("GIT_CONFIG_COUNT", "").strip()
    # git refuses to run with a count it cannot read; such a list is started afresh.
    count = min(int(text), _MAX_USER_SETTINGS) if text.isdigit() else 0
    pairs = [
        (env[key], env[value])
        for key, value in ((f"GIT_CONFIG_KEY_{n}", f"GIT_CONFIG_VALUE_{n}") for n in range(count))
        if key in env and value in env
    ]
    for name in [name for name in env if name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))]:
        del env[name]
    pairs = [(key, value) for key, value in pairs if not _carries_credential(key, value)]
    pairs.extend(GIT_SETTINGS)
    for number, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    env["GIT_CONFIG_COUNT"] = str(len(pairs))


_MAX_USER_SETTINGS = 10_000
"""More settings than anyone sets by hand: a count beyond it is not walked to its end."""


def _carries_credential(key: str, value: str) -> bool:
    """A setting whose name or value holds a credential by the value rules (an `insteadOf` URL
    with a token, an `http.extraHeader` with an `Authorization:`), even when `include`d half-way."""
    return secret_rules.secret_in_value(key) or secret_rules.secret_in_value(value)
