"""Counts as users read them: the singular for exactly one, the plural for every other count."""

from __future__ import annotations

from agent_tui.events.wording import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "session") == "1 session"
    assert counted(0, "session") == "0 sessions"
    assert counted(2, "tool call") == "2 tool calls"
    assert counted(12_345, "event") == "12,345 events"


def test_an_irregular_plural_is_given() -> None:
    assert counted(3, "entry", "entries") == "3 entries"
    assert counted(1, "entry", "entries") == "1 entry"
