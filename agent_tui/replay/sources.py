"""Where recorded sessions come from: one log file, or a sessions directory of them.

`open_replay` also takes Claude Code and Codex logs (detected by content, mixed freely with ours)
and the users' own default log folders: the importers convert those into our logs first, so
everything after this module reads only our format.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from agent_tui.events import Event
    from agent_tui.importers import ReplayInputs
    from agent_tui.store import JsonlEventLog, ReplayMode


class ReplaySourceError(Exception):
    """PATH is not something we can replay; the message says why in one sentence."""


@dataclass
class OwnLog:
    """What `open_replay` gives for one log of ours on its own: what the importers' `ReplayInputs`
    would hold for it (the file; no folder to watch, no warning, nothing to convert or clean up)."""

    files: list[Path]
    watch_dir: None = None
    warnings: list[str] = field(default_factory=list)

    def __enter__(self) -> OwnLog:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


_SNIFF_BYTES = 256 * 1024
"""The most of a first line `_lone_log_of_ours` reads (the importers' detection reads no more)."""


def _lone_log_of_ours(path: Path) -> bool:
    """Whether `path` is one of our logs that the importers would take alone and as it is: a file
    whose first line is a valid event of ours (what their detection tells ours by, and stricter),
    with no Claude Code sub-agent logs that could go with it (`agent-*.jsonl` beside it, or a
    `<stem>/subagents` folder). When not, the importers decide (and word any error)."""
    from agent_tui.events import EventValidationError, event_from_json
    from agent_tui.private_files import open_plain

    if not path.is_file():
        return False
    if path.suffix == ".jsonl" and not path.name.startswith("agent-"):
        if (path.parent / path.stem / "subagents").exists() or any(path.parent.glob("agent-*.jsonl")):
            return False
    try:
        with open_plain(path) as handle:  # a pipe swapped in since `is_file`: not waited on
            first = handle.readline(_SNIFF_BYTES)
        event_from_json(first)
    except (OSError, EventValidationError):
        return False
    return first.endswith(b"\n")


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
    from agent_tui.store import JsonlEventLog

    for file in log_files(path):
        yield from JsonlEventLog(file).replay(mode)


def replay_files(files: list[Path], mode: ReplayMode = "skip-trailing-partial") -> Iterator[Event]:
    """Every event of `files`: sessions in id order, each in sequence order."""
    return replay_logs(open_logs(files), mode)


def open_logs(files: list[Path]) -> list[JsonlEventLog]:
    """The logs of `files` in session-id order; a reader done replaying them asks them about a
    torn tail (`replay.torn.torn_lines`), which reads their last byte, not the files again."""
    from agent_tui.store import JsonlEventLog

    return [JsonlEventLog(file) for file in sorted(files, key=lambda p: p.stem)]


def replay_logs(logs: list[JsonlEventLog], mode: ReplayMode = "skip-trailing-partial") -> Iterator[Event]:
    """Every event of `logs`, one log after the other, each in sequence order (each log read
    when the one before it is done)."""
    # `chain` rather than a generator of our own: one frame fewer to resume per event.
    return chain.from_iterable(log.replay(mode) for log in logs)


def check_log(path: Path) -> tuple[int, str] | None:
    """Read our log at `path` through, as `import` does before copying it.

    Returns:
        None for a whole log; for one that ends in a torn line, the byte length of its complete
        lines and the warning that it was left out.

    Raises:
        EventLogDecodeError: a corrupt line (`FILE:LINE: reason`), another session's included.
    """
    from agent_tui.replay.torn import left_out
    from agent_tui.store import JsonlEventLog

    log = JsonlEventLog(path)
    for _event in log.replay():
        pass
    torn = log.torn_line()
    return None if torn is None else (log.index.complete_bytes(), left_out(torn))


def open_replay(
    path: Path | None,
    *,
    follow: bool = False,
    tools: tuple[Literal["claude", "codex"], ...] = (),
    since: str | None = None,
) -> ReplayInputs | OwnLog:
    """What `agent-tui replay` reads: our logs for PATH and/or the users' own Claude Code / Codex
    sessions (`tools`, newest first, changed within `since`). Foreign logs are converted by the
    importers (see `agent_tui.importers.materialize`); use the result as a context manager, so a
    follower converting appended lines runs while the replay does.

    Raises:
        ReplaySourceError: nothing to replay, with the reason.
    """
    if path is not None and not tools and since is None and _lone_log_of_ours(path):
        return OwnLog([path])
    # Anything else goes through the importers (their modules, pydantic models and price table
    # cost a replay 0.06 s of start-up): they find foreign logs, and say what is wrong.
    from agent_tui.importers import ImportInputError, replay_inputs
    from agent_tui.importers.locations import TOOL_NAMES, default_dir, parse_since, recent_sessions

    if since is not None and not tools:
        raise ReplaySourceError("--since goes with --claude or --codex")
    try:
        window = parse_since(since) if since is not None else None
    except ValueError as error:
        raise ReplaySourceError(str(error)) from None
    paths: list[Path] = []
    if path is not None:
        if path.is_dir() and not any(path.rglob("*.jsonl")):
            log_files(path)  # raises the usual "no session logs" error
        paths.append(path)
    for tool in tools:
        try:
            found = recent_sessions(tool, window)
        except FileNotFoundError:
            raise ReplaySourceError(
                f"{default_dir(tool)}: no such directory (is {TOOL_NAMES[tool]} installed here?)"
            ) from None
        if not found:
            within = f" changed in the last {since}" if since else ""
            raise ReplaySourceError(f"{default_dir(tool)}: no {TOOL_NAMES[tool]} sessions{within}")
        paths += found
    if not paths:
        raise ReplaySourceError("give a PATH to replay, or --claude / --codex for your own sessions")
    try:
        return replay_inputs(paths, follow=follow)
    except ImportInputError as error:
        raise ReplaySourceError(str(error)) from None
