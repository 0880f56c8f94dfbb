"""Finding foreign logs and writing them as ours: `import_path(src, out_dir)`.

Invariants:
- a source is found by content (`detect_format`), never by name; a directory may mix Claude
  Code, Codex and our own logs; a Claude Code session's sub-agent files (`agent-<id>.jsonl`
  beside it, or under `<session>/subagents/`) are found with it;
- the same sources give the same bytes: files are read in sorted order, every event comes from
  a pure importer, and each session's log is written whole (`<out>/<sessionId>.jsonl`);
- nothing is dropped without a word: every line the importers keep as source-specific, and every
  file skipped, is a warning (`FILE:LINE: …` or `FILE: …`) in the report; an importer that fails
  on a line (a bug) raises `ImportLineError` naming `FILE:LINE`, never a bare exception;
- what is written is 0600, in folders made 0700 when missing (`private_files`); an
  `out_dir` that is already there keeps its mode;
- a final line without a newline is fed if it is a whole JSON value, else reported as torn and
  left out (a writer that died mid-line).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agent_tui.events.wording import counted
from agent_tui.importers.builder import ImportCounts, LogLine
from agent_tui.importers.claude_code import ClaudeCodeImporter
from agent_tui.importers.codex import CodexImporter
from agent_tui.importers.detect import Format, detect_format
from agent_tui.importers.line_importer import LineImporter
from agent_tui.importers.source_lines import MAX_LINE_BYTES, OVERLONG, SourceLines
from agent_tui.private_files import make_private_dirs, open_private

FORMAT_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "agent-tui": "agent-tui"}


class ImportInputError(Exception):
    """The input cannot be imported at all (missing, or holds no log we know); one sentence."""


class ImportLineError(ImportInputError):
    """An importer failed on a line (a record shape it did not foresee): where, and what it said.

    Args:
        path: the source log.
        line_number: the line being converted, or None when the end of the file was.
        error: what the importer raised.
    """

    def __init__(self, path: Path, line_number: int | None, error: Exception) -> None:
        where = f"{path}:{line_number}" if line_number is not None else f"{path}: at the end of the file"
        super().__init__(f"{where}: could not be imported ({type(error).__name__}: {error})")
        self.path = path
        self.line_number = line_number


@dataclass(frozen=True)
class SourceFile:
    """One foreign log to convert, with what its importer needs to know beside its lines."""

    path: Path
    format: Format
    agent_hints: tuple[tuple[str, str, str], ...] = ()  # (agent id, agent type, description)

    def importer(self) -> LineImporter:
        label = str(self.path)
        if self.format == "codex":
            return CodexImporter(label)
        hints = {agent: (kind, description) for agent, kind, description in self.agent_hints}
        return ClaudeCodeImporter(label, hints)


@dataclass
class Discovered:
    sources: list[SourceFile] = field(default_factory=list)
    own_logs: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def discover(paths: list[Path], known: frozenset[Path] | set[Path] = frozenset()) -> Discovered:
    """The foreign logs and our own logs under `paths` (files or directories), leaving out the
    files in `known` (follow mode asks again and again, for the new ones)."""
    found = Discovered()
    seen: set[Path] = set()
    parents: dict[Path, dict[str, tuple[str, str]]] = {}
    for path in paths:
        if not path.exists():
            raise ImportInputError(f"{path}: no such file or directory")
        if path.is_dir():
            candidates = sorted(path.glob("*.jsonl")) + sorted(path.glob("*/subagents/*.jsonl"))
            if not candidates:
                candidates = sorted(path.rglob("*.jsonl"))
        else:
            candidates = [path, *_claude_companions(path)]
        for file in candidates:
            if file in seen or file in known:
                continue
            seen.add(file)
            kind = detect_format(file)
            if kind is None:
                if path.is_file() and file == path:
                    raise ImportInputError(f"{file}: not a Claude Code, Codex or agent-tui log")
                found.warnings.append(f"{file}: not a Claude Code, Codex or agent-tui log (skipped)")
            elif kind == "agent-tui":
                found.own_logs.append(file)
            else:
                hints = _agent_hints(file, parents) if kind == "claude-code" else ()
                found.sources.append(SourceFile(file, kind, hints))
    return found


def _claude_companions(path: Path) -> list[Path]:
    """Sub-agent logs of the Claude Code session log `path` (a file given on its own)."""
    if path.name.startswith("agent-") or path.suffix != ".jsonl":
        return []
    return sorted((path.parent / path.stem / "subagents").glob("agent-*.jsonl")) + [
        sibling for sibling in sorted(path.parent.glob("agent-*.jsonl")) if session_of(sibling) == path.stem
    ]


def session_of(path: Path) -> str | None:
    """The `sessionId` of the first line of `path` (None if there is none to read)."""
    try:
        with path.open("rb") as handle:
            data = orjson.loads(handle.readline(MAX_LINE_BYTES + 1))  # past the cap: not JSON
    except (OSError, orjson.JSONDecodeError):
        return None
    session = data.get("sessionId") if isinstance(data, dict) else None
    return session if isinstance(session, str) else None


def _agent_hints(
    path: Path, parents: dict[Path, dict[str, tuple[str, str]]]
) -> tuple[tuple[str, str, str], ...]:
    """(agent id, type, description) of a sub-agent's log `agent-<id>.jsonl`: from the
    `agent-<id>.meta.json` beside it, else from the `Task`/`Agent` call in its session's log."""
    if not path.name.startswith("agent-"):
        return ()
    agent = path.stem.removeprefix("agent-")
    try:
        data = orjson.loads(path.with_name(path.stem + ".meta.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        data = None
    if isinstance(data, dict) and data.get("agentType"):
        return ((agent, str(data.get("agentType") or ""), str(data.get("description") or "")),)
    session = session_of(path)
    if session is None:
        return ()
    for parent in (path.parent / f"{session}.jsonl", path.parent.parent.parent / f"{session}.jsonl"):
        if parent.is_file():
            if parent not in parents:
                parents[parent] = _task_agents(parent)
            found = parents[parent].get(agent)
            return ((agent, *found),) if found else ()
    return ()


def _names_an_agent(line: memoryview) -> bool:
    """Whether a line of a session's log may tell a sub-agent's type (a line past the cap never)."""
    if line is OVERLONG:
        return False
    data = line.tobytes()
    return b'"subagent_type"' in data or b'"agentId"' in data


def _task_agents(parent: Path) -> dict[str, tuple[str, str]]:
    """agent id → (subagent_type, description) of the Task/Agent calls in a session's log."""
    calls: dict[str, tuple[str, str]] = {}
    agents: dict[str, tuple[str, str]] = {}
    try:
        with parent.open("rb", buffering=0) as handle:
            lines = [bytes(line) for _, line in SourceLines(handle) if _names_an_agent(line)]
    except OSError:
        return agents
    for line in lines:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        message = record.get("message") if isinstance(record, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                args = block["input"]
                if "subagent_type" in args:
                    calls[str(block.get("id"))] = (
                        str(args["subagent_type"]),
                        str(args.get("description") or ""),
                    )
            elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in calls:
                result = record.get("toolUseResult")
                agent = (result.get("agentId") if isinstance(result, dict) else None) or record.get("agentId")
                if isinstance(agent, str):
                    agents[agent] = calls[str(block["tool_use_id"])]
    return agents


def feed_final(importer: LineImporter, number: int, line: bytes) -> list[LogLine]:
    """A last line with no newline: fed if it is a whole JSON value, else reported torn."""
    if not line.strip():
        return []
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        importer.warnings.append(
            f"{importer.label}:{number}: torn final line ({len(line)} bytes without a newline) left out"
        )
        return []
    return importer.feed_lines(number, line)


_NEWLINE = orjson.OPT_APPEND_NEWLINE
_BUFFER = 1 << 20  # bytes buffered per session log before a write to the OS


class SessionLogWriter:
    """Appends events to `<out_dir>/<sessionId>.jsonl`, one file per session, each written
    through as it comes (so memory stays flat on logs of any size).

    A session belongs to the first source that wrote it: the same session id coming from another
    source file (a copied session) is left out, and `conflicts` says so. Call `flush()` to make
    what was written visible to readers, `close()` when done.

    Args:
        out_dir: where the logs go.
        truncate: start each session's file empty the first time it is written (a fresh import)
            instead of appending (follow mode keeps appending to what it wrote before).
    """

    def __init__(self, out_dir: Path, *, truncate: bool = True) -> None:
        self.out_dir = out_dir
        self.truncate = truncate
        self.paths: dict[str, Path] = {}
        self.owners: dict[str, str] = {}
        self.conflicts: list[str] = []
        self._handles: dict[str, Any] = {}

    def handle_for(self, session_id: str, source: str) -> Any:
        """The open file `session_id`'s lines go to (a discarding one for another source's)."""
        handle = self._handles.get(session_id)
        return handle if handle is not None else self._open(session_id, source)

    def write(self, lines: list[LogLine], source: str = "") -> None:
        for line in lines:
            self.handle_for(line["sessionId"], source).write(orjson.dumps(line, option=_NEWLINE))

    def _open(self, session_id: str, source: str) -> Any:
        owner = self.owners.setdefault(session_id, source)
        if owner != source:
            message = f"{source}: session {session_id} is also in {owner} (this copy left out)"
            if message not in self.conflicts:
                self.conflicts.append(message)
            handle: Any = open(os.devnull, "wb")  # noqa: SIM115 - another source's session: left out
        else:
            path = self.paths.get(session_id)
            mode = "ab"
            if path is None:
                path = self.paths[session_id] = self.out_dir / f"{session_id}.jsonl"
                mode = "wb" if self.truncate else "ab"
            flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if mode == "wb" else os.O_APPEND)
            handle = os.fdopen(open_private(path, flags), mode, buffering=_BUFFER)
        self._handles[session_id] = handle
        return handle

    def flush(self) -> None:
        for handle in self._handles.values():
            handle.flush()

    def close(self) -> None:
        handles, self._handles = self._handles, {}
        for handle in handles.values():
            handle.close()


def convert_source(source: SourceFile, writer: SessionLogWriter) -> LineImporter:
    """Convert one foreign log into our logs through `writer`; returns its importer."""
    # The cyclic garbage collector is paused for the loop: converting allocates millions of
    # short-lived dicts that hold no cycles, and its passes over them would double the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _convert(source, writer)
    finally:
        if collecting:
            gc.enable()


def _convert(source: SourceFile, writer: SessionLogWriter) -> LineImporter:
    importer = source.importer()
    label = str(source.path)
    # The builders write each line to its session's file as they make it: no `LogLine` list
    # between them and the file (`finish_lines` and the rest then return nothing to write).
    importer.write_to = lambda session_id: writer.handle_for(session_id, label).write
    read = importer.read_line
    number: int | None = 0
    try:
        with source.path.open("rb", buffering=0) as handle:
            lines = SourceLines(handle)
            for number, line in lines:
                if line[0] > 32:  # every whitespace byte is <= 32, and OVERLONG's first
                    read(number, line)
                elif line is OVERLONG:
                    writer.write(importer.feed_overlong(number, lines.overlong, lines.max_line), label)
                elif not line.tobytes().isspace():
                    read(number, line)
            number = lines.next_number
            if lines.tail_overlong:
                writer.write(importer.feed_overlong(number, lines.tail_overlong, lines.max_line), label)
            elif lines.tail:
                writer.write(feed_final(importer, number, lines.tail), label)
        number = None
        writer.write(importer.finish_lines(), label)
    except OSError:
        raise
    except Exception as error:  # an importer's bug: said as where it happened, not a traceback
        raise ImportLineError(source.path, number, error) from error
    finally:
        writer.close()
    return importer


@dataclass
class ImportReport:
    """What `import_path` did."""

    written: list[Path] = field(default_factory=list)
    copied: list[Path] = field(default_factory=list)
    sources: dict[str, int] = field(default_factory=dict)
    counts: ImportCounts = field(default_factory=ImportCounts)
    warnings: list[str] = field(default_factory=list)

    def summary(self, out_dir: Path) -> str:
        made = ", ".join(f"{count} {FORMAT_NAMES[kind]}" for kind, count in sorted(self.sources.items()))
        counts = self.counts
        line = (
            f"imported {made or 'no'} log{'s' if sum(self.sources.values()) != 1 else ''} into {out_dir}: "
            f"{counted(len(self.written), 'session')}, {counted(counts.prompts, 'prompt')}, {counted(counts.tool_calls, 'tool call')}, "
            f"{counts.tool_results} results, {counts.source_records} source-specific records"
        )
        if self.copied:
            line += f"; copied {len(self.copied)} agent-tui logs"
        if self.warnings:
            line += f"; {counted(len(self.warnings), 'warning')}"
        return line


def import_path(
    src: Path, out_dir: Path, *, check_own_log: Callable[[Path], tuple[int, str] | None] | None = None
) -> ImportReport:
    """Write our logs for every log under `src` into `out_dir` (created if needed).

    Args:
        check_own_log: reads one of our logs through and raises for a corrupt line (naming
            `FILE:LINE`); when the log ends in a torn line it returns the byte length of its
            complete lines (only those are copied) and the warning that says so, else None.
            Every log is checked before anything is written, so a corrupt one leaves `out_dir`
            untouched. None copies them unchecked.

    Raises:
        ImportInputError: `src` is missing, or is a file no importer knows, or holds no log.
    """
    found = discover([src])
    if not found.sources and not found.own_logs:
        raise ImportInputError(f"{src}: no Claude Code, Codex or agent-tui logs found")
    complete = {log: check_own_log(log) for log in found.own_logs} if check_own_log is not None else {}
    make_private_dirs(out_dir)
    report = ImportReport(warnings=list(found.warnings))
    writer = SessionLogWriter(out_dir)
    for source in found.sources:
        importer = convert_source(source, writer)
        report.warnings += importer.warnings
        report.counts.add(importer.counts)
        report.sources[source.format] = report.sources.get(source.format, 0) + 1
    report.warnings += writer.conflicts
    report.written = sorted(writer.paths.values())
    for log in found.own_logs:
        target = out_dir / log.name
        if target.resolve() != log.resolve():
            torn = complete.get(log)
            _copy_start(log, target, log.stat().st_size if torn is None else torn[0])
            if torn is not None:
                report.warnings.append(torn[1])
        report.copied.append(target)
    return report


def _copy_start(source: Path, target: Path, size: int) -> None:
    """The first `size` bytes of `source` into `target` (made 0600: it is a session log)."""
    fd = open_private(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with source.open("rb") as reading, os.fdopen(fd, "wb") as writing:
        while size > 0 and (chunk := reading.read(min(size, 1 << 20))):
            writing.write(chunk)
            size -= len(chunk)
