"""What the user allowed in this turn through an agent's own question, so it is asked only once.

An agent that asks "may I edit a.txt?" and is allowed then carries the edit out through the
client (`fs/write_text_file` on a.txt); a terminal it was allowed to open runs the command it
named. Asking about the same thing a second time would be noise.

Invariants:
- only what the allowed call itself names counts: the paths in its `locations` and in the usual
  path fields of its raw input (made absolute against the session's directory, symlinks
  resolved), and the command in its raw input (whitespace runs collapsed);
- it lasts one turn (`clear` at each turn's start), and only ever turns an `ask` into an allow:
  a rule that denies still denies.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_tui.acp.mapping import command_of

PATH_KEYS = ("path", "file_path", "filePath", "abs_path", "absolute_path", "notebook_path")


class TurnApprovals:
    """The files and commands the user allowed this turn (see the module docstring)."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.paths: set[str] = set()
        self.commands: set[str] = set()

    def clear(self) -> None:
        self.paths.clear()
        self.commands.clear()

    def note(self, call_args: Mapping[str, Any]) -> None:
        """Remember what an allowed agent call names (`call_args`: the call as the agent sent it)."""
        for path in paths_of(call_args):
            self.paths.add(self.real(path))
        command = command_of(call_args.get("rawInput"))
        if command is not None:
            self.commands.add(_squeeze(command))

    def covers_path(self, path: str) -> bool:
        return self.real(path) in self.paths

    def covers_command(self, command: str) -> bool:
        return _squeeze(command) in self.commands

    def real(self, path: str) -> str:
        return os.path.realpath(os.path.join(self.cwd, path))


def paths_of(call_args: Mapping[str, Any]) -> list[str]:
    """The paths an agent's call names: its `locations`, and the usual path fields of its raw input."""
    paths = [
        location["path"]
        for location in call_args.get("locations") or ()
        if isinstance(location, dict) and isinstance(location.get("path"), str)
    ]
    raw = call_args.get("rawInput")
    if isinstance(raw, dict):
        paths.extend(raw[key] for key in PATH_KEYS if isinstance(raw.get(key), str))
    return paths


def _squeeze(command: str) -> str:
    return " ".join(command.split())
