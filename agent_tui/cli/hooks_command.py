"""`agent-tui hooks install|uninstall [CLI ...] [--user | --project DIR]` and `agent-tui hooks status`.

`install` puts agent-tui's hook into Claude Code's and Codex's hook files (both CLIs unless named;
the user's files unless `--project DIR`), after the user's own hooks (`agent_tui.terminal.install`
says where and how). A CLI older than its first version with `PermissionRequest` is refused in one
sentence naming the version needed; a CLI that is not on `$PATH` gets the hook anyway, with a
warning (it may be installed later), as does one whose version cannot be read. `uninstall` removes
exactly what `install` added. `status` says, for each CLI, its version, whether the hook is
installed for the user and for the project (`--project DIR`, default: the current directory), and
whether an agent-tui is listening for the hooks (a ping over `hook_wire.socket_path()`, answered
by that agent-tui's pid and whether someone watches its queue).

Exit statuses: 0 when everything asked was done (or already so), 1 when a file or a CLI was
refused (the others are still done). Every line that names a path or says what a peer sent shows
its non-printable characters as escapes, never as themselves.

Invariants:
- this module imports only the standard library and `agent_tui.terminal` (no engine, no Textual,
  no pydantic): a hook command is a quick one;
- nothing here runs a program: the CLIs' versions are read from their files (`cli_versions`).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from agent_tui.terminal.cli_versions import (
    CODEX_HOOKS_ON_BY_DEFAULT,
    COMMANDS,
    NAMES,
    FoundCli,
    Version,
    events_for,
    find_cli,
    minimum_version,
    shown,
)
from agent_tui.terminal.hook_wire import CLIS, PING_LINE, Cli, socket_path
from agent_tui.terminal.install import (
    InstallError,
    Outcome,
    Target,
    codex_worktree_home,
    hook_command,
    install,
    installed_state,
    project_target,
    uninstall,
    user_target,
)

EXIT_OK = 0
EXIT_FAILED = 1
PING_TIMEOUT = 1.0
"""Seconds `status` waits for a running agent-tui to answer its ping."""
_MAX_PONG = 4096


def cmd_hooks(args: argparse.Namespace) -> int:
    """Run `agent-tui hooks ACTION`."""
    action = args.hooks_action
    if action == "status":
        try:
            return status(Path(args.hooks_project or os.getcwd()))
        except FileNotFoundError:
            _warn("the current directory is gone; give the project with --project DIR")
            return EXIT_FAILED
    clis: tuple[Cli, ...] = tuple(dict.fromkeys(args.hooks_clis)) or CLIS
    project: Path | None = args.hooks_project
    if project is not None and not project.is_dir():
        _warn(f"--project {project}: not a folder")
        return EXIT_FAILED
    status_code = EXIT_OK
    for cli in clis:
        target = project_target(cli, project) if project is not None else user_target(cli)
        done = install_one(target) if action == "install" else uninstall_one(target)
        status_code = max(status_code, done)
    return status_code


def install_one(target: Target) -> int:
    """Install the hook into one file, checking the CLI's version first."""
    cli = target.cli
    found = find_cli(cli)
    if not _version_allows(cli, found) or _in_linked_codex_worktree(target):
        return EXIT_FAILED
    try:
        outcome = install(target, hook_command(cli), events_for(cli, found.version))
    except InstallError as error:
        _warn(str(error))
        return EXIT_FAILED
    _say_outcome(outcome)
    if cli == "codex":
        _say_codex_notes(target, found.version, changed=outcome.changed)
    return EXIT_OK


def uninstall_one(target: Target) -> int:
    try:
        _say_outcome(uninstall(target))
    except InstallError as error:
        _warn(str(error))
        return EXIT_FAILED
    return EXIT_OK


def _say_outcome(outcome: Outcome) -> None:
    _say(outcome.summary)
    for note in outcome.notes:
        _say(f"  {note}")


def _version_allows(cli: Cli, found: FoundCli) -> bool:
    """Whether the hook may be installed for the CLI as found (too old: no), warning when its
    version cannot be told."""
    name = NAMES[cli]
    needed = shown(minimum_version(cli))
    if found.command is None:
        _warn(
            f"{name} (`{COMMANDS[cli]}`) is not on PATH; installing its hook anyway for when it is "
            f"(its prompts reach agent-tui from {name} {needed} on)"
        )
    elif found.version is None:
        _warn(
            f"cannot tell which version of {name} {found.command} is; installing anyway "
            f"(its prompts reach agent-tui from {name} {needed} on)"
        )
    elif found.version < minimum_version(cli):
        _warn(
            f"{name} {shown(found.version)} ({found.command}) is too old for agent-tui's "
            f"hook: it needs {name} {needed} or newer, the first with PermissionRequest"
        )
        return False
    return True


def _in_linked_codex_worktree(target: Target) -> bool:
    """Whether `target` is a Codex project in a linked git worktree (Codex reads the main
    checkout's hooks there), warning where to install instead."""
    if target.cli != "codex" or target.project is None:
        return False
    home = codex_worktree_home(target.project)
    if home is None:
        return False
    _warn(
        f"{target.project} is in a linked git worktree: Codex reads its hooks from the main "
        f"checkout's {home / '.codex' / 'hooks.json'}, so nothing was installed here; run "
        f"`agent-tui hooks install codex --project {home}`"
    )
    return True


def _say_codex_notes(target: Target, version: Version | None, *, changed: bool) -> None:
    """What a Codex user should know after an install: the feature flag of older versions, a
    second install, a project file that is not private."""
    if version is not None and version < CODEX_HOOKS_ON_BY_DEFAULT:
        _say(
            f"  Codex {shown(version)} runs hooks only with `[features] codex_hooks = true` in its "
            "config.toml (agent-tui does not write it), or from Codex "
            f"{shown(CODEX_HOOKS_ON_BY_DEFAULT)} on"
        )
    _say_if_twice(target, version)
    if changed and target.scope == "project":
        _say(
            "  Codex reads a project's .codex/hooks.json only in a project you trust, and the file is "
            "not private to you: keep it out of your repository (.git/info/exclude)"
        )


def _say_if_twice(target: Target, version: Version | None) -> None:
    """Codex runs every matching hook of every file (Claude Code runs an identical command once):
    ours in both the user's and the project's file would bring each event to agent-tui twice."""
    try:
        other = user_target("codex") if target.scope == "project" else project_target("codex", Path.cwd())
    except OSError:
        return  # no current directory: no project to look at
    if other.path == target.path:
        return
    state = installed_state(other, hook_command("codex"), events_for("codex", version))
    if state.state in ("installed", "partly", "other"):
        _say(
            f"  agent-tui's hook is in {other.path} too: Codex runs both, so each event would reach "
            f"agent-tui twice; keep one (`agent-tui hooks uninstall codex "
            f"{'--user' if other.scope == 'user' else '--project ' + str(other.project)}`)"
        )


def status(project: Path) -> int:
    """`agent-tui hooks status`: each CLI's version and hook files, then the running agent-tui."""
    rows: list[tuple[str, str, str, str]] = []
    for cli in CLIS:
        found = find_cli(cli)
        name = NAMES[cli]
        if found.command is None:
            _say(f"{name}: not on PATH")
        elif found.version is None:
            _say(f"{name}: {found.command} (version unknown)")
        else:
            old = found.version < minimum_version(cli)
            warning = f" (too old: agent-tui's hook needs {shown(minimum_version(cli))})" if old else ""
            _say(f"{name}: {shown(found.version)} at {found.command}{warning}")
        events = events_for(cli, found.version)
        command = _command_or_none(cli)
        for target in (user_target(cli), project_target(cli, project)):
            state = installed_state(target, command, events) if command is not None else None
            words = state.words() if state is not None else "cannot tell (agent-tui's own path is unusual)"
            rows.append((name, target.scope, str(target.path), words))
    width = max(len(row[2]) for row in rows)
    for name, scope, path, words in rows:
        _say(f"  {name:<11} {scope:<7} {path:<{width}}  {words}")
    pong = ping(socket_path())
    where = socket_path()
    if isinstance(pong, Pong):
        watched = (
            "someone is watching its queue"
            if pong.watched
            else "nobody watches its queue now: hooks give no decision"
        )
        _say(f"agent-tui: reachable at {where} (pid {pong.pid}; {watched})")
    else:
        _say(f"agent-tui: not reachable at {where} ({pong}): hooks give no decision, the CLIs ask as usual")
    return EXIT_OK


def _command_or_none(cli: Cli) -> str | None:
    try:
        return hook_command(cli)
    except InstallError:
        return None


@dataclass(frozen=True)
class Pong:
    """A running agent-tui's answer to a ping."""

    pid: int
    watched: bool


def ping(path: Path, timeout: float = PING_TIMEOUT) -> Pong | str:
    """Ask the agent-tui listening at `path` whether it is there. Returns its `Pong`, or why not
    (a few words). The listener must run as this user (its peer credentials are checked where the
    system gives them), else its answer is not believed."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(str(path))
            peer = _peer_uid(conn)
            if peer is not None and peer != os.geteuid():
                return f"the listener runs as another user (uid {peer})"
            conn.sendall(PING_LINE)
            line = _read_line(conn)
    except FileNotFoundError:
        return "no agent-tui is running"
    except ConnectionRefusedError:
        return "no agent-tui is listening"
    except TimeoutError:
        return "it did not answer in time"
    except OSError as error:
        return _plain(error.strerror or str(error))
    try:
        fields = json.loads(line)
    except ValueError:
        return "its answer was not a pong"
    if not isinstance(fields, dict) or fields.get("pong") is not True:
        return "its answer was not a pong"
    pid = fields.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool):
        return "its answer was not a pong"
    return Pong(pid, fields.get("watched") is True)


def _peer_uid(conn: socket.socket) -> int | None:
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    import struct

    credentials = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return int(uid)


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    while b"\n" not in data and len(data) <= _MAX_PONG:
        chunk = conn.recv(_MAX_PONG)
        if not chunk:
            break
        data += chunk
    return data.split(b"\n", 1)[0]


def _plain(text: str) -> str:
    """`text` with every non-printable character (controls, bidi overrides, lone surrogates)
    written as its escape, so a path cannot drive the terminal."""
    if text.isprintable():
        return text
    return "".join(
        character
        if character.isprintable()
        else character.encode("unicode_escape", "backslashreplace").decode("ascii")
        for character in text
    )


def _say(line: str) -> None:
    print(_plain(line), flush=True)


def _warn(line: str) -> None:
    print(_plain(f"agent-tui: {line}"), file=sys.stderr, flush=True)
