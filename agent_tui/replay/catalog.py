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
  `MAX_TAIL_BYTES` until a turn start is in it), whatever its size; listed from its head first
  (`read_catalog(tails=False)`), it is read at its tail alone by `with_tails` (the head's end
  known), and the two fold to what `read_catalog` folds;
- only the last turn's lines are split and decoded: the last turn start is found by a byte
  search from the end, each hit checked by decoding its line alone;
- a log that cannot be read, that ends in a torn line or whose tail holds a corrupt line is
  still listed (by its file name when even its head is unreadable) and has a `problem`:
  `FILE: reason`, one sentence;
- `family(session_id)` is the session's log and its sub-agents' (from the heads' parent ids),
  or the session's log alone when the family has more than `FAMILY_LOGS` logs;
- `refreshed()` (following) reads again only the logs whose size or time changed, and new ones;
- what a listed session's earlier turns spent is its log's whole spend (asked of the search index
  by the caller: this floor cannot) less its tail's (`CatalogEntry.tail_spend`), added once to
  its view (`ListSpend`);
- handed over by a child (`lightened`), the views leave out their turns' texts (transcripts,
  assistant text) and tool calls (but those an approval waits on, without their output), which
  neither the tree, the filter, the summary, the chart nor the approvals read; `whole` puts a
  session's back (its log read again, at the size it was listed at) before the detail shows it
  from the list: the same turns the full fold gave;
- nothing here imports Textual; `overlay` shows a timeline's sessions over the list.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple, TypeVar

import orjson

from agent_tui.events import Event
from agent_tui.events.validation import BUILDERS_WITH_V
from agent_tui.private_files import plain_descriptor
from agent_tui.reducer import DashboardState, SessionView, fold_into
from agent_tui.reducer.collector import collector_paused
from agent_tui.reducer.earlier_spend import EarlierSpend, add_earlier_spend, earlier_spend
from agent_tui.reducer.views import TurnView, tree_order
from agent_tui.replay.logfile import decode_line

TAIL_BYTES = 8 * 1024
"""The first look at a log's end (about twenty lines of a usual log)."""
MAX_TAIL_BYTES = 256 * 1024
"""How far back a tail looks for the start of the last turn."""
HEAD_BYTES = 4 * 1024
TORN_MARK = "✗ torn tail"
TORN_PROBLEM = "torn final line (the writer stopped mid-line)"
T = TypeVar("T")
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
    they spent is the earlier turns'); None when the tail reaches the head."""
    head_end: int = 0  # the byte after the first line's newline (0: no complete first line)
    tail_spend: EarlierSpend | None = None
    """What the folded tail spent (and the budget it sets), when lines come before it: the
    earlier turns spent the whole log's spend less this (`EarlierSpend.minus`)."""


@dataclass
class Catalog:
    """The listed logs and the state their heads and tails fold to."""

    entries: dict[str, CatalogEntry] = field(default_factory=dict)
    state: DashboardState = field(default_factory=DashboardState)
    complete: bool = False  # read from the tails too (False: from the heads alone)
    _heads: tuple[tuple[CatalogEntry, Event | None], ...] = field(default=(), repr=False, compare=False)
    """Each log's entry from its head and its `session.created`, in the order listed (what
    `with_tails` starts from)."""
    light: set[str] = field(default_factory=set, repr=False, compare=False)
    """The sessions whose views are without their turns' texts (`lightened`), until `whole`."""

    def lightened(self) -> Catalog:
        """This catalog, its views' turns left without their texts and tool calls (in place:
        what a child hands over, a fifth of the bytes to pickle and unpickle); `whole` puts them
        back."""
        for session_id, view in self.state.sessions.items():
            if view.turns:
                asked = {(p.turn_id, p.tool_call_id) for p in view.pending.values()}
                for turn in view.turns:
                    # the calls an approval waits on stay (the approvals show their arguments)
                    turn.drop_texts({call for turn_id, call in asked if turn_id == turn.turn_id})
                self.light.add(session_id)
        return self

    def whole(self, session_id: str) -> None:
        """Give `session_id`'s view its turns' texts again (if `lightened` left them out): its
        turns as its log's head and tail fold them, read at the size listed."""
        if session_id not in self.light:
            return
        self.light.discard(session_id)
        entry = self.entries.get(session_id)
        view = self.state.sessions.get(session_id)
        if entry is not None and view is not None:
            turns = _whole_turns(entry)
            if turns is not None:
                view.turns = turns

    def with_tails(self) -> Catalog:
        """This list (from the heads) completed from the logs' tails: a new catalog whose every
        log is read at its tail, not at its head again (but for a log without a head yet, or one
        now shorter than its head, read at both); this one is left as it was."""
        catalog = Catalog(complete=True)
        picked: list[Event] = []
        # The events read and the views folded hold no cycles: the collector's passes over
        # them, as they pile up, would cost a fifth of the whole.
        with collector_paused():
            for entry, created in self._heads:
                listed, events = _tail_of(entry, created)
                catalog.entries[listed.session_id] = listed
                picked += events
            _fold_listed(catalog, picked)
        return catalog

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
            light=self.light.difference(update.state.sessions),
        )


def _whole_turns(entry: CatalogEntry) -> list[TurnView] | None:
    """The turns of `entry`'s session as its log's head and tail fold them, read at the size it
    was listed at (a log grown since reads the same bytes); None if it cannot be read now."""

    def read(fd: int) -> tuple[CatalogEntry, list[Event]]:
        head_entry, created = _head_of(fd, entry.path)
        if created is None:
            return head_entry, []
        size = min(os.fstat(fd).st_size, entry.seen[0])
        tail = _last_turn(fd, size, entry.path, head_entry.head_end)
        return head_entry, [created, *(e for e in tail.events if e.session_id == entry.session_id)]

    no_events: list[Event] = []
    _entry, events = _opened(entry.path, read, no_events)
    if not events:
        return None
    events.sort(key=attrgetter("ts"))  # as `_fold_listed` orders them (the others' are apart)
    state = DashboardState()
    fold_into(state, events)
    view = state.sessions.get(entry.session_id)
    return view.turns if view is not None else None


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
    from their heads alone (names and tree, every status idle: a first look, ten times quicker,
    that `with_tails` completes)."""
    # As in `with_tails`: what is read and folded holds no cycles, and the collector's passes
    # over it as it piles up cost more than the reading.
    with collector_paused():
        heads = [_read_head(path) for path in paths]
    catalog = Catalog(complete=False, _heads=tuple(heads))
    if tails:  # `with_tails` folds the heads with the tails: folding them here too was waste
        return catalog.with_tails()
    with collector_paused():
        for entry, _created in heads:
            catalog.entries[entry.session_id] = entry
        _fold_listed(catalog, [created for _entry, created in heads if created is not None])
    return catalog


def _fold_listed(catalog: Catalog, picked: list[Event]) -> None:
    """Fold what the logs gave into the catalog's state, by time, and list by its file name each
    log that gave no head."""
    # By time; a stable sort keeps ties in the order of the logs, and within one log in its
    # lines' order (a tuple key saying so costs ten times more for 100k events).
    picked.sort(key=attrgetter("ts"))
    state = catalog.state
    fold_into(state, picked)
    for entry in catalog.entries.values():
        if entry.session_id not in state.sessions:  # no readable head: listed by its file name
            state.sessions[entry.session_id] = SessionView(entry.session_id, title=entry.path.name)


def read_entry(path: Path, *, tail: bool = True) -> tuple[CatalogEntry, list[Event]]:
    """One log's entry and the events its head and tail give (head first, then the last turn;
    the head alone without `tail`)."""

    def read(fd: int) -> tuple[CatalogEntry, list[Event]]:
        entry, created = _head_of(fd, path)
        if not tail:
            return entry, [created] if created is not None else []
        return _with_tail(fd, entry, created)

    return _opened(path, read, [])


def _tail_of(entry: CatalogEntry, created: Event | None) -> tuple[CatalogEntry, list[Event]]:
    """`read_entry` of a log whose head was read already (`entry`, `created`)."""
    if created is None:
        return read_entry(entry.path)

    def read(fd: int) -> tuple[CatalogEntry, list[Event]]:
        if os.fstat(fd).st_size < entry.head_end:
            return read_entry(entry.path)  # rewritten since its head was read
        return _with_tail(fd, entry, created)

    return _opened(entry.path, read, [])


def _read_head(path: Path) -> tuple[CatalogEntry, Event | None]:
    """One log's entry from its head, and its `session.created` (None if its head is not that)."""
    return _opened(path, lambda fd: _head_of(fd, path), None)


def _opened(path: Path, read: Callable[[int], tuple[CatalogEntry, T]], empty: T) -> tuple[CatalogEntry, T]:
    """`read(fd)` of the log at `path`; a log that cannot be read is listed with its reason."""
    try:
        fd = plain_descriptor(path)  # a FIFO put in its place: not waited on
        try:
            return read(fd)
        finally:
            os.close(fd)
    except OSError as error:
        entry = CatalogEntry(
            path, path.stem, None, f"{path}: unreadable: {error.strerror or error}", (-1, -1)
        )
        return entry, empty


def _head_of(fd: int, path: Path) -> tuple[CatalogEntry, Event | None]:
    stat = os.fstat(fd)
    size = stat.st_size
    head = _head(fd, size)
    created = created_event(head, path.stem)
    problem = f"{path}:1: not the session's session.created line" if created is None and size else None
    parent = created.payload.get("parentSessionId") if created is not None else None
    head_end = len(head) + 1 if head else 0
    return CatalogEntry(
        path, path.stem, parent, problem, (size, stat.st_mtime_ns), head_end=head_end
    ), created


def _with_tail(fd: int, entry: CatalogEntry, created: Event | None) -> tuple[CatalogEntry, list[Event]]:
    """`entry` (read from its head) completed from its log's tail, and the events of its head
    and last turn."""
    stat = os.fstat(fd)
    tail = _last_turn(fd, stat.st_size, entry.path, entry.head_end)
    problem = entry.problem or tail.problem
    seen = (stat.st_size, stat.st_mtime_ns)
    if created is None:  # without its head the tail cannot be placed in a session's tree
        return CatalogEntry(entry.path, entry.session_id, None, problem, seen, head_end=entry.head_end), []
    tail_from = tail.first
    if tail_from is not None and tail_from <= created.sequence + 1:
        tail_from = None  # nothing between the head and the tail
    session_id = entry.session_id
    tail_spend = earlier_spend(session_id, tail.events) if tail_from is not None else None
    listed = CatalogEntry(
        entry.path, entry.session_id, entry.parent_id, problem, seen, tail_from, entry.head_end, tail_spend
    )
    kept = [created]
    kept += [event for event in tail.events if event.session_id == session_id]
    return listed, kept


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


class _Tail(NamedTuple):
    """What a log's tail holds: its events from the last turn start on (all of the tail if no
    turn starts in `MAX_TAIL_BYTES`), the first one's sequence, and the tail's problem if any."""

    events: list[Event]
    first: int | None
    problem: str | None


def _last_turn(fd: int, size: int, path: Path, head_end: int) -> _Tail:
    """The tail of the log open as `fd` (of `size` bytes, its first line ending at `head_end`)."""
    want = TAIL_BYTES
    while True:
        start = max(head_end, size - want)
        data = os.pread(fd, size - start, start) if size > start else b""
        if start > head_end:  # the first line read is cut: from the next one
            data = data[data.find(b"\n") + 1 :] if b"\n" in data else b""
        end = data.rfind(b"\n") + 1  # what follows is a torn line
        begin = _turn_start(data, end)
        if begin is not None or start <= head_end or want >= MAX_TAIL_BYTES:
            break
        want *= 4
    problem = f"{path}: {TORN_PROBLEM}: left out" if end < len(data) else None
    events: list[Event] = []
    append = events.append
    loads = orjson.loads
    build = BUILDERS_WITH_V
    tail = data[begin or 0 : end]
    lines = tail.split(b"\n")
    lines.pop()
    for line in lines:
        try:
            # The generated check-and-build of the line's type first (a tail line's sequence is
            # 2 or more); the full check says why a line is not an event.
            record = loads(line)
            sequence = record["sequence"]
            if type(sequence) is int and sequence >= 2:
                append(build[record["type"]](record, sequence))
                continue
        except Exception:
            pass
        decoded = decode_line(line)
        if isinstance(decoded, str):
            problem = problem or f"{path}: a corrupt line near the end: {decoded}"
        else:
            append(decoded)
    return _Tail(events, events[0].sequence if events else None, problem)


def _turn_start(data: bytes, end: int) -> int | None:
    """Where the last line within `data[:end]` that starts a turn begins (only its type is
    looked at)."""
    at = data.rfind(b"turn.started", 0, end)
    while at >= 0:
        begin = data.rfind(b"\n", 0, at) + 1
        try:
            if orjson.loads(data[begin : data.find(b"\n", at)]).get("type") == "turn.started":
                return begin
        except (orjson.JSONDecodeError, AttributeError):
            pass
        at = data.rfind(b"turn.started", 0, begin)
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


@dataclass
class ListSpend:
    """What the listed logs' earlier turns spent (each log's whole spend, from the search index,
    less its folded tail's), and which session views have taken it.

    A result belongs to a log's tail as listed (`tail_from`): a log whose tail moved on
    (following, a new turn) is asked again. `apply` adds a result to a listed session view once:
    the view that took it is remembered, so a catalog read again gives its new view the result,
    never one view twice.
    """

    results: dict[str, tuple[int, EarlierSpend | None]] = field(default_factory=dict)
    queued: set[tuple[str, int]] = field(default_factory=set)  # (session id, tail_from) being asked
    _taken: dict[str, SessionView] = field(default_factory=dict)

    def to_ask(self, catalog: Catalog) -> list[CatalogEntry]:
        """The listed logs with earlier turns whose spend is neither known nor being asked, now
        queued (the caller asks the index)."""
        wanted = [
            entry
            for _sid, entry in sorted(catalog.entries.items())
            if entry.tail_from is not None
            and not self._done(entry)
            and (entry.session_id, entry.tail_from) not in self.queued
        ]
        self.queued.update((entry.session_id, entry.tail_from or 0) for entry in wanted)
        return wanted

    def take(self, entries: list[CatalogEntry], spent: dict[str, EarlierSpend]) -> None:
        """The whole spend of `entries`' logs (`spent`, by session id) is known."""
        for entry in entries:
            tail_from = entry.tail_from or 0
            self.queued.discard((entry.session_id, tail_from))
            whole = spent.get(entry.session_id)
            self.results[entry.session_id] = (
                tail_from,
                whole.minus(entry.tail_spend) if whole is not None else None,
            )

    def apply(self, catalog: Catalog) -> None:
        """Add each result that fits its log's listed tail to the session's view, once."""
        state = catalog.state
        for sid, (tail_from, found) in self.results.items():
            entry = catalog.entries.get(sid)
            view = state.sessions.get(sid)
            if entry is None or view is None or entry.tail_from != tail_from or self._taken.get(sid) is view:
                continue
            self._taken[sid] = view
            if found is not None:
                add_earlier_spend(state, sid, found)

    def partial(self, catalog: Catalog) -> set[str]:
        """The listed sessions whose figures count their last turn only (not known yet)."""
        return {
            sid
            for sid, entry in catalog.entries.items()
            if entry.tail_from is not None and not self._done(entry)
        }

    def _done(self, entry: CatalogEntry) -> bool:
        result = self.results.get(entry.session_id)
        return result is not None and result[0] == entry.tail_from
