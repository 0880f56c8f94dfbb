"""The garbage collector while dashboards' runs are up: what exists is kept out of its passes,
and overlapping runs leave it as it was once the last one ends."""

from __future__ import annotations

import gc

from agent_tui.tui.run_collector import YOUNG_COLLECTION_ALLOCATIONS, RunCollector


def test_overlapping_runs_leave_the_collector_as_it_was_when_the_last_one_ends() -> None:
    before = gc.get_threshold()
    first, second = RunCollector(), RunCollector()
    try:
        first.keep_out()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] == max(before[0], YOUNG_COLLECTION_ALLOCATIONS)
        second.keep_out()  # while the first is up: what it saw as "before" is the first's setting
        first.restore()
        assert gc.get_freeze_count() > 0  # the second run still keeps its things out
        assert gc.get_threshold()[0] == max(before[0], YOUNG_COLLECTION_ALLOCATIONS)
        second.restore()
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == before
        second.restore()  # again: nothing changes
        assert gc.get_threshold() == before
    finally:
        first.restore()
        second.restore()


def test_a_view_that_freezes_by_its_own_means_only_collects_the_young_less_often() -> None:
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    replay = RunCollector()
    try:
        replay.young_less_often()
        assert gc.get_threshold()[0] == max(before[0], YOUNG_COLLECTION_ALLOCATIONS)
        assert gc.get_threshold()[1:] == before[1:]
        assert gc.get_freeze_count() == frozen  # nothing frozen on its behalf
        replay.restore()
        assert gc.get_threshold() == before
    finally:
        replay.restore()


def test_a_view_that_freezes_at_its_own_moments_does_not_unfreeze_a_run_still_up() -> None:
    before = gc.get_threshold()
    live, replay = RunCollector(), RunCollector()
    try:
        live.keep_out()
        replay.freeze()  # a replay opened inside the live dashboard keeps what it indexed out
        assert gc.get_threshold()[0] == max(before[0], YOUNG_COLLECTION_ALLOCATIONS)  # as the live run set
        replay.restore()  # the replay closes
        assert gc.get_freeze_count() > 0  # the live run's things stay out
        live.restore()
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == before
        replay.freeze()  # alone: it freezes, and leaves the thresholds as they were
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == before
        replay.restore()
        assert gc.get_freeze_count() == 0
    finally:
        live.restore()
        replay.restore()
