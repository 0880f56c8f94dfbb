"""`agent-tui hooks install|uninstall`: agent-tui's entries in Claude Code's and Codex's hook files.

Where (`user_target`, `project_target`):
- Claude Code: `$CLAUDE_CONFIG_DIR/settings.json` (else `~/.claude/settings.json`) for the user;
  `DIR/.claude/settings.local.json` for a project, never its `settings.json`, which a team commits;
- Codex: `$CODEX_HOME/hooks.json` (else `~/.codex/hooks.json`) for the user;
  `DIR/.codex/hooks.json` for a project (Codex reads it only in a project the user trusted, and
  has no local-only variant of it; in a linked git worktree it reads the main checkout's instead,
  `codex_worktree_home`); never `config.toml`.

What: for each hook event the CLI's version has (`cli_versions.events_for`), one matcher group of
our own, `{"hooks": [{"type": "command", "command": …, "timeout": …}]}`, after the user's groups.
The command (`hook_command`) runs `python -I -c 'from agent_tui.terminal.hook_client import run; run()' CLI` with this
install's interpreter, through `/bin/sh` with a guard: when agent-tui's hook module or interpreter
is gone (agent-tui uninstalled without `hooks uninstall`), it does nothing and exits 0.

Invariants:
- the user's own hooks stay exactly as they were: same groups, same order, same positions (Codex
  keys its trust of a hook by the hook's position in its event's list, and by its content), same
  content; only the file's layout may change (it is written again with the indentation it had);
- installing what is installed changes nothing (not a byte); an entry of ours with another
  command (another agent-tui install) is replaced where it stands;
- the command and its timeout never depend on agent-tui's settings (the hook reads them when it
  runs): a changed command would make Codex ask the user to trust it again;
- uninstall removes exactly our entries; when what remains is what the file held before the
  install, the file's original bytes are put back (kept at install in agent-tui's data dir,
  0600, `install_record`), and a file the install made is removed again, with the folders it made
  when they are empty;
- a file that is a link, not a plain file, another user's, writable by group or others, or over
  `MAX_FILE`, or in a folder others may write (a project's folder included), is refused, and so
  is a project's `.claude`/`.codex` that is a link;
  JSON that cannot be read is `FILE:LINE: what`; in every refusal nothing is written;
- a file is written whole: a temporary file in its folder, renamed over it, with the mode the file
  had (a new file: 0600);
- agent-tui never writes Codex's trust of the hook (its config.toml): Codex asks the user once.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent_tui.private_files import make_private_dirs, untrusted_reason
from agent_tui.safety.git_hooks import common_dir_of, gitdir_of
from agent_tui.terminal.cli_versions import NAMES
from agent_tui.terminal.hook_wire import Cli
from agent_tui.terminal.install_record import (
    InstallRecord,
    drop_record,
    load_record,
    save_record,
)

Scope = Literal["user", "project"]

HOOK_MODULE = "agent_tui.terminal.hook_client"
HOOK_CALL = f"from {HOOK_MODULE} import run; run()"
"""What the installed command's Python runs (`python -I -c HOOK_CALL CLI`)."""
PERMISSION_TIMEOUT = 3600
"""Seconds the CLI lets a `PermissionRequest` hook run: one hour. The hook waits there for a person
to answer in agent-tui (Claude Code shows its own dialog meanwhile; Codex gets the question back
after `[hooks] hand_back_after`, which the hook reads when it runs), so this only bounds a hook
agent-tui never answers; it is fixed, since a changed entry makes Codex ask for trust again, and
large enough for any hand-back time a person would set. Claude Code `-p` waits at most this long."""
SESSION_END_TIMEOUT = 3
"""Seconds for `SessionEnd`: Codex allows it at most 3 (and warns at every start of a session when
asked for more); Claude Code keeps a session's end short too."""
EVENT_TIMEOUT = 60
"""Seconds for every other event: the hook reports it and returns at once; this bounds a stuck one."""
GUARD_NAME = "agent-tui-hook"
"""`$0` of the guard's shell: what `ps` shows for it."""

MAX_FILE = 16 << 20
"""The largest hook file read (16 MiB): a bigger one is refused, not loaded."""
_OURS = re.compile(
    r"agent_tui\.terminal\.hook_client(?: import run; run\(\)\")? (claude-code|codex)(?:\s|;|$)"
)
_UNSAFE_IN_PATH = re.compile(r"['\\\x00-\x1f\x7f]")


class InstallError(Exception):
    """An install or uninstall refused; the message is one sentence naming the file."""


@dataclass(frozen=True)
class Target:
    """One hook file of one CLI."""

    cli: Cli
    scope: Scope
    path: Path
    project: Path | None = None
    """The project's folder (scope `project`): the CLI's folder below it must not be a link."""


def user_target(cli: Cli) -> Target:
    """The CLI's user-wide hook file (`$CLAUDE_CONFIG_DIR`, `$CODEX_HOME` honoured)."""
    variable, folder, name = ("CLAUDE_CONFIG_DIR", ".claude", "settings.json")
    if cli == "codex":
        variable, folder, name = ("CODEX_HOME", ".codex", "hooks.json")
    base = os.environ.get(variable) or str(Path.home() / folder)
    return Target(cli, "user", Path(os.path.abspath(os.path.expanduser(base))) / name)


def project_target(cli: Cli, directory: Path) -> Target:
    """The CLI's hook file of the project in `directory`, kept out of what a team commits when the
    CLI has such a file (Claude Code's `settings.local.json`)."""
    project = Path(os.path.abspath(directory))
    if cli == "claude-code":
        return Target(cli, "project", project / ".claude" / "settings.local.json", project)
    return Target(cli, "project", project / ".codex" / "hooks.json", project)


def codex_worktree_home(directory: Path) -> Path | None:
    """Where Codex looks for the hooks of `directory` when it lies in a linked git worktree: the
    same folder in the main checkout (Codex reads a worktree's `.codex/hooks.json` from there);
    None for a regular checkout, or when it cannot tell. Read from git's files, not by running git.
    """
    directory = Path(os.path.abspath(directory))
    for level in (directory, *directory.parents):
        try:
            info = os.lstat(level / ".git")
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            return None  # a .git folder: a regular checkout (or a link: not followed)
        gitdir = gitdir_of(level / ".git")
        named = common_dir_of(gitdir) if gitdir is not None else None
        if named is None:
            return None  # a submodule has no commondir: its own checkout
        common = named.resolve()
        if common.name != ".git":
            return None  # the main repository is bare: no checkout to hold hooks
        return common.parent / directory.relative_to(level)
    return None


def hook_module_file() -> Path:
    """The hook entry's file in this install (what the guard tests for)."""
    return Path(os.path.abspath(os.path.dirname(__file__))) / "hook_client.py"


def hook_command(cli: Cli, interpreter: str | None = None, module_file: Path | None = None) -> str:
    """The command installed for `cli`: this install's interpreter running the hook entry, behind
    a guard that exits 0 when either is gone. The paths are arguments of the guard's shell, single-
    quoted once, so no shell the CLI uses (sh, bash, zsh, fish) reads anything in them.

    Raises:
        InstallError: a path holds a quote, a backslash or a control character.
    """
    python = os.path.abspath(interpreter or sys.executable or "")
    module = str(module_file or hook_module_file())
    for what, path in (("Python interpreter", python), ("hook module", module)):
        if not path or _UNSAFE_IN_PATH.search(path):
            raise InstallError(
                f"agent-tui's {what} path {path!r} holds a quote, backslash or control character, "
                "which cannot be put in a hook command safely; install agent-tui under another path"
            )
    # `-c` rather than `-m`: `runpy` costs every hook call about 3 ms.
    script = f'[ -f "$1" ] && [ -x "$2" ] && exec "$2" -I -c "{HOOK_CALL}" {cli}; exit 0'
    return f"/bin/sh -c '{script}' {GUARD_NAME} '{module}' '{python}'"


def entry(event: str, command: str) -> dict[str, Any]:
    """Our matcher group for `event` (no matcher: every tool, every source)."""
    timeout = {"PermissionRequest": PERMISSION_TIMEOUT, "SessionEnd": SESSION_END_TIMEOUT}.get(
        event, EVENT_TIMEOUT
    )
    return {"hooks": [{"type": "command", "command": command, "timeout": timeout}]}


def is_our_handler(handler: object, cli: Cli | None = None) -> bool:
    """Whether a hook handler is one agent-tui installed (for `cli`, when given), whatever
    interpreter it names."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    match = _OURS.search(command)
    return match is not None and (cli is None or match.group(1) == cli)


def _is_our_group(group: object, cli: Cli) -> bool:
    if not isinstance(group, dict) or set(group) - {"hooks", "matcher"}:
        return False
    handlers = group.get("hooks")
    return (
        isinstance(handlers, list)
        and len(handlers) > 0
        and all(is_our_handler(handler, cli) for handler in handlers)
    )


@dataclass
class Outcome:
    """What an install or uninstall did to one file."""

    target: Target
    changed: bool
    summary: str
    """One line: what happened."""
    notes: list[str] = field(default_factory=list)
    """Further lines worth saying (Codex's trust)."""


@dataclass(frozen=True)
class Installed:
    """What a hook file holds of ours (`installed_state`)."""

    target: Target
    state: Literal["installed", "missing", "partly", "other", "unreadable"]
    detail: str = ""

    def words(self) -> str:
        return {
            "installed": "installed",
            "missing": "not installed",
            "partly": f"partly installed ({self.detail} missing): run `agent-tui hooks install` again",
            "other": (
                "installed by another agent-tui (another interpreter): `agent-tui hooks install` replaces it"
            ),
            "unreadable": f"cannot be read: {self.detail}",
        }[self.state]


# --- reading and checking -------------------------------------------------------------------


def _refusal(path: Path, reason: str) -> InstallError:
    return InstallError(f"{path} {reason}: agent-tui does not change it")


def _check_folder(target: Target) -> None:
    """Refuse a folder that another user could change under us: the file's folder (which must be
    this user's), and a project's folder; and a project's `.claude` or `.codex` that is a link (a
    repository pointing it at some other folder)."""
    folder = target.path.parent
    if target.project is not None:
        try:
            project = os.stat(target.project)
        except OSError:
            raise InstallError(f"{target.project} is not a folder") from None
        if not stat.S_ISDIR(project.st_mode):
            raise InstallError(f"{target.project} is not a folder")
        if _others_can_write(project):
            raise _refusal(
                target.project, f"can be written by others (mode {stat.S_IMODE(project.st_mode):04o})"
            )
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            return
        if stat.S_ISLNK(info.st_mode):
            raise _refusal(folder, "is a symbolic link")
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        return
    except OSError as error:
        raise InstallError(f"{folder}: {error.strerror or error}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise InstallError(f"{folder} is not a folder")
    if info.st_uid != os.geteuid():
        raise _refusal(folder, f"belongs to another user (uid {info.st_uid})")
    if _others_can_write(info):
        raise _refusal(folder, f"can be written by others (mode {stat.S_IMODE(info.st_mode):04o})")


def _others_can_write(info: os.stat_result) -> bool:
    """Whether someone but this user may add, remove or rename entries of a folder (a group
    counts when it is not this user's own)."""
    mode = info.st_mode
    if mode & stat.S_IWOTH:
        return True
    if mode & stat.S_IWGRP and info.st_gid != os.getegid():
        return True
    return bool(mode & stat.S_IWUSR) and info.st_uid not in (os.geteuid(), 0)  # root needs no bits


def _read(path: Path) -> tuple[bytes, int] | None:
    """The file's bytes and mode, or None when there is none.

    Raises:
        InstallError: it is a link, not a plain file, another user's, or writable by others.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _refusal(path, "is a symbolic link") from None
        raise InstallError(f"{path}: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        problem = untrusted_reason(info, folder=False)
        if problem is not None:
            raise _refusal(path, problem)
        if info.st_size > MAX_FILE:
            raise _refusal(path, f"is larger than {MAX_FILE >> 20} MiB")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(MAX_FILE + 1)
        if len(data) > MAX_FILE:
            raise _refusal(path, f"is larger than {MAX_FILE >> 20} MiB")
        return data, stat.S_IMODE(info.st_mode)
    except OSError as error:
        raise InstallError(f"{path}: {error.strerror or error}") from None
    finally:
        os.close(fd)


class _DuplicateKeyError(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, value in pairs:
        if key in fields:
            raise _DuplicateKeyError(key)
        fields[key] = value
    return fields


def parse(path: Path, data: bytes) -> dict[str, Any]:
    """The JSON object a hook file holds (an empty file: `{}`).

    Raises:
        InstallError: `FILE:LINE: what` when it is not JSON; one sentence when it is not an object
            or names a key twice (rewriting it would drop one).
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InstallError(f"{path}:{line}: not UTF-8 text; agent-tui does not change it") from None
    if not text.strip():
        return {}
    try:
        document = json.loads(text, object_pairs_hook=_pairs)
    except _DuplicateKeyError as error:
        raise InstallError(
            f"{path} names the key {str(error)!r} twice in one object; agent-tui does not change it"
        ) from None
    except json.JSONDecodeError as error:
        raise InstallError(
            f"{path}:{error.lineno}: {error.msg} (column {error.colno}); agent-tui does not change it"
        ) from None
    except RecursionError:
        raise InstallError(f"{path} is nested too deeply to read; agent-tui does not change it") from None
    if not isinstance(document, dict):
        raise InstallError(f"{path} does not hold a JSON object; agent-tui does not change it")
    return document


def _hooks_of(path: Path, document: dict[str, Any]) -> dict[str, Any] | None:
    hooks = document.get("hooks")
    if hooks is None:
        return None
    if not isinstance(hooks, dict):
        raise InstallError(f'{path}: its "hooks" is not an object; agent-tui does not change it')
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise InstallError(f'{path}: its hooks of "{event}" are not a list; agent-tui does not change it')
    return hooks


# --- writing ------------------------------------------------------------------------------


def render(document: dict[str, Any], like: bytes | None) -> bytes:
    """`document` as JSON laid out like the file it came from (its indentation, its final
    newline); a new file: two spaces and a newline."""
    indent: str | int = 2
    newline = True
    if like is not None:
        text = like.decode("utf-8-sig", errors="replace")
        found = re.search(r"\n([ \t]+)\S", text)
        if found is not None:
            indent = found.group(1)
        newline = text.endswith("\n") or not text.strip()
    body = json.dumps(document, indent=indent, ensure_ascii=False)
    return (body + ("\n" if newline else "")).encode("utf-8")


def _write(path: Path, data: bytes, mode: int, read: bytes | None) -> None:
    """Replace `path` with `data` whole: a temporary file beside it, given `mode`, renamed over it;
    unless the file no longer holds `read` (None: no file), which the CLI may have written since
    (Claude Code writes its settings when the user picks "always allow").

    Raises:
        InstallError: the file changed meanwhile (nothing written).
        OSError: it could not be written (nothing written).
    """
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".agent-tui.tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            os.fchmod(stream.fileno(), mode)
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        now = _read(path)
        if (now[0] if now is not None else None) != read:
            raise InstallError(
                f"{path} changed while agent-tui was writing it; nothing was changed, try again"
            )
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# --- install and uninstall ------------------------------------------------------------------


def install(target: Target, command: str, events: tuple[str, ...]) -> Outcome:
    """Put our group for each of `events` after the user's own in `target`'s file.

    Raises:
        InstallError: the file or its folder is refused, or its JSON cannot be read.
    """
    _check_folder(target)
    path = target.path
    found = _read(path)
    data, mode = found if found is not None else (None, 0o600)
    document = parse(path, data) if data is not None else {}
    hooks = _hooks_of(path, document)
    before = json.dumps(document)
    if hooks is None:
        hooks = {}
        document["hooks"] = hooks
    had_ours = any(_is_our_group(group, target.cli) for groups in hooks.values() for group in groups)
    replaced = _place_ours(hooks, target.cli, events, command)
    if json.dumps(document) == before:
        return Outcome(target, False, f"{NAMES[target.cli]}: already installed in {path}")
    record = load_record(path) if had_ours else None
    made: tuple[str, ...] = ()
    if found is None:
        made = _missing_folders(path.parent)
        try:
            make_private_dirs(path.parent)
        except OSError as error:
            raise InstallError(f"{path.parent}: {error.strerror or error}") from None
    if record is None:
        record = InstallRecord(data, made)
    try:
        save_record(path, record)
        _write(path, render(document, data), mode, data)
    except OSError as error:
        raise InstallError(f"{error.filename or path}: {error.strerror or error}") from None
    summary = f"{NAMES[target.cli]}: installed in {path} ({', '.join(events)})"
    return Outcome(target, True, summary, _install_notes(target.cli, replaced))


def _place_ours(hooks: dict[str, Any], cli: Cli, events: tuple[str, ...], command: str) -> list[str]:
    """Put our group for each of `events` after the user's own (one copy, the current command).
    Returns the events where an earlier command of ours was replaced."""
    replaced: list[str] = []
    for event in events:
        groups = hooks.setdefault(event, [])
        ours = [index for index, group in enumerate(groups) if _is_our_group(group, cli)]
        wanted = entry(event, command)
        if not ours:
            groups.append(wanted)
            continue
        if groups[ours[0]] != wanted:
            groups[ours[0]] = wanted
            replaced.append(event)
        for index in reversed(ours[1:]):  # a second copy of ours: one is enough
            del groups[index]
    return replaced


def _install_notes(cli: Cli, replaced: list[str]) -> list[str]:
    notes = []
    if cli == "codex":
        notes.append(
            "Codex asks you once to trust the new hook (in its TUI, or with /hooks); agent-tui never "
            "trusts it for you"
        )
    if replaced:
        notes.append(f"replaced agent-tui's earlier command for {', '.join(replaced)}")
    return notes


def _missing_folders(folder: Path) -> tuple[str, ...]:
    missing: list[str] = []
    level = folder
    while not os.path.lexists(level) and level.parent != level:
        missing.append(str(level))
        level = level.parent
    return tuple(reversed(missing))


def uninstall(target: Target) -> Outcome:
    """Remove our groups from `target`'s file; put back the file as it was before the install when
    nothing else changed in it since (and remove it when the install made it).

    Raises:
        InstallError: the file or its folder is refused, or its JSON cannot be read.
    """
    _check_folder(target)
    path = target.path
    found = _read(path)
    if found is None:
        drop_record(path)
        return Outcome(target, False, f"{NAMES[target.cli]}: not installed in {path} (no such file)")
    data, mode = found
    document = parse(path, data)
    hooks = _hooks_of(path, document)
    removed, shifted = _remove_ours(hooks or {}, target.cli)
    if not removed:
        return Outcome(target, False, f"{NAMES[target.cli]}: not installed in {path}")
    record = load_record(path)
    original = None
    if record is not None and record.original is not None:
        try:
            original = parse(path, record.original)
        except InstallError:
            record = None
    if hooks is not None:
        _drop_emptied(document, hooks, original)
    try:
        summary = f"{NAMES[target.cli]}: {_put_back(path, document, original, record, data, mode)}"
    except OSError as error:
        raise InstallError(f"{error.filename or path}: {error.strerror or error}") from None
    drop_record(path)
    notes = []
    if target.cli == "codex" and shifted:
        notes.append(
            f"your hooks after agent-tui's in {', '.join(shifted)} moved up a place: Codex asks you to "
            "trust them again"
        )
    return Outcome(target, True, summary, notes)


def _drop_emptied(document: dict[str, Any], hooks: dict[str, Any], original: dict[str, Any] | None) -> None:
    """Remove the events (and the `hooks` key) our removal emptied, unless the file had them
    before the install."""
    for event in [event for event, groups in hooks.items() if not groups]:
        if not _had(original, event):
            del hooks[event]
    if not hooks and not (original is not None and "hooks" in original):
        del document["hooks"]


def _put_back(
    path: Path,
    document: dict[str, Any],
    original: dict[str, Any] | None,
    record: InstallRecord | None,
    data: bytes,
    mode: int,
) -> str:
    """Write the file without our groups: removed when the install made it and nothing else is
    left, restored byte for byte when nothing else changed, else rewritten. Returns what was done.

    Raises:
        InstallError: the file changed while it was being removed.
        OSError: the file could not be written or removed.
    """
    if record is not None and record.original is None and not document:
        if (_read(path) or (None,))[0] != data:
            raise InstallError(
                f"{path} changed while agent-tui was removing it; nothing was changed, try again"
            )
        path.unlink()
        _remove_made(record.made)
        return f"removed {path} (agent-tui had made it)"
    if record is not None and record.original is not None and document == original:
        _write(path, record.original, mode, data)
        return f"uninstalled from {path} (restored as it was)"
    _write(path, render(document, data), mode, data)
    return f"uninstalled from {path}"


def _had(original: dict[str, Any] | None, event: str) -> bool:
    hooks = original.get("hooks") if original is not None else None
    return isinstance(hooks, dict) and event in hooks


def _remove_ours(hooks: dict[str, Any], cli: Cli) -> tuple[int, list[str]]:
    """Remove our groups (and our handlers from groups the user shares with them). Returns how
    many were removed, and the events where a group of the user's stood after one of ours."""
    removed = 0
    shifted: list[str] = []
    for event, groups in hooks.items():
        kept: list[Any] = []
        gone_before = False
        for group in groups:
            if _is_our_group(group, cli):
                removed += 1
                gone_before = True
                continue
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                handlers = [handler for handler in group["hooks"] if not is_our_handler(handler, cli)]
                if len(handlers) != len(group["hooks"]):
                    removed += len(group["hooks"]) - len(handlers)
                    group["hooks"] = handlers
            if gone_before and event not in shifted:
                shifted.append(event)
            kept.append(group)
        groups[:] = kept
    return removed, shifted


def _remove_made(made: tuple[str, ...]) -> None:
    for folder in reversed(made):
        try:
            os.rmdir(folder)
        except OSError:
            return  # not empty (or gone): it is no longer only ours


def installed_state(target: Target, command: str, events: tuple[str, ...]) -> Installed:
    """Whether `target`'s file holds our groups for `events`, with this install's `command`."""
    try:
        _check_folder(target)
        found = _read(target.path)
        if found is None:
            return Installed(target, "missing")
        hooks = _hooks_of(target.path, parse(target.path, found[0])) or {}
    except InstallError as error:
        return Installed(target, "unreadable", str(error))
    present: list[str] = []
    other = False
    for event in events:
        groups = hooks.get(event, [])
        ours = [group for group in groups if _is_our_group(group, target.cli)]
        if ours:
            present.append(event)
            other = other or ours[0] != entry(event, command)
    if not present:
        return Installed(target, "missing")
    if other:
        return Installed(target, "other")
    if len(present) < len(events):
        return Installed(target, "partly", ", ".join(event for event in events if event not in present))
    return Installed(target, "installed")
