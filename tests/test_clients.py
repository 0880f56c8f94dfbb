"""`is_ours`: the one test of whether our engine wrote a session, and the layers that ask it."""

from __future__ import annotations

import pytest

from agent_tui.events import OUR_CLIENT, Event, is_ours
from agent_tui.events.chains import chain_violations


@pytest.mark.parametrize(
    ("client", "ours", "expected"),
    [
        (OUR_CLIENT, OUR_CLIENT, True),
        (None, OUR_CLIENT, True),  # not known (no session.created seen): nothing says otherwise
        ("claude-code", OUR_CLIENT, False),
        ("codex", OUR_CLIENT, False),
        ("", OUR_CLIENT, False),  # a name, even an empty one, that is not ours
        ("agent-tui-fork", OUR_CLIENT, False),
        ("test-engine", "test-engine", True),  # an engine made with another client name
        (OUR_CLIENT, "test-engine", False),
    ],
)
def test_is_ours(client: str | None, ours: str, expected: bool) -> None:
    assert is_ours(client, ours) is expected


def _log(client: str) -> list[Event]:
    created = {"cwd": "/w", "client": client}
    record = {"format": "claude-code", "recordType": "summary", "data": {}}
    return [
        Event(id="e1", session_id="s", turn_id=None, sequence=1, ts="2026-12-01T00:00:00Z",
              type="session.created", payload=created),
        Event(id="e2", session_id="s", turn_id=None, sequence=2, ts="2026-12-01T00:00:01Z",
              type="source.record", payload=record),
    ]  # fmt: skip


def test_the_chain_checker_allows_session_level_records_only_in_logs_not_ours() -> None:
    assert chain_violations(_log("claude-code")) == []
    assert chain_violations(_log(OUR_CLIENT)) != []
