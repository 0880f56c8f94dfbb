"""What the listed sessions' earlier turns spent, read from their logs' spend lines alone.

The list of many logs folds each one's head and last turn (`catalog`), so a session's cost,
its tree's, its day's and its budget would count that last turn only. After the list is drawn,
each log whose tail does not reach its head is scanned: its bytes are searched for the types of
the events that say what turns spent (`reducer.earlier_spend.EARLIER_TYPES`), only those lines
are decoded, and what they spent is worked out by the reducer's own rule (`earlier_spend`) and
added to the listed session once, as the workbench does when the engine reads a log whole.

Invariants:
- a scan reads a log in `CHUNK_BYTES` pieces and decodes only the lines holding one of those
  types; memory is a chunk, the tail's spend events and one log's scratch fold, whatever the
  log's size (a line longer than `LONGEST_SPEND_LINE` is passed over, never held whole);
- what is added is `spend_before` the tail (from `CatalogEntry.tail_from` on), so a tail that
  starts inside a turn (one longer than the catalog's longest tail) counts that turn once, as
  the whole log's fold does;
- a final line without its newline (being written, or torn) is not read: the catalog tells it;
- a result belongs to a log's tail as listed (`tail_from`): a log whose tail moved on
  (following, a new turn) is scanned again, one whose last turn only grew keeps its result;
- `ListSpend.apply` adds a result to a listed session view once: the view that took it is
  remembered, so a catalog read again (following) gives its new view the result, never one
  view twice;
- a corrupt spend line is reported `FILE:LINE: reason`; the scan of the log goes on, and its
  session stays `partial` (what it spent is at least what was read); the other logs' scans go on;
- nothing here imports Textual; `scan_spend` runs in a thread, `ListSpend` on one thread (the
  screen's).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agent_tui.events import Event
from agent_tui.reducer import DashboardState, SessionView
from agent_tui.reducer.earlier_spend import (
    EARLIER_TYPES,
    EarlierSpend,
    add_earlier_spend,
    is_earlier,
    spend_before,
)
from agent_tui.replay.catalog import Catalog, CatalogEntry
from agent_tui.replay.logfile import decode_line

__all__ = ["CHUNK_BYTES", "ListSpend", "ScannedSpend", "scan_spend", "spend_events"]

CHUNK_BYTES = 1 << 20
LONGEST_SPEND_LINE = 1 << 20
"""A line longer than this holds no spend (those lines are a few hundred bytes): it is passed
over unread, so a log with a line of any length is scanned in bounded memory and linear time."""
_NEEDLES = tuple(sorted(kind.encode() for kind in EARLIER_TYPES))


@dataclass(frozen=True)
class ScannedSpend:
    """One log's scan: what its turns before `tail_from` spent (None: nothing), and its corrupt
    spend lines (`FILE:LINE: reason`)."""

    session_id: str
    tail_from: int
    found: EarlierSpend | None
    problems: tuple[str, ...] = ()


def scan_spend(entry: CatalogEntry) -> ScannedSpend:
    """Scan `entry`'s log (see the module docstring); `entry.tail_from` is not None."""
    earlier, tail, problems = spend_events(entry)
    found = spend_before(entry.session_id, earlier, tail)
    return ScannedSpend(entry.session_id, entry.tail_from or 0, found, problems)


def spend_events(entry: CatalogEntry) -> tuple[list[Event], list[Event], tuple[str, ...]]:
    """The spend events of `entry`'s log: those before its tail that `is_earlier`, the tail's
    own, and the corrupt spend lines met (`FILE:LINE: reason`); `entry.tail_from` is not None.
    (The workbench hands them to whoever counts spend from events: its budgets, its list.)"""
    assert entry.tail_from is not None
    problems: list[str] = []
    tail: list[Event] = []
    events = _spend_events(entry.path, entry.tail_from, entry.budget_later, tail, problems)
    try:
        earlier = list(events)
    except OSError as error:
        problems.append(f"{entry.path}: unreadable: {error.strerror or error}")
        earlier = []
    return earlier, tail, tuple(problems)


def _spend_events(
    path: Path, tail_from: int, budget_later: bool, tail: list[Event], problems: list[str]
) -> Iterator[Event]:
    """The events before `tail_from` that `is_earlier` (the tail's spend events go to `tail`),
    from the lines that name their types."""
    with open(path, "rb") as handle:
        rest = b""
        passing_over = False  # inside a line longer than LONGEST_SPEND_LINE
        line_number = 1  # of the first line in `data`
        while chunk := handle.read(CHUNK_BYTES):
            if passing_over:
                ends = chunk.find(b"\n")
                if ends < 0:
                    continue
                chunk, passing_over = chunk[ends + 1 :], False
                line_number += 1
            data = rest + chunk
            end = data.rfind(b"\n") + 1
            data, rest = data[:end], data[end:]
            if len(rest) > LONGEST_SPEND_LINE:
                rest, passing_over = b"", True
            counted, at_line = 0, line_number
            for start in _spend_lines(data):
                at_line += data.count(b"\n", counted, start)
                counted = start
                decoded = decode_line(data[start : data.find(b"\n", start)])
                if isinstance(decoded, str):
                    problems.append(f"{path}:{at_line}: {decoded}")
                elif decoded.sequence >= tail_from:
                    if decoded.type in EARLIER_TYPES:
                        tail.append(decoded)
                elif is_earlier(decoded, tail_from, budget_later):
                    yield decoded
            line_number += data.count(b"\n")


def _spend_lines(data: bytes) -> list[int]:
    """Where each line of `data` (whole lines, each ending in a newline) that names one of the
    spend types starts, in order."""
    starts: set[int] = set()
    for needle in _NEEDLES:
        at = data.find(needle)
        while at >= 0:
            starts.add(data.rfind(b"\n", 0, at) + 1)
            at = data.find(needle, data.find(b"\n", at))
    return sorted(starts)


@dataclass
class ListSpend:
    """The scans of the listed logs, and which session views have taken them."""

    results: dict[str, ScannedSpend] = field(default_factory=dict)
    queued: set[tuple[str, int]] = field(default_factory=set)  # (session id, tail_from) being scanned
    _taken: dict[str, SessionView] = field(default_factory=dict)

    def to_scan(self, catalog: Catalog) -> list[CatalogEntry]:
        """The listed logs with earlier turns whose scan is neither done nor under way, now
        queued (the caller scans them)."""
        wanted = [
            entry
            for _sid, entry in sorted(catalog.entries.items())
            if entry.tail_from is not None
            and not self._done(entry)
            and (entry.session_id, entry.tail_from) not in self.queued
        ]
        self.queued.update((entry.session_id, entry.tail_from or 0) for entry in wanted)
        return wanted

    def take(self, scanned: list[ScannedSpend]) -> None:
        for result in scanned:
            self.queued.discard((result.session_id, result.tail_from))
            self.results[result.session_id] = result

    def apply(self, catalog: Catalog) -> None:
        """Add each scan that fits its log's listed tail to the session's view, once."""
        state: DashboardState = catalog.state
        for sid, result in self.results.items():
            entry = catalog.entries.get(sid)
            view = state.sessions.get(sid)
            if entry is None or view is None or entry.tail_from != result.tail_from:
                continue
            if self._taken.get(sid) is view:
                continue
            self._taken[sid] = view
            if result.found is not None:
                add_earlier_spend(state, sid, result.found)

    def partial(self, catalog: Catalog) -> set[str]:
        """The listed sessions whose figures count their last turn only (not scanned yet, or a
        corrupt spend line in their log)."""
        return {
            sid
            for sid, entry in catalog.entries.items()
            if entry.tail_from is not None and not self._done(entry)
        } | {sid for sid, result in self.results.items() if result.problems}

    def _done(self, entry: CatalogEntry) -> bool:
        result = self.results.get(entry.session_id)
        return result is not None and result.tail_from == entry.tail_from
