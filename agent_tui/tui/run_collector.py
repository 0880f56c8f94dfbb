"""`RunCollector`: Python's cyclic garbage collector while a dashboard's run is up.

What exists once a run is up (the screens, the engine, the stored sessions' state) lives as long
as the run, and a full pass of the collector over it stalls the screen for nothing.

Invariants:
- `keep_out()` collects garbage first (nothing dead is kept), then moves what exists out of the
  collector's way (`gc.freeze`), so its full passes scan only what the run made since (with 100
  agents streaming, they stall the screen about a third as long), and collects the youngest
  objects less often (`YOUNG_COLLECTION_ALLOCATIONS`); an attached dashboard catching up with a
  stream of 1M events that way does two full passes instead of thirty;
- the collector is the process's: runs that overlap (two dashboards in one test process) share
  it, and when the last run that kept things out calls `restore()`, everything is unfrozen and
  the thresholds are the ones from before the first run's `keep_out`;
- a view that keeps its lasting part out at moments of its own (the replay's feed, once its
  indexing or its list is built) freezes through `freeze()`, which counts it as one of the
  runs: a replay opened inside the live dashboard and closed again does not unfreeze what the
  live run keeps out;
- a view may ask only for the young to be collected less often (`young_less_often`): a
  seek's fold, detail and paint allocate tens of thousands of short-lived objects, and at
  Python's default each seek paid eight young collections and every tenth seek an older one.
"""

from __future__ import annotations

import gc

YOUNG_COLLECTION_ALLOCATIONS = 10_000
"""Allocations between two collections of the youngest objects while a run is up (Python's
default is 700). A redraw allocates tens of thousands of short-lived objects that reference
counting frees anyway: with 100 agents streaming, collections took 7% of the time at 700 and 3%
at 10,000, and a redraw's paint a quarter less."""

_runs: list[RunCollector] = []  # the runs that keep things out now
_thresholds_before: tuple[int, ...] = gc.get_threshold()  # before the first of them


class RunCollector:
    """The collector's settings for one run (see the module docstring)."""

    def keep_out(self) -> None:
        """Freeze what exists now (after collecting garbage) and collect the young less often."""
        self.young_less_often()
        gc.collect()
        gc.freeze()

    def young_less_often(self) -> None:
        """Collect the youngest objects less often (`YOUNG_COLLECTION_ALLOCATIONS`), freezing
        nothing; `restore()` undoes it as it undoes `keep_out`."""
        self._join()
        first, *older = _thresholds_before
        gc.set_threshold(max(first, YOUNG_COLLECTION_ALLOCATIONS), *older)

    def freeze(self) -> None:
        """Freeze what exists now, leaving the thresholds as they are; `restore()` unfreezes it
        once no other run keeps things out."""
        self._join()
        gc.freeze()

    def _join(self) -> None:
        global _thresholds_before
        if not _runs:
            _thresholds_before = gc.get_threshold()
        if self not in _runs:
            _runs.append(self)

    def restore(self) -> None:
        """The collector as it was before the runs, once no other run keeps things out."""
        if self not in _runs:
            return
        _runs.remove(self)
        if not _runs:
            gc.unfreeze()
            gc.set_threshold(*_thresholds_before)
