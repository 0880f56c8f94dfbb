"""The process entry (`agent-tui`, `python -m agent_tui`): take the keys out of our own environment.

A tool's command can read its parent's environment (`cat /proc/$PPID/environ`, `ps eww`), and
the kernel keeps the environment a process was started with however `os.environ` is changed
later. So when the environment holds a key, the entry starts agent-tui again in the same process
(`os.execve`) with an environment that does not: the keys travel over an inherited, unnamed
file (a memfd, whose number is in `$AGENT_TUI_SECRETS_FD`), which the new program reads once,
closes, and keeps in the vault (`agent_tui.engine.vault`), where the providers and the ACP
agents' environments look for them.

Invariants:
- a key is taken out when the variable looks secret by its name or its value (`vault.is_secret`)
  or the config file names it as a profile's `api_key_env` (or `$AGENT_TUI_API_KEY_ENV` does);
  git's `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` pairs stay (taking half of one out would make
  every git agent-tui runs fail; the tools' environment drops such a pair whole); keys are never
  put on a command line, so `/proc/<agent-tui>/cmdline` holds only the user's own arguments;
- the new program is started with `-P`: the current directory (a repository we do not trust)
  is not put on the module path, so it cannot stand in for agent-tui;
- `agent-tui hook …` (the CLIs' hook, `agent_tui.terminal.hook_client`) is handed over before
  any of this: it reads no key, no config, and never restarts;
- `agent-tui --version` (exactly that) is answered before any of this too, from the installed
  distribution's metadata: it reads no config and no key, starts no tool and no child, and
  exits at once, so no command can read its environment through it, and which variables
  hold keys changes nothing it does; restarting it would only double its start-up;
- only the real entry does this: `agent_tui.cli.main` (what tests call in-process) never
  restarts anything; when the restart itself fails, the keys are still moved to the vault and
  out of `os.environ` (children do not get them), and one line on stderr says that our own
  `/proc` entry still shows them;
- a process holding keys makes itself not dumpable (`keep_out_debuggers`), so a command of the
  same user cannot read its memory either (root and `CAP_SYS_PTRACE` can: the sandbox's own
  process tree is what stops those);
- a bad `$AGENT_TUI_SECRETS_FD` is one sentence and exit status 2, never a traceback;
- the process is named `agent-tui` (`name_the_process`), however it was started (the console
  script, `python -m agent_tui`, the restart's `python -P -m agent_tui`): its name (`comm`, what
  `pgrep`/`pkill agent-tui` and `top` match) is `agent-tui`, its command line (`ps -o args`)
  `agent-tui` and the user's arguments; its environment's `/proc` entry is left as it is.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # `agent-tui --version` answers before anything else is imported
    from collections.abc import Mapping
    from typing import Literal, NoReturn

    from agent_tui.providers.config import Config

__all__ = ["keep_out_debuggers", "keys_to_move", "name_the_process", "run"]


def run() -> NoReturn:
    """The console script and `python -m agent_tui`."""
    args = sys.argv[1:]
    if args[:1] == ["hook"]:  # run by Claude Code or Codex once per tool call: no keys, no config
        from agent_tui.terminal.hook_client import main as hook

        sys.exit(hook(args[1:]))
    if args == ["--version"]:  # no config, no keys, no child: see the module docstring
        from agent_tui import __version__

        print(f"agent-tui {__version__}")
        sys.exit(0)
    from agent_tui.cli.status import EXIT_USAGE
    from agent_tui.engine import vault

    config = None  # read here once, handed to `main`: no one reads the file again
    handed = os.environ.pop(vault.SECRETS_FD_ENV, None)
    if handed is not None:
        try:
            vault.keep(_receive(handed))
        except _HandOverError as error:
            print(f"agent-tui: ${vault.SECRETS_FD_ENV}: {error}", file=sys.stderr)
            sys.exit(EXIT_USAGE)
    else:
        config = _good_config(os.environ)
        moved = keys_to_move(os.environ, config or False)
        if moved:
            _restart_without(moved, args)
    if vault.held_names():
        keep_out_debuggers()
    name_the_process(args)
    from agent_tui.cli import main

    sys.exit(main(args, config))


def keys_to_move(env: Mapping[str, str], config: Config | Literal[False] | None = None) -> dict[str, str]:
    """The variables of `env` that hold keys (see the module docstring), with their values.
    `config`: the loaded config file (None: read it here; False: it could not be read)."""
    import re

    from agent_tui.engine import vault
    from agent_tui.providers.config import ENV_SETTINGS

    if config is None:
        config = _good_config(env) or False
    named = set(config.key_variables()) if config else set()
    named.add(env.get(ENV_SETTINGS["api_key_env"], "").strip())
    return {
        name: value
        for name, value in env.items()
        if name in named or (vault.is_secret(name, value) and re.match(_GIT_SETTING, name) is None)
    }


_GIT_SETTING = r"^GIT_CONFIG_(?:KEY|VALUE)_[0-9]+$"
"""git's `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, which stay (see the module docstring)."""


def _good_config(env: Mapping[str, str]) -> Config | None:
    """The config file, or None when it is wrong (the command that needs it says what is wrong)."""
    from agent_tui.providers.config import ConfigError, config_path, load_config

    try:
        return load_config(config_path(env))
    except ConfigError:
        return None


def keep_out_debuggers() -> bool:
    """Make this process not dumpable (Linux): a process of the same user, a tool's command
    among them, can then neither trace it nor read its `/proc/<pid>/mem` or `environ`, where
    the held keys are. Root, or anyone with `CAP_SYS_PTRACE`, still can. Returns whether it
    was done."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


_PR_SET_DUMPABLE = 4


def name_the_process(args: list[str]) -> bool:
    """Name this process `agent-tui` for `ps`, `top`, `pgrep` and `pkill`: its command line
    becomes `agent-tui ARGS…` (written over the original one, which is always longer, so never
    over the environment's) and its name (`comm`) `agent-tui`. Returns whether it was done (not
    where `setproctitle` has no build for the system)."""
    try:
        import setproctitle
    except ImportError:
        return False
    os.environ["SPT_NOENV"] = "1"  # read by the first title set: stay within the command line's memory
    try:
        setproctitle.setproctitle(" ".join(["agent-tui", *args]))
    finally:
        del os.environ["SPT_NOENV"]
    setproctitle.setthreadtitle("agent-tui")
    return True


class _HandOverError(Exception):
    pass


def _restart_without(moved: dict[str, str], args: list[str]) -> None:
    """Start agent-tui again without `moved` in its environment; returns only if that failed."""
    import json

    from agent_tui.engine import vault

    for name in moved:
        os.environ.pop(name, None)
    vault.keep(moved)
    data = json.dumps(moved).encode("utf-8")
    try:
        fd = _anonymous_file(data)
        env = {**os.environ, vault.SECRETS_FD_ENV: str(fd)}
        executable = sys.executable
        if not executable:
            raise OSError("the Python interpreter's path is unknown")
        os.execve(executable, [executable, "-P", "-m", "agent_tui", *args], env)
    except OSError as error:
        print(
            f"agent-tui: could not restart without the keys in the process environment "
            f"({error.strerror or error}); tools still do not get them, but /proc of this process shows them",
            file=sys.stderr,
        )


def _anonymous_file(data: bytes) -> int:
    """An inheritable descriptor of a file nobody can open by name, holding `data`, at its start."""
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None:
        fd: int = memfd_create("agent-tui-keys", 0)  # without MFD_CLOEXEC: the new program gets it
    else:
        import tempfile

        with tempfile.TemporaryFile() as file:  # unlinked at once where the system can
            fd = os.dup(file.fileno())
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    return fd


def _receive(text: str) -> dict[str, str]:
    import json

    try:
        fd = int(text)
    except ValueError:
        raise _HandOverError(f"expected a file descriptor number, got {text!r}") from None
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except OSError as error:
        raise _HandOverError(f"cannot read file descriptor {fd}: {error.strerror or error}") from None
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        values = json.loads(b"".join(chunks))
    except ValueError:
        raise _HandOverError(f"file descriptor {fd} does not hold agent-tui's keys") from None
    if not isinstance(values, dict) or not all(
        isinstance(name, str) and isinstance(value, str) for name, value in values.items()
    ):
        raise _HandOverError(f"file descriptor {fd} does not hold agent-tui's keys")
    return values
