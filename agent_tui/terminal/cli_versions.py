"""Which hook events each CLI has, from which version, and which version is installed here.

The hooks are installed into Claude Code's and Codex's own config files, so what may be written
depends on the CLI's version: an event a version does not know is dead weight at best (Codex
ignores an unknown event name; a future version that adds it would run a hook nobody reviewed for
it), and without `PermissionRequest` nothing reaches agent-tui's queue.

The table (`HOOK_EVENTS`) is taken from each CLI's own record:
- Claude Code, from its CHANGELOG.md: hooks came in 1.0.38 (`PreToolUse`, `Stop`), `SubagentStop`
  in 1.0.41, `UserPromptSubmit` 1.0.54, `SessionStart` 1.0.62, `SessionEnd` 1.0.85,
  `SubagentStart` 2.0.43 (with `tool_use_id` in `PreToolUse`), `PermissionRequest` 2.0.45;
- Codex, from its source (`codex-rs/config`, `codex-rs/hooks`) and release notes: hooks came in
  0.114.0 (`SessionStart`, `Stop`, behind the `codex_hooks` feature), `UserPromptSubmit` 0.116.0,
  `PreToolUse` 0.117.0, `PermissionRequest` 0.122.0, on by default from 0.124.0, `SubagentStart`
  0.133.0, `SubagentStop` 0.134.0 (the release that gave every hook the sub-agent's identity; it
  may have come a release earlier), `SessionEnd` 0.145.0 (its timeout at most 3 seconds).
Claude Code 2.1.332 and Codex 0.171.0 were seen reading the files `install` writes and running
its command for these events.

How the installed version is learnt (`find_cli`), without running anything: the CLI's command
(`claude`, `codex`) is looked up on `$PATH`, skipping every entry that is not an absolute path
(an empty entry or `.` means the current directory: a repository could put a `claude` there), and
its real path is followed to the npm package it belongs to: the nearest `package.json` above it
whose `name` is the CLI's package (`@anthropic-ai/claude-code`, `@openai/codex`), or its platform
package holding the native binary (`@anthropic-ai/claude-code-linux-x64`), gives the version.
Claude Code's own installer keeps each version as `…/versions/X.Y.Z`, which gives it too.
Running `claude --version` would also tell, but it starts the CLI (its auto-updater, its config
migrations, whatever a planted binary does) for a fact that a file beside it states; a CLI whose
version cannot be read this way is treated as one of unknown version (installed, with a warning).

Invariants:
- nothing here executes a program or imports more than the standard library (and `hook_wire`,
  `private_files`);
- `find_cli` never raises: an unreadable or hostile file is a CLI of unknown version.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from agent_tui.private_files import open_plain
from agent_tui.terminal.hook_wire import Cli

Version = tuple[int, int, int]

HOOK_EVENTS: dict[str, tuple[Version, Version]] = {
    "SessionStart": ((1, 0, 62), (0, 114, 0)),
    "UserPromptSubmit": ((1, 0, 54), (0, 116, 0)),
    "PreToolUse": ((1, 0, 38), (0, 117, 0)),
    "PermissionRequest": ((2, 0, 45), (0, 122, 0)),
    "SubagentStart": ((2, 0, 43), (0, 133, 0)),
    "SubagentStop": ((1, 0, 41), (0, 134, 0)),
    "Stop": ((1, 0, 38), (0, 114, 0)),
    "SessionEnd": ((1, 0, 85), (0, 145, 0)),
}
"""The hook events agent-tui listens to, in the order they are written into a config file, each
with the first version of Claude Code and of Codex that has it."""

CODEX_HOOKS_ON_BY_DEFAULT: Version = (0, 124, 0)
"""Before it, Codex runs hooks only with `[features] codex_hooks = true` in its config.toml."""

PACKAGES: dict[str, str] = {"claude-code": "@anthropic-ai/claude-code", "codex": "@openai/codex"}
COMMANDS: dict[str, str] = {"claude-code": "claude", "codex": "codex"}
NAMES: dict[str, str] = {"claude-code": "Claude Code", "codex": "Codex"}

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")
_MAX_PACKAGE_JSON = 1 << 20
_MAX_LEVELS = 8
"""How far above the resolved script a `package.json` is looked for (`bin/codex.js` is one level
below its package; a platform binary inside `vendor/…` a few more)."""


def _since(cli: Cli, event: str) -> Version:
    claude, codex = HOOK_EVENTS[event]
    return claude if cli == "claude-code" else codex


def minimum_version(cli: Cli) -> Version:
    """The first version of `cli` that has `PermissionRequest` (older ones are refused)."""
    return _since(cli, "PermissionRequest")


def events_for(cli: Cli, version: Version | None) -> tuple[str, ...]:
    """The events to install for `cli` at `version` (None: unknown, so all of them), in
    `HOOK_EVENTS` order."""
    return tuple(event for event in HOOK_EVENTS if version is None or version >= _since(cli, event))


def shown(version: Version) -> str:
    return ".".join(str(part) for part in version)


def parse_version(text: str) -> Version | None:
    """`X.Y.Z` at the start of `text` (a `v` before it and anything after it allowed), or None."""
    match = _VERSION.match(text.strip())
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


@dataclass(frozen=True)
class FoundCli:
    """Where a CLI was found on `$PATH`, and its version when a file beside it says it."""

    cli: Cli
    command: Path | None
    """The command found on `$PATH` (None: not found)."""
    version: Version | None
    """None when it was not found, or its version could not be read."""
    source: Path | None = None
    """The file the version was read from."""


def find_cli(cli: Cli, path_variable: str | None = None) -> FoundCli:
    """Look `cli`'s command up on `$PATH` (absolute entries only) and read its version.

    Args:
        path_variable: the search path (default: `$PATH`).
    """
    command = _which(COMMANDS[cli], os.environ.get("PATH", "") if path_variable is None else path_variable)
    if command is None:
        return FoundCli(cli, None, None)
    try:
        real = Path(os.path.realpath(command))
    except (OSError, ValueError):
        return FoundCli(cli, command, None)
    version, source = _version_beside(cli, real)
    return FoundCli(cli, command, version, source)


def _which(name: str, search: str) -> Path | None:
    for entry in search.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue  # the current directory, spelt "" or "." or relative: never
        candidate = Path(entry) / name
        try:
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
        except (OSError, ValueError):
            continue
    return None


def _version_beside(cli: Cli, real: Path) -> tuple[Version | None, Path | None]:
    """The version the npm package `real` belongs to says, else the one its path says."""
    package = PACKAGES[cli]
    folder = real.parent
    for _ in range(_MAX_LEVELS):
        manifest = folder / "package.json"
        fields = _read_manifest(manifest)
        if fields is not None and _is_package(fields.get("name"), package):
            version = fields.get("version")
            return (parse_version(version) if isinstance(version, str) else None), manifest
        if folder.parent == folder:
            break
        folder = folder.parent
    if real.parent.name == "versions":  # Claude Code's own installer: …/versions/2.1.328
        version = parse_version(real.name)
        if version is not None:
            return version, real
    return None, None


def _is_package(name: object, package: str) -> bool:
    """The CLI's npm package, or its platform package (`@anthropic-ai/claude-code-linux-x64`,
    which holds the native binary the wrapper runs, and which can be run directly)."""
    if not isinstance(name, str):
        return False
    return (
        name == package
        or re.fullmatch(re.escape(package) + r"-(?:linux|darwin|win32)-[a-z0-9-]+", name) is not None
    )


def _read_manifest(path: Path) -> dict[str, object] | None:
    try:
        with open_plain(path) as file:  # (a FIFO or a device is not waited on)
            data = file.read(_MAX_PACKAGE_JSON + 1)
    except OSError:
        return None
    if len(data) > _MAX_PACKAGE_JSON:
        return None
    try:
        fields = json.loads(data)
    except ValueError:
        return None
    return fields if isinstance(fields, dict) else None
