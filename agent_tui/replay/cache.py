"""The timelines a replay over many logs keeps: the chosen session's, and a few chosen before.

Over a history of thousands of logs the scrubber's timeline covers the chosen session's family
only (`Catalog.family`); going back to one chosen a moment ago should not read its logs again,
and walking through the whole list must not keep every log it passed.

Invariants:
- at most `bound` timelines are held; putting one more drops the least recently used, whose
  files are closed;
- a timeline is held only once indexed to its end (`end`: the state there, ready to show);
- nothing here imports Textual; one thread (the screen's) uses a cache.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from agent_tui.replay.timeline import Timeline
from agent_tui.replay.view import Snapshot

CACHED_TIMELINES = 8
"""Timelines kept besides none: enough to go back and forth between a few sessions."""

Key = tuple[Path, ...]


@dataclass(frozen=True)
class CachedTimeline:
    """An indexed timeline and the state at its end."""

    timeline: Timeline
    end: Snapshot


class TimelineCache:
    """A least-recently-used set of indexed timelines, by the logs they cover."""

    def __init__(self, bound: int = CACHED_TIMELINES) -> None:
        if bound < 1:
            raise ValueError("a timeline cache holds at least one timeline")
        self.bound = bound
        self._held: OrderedDict[Key, CachedTimeline] = OrderedDict()
        self.dropped = 0  # how many were let go (for tests and the benchmark)

    def __len__(self) -> int:
        return len(self._held)

    def get(self, key: Key) -> CachedTimeline | None:
        """The timeline over `key`'s logs, now the most recently used; None if not held."""
        held = self._held.get(key)
        if held is not None:
            self._held.move_to_end(key)
        return held

    def put(self, key: Key, timeline: Timeline, end: Snapshot) -> None:
        """Hold `timeline` (indexed to `end`); drop the least recently used beyond the bound."""
        old = self._held.pop(key, None)
        if old is not None and old.timeline is not timeline:
            old.timeline.close()
        self._held[key] = CachedTimeline(timeline, end)
        while len(self._held) > self.bound:
            _key, dropped = self._held.popitem(last=False)
            dropped.timeline.close()
            self.dropped += 1

    def clear(self) -> None:
        for held in self._held.values():
            held.timeline.close()
        self._held.clear()
