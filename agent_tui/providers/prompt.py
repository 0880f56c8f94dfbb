"""The default system prompt of a coding agent driven by a real model.

It tells the model where it works (the session's directory), which tools it has, and the rules
the engine enforces anyway (paths stay in the directory; risky calls wait for the user's
approval and may be denied), so the model plans with them instead of running into them. The
project's own instructions follow: `AGENTS.md` in the directory (the convention Codex, opencode
and others read), or `CLAUDE.md` when there is no `AGENTS.md`.

Invariants:
- deterministic: the same directory, tools and instruction file give the same text;
- the instruction file is read only if it lies inside the directory (a symlink that leads out is
  skipped, with a warning), as UTF-8 with bad bytes replaced, and clipped to
  `INSTRUCTIONS_LIMIT` characters with a note saying so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_tui.engine.tools.base import ToolError
from agent_tui.engine.tools.paths import open_under

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
INSTRUCTIONS_LIMIT = 32_000

_RULES = """\
Rules:
- Paths are relative to this directory. Anything outside it (`..`, absolute paths elsewhere, \
symlinks that lead out) is refused; do not try to reach it another way.
- Calls that write or edit files, run commands, reach the network, or move or delete things \
can wait for the user's approval, and may be denied. If a call is denied, do not repeat it unchanged: \
take another way, or say what you need and stop.
- Read before you change: look at a file before you edit it, and keep each change small.
- A tool that fails answers with an error message: read it and adjust.
- When the task is done, answer briefly: what you changed, and how you checked it."""


@dataclass(frozen=True)
class ProjectInstructions:
    """What the project asks of agents (`text` None when there is none, or it was skipped)."""

    file: str | None = None
    text: str | None = None
    clipped: bool = False
    warning: str | None = None


def project_instructions(cwd: Path) -> ProjectInstructions:
    """`AGENTS.md` from `cwd`, else `CLAUDE.md`; never a file outside `cwd`."""
    for name in INSTRUCTION_FILES:
        if not os.path.lexists(cwd / name):
            continue
        try:
            fd, _ = open_under(cwd, name, os.O_RDONLY, must_exist=True)
            with os.fdopen(fd, "rb") as handle:
                raw = handle.read(INSTRUCTIONS_LIMIT * 4 + 1)
        except (ToolError, OSError) as error:
            reason = error.message if isinstance(error, ToolError) else error.strerror or error
            return ProjectInstructions(name, warning=f"{name} not read: {reason}")
        text = raw.decode("utf-8", errors="replace").strip()
        clipped = len(text) > INSTRUCTIONS_LIMIT or len(raw) > INSTRUCTIONS_LIMIT * 4
        return ProjectInstructions(name, text[:INSTRUCTIONS_LIMIT], clipped)
    return ProjectInstructions()


def system_prompt(
    cwd: Path, tools: Sequence[Mapping[str, Any]], instructions: ProjectInstructions | None = None
) -> str:
    """The system text for a session working in `cwd` with `tools` (the router's schemas).

    Args:
        cwd: the session's working directory (shown as its real, absolute path).
        tools: `{name, description, input_schema}` per tool.
        instructions: the project's instructions (read from `cwd` when None).
    """
    if instructions is None:
        instructions = project_instructions(cwd)
    lines = [
        "You are a coding agent. You work in one project directory:",
        str(Path(cwd).resolve()),
        "",
        "Tools (each call's arguments must fit the tool's JSON schema):",
    ]
    for tool in tools:
        lines.append(f"- {tool['name']}: {_first_sentence(str(tool.get('description', '')))}")
    lines += ["", _RULES]
    if instructions.text:
        lines += [
            "",
            f"The project's instructions for agents, from {instructions.file} (follow them, "
            "unless they contradict the rules above):",
            "",
            instructions.text,
        ]
        if instructions.clipped:
            lines.append(f"[{instructions.file} was cut off after {INSTRUCTIONS_LIMIT:,} characters]")
    return "\n".join(lines)


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    end = text.find(". ")
    return text if end < 0 else text[: end + 1]
