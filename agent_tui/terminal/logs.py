"""`TerminalLogs`: Claude Code and Codex transcripts followed into our logs, as they grow.

A terminal agent's session is one of our logs in the engine's store: the events the importers
make of its CLI's transcript (`importers/`, a `SessionBuilder` per session: the main one and its
sub-agents), with what the CLI's hooks said woven in where it happened (`SessionBuilder.weave`).
Each event is stored with the engine's `store_built` and told to its listeners like any other.

Invariants:
- one writer per log: a session's log is written only after this process took its lock (the
  store's `claim`); a session whose log another process holds is that process's to show: its
  lines are not written here (`foreign`), and its hooks get no decision from here;
- incremental: each poll reads only the complete lines appended since the last one (a line still
  being written waits); the transcript is never written;
- a transcript path is followed only when it lies under its CLI's own session directory
  (`importers/locations.py`, symbolic links resolved; `transcript_refused` says why not);
- a turn in progress stays open (running): agent-tui never ends a turn the transcript did not
  end, but for the CLI's own word (its `Stop` hook, woven as `agent-tui.turn-end`); when the
  following stops, the logs are left as written;
- a later process continues a log where it ends: it reads the transcript again from its start
  (the importer is deterministic: the same events get the same ids), skips what the log holds,
  and gives the woven events (ids ending `_hook`) back to `weave` where they stand; a log that
  does not match its transcript is no longer followed, with a warning;
- every change of a builder and the storing of what it wrote happen under one lock, so events
  reach the store in the order they were built;
- a session is written from one transcript, the first that made an event of it: what another
  file's importer makes of it (a sub-agent's file's records of its parent's session) is left out;
- a transcript of a session this host drives through ACP (`runtime.acp_sessions`: its id, or
  its parent's) is left out: nothing of it is stored, and it is not followed again; one followed
  before its ACP session's id was recorded (the transcript came first) is let go at the next
  read, its sessions (sub-agents too) forgotten by the engine and told to `on_dropped`.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from agent_tui.engine.engine import SessionEngine
from agent_tui.events import Event
from agent_tui.importers.builder import WOVEN, LogLine, SessionBuilder, as_event
from agent_tui.importers.convert import SourceFile, discover
from agent_tui.importers.detect import Format
from agent_tui.importers.follow import SourceTail
from agent_tui.importers.locations import Tool, default_dir
from agent_tui.runtime.acp_sessions import AcpSessions
from agent_tui.store import SessionLockedError
from agent_tui.terminal.cli_versions import NAMES
from agent_tui.terminal.hook_wire import Cli

TOOL_OF: dict[Cli, Tool] = {"claude-code": "claude", "codex": "codex"}
YIELD_EVERY = 256
"""Transcript lines read between two turns given to the rest of the event loop."""
TURN_END = "agent-tui.turn-end"
"""The record of a turn the CLI said ended (its `Stop`, `SubagentStop` or `SessionEnd` hook)."""
COMPANIONS_EVERY = 1.0
"""Seconds between two looks for a quiet Claude Code transcript's new sub-agents' files."""


class TranscriptRefused(ValueError):
    """A transcript path that is not followed; the message says why. `missing`: no file is
    there (yet: Claude Code writes a session's transcript at its first tool call)."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def transcript_refused(cli: Cli, path: str | Path, root: Path | None = None) -> Path:
    """The resolved transcript `path`, when it is a regular file of this user under `cli`'s own
    session directory (`root`, by default where the CLI keeps them).

    Raises:
        TranscriptRefused: it is not (outside the directory, a link out of it, not a file, not
            this user's, not a `.jsonl`).
    """
    base = root if root is not None else default_dir(TOOL_OF[cli])
    try:
        resolved = Path(path).resolve(strict=True)
        home = base.resolve(strict=True)
    except (OSError, RuntimeError):
        raise TranscriptRefused(f"{path}: no such transcript", missing=True) from None
    if not resolved.is_relative_to(home):
        raise TranscriptRefused(f"{path}: not under {NAMES[cli]}'s session directory {home}")
    try:
        status = resolved.stat()
    except OSError:
        raise TranscriptRefused(f"{path}: no such transcript") from None
    if not resolved.is_file() or resolved.suffix != ".jsonl":
        raise TranscriptRefused(f"{path}: not a transcript file")
    if status.st_uid != os.geteuid():
        raise TranscriptRefused(f"{path}: belongs to another user")
    return resolved


class _Transcript(SourceTail):
    """One transcript file being followed."""

    def __init__(self, source: SourceFile, cli: Cli) -> None:
        super().__init__(source)
        self.cli = cli
        self.grew = True  # since its sub-agents' files were last looked for
        self.looked = 0.0  # when they were (monotonic seconds)


@dataclass
class _Log:
    """One of our logs a transcript writes: what of it is still to be matched (a log an earlier
    process wrote), and whether another process writes it."""

    expected: deque[Event] = field(default_factory=deque)
    foreign: bool = False


class TerminalLogs:
    """The transcripts followed into `engine`'s store (see the module docstring).

    Args:
        engine: whose store keeps the logs and whose listeners hear every event.
        roots: each CLI's session directory (default: where the CLI keeps them; tests give theirs).
        acp: the sessions this host drives through ACP (their transcripts are left out).
    """

    def __init__(
        self, engine: SessionEngine, roots: dict[Cli, Path] | None = None, acp: AcpSessions | None = None
    ) -> None:
        self.engine = engine
        self.roots = dict(roots or {})
        self.acp = acp if acp is not None else AcpSessions()
        self._left: set[Path] = set()  # transcripts of ACP sessions: never followed
        self._dropped: set[str] = set()  # our sessions of those transcripts
        self.on_dropped: Callable[[list[str]], None] | None = None
        """Told the sessions of a followed transcript let go as an ACP session's (to leave the tree)."""
        self.warnings: list[str] = []
        self._transcripts: dict[Path, _Transcript] = {}
        self._logs: dict[str, _Log] = {}
        self._owner: dict[str, _Transcript] = {}  # our session id → the transcript that writes it
        self.lock = anyio.Lock()
        """Held while a builder changes and what it wrote is stored."""
        self.on_line: Callable[[Event], None] | None = None
        """Sees each event stored from here (the hooks learn of a question the transcript settled)."""

    # -- which transcripts -----------------------------------------------------------------------
    def root(self, cli: Cli) -> Path:
        return self.roots.get(cli) or default_dir(TOOL_OF[cli])

    def follows(self, path: Path) -> bool:
        """Whether the transcript at `path` is followed, or left out (an ACP session's)."""
        return path in self._transcripts or path in self._left

    def left_out(self, path: Path) -> bool:
        """Whether the transcript at `path` is left out as an ACP session's."""
        return path in self._left

    async def follow(self, cli: Cli, path: str | Path) -> Path:
        """Follow the transcript at `path` (and its sub-agents' files beside it), caught up
        before this returns.

        Raises:
            TranscriptRefused: the path is not one to follow.
        """
        resolved = transcript_refused(cli, path, self.root(cli))
        if resolved in self._left:
            raise TranscriptRefused(f"{path}: a session agent-tui drives through ACP (shown as that)")
        if resolved not in self._transcripts:
            self._join(cli, resolved)
        await self.catch_up()
        return resolved

    def _join(self, cli: Cli, path: Path) -> None:
        """Follow `path` and the sub-agents' files found with it (a Claude Code sub-agent's file
        with what its `meta.json` says of it), each under the CLI's directory."""
        fmt: Format = "codex" if cli == "codex" else "claude-code"
        try:
            found = discover([path], known=set(self._transcripts)).sources
        except Exception:  # a transcript still empty is not recognised yet: followed as its CLI's
            found = []
        home = self.root(cli).resolve()
        joined = False
        for source in found:
            resolved = source.path.resolve()
            if source.format != fmt or resolved in self._left:
                continue
            if resolved.is_relative_to(home) and resolved not in self._transcripts:
                self._add(cli, SourceFile(resolved, fmt, source.agent_hints))
                joined = joined or resolved == path
        if not joined and path not in self._transcripts and path not in self._left:
            self._add(cli, SourceFile(path, fmt))

    def _add(self, cli: Cli, source: SourceFile) -> None:
        self._transcripts[source.path] = _Transcript(source, cli)

    def _companions(self) -> None:
        """Sub-agents' files that appeared beside a followed Claude Code transcript join (looked
        for when it grew, and at least once a second)."""
        now = time.monotonic()
        for transcript in list(self._transcripts.values()):
            path = transcript.source.path
            if transcript.cli != "claude-code" or path.name.startswith("agent-"):
                continue
            if not transcript.grew and now - transcript.looked < COMPANIONS_EVERY:
                continue
            transcript.grew, transcript.looked = False, now
            if (path.parent / path.stem / "subagents").is_dir() or any(path.parent.glob("agent-*.jsonl")):
                self._join("claude-code", path)

    # -- reading ---------------------------------------------------------------------------------
    async def catch_up(self) -> int:
        """Read what every followed transcript gained; returns how many events were stored."""
        async with self.lock:
            self._drop_acp_copies()
            self._companions()
            stored = 0
            for transcript in list(self._transcripts.values()):
                stored += await self._poll(transcript)
            return stored

    async def _poll(self, transcript: _Transcript) -> int:
        if not transcript.grown():
            return 0
        transcript.grew = True
        stored = 0
        try:
            for number, line in transcript.appended():
                if number % YIELD_EVERY == 0:  # a long catch-up lets the dashboard draw meanwhile
                    await anyio.lowlevel.checkpoint()
                stored += await self._rewoven(transcript)  # what an earlier process wove before it
                stored += await self._store(transcript, transcript.feed(number, line))
                if transcript.failed:
                    break  # (left out: an ACP session's)
        except Exception as error:
            self.warnings.append(transcript.fail(error))
        stored += await self._rewoven(transcript)
        return stored

    async def _rewoven(self, transcript: _Transcript) -> int:
        """Give the woven events an earlier process stored next in its logs back to `weave`."""
        stored = 0
        for session_id, builder in list(transcript.importer.sessions.items()):
            log = self._logs.get(session_id) if self._owner.get(session_id) is transcript else None
            while log is not None and log.expected and log.expected[0].id.endswith(WOVEN):
                head = log.expected[0]
                start = len(transcript.importer.out)
                if not builder.weave(head.ts, head.type, dict(head.payload)):
                    self._lost(transcript, session_id, f"its woven event #{head.sequence} no longer fits")
                    return stored
                made = transcript.importer.out[start:]
                del transcript.importer.out[start:]
                stored += await self._store(transcript, made)
        return stored

    async def _store(self, transcript: _Transcript, made: list[LogLine]) -> int:
        stored = 0
        for line in made:
            session_id = line["sessionId"]
            log = self._logs.get(session_id)
            if log is None and self._acp_copy(session_id, line):
                if transcript in self._owner.values():
                    continue  # (a stray record in a file that writes sessions of its own)
                self._leave(transcript)
                return stored
            if log is None:
                log = self._open(transcript, session_id)
            if log.foreign or self._owner[session_id] is not transcript:
                continue  # another transcript writes that session (a sub-agent's file's stray records)
            if log.expected:
                head = log.expected.popleft()
                if head.id != line["id"] or head.type != line["type"] or head.payload != line["payload"]:
                    self._lost(transcript, session_id, f"event #{head.sequence} differs from its transcript")
                    return stored
                continue
            event = as_event(line)
            await self.engine.store_built(event)
            stored += 1
            if self.on_line is not None:
                self.on_line(event)
        return stored

    # -- the transcripts of this host's ACP sessions ---------------------------------------------
    def _acp_copy(self, session_id: str, line: LogLine) -> bool:
        """Whether a session met for the first time is an ACP session's transcript (or a
        sub-agent of one, as its `session.created` names its parent)."""
        parent = line["payload"].get("parentSessionId") if line["type"] == "session.created" else None
        return any(
            sid is not None and (self.acp.holds(sid) or sid in self._dropped) for sid in (session_id, parent)
        )

    def _leave(self, transcript: _Transcript) -> None:
        """Stop following `transcript` for good (nothing more of it is read or stored)."""
        transcript.failed = True
        self._transcripts.pop(transcript.source.path, None)
        self._left.add(transcript.source.path)

    def _drop_acp_copies(self) -> None:
        """Let go of the followed transcripts whose sessions turned out to be ACP sessions' (their
        id was recorded after the transcript was followed): see the module docstring."""
        held = [sid for sid in self._owner if self.acp.holds(sid)]
        doomed = {sid for main in held for sid in self.engine.budgets.index.subtree(main)}
        doomed.update(held)
        owners = {id(owner): owner for sid, owner in self._owner.items() if sid in doomed}
        if not owners:
            return
        dropped = [sid for sid, owner in self._owner.items() if id(owner) in owners]
        release = getattr(self.engine.store, "release", None)
        for transcript in owners.values():
            self._leave(transcript)
        for session_id in dropped:
            self._dropped.add(session_id)
            log = self._logs.pop(session_id)
            del self._owner[session_id]
            if log.foreign:
                continue
            with contextlib.suppress(Exception):  # (a session the engine no longer holds)
                self.engine.forget_session(session_id)
            if release is not None:
                release(session_id)
        if self.on_dropped is not None:
            self.on_dropped(dropped)

    def _open(self, transcript: _Transcript, session_id: str) -> _Log:
        """The log of a session met for the first time: this process its writer (or another
        process's), what an earlier process stored of it to be matched."""
        log = self._logs[session_id] = _Log()
        self._owner[session_id] = transcript
        store = self.engine.store
        claim = getattr(store, "claim", None)
        try:
            if claim is not None:
                claim(session_id)
        except SessionLockedError as error:
            log.foreign = True
            self.warnings.append(f"{session_id}: {error} (shown by that process)")
            return log
        if store.last_sequence(session_id) > 0:
            log.expected.extend(store.replay(session_id))
            self.engine.load_session(session_id)
        return log

    def _lost(self, transcript: _Transcript, session_id: str, why: str) -> None:
        transcript.failed = True
        self.warnings.append(
            f"{transcript.source.path}: the log of {session_id} does not match it ({why}): no longer followed"
        )

    # -- what the hooks weave in -----------------------------------------------------------------
    def builder(self, session_id: str) -> SessionBuilder | None:
        """The builder of our session `session_id`, when this process writes its log."""
        transcript = self._owner.get(session_id)
        log = self._logs.get(session_id)
        if transcript is None or log is None or log.foreign or log.expected or transcript.failed:
            return None
        return transcript.importer.sessions.get(session_id)

    def family(self, main: str) -> list[str]:
        """Our session `main` (a CLI session's) and its sub-agents', those this process writes,
        `main` first."""
        return [sid for sid in self.engine.budgets.index.subtree(main) if self.builder(sid) is not None]

    def known(self, session_id: str) -> bool:
        """Whether `session_id` is a terminal session this follower met (written here or not)."""
        return session_id in self._logs

    async def weave(self, session_id: str, kind: str, payload: dict[str, Any]) -> Event | None:
        """Weave one hook fact into the log of `session_id` (under the lock: call `weave_locked`
        when holding it); returns its first event, None when it does not fit."""
        async with self.lock:
            return await self.weave_locked(session_id, kind, payload)

    async def weave_locked(self, session_id: str, kind: str, payload: dict[str, Any]) -> Event | None:
        builder = self.builder(session_id)
        if builder is None:
            return None
        transcript = self._owner[session_id]
        out = transcript.importer.out
        start = len(out)
        if not builder.weave(self.engine.clock(), kind, payload):
            return None
        made = out[start:]
        del out[start:]
        first = as_event(made[0]) if made else None
        try:
            await self._store(transcript, made)
        except Exception as error:  # the builder is ahead of its log now: stop following it
            transcript.failed = True
            self.warnings.append(f"{transcript.source.path}: {error} (no longer followed)")
            return None
        return first

    def release(self) -> None:
        """Let go of every log this follower writes (their locks: a later process continues
        them); they are left as written. The follower writes nothing more."""
        release = getattr(self.engine.store, "release", None)
        for session_id, log in self._logs.items():
            if not log.foreign and release is not None:
                release(session_id)
        self._transcripts.clear()
        self._logs.clear()
        self._owner.clear()

    async def finish_file(self, cli: Cli, path: str | Path) -> None:
        """The CLI ended the sessions of the transcript at `path` (a sub-agent's): see `end`."""
        try:
            resolved = transcript_refused(cli, path, self.root(cli))
        except TranscriptRefused:
            return
        transcript = self._transcripts.get(resolved)
        if transcript is not None:
            await self.end([sid for sid, owner in self._owner.items() if owner is transcript], "SubagentStop")

    async def finish(self, main: str) -> None:
        """The CLI ended its session `main`, sub-agents and all: see `end`."""
        await self.end(self.engine.budgets.index.subtree(main), "SessionEnd")

    async def end(self, session_ids: list[str], hook: str) -> None:
        """The CLI ended these sessions (its `hook` said so): what is left of their transcripts
        is read, a turn still open is closed (`agent-tui.turn-end`, woven: a later process
        closes it where this one did), and the transcripts that wrote only these sessions are
        let go (their logs' locks too): a resumed session is followed again from its log."""
        async with self.lock:
            ending = [sid for sid in session_ids if sid in self._owner]
            owners = {id(self._owner[sid]): self._owner[sid] for sid in ending}
            for transcript in owners.values():
                await self._poll(transcript)
            for session_id in ending:
                builder = self.builder(session_id)
                if builder is not None and builder.turn is not None:
                    record = {"format": builder.format, "recordType": TURN_END, "data": {"hook": hook}}
                    await self.weave_locked(session_id, "source.record", record)
            release = getattr(self.engine.store, "release", None)
            for transcript in owners.values():
                owned = [sid for sid, owner in self._owner.items() if owner is transcript]
                if not set(owned) <= set(ending):
                    continue  # it writes a session that goes on
                self._transcripts.pop(transcript.source.path, None)
                for session_id in owned:
                    log = self._logs.pop(session_id)
                    del self._owner[session_id]
                    if log.foreign:
                        continue
                    with contextlib.suppress(Exception):  # a turn of its still writing: kept
                        self.engine.forget_session(session_id)
                        if release is not None:
                            release(session_id)
