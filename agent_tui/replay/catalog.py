"""The list of many session logs, read from each log's head and tail: what shows before any
timeline is built.

A history of thousands of logs opens on its list: each log gives its first line (its
`session.created`: name, parent, directory) and its last few kilobytes, folded from the last
`turn.started` found there on, so the tree shows each session's name, status, phase, pending
approvals and last turn as the full fold would. The events are never all read: a log's whole
content is read only when its session is chosen (the scrubber's timeline over it, see
`agent_tui.replay.cache`).

Invariants:
- a log costs two reads (its head, its tail; the tail grows from `TAIL_BYTES` up to
  `MAX_TAIL_BYTES` until a turn start is in it), whatever its size;
- a log that cannot be read, that ends in a torn line or whose tail holds a corrupt line is
  still listed (by its file name when even its head is unreadable) and has a `problem`:
  `FILE: reason`, one sentence;
- `family(session_id)` is the session's log and its sub-agents' (from the heads' parent ids),
  or the session's log alone when the family has more than `FAMILY_LOGS` logs;
- `refreshed()` (following) reads again only the logs whose size or time changed, and new ones;
- nothing here imports Textual; `overlay` shows a timeline's sessions over the list.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

import orjson

from agent_tui.events import Event
from agent_tui.events.validation import BUILDERS_WITH_V
from agent_tui.reducer import DashboardState, SessionView, apply_event
from agent_tui.reducer.views import tree_order
from agent_tui.replay.logfile import decode_line

TAIL_BYTES = 8 * 1024
"""The first look at a log's end (about twenty lines of a usual log)."""
MAX_TAIL_BYTES = 256 * 1024
"""How far back a tail looks for the start of the last turn."""
HEAD_BYTES = 4 * 1024
TORN_MARK = "✗ torn tail"
TORN_PROBLEM = "torn final line (the writer stopped mid-line)"
FAMILY_LOGS = 16
"""A session's timeline covers its sub-agents' logs too when the family has at most this many."""


@dataclass(frozen=True)
class CatalogEntry:
    """One listed log."""

    path: Path
    session_id: str
    parent_id: str | None
    problem: str | None = None  # `FILE: reason` (torn, corrupt near the end, unreadable)
    seen: tuple[int, int] = (0, 0)  # (size, mtime) when read: a log that grew is read again
    tail_from: int | None = None
    """The sequence the folded tail starts at when lines come between the head and it (what
    they spent is the earlier turns', `replay.spend_scan`); None when the tail reaches the head."""
    budget_later: bool = False  # the folded tail sets a budget (an earlier one is not in force)


@dataclass
class Catalog:
    """The listed logs and the state their heads and tails fold to."""

    entries: dict[str, CatalogEntry] = field(default_factory=dict)
    state: DashboardState = field(default_factory=DashboardState)
    complete: bool = False  # read from the tails too (False: from the heads alone)

    def problems(self, *, torn: bool = True) -> list[str]:
        """`FILE: reason` for each listed log with a problem, in session-id order; without
        `torn`, leaving out torn final lines (following: a line still being written)."""
        return [
            e.problem
            for _sid, e in sorted(self.entries.items())
            if e.problem is not None and (torn or TORN_PROBLEM not in e.problem)
        ]

    def marks(self, *, torn: bool = True) -> dict[str, str]:
        """A short mark per session whose log has a problem (for its line in the tree); without
        `torn`, none for a torn final line."""
        marks = {sid: _mark_of(e.problem) for sid, e in self.entries.items() if e.problem is not None}
        return marks if torn else {sid: mark for sid, mark in marks.items() if mark != TORN_MARK}

    def family(self, session_id: str) -> tuple[Path, ...]:
        """The logs a timeline over `session_id` covers (see the module docstring)."""
        entry = self.entries.get(session_id)
        if entry is None:
            return ()
        children: dict[str, list[str]] = {}
        for sid, other in self.entries.items():
            if other.parent_id is not None:
                children.setdefault(other.parent_id, []).append(sid)
        found = [session_id]
        seen = {session_id}
        k = 0
        while k < len(found) and len(found) <= FAMILY_LOGS:
            for child in sorted(children.get(found[k], ())):
                if child not in seen:
                    seen.add(child)
                    found.append(child)
            k += 1
        if len(found) > FAMILY_LOGS:
            return (entry.path,)
        return tuple(sorted((self.entries[sid].path for sid in found), key=lambda p: p.stem))

    def refreshed(self, directory: Path | None) -> Catalog | None:
        """A new catalog with the logs that changed since they were read (and the new ones in
        `directory`) read again; None if none changed. This one is left as it was."""
        changed: list[Path] = []
        for entry in self.entries.values():
            if _seen(entry.path) != entry.seen:
                changed.append(entry.path)
        if directory is not None:
            try:
                known = {entry.path for entry in self.entries.values()}
                changed += sorted(p for p in directory.glob("*.jsonl") if p not in known)
            except OSError:
                pass
        if not changed:
            return None
        update = read_catalog(changed)
        return Catalog(
            entries={**self.entries, **update.entries},
            state=overlay(self.state, update.state),
            complete=self.complete,
        )


def _seen(path: Path) -> tuple[int, int]:
    try:
        stat = os.stat(path)
    except OSError:
        return (-1, -1)
    return (stat.st_size, stat.st_mtime_ns)


def _mark_of(problem: str) -> str:
    if TORN_PROBLEM in problem:
        return TORN_MARK
    if "unreadable" in problem or "cannot" in problem:
        return "✗ unreadable"
    return "✗ corrupt tail"


def read_catalog(paths: Iterable[Path], *, tails: bool = True) -> Catalog:
    """List `paths` from their heads and tails (see the module docstring); without `tails`,
    from their heads alone (names and tree, every status idle: a first look, ten times quicker)."""
    catalog = Catalog(complete=tails)
    picked: list[Event] = []
    for path in paths:
        entry, events = read_entry(path, tail=tails)
        catalog.entries[entry.session_id] = entry
        picked += events
    # By time; a stable sort keeps ties in the order of the logs, and within one log in its
    # lines' order (a tuple key saying so costs ten times more for 100k events).
    picked.sort(key=attrgetter("ts"))
    state = catalog.state
    for event in picked:
        apply_event(state, event)
    for entry in catalog.entries.values():
        if entry.session_id not in state.sessions:  # no readable head: listed by its file name
            state.sessions[entry.session_id] = SessionView(entry.session_id, title=entry.path.name)
    return catalog


def read_entry(path: Path, *, tail: bool = True) -> tuple[CatalogEntry, list[Event]]:
    """One log's entry and the events its head and tail give (head first, then the last turn;
    the head alone without `tail`)."""
    session_id = path.stem
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as error:
        return CatalogEntry(
            path, session_id, None, f"{path}: unreadable: {error.strerror or error}", (-1, -1)
        ), []
    try:
        stat = os.fstat(fd)
        size = stat.st_size
        seen = (size, stat.st_mtime_ns)
        head = _head(fd, size)
        problem: str | None = None
        created = created_event(head, session_id)
        if created is None and size:
            problem = f"{path}:1: not the session's session.created line"
        events, tail_problem = (
            _last_turn(fd, size, path, len(head) + 1 if head else 0) if tail else ([], None)
        )
    except OSError as error:
        return CatalogEntry(
            path, session_id, None, f"{path}: unreadable: {error.strerror or error}", (-1, -1)
        ), []
    finally:
        os.close(fd)
    parent = created.payload.get("parentSessionId") if created is not None else None
    kept = ([created] if created is not None else []) + [e for e in events if e.session_id == session_id]
    if created is None:
        kept = []  # without its head the tail cannot be placed in a session's tree
    tail_from = events[0].sequence if events and created is not None else None
    if tail_from is not None and created is not None and tail_from <= created.sequence + 1:
        tail_from = None  # nothing between the head and the tail
    budget_later = any(event.type == "session.budget" for event in events)
    entry = CatalogEntry(path, session_id, parent, problem or tail_problem, seen, tail_from, budget_later)
    return entry, kept


def created_event(head: bytes, session_id: str) -> Event | None:
    """A log's first line as its session's `session.created` event (None if it is not that)."""
    first = decode_line(head) if head else None
    if isinstance(first, Event) and first.type == "session.created" and first.session_id == session_id:
        return first
    return None


def _head(fd: int, size: int) -> bytes:
    """The first line (without its newline; b"" if the file is empty or has no newline yet
    within its whole size)."""
    data = os.pread(fd, min(size, HEAD_BYTES), 0)
    while b"\n" not in data and len(data) < size:
        data += os.pread(fd, 65536, len(data))
    end = data.find(b"\n")
    return data[:end] if end >= 0 else b""


def _last_turn(fd: int, size: int, path: Path, head_end: int) -> tuple[list[Event], str | None]:
    """The events from the last turn start within the tail on (all of the tail if no turn
    starts in `MAX_TAIL_BYTES`), and the tail's problem if any."""
    want = TAIL_BYTES
    while True:
        start = max(head_end, size - want)
        data = os.pread(fd, size - start, start) if size > start else b""
        if start > head_end:
            data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""
        lines = data.split(b"\n")
        torn = lines.pop()
        begin = _turn_start(lines)
        if begin is not None or start <= head_end or want >= MAX_TAIL_BYTES:
            break
        want *= 4
    problem = f"{path}: {TORN_PROBLEM}: left out" if torn else None
    events: list[Event] = []
    for line in lines[begin or 0 :]:
        decoded = _decode(line)
        if isinstance(decoded, str):
            problem = problem or f"{path}: a corrupt line near the end: {decoded}"
        else:
            events.append(decoded)
    return events, problem


def _decode(line: bytes) -> Event | str:
    """`decode_line`, taking first the generated check-and-build of the line's type (a tail
    line's sequence is 2 or more); the full check says why a line is not an event."""
    try:
        data = orjson.loads(line)
        sequence = data["sequence"]
        if type(sequence) is int and sequence >= 2:
            event: Event = BUILDERS_WITH_V[data["type"]](data, sequence)
            return event
    except Exception:
        pass
    return decode_line(line)


def _turn_start(lines: list[bytes]) -> int | None:
    """The index of the last line that starts a turn (only its type is looked at)."""
    for k in range(len(lines) - 1, -1, -1):
        if b"turn.started" in lines[k]:
            try:
                if orjson.loads(lines[k]).get("type") == "turn.started":
                    return k
            except (orjson.JSONDecodeError, AttributeError):
                continue
    return None


def overlay(base: DashboardState, over: DashboardState) -> DashboardState:
    """`base` with the sessions of `over` in place of its own (a new state; neither changes).

    The list shows every session from the heads and tails; a timeline's sessions, at its
    cursor, take the place of theirs.
    """
    if not over.sessions:
        return base
    sessions = dict(base.sessions)
    sessions.update(over.sessions)
    state = DashboardState(sessions=sessions, event_count=base.event_count, asked_count=over.asked_count)
    if all(sid in base.sessions for sid in over.sessions):
        state._tree = base._tree
    else:
        tree = base._tree.copy()
        for sid, session in over.sessions.items():
            if sid not in base.sessions and session.parent_session_id is not None:
                tree.link(sid, session.parent_session_id, tree_order(session))
        state._tree = tree
    pending = {key: view for key, view in base._pending.items() if key[0] not in over.sessions}
    pending.update(over._pending)
    state._pending = pending
    return state


def catalog_paths(catalog: Catalog) -> Sequence[Path]:
    """Every listed log, in session-id order."""
    return [entry.path for _sid, entry in sorted(catalog.entries.items())]
