"""What the importer tests share: the fixtures, running the CLI, reading converted logs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agent_tui.events import Event
from agent_tui.replay.sources import replay_all

FIXTURES = Path(__file__).parent / "fixtures"
EXPECTED = FIXTURES / "expected"


def fixture_dirs(tool: str) -> list[Path]:
    return sorted(path for path in (FIXTURES / tool).iterdir() if path.is_dir())


def logs_in(folder: Path) -> list[Path]:
    """The fixture's `.jsonl` logs, failing (not passing vacuously) when there are none or one is empty."""
    logs = sorted(folder.rglob("*.jsonl"))
    assert logs, f"{folder}: no .jsonl logs in the fixture folder"
    empty = [path for path in logs if path.stat().st_size == 0]
    assert not empty, f"empty fixture logs: {empty}"
    return logs


def agent_tui(*args: str, cache: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command, in a subprocess, with its cache under `cache` (and `env` added)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args], capture_output=True, text=True, env=env, timeout=120
    )


def events_of(out_dir: Path) -> list[Event]:
    return list(replay_all(out_dir, "strict"))


def tree_bytes(out_dir: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(out_dir.glob("*.jsonl"))}


def types_count(events: list[Event], kind: str) -> int:
    return sum(1 for event in events if event.type == kind)
