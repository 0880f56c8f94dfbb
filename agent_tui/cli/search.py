"""`agent-tui search TEXT [--cwd DIR | --sessions-dir DIR]`: find sessions by what was said.

The logs of the directory (a project's, by default the current directory's; or any directory of
logs, Claude Code's and Codex's included, converted as `replay` converts them) are brought into
the search index first (only what they gained since the last search is read), then the query is
answered from it: hits grouped by session and turn, newest session first, each with the event's
sequence (for `g` in the scrubber) and the line that matched.

A second search with nothing changed (every log of the directory in the index as it was read,
none new, none gone) is answered from the index without finding out again what the logs are: it
does not import the importers or the event models, which cost more than the search.

Exit statuses: 0 when something matched, 1 when nothing did (or the index cannot be used), 2 for
a query that cannot be read or a directory that is not there. Every line printed from a log goes
through `visible` first, so a log cannot send the terminal escape sequences.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from agent_tui.cli.status import EXIT_FAILED, EXIT_OK, EXIT_USAGE, fail, project_logs

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs a search's start-up
    from typing import TextIO

    from agent_tui.search import Progress, SearchResults
    from agent_tui.search.index import SyncReport
    from agent_tui.search.query import Query

    Found = tuple[SyncReport, SearchResults]

MARK_ON = "\x1b[1;4m"
MARK_OFF = "\x1b[22;24m"
SHOWN_CORRUPT = 5
"""At most this many logs with corrupt lines are named; the rest are counted."""
PROGRESS_SECONDS = 0.5


def cmd_search(args: argparse.Namespace) -> int:
    from agent_tui.search import QueryError, SearchError, index_path, parse_query

    limit, color = args.limit, args.color
    if limit < 1:
        return fail(f"search: --limit {limit}: give at least 1", EXIT_USAGE)
    try:
        query = parse_query(" ".join(args.words))
    except QueryError as error:
        return fail(f"search: {error}", EXIT_USAGE)
    directory = project_logs(args.search_sessions_dir, args.search_cwd)
    if isinstance(directory, int):
        return directory
    found: Found | int | None
    try:
        found = _search_indexed(index_path(directory), own_logs(directory), query, limit)
        if found is None:
            found = _search_found(directory, query, limit)
    except SearchError as error:
        return fail(str(error), EXIT_FAILED)
    if isinstance(found, int):
        return found
    report, results = found
    _say_skipped(report)
    marks = color == "always" or (color == "auto" and sys.stdout.isatty())
    _print_results(results, sys.stdout, marks)
    return EXIT_OK if results.hits else EXIT_FAILED


def own_logs(directory: Path) -> list[str]:
    """The logs under `directory` that `open_replay(directory)` looks at, in its order, when all
    are agent-tui logs (`importers.convert.discover`'s candidates, sorted by session id, as
    `importers.materialize.replay_inputs` sorts them), each as `str(path.absolute())`, the key
    the search index keeps it by; tests/test_command_imports.py holds the two equal. Listed with
    `os.scandir`, as strings: `Path.glob` and a `Path` per log cost more than the search over
    3,000 logs."""
    base = str(directory if directory.is_absolute() else directory.absolute()).rstrip("/")  # "/": ""
    logs, folders = _entries(directory)
    found = [(_stem(name), 0, "", base, name) for name in logs]
    for folder in folders:
        subagents = f"{base}/{folder}/subagents"
        found += [(_stem(name), 1, folder, subagents, name) for name in _entries(Path(subagents))[0]]
    if not found:
        nested = sorted(sorted(directory.rglob("*.jsonl")), key=lambda path: path.stem)
        return [str(path.absolute()) for path in nested]
    found.sort()  # by session id; then the top folder's first, then by the folder holding them
    return [f"{where}/{name}" for _stem, _group, _folder, where, name in found]


def _entries(folder: Path) -> tuple[list[str], list[str]]:
    """The names `folder.glob("*.jsonl")` lists (hidden ones too), and the names of its folders
    (a link to one too), from one listing; nothing when it cannot be read."""
    logs: list[str] = []
    folders: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if name.endswith(".jsonl"):
                    logs.append(name)
                if _is_folder(entry):
                    folders.append(name)
    except OSError:
        return [], []
    return logs, folders


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _stem(name: str) -> str:
    """`Path(name).stem` of a name ending in `.jsonl`."""
    return name[:-6] if len(name) > 6 else name


def _search_indexed(index_file: Path, files: list[str], query: Query, limit: int) -> Found | None:
    """Search without finding out again what the logs are, when the index holds every one of
    them as it read them last (None otherwise, or when there is no index yet): they are the logs
    `open_replay` gave then, and it would give them again (no foreign log to convert, no copy of a
    session, nothing it skipped: those are not in the index), with no warning. This spares the
    importers' start-up (and pydantic's)."""
    from agent_tui.search import SearchIndex

    if not index_file.is_file():
        return None
    with SearchIndex.open(index_file) as index:
        report = index.sync_unchanged(files)
        if report is None:
            return None
        return report, index.search(query, limit=limit)


def _search_found(directory: Path, query: Query, limit: int) -> Found | int:
    """Find the logs of `directory` as `replay` does (converting Claude Code's and Codex's), bring
    the index up to date with them and search it; the exit status when there are none."""
    from agent_tui.replay.sources import ReplaySourceError, open_replay
    from agent_tui.search import SearchIndex, index_path

    try:
        inputs = open_replay(directory)
    except ReplaySourceError as error:
        return fail(str(error), EXIT_FAILED)
    for warning in inputs.warnings:
        print(f"agent-tui: {warning}", file=sys.stderr)
    with inputs, SearchIndex.open(index_path(directory)) as index:
        report = index.sync(inputs.files, progress=_progress_printer(sys.stderr))
        return report, index.search(query, limit=limit)


def _say_skipped(report: SyncReport) -> None:
    """Say on stderr which logs the index could not read, and which lines it skipped."""
    for path, reason in report.unreadable:
        print(f"agent-tui: {path}: {reason} (not searched)", file=sys.stderr)
    for status in report.corrupt[:SHOWN_CORRUPT]:
        lines = "line" if status.corrupt == 1 else "lines"
        print(
            f"agent-tui: {status.path}:{status.first_corrupt}: {status.corrupt} corrupt {lines} skipped",
            file=sys.stderr,
        )
    if len(report.corrupt) > SHOWN_CORRUPT:
        print(
            f"agent-tui: and {len(report.corrupt) - SHOWN_CORRUPT} more logs with corrupt lines",
            file=sys.stderr,
        )


def _progress_printer(err: TextIO) -> Callable[[Progress], None] | None:
    """Progress on a terminal's stderr, for a sync that takes a while (nothing when piped)."""
    if not err.isatty():
        return None
    started = time.monotonic()
    shown = [0.0]

    def progress(done: Progress) -> None:
        now = time.monotonic()
        if now - started < PROGRESS_SECONDS or now - shown[0] < 0.1:
            return
        shown[0] = now
        percent = 100 * done.done_bytes // max(1, done.total_bytes)
        err.write(f"\ragent-tui: indexing {done.done_files}/{done.total_files} logs, {percent}%\x1b[K")
        if done.done_files == done.total_files:
            err.write("\r\x1b[K")
        err.flush()

    return progress


def _print_results(results: SearchResults, out: TextIO, marks: bool) -> None:
    from agent_tui.events import visible
    from agent_tui.search import excerpt

    hits = results.hits
    if not hits:
        out.write(f"No matches for {visible(results.query.text)!r}.\n")
        return
    session = turn = None
    sessions = 0
    for hit in hits:
        if hit.path != session:
            session, turn = hit.path, None
            sessions += 1
            if sessions > 1:
                out.write("\n")
            name = visible(hit.session_name)
            out.write(f"{name} · {visible(hit.session_id)} · {visible(str(hit.path))}\n")
        if hit.turn_id != turn:
            turn = hit.turn_id
            out.write(f"  {visible(turn) or '(no turn)'}\n")
        shown = excerpt(hit.text, results.query)
        line = "".join(
            f"{MARK_ON}{text}{MARK_OFF}" if marked and marks else text
            for text, marked in shown.visible_parts()
        )
        out.write(f"    {hit.sequence:>6}  {hit.kind:<7}  {line}\n")
    total = f"{results.total}+" if results.more else str(results.total)
    shown_count = f" (the first {len(hits)} shown)" if len(hits) < results.total else ""
    out.write(f"\n{total} matches{shown_count}. Open one: agent-tui replay LOG, then g and its sequence.\n")
