"""Durations from event timestamps: exact whole milliseconds, never negative, None when unreadable."""

from __future__ import annotations

from datetime import datetime

from agent_tui.reducer import epoch_ms, ms_between


def test_times_are_exact_to_the_millisecond() -> None:
    # Through float seconds this time reads as ...547 ms: the reducer computes on integers.
    assert epoch_ms("2038-05-10T12:21:11.548Z") == 2_157_106_871_548
    assert ms_between("2038-05-10T12:21:11.000Z", "2038-05-10T12:21:11.548Z") == 548
    assert ms_between("2026-11-18T11:06:40.037Z", "2026-11-18T11:06:41.111Z") == 1074
    assert ms_between("2026-11-18T23:59:59.999Z", "2026-11-19T00:00:00.000Z") == 1


def test_a_span_is_never_negative() -> None:
    assert ms_between("2026-11-18T11:06:41.000Z", "2026-11-18T11:06:40.000Z") == 0


def test_an_unreadable_timestamp_gives_none() -> None:
    assert ms_between("", "2026-11-18T11:06:40.000Z") is None
    assert ms_between("2026-11-18T11:06:40.000Z", "yesterday") is None
    assert epoch_ms("not a time") is None


def test_a_time_without_a_zone_is_local_time() -> None:
    naive = "2026-11-18T11:06:40.250"
    local = datetime.fromisoformat(naive).astimezone()
    assert epoch_ms(naive) == round(local.timestamp() * 1000)
    # One with a zone and one without still give a span (both read as instants).
    assert ms_between(local.isoformat(), naive) == 0


def test_epoch_ms_counts_from_the_epoch() -> None:
    assert epoch_ms("1970-01-01T00:00:01.001Z") == 1001
    assert epoch_ms("2026-11-29T22:17:03.120+01:00") == epoch_ms("2026-11-29T21:17:03.120Z")
