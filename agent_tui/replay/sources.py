"""Where recorded sessions come from: one log file, or a sessions directory of them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from agent_tui.events import Event
from agent_tui.store import JsonlEventLog, ReplayMode


class ReplaySourceError(Exception):
    """PATH is not something we can replay; the message says why in one sentence."""


def log_files(path: Path) -> list[Path]:
    """The logs under `path` in session-id order (a file is its own one-element list)."""
    if not path.exists():
        raise ReplaySourceError(f"{path}: no such file or directory")
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"), key=lambda p: p.stem)
        if not files:
            raise ReplaySourceError(f"{path}: no session logs (*.jsonl) in this directory")
        return files
    return [path]


def replay_all(path: Path, mode: ReplayMode = "skip-trailing-partial") -> Iterator[Event]:
    """Every event of every log under `path`: sessions in id order, each in sequence order."""
    for file in log_files(path):
        yield from JsonlEventLog(file).replay(mode)
