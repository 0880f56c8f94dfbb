"""Where Claude Code and Codex keep their logs, and which of them are recent.

- Claude Code: `$CLAUDE_CONFIG_DIR/projects/` when that variable is set, else
  `~/.claude/projects/`; one folder per project, one `<session>.jsonl` per session (sub-agent logs
  beside them are found with their session).
- Codex: `$CODEX_HOME/sessions/` when set, else `~/.codex/sessions/`; `YYYY/MM/DD/rollout-*.jsonl`.

`recent_sessions` lists a tool's session logs newest first (by modification time), limited to
those changed within `since` when given. It reads no file contents.
"""

from __future__ import annotations

import os
import re
import time
from datetime import timedelta
from pathlib import Path
from typing import Literal

Tool = Literal["claude", "codex"]
TOOL_NAMES = {"claude": "Claude Code", "codex": "Codex"}
_SINCE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def default_dir(tool: Tool) -> Path:
    """The folder `tool` writes its session logs to (the environment overrides it as the tool does)."""
    if tool == "claude":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base).expanduser() if base else Path.home() / ".claude") / "projects"
    base = os.environ.get("CODEX_HOME")
    return (Path(base).expanduser() if base else Path.home() / ".codex") / "sessions"


def parse_since(text: str) -> timedelta:
    """`30m`, `12h`, `2d`, `1w` → a duration. Raises ValueError with a sentence for anything else."""
    match = _SINCE.match(text)
    if match is None:
        raise ValueError(f"--since {text!r}: expected a number and a unit, like 30m, 12h, 2d or 1w")
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])


def recent_sessions(tool: Tool, since: timedelta | None = None, *, root: Path | None = None) -> list[Path]:
    """`tool`'s session logs under `root` (default: its folder), newest first.

    Raises:
        FileNotFoundError: the folder does not exist.
    """
    root = root if root is not None else default_dir(tool)
    if not root.is_dir():
        raise FileNotFoundError(root)
    if tool == "claude":
        files = [path for path in root.glob("*/*.jsonl") if not path.name.startswith("agent-")]
        files += [path for path in root.glob("*.jsonl") if not path.name.startswith("agent-")]
    else:
        files = list(root.rglob("rollout-*.jsonl"))
    dated = []
    for path in files:
        try:
            dated.append((path.stat().st_mtime, path))
        except OSError:
            continue
    if since is not None:
        cutoff = time.time() - since.total_seconds()
        dated = [(mtime, path) for mtime, path in dated if mtime >= cutoff]
    dated.sort(key=lambda item: (-item[0], str(item[1])))
    return [path for _, path in dated]
