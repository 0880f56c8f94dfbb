"""The follower's reports: a long poll shows what it folded so far, each event reported once.

Real logs in a real directory, the real `Follower` loop run in the test's thread (it stops from
its own report once every event is in).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from replay_logs import SessionLog, turn_events

from agent_tui.reducer import project_state
from agent_tui.replay import follow
from agent_tui.replay.follow import Follower
from agent_tui.replay.timeline import INDEX_BATCH, PollResult, Timeline
from agent_tui.replay.view import TimelineView, end_snapshot


def _long_log(directory: Path) -> int:
    """One log of more than three batches of events; returns how many lines it holds."""
    log = SessionLog("sess_long")
    log.created(0)
    turn = 0
    while log.sequence <= 3 * INDEX_BATCH:
        turn += 1
        for kind, payload in turn_events(turn, "tool"):
            log.add(kind, f"turn_{turn}", payload, turn * 10)
    log.write(directory)
    return log.sequence


def _follow_until(timeline: Timeline, total: int) -> list[tuple[PollResult, int]]:
    """Run a follower until the timeline holds `total` events; each report with the position
    of the end snapshot made from it (as the screen's feed makes one)."""
    reports: list[tuple[PollResult, int]] = []

    def changed(result: PollResult) -> None:
        reports.append((result, end_snapshot(timeline).position))
        if timeline.total >= total:
            follower.stop()

    follower = Follower(timeline, changed)
    follower.run()
    return reports


def test_a_long_poll_reports_what_it_folded_so_far_and_each_event_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follow, "REPORT_SECONDS", 0.0)  # report after every batch
    total = _long_log(tmp_path)
    timeline = Timeline([], watch_dir=tmp_path)
    reports = _follow_until(timeline, total)
    positions = [position for _result, position in reports]
    assert len(reports) >= 4  # one a batch: the poll did not wait for its end to show something
    assert positions == sorted(positions) and positions[-1] == total
    assert positions[0] < total  # the first report came before the poll had folded it all
    assert sum(result.added for result, _position in reports) == total
    assert all(result.added > 0 for result, _position in reports[:-1])
    assert reports[-1][0].new_files == 1  # the poll's own result still says what it found
    view = TimelineView(timeline)
    assert view.seek(total, hydrate_all=True) == project_state(
        [event for index in range(total) if (event := timeline.event_at(index)) is not None]
    )


def test_a_poll_within_the_report_interval_reports_once_with_every_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follow, "REPORT_SECONDS", 3600.0)
    total = _long_log(tmp_path)
    timeline = Timeline([], watch_dir=tmp_path)
    reports = _follow_until(timeline, total)
    assert [(result.added, result.new_files, position) for result, position in reports] == [(total, 1, total)]


def test_a_paced_follower_reports_again_only_when_asked_and_then_everything_it_folded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The screen's pace: after a report, a paced follower folds on but reports nothing until
    `ready()`; then one report holds every event folded meanwhile, and the new log it found."""
    monkeypatch.setattr(follow, "REPORT_SECONDS", 3600.0)  # a report at the end of each poll
    first = SessionLog("sess_a")
    first.created(0)
    for kind, payload in turn_events(1, "tool"):
        first.add(kind, "turn_1", payload, 10)
    path = first.write(tmp_path)
    shown = first.sequence
    timeline = Timeline([], watch_dir=tmp_path)
    reports: list[tuple[PollResult, int]] = []
    reported = threading.Event()
    folded = threading.Event()
    grown = shown + 2 * len(turn_events(2, "tool")) + 1  # both logs, once they have grown

    def changed(result: PollResult) -> None:
        reports.append((result, end_snapshot(timeline).position))
        reported.set()

    def progress() -> None:
        if timeline.total >= grown:
            folded.set()

    follower = Follower(timeline, changed, progress, paced=True)
    thread = threading.Thread(target=follower.run)
    thread.start()
    try:
        assert reported.wait(10)
        assert [(r.added, r.new_files, at) for r, at in reports] == [(shown, 1, shown)]
        reported.clear()
        # More lines in the first log, and a second log: folded, not reported.
        with path.open("ab") as handle:
            for kind, payload in turn_events(2, "tool"):
                handle.write(first.add(kind, "turn_2", payload, 20) + b"\n")
        second = SessionLog("sess_b")
        second.created(20)
        for kind, payload in turn_events(2, "tool"):
            second.add(kind, "turn_2", payload, 20)
        second.write(tmp_path)
        assert folded.wait(10)
        assert not reported.is_set() and len(reports) == 1
        follower.ready()
        assert reported.wait(10)
    finally:
        follower.stop()
        thread.join(10)
    assert not thread.is_alive()
    assert [(r.added, r.new_files, at) for r, at in reports[1:]] == [(grown - shown, 1, grown)]
    view = TimelineView(timeline)
    assert view.seek(grown, hydrate_all=True) == project_state(
        [event for index in range(grown) if (event := timeline.event_at(index)) is not None]
    )
