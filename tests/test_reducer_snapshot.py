"""A dashboard state as bytes and back (`reducer.snapshot`): equal to the state it was, folding on
from it gives what folding on from the original gives, wherever the cut; bytes that are not a
state of this schema are refused in one sentence, never read into the wrong fields."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agent_tui.events import Event
from agent_tui.reducer import DashboardState, apply_event
from agent_tui.reducer.snapshot import FORMAT, SCHEMA, SnapshotRefused, state_from_bytes, state_to_bytes
from agent_tui.replay.sources import replay_files

SAMPLE = Path(__file__).resolve().parent / "sample-logs"


def _events(folder: str) -> list[Event]:
    return list(replay_files(sorted((SAMPLE / folder).glob("*.jsonl"))))


@pytest.mark.parametrize("folder", ["complete", "live"])
def test_a_state_read_back_folds_on_as_the_original(folder: str) -> None:
    events = _events(folder)
    for cut in range(len(events) + 1):
        original = DashboardState()
        for event in events[:cut]:
            apply_event(original, event)
        read = state_from_bytes(state_to_bytes(original))
        assert read == original, cut
        for event in events[cut:]:
            apply_event(original, event)
            apply_event(read, event)
        assert read == original, cut
        assert read.pending_permissions() == original.pending_permissions(), cut
        assert read.roots() == original.roots(), cut
        assert read.to_state_dump() == original.to_state_dump(), cut


def _document() -> dict[str, object]:
    state = DashboardState()
    for event in _events("live"):
        apply_event(state, event)
    document: dict[str, object] = orjson.loads(state_to_bytes(state))
    return document


def _refusal(document: object, max_bytes: int | None = None) -> str:
    data = document if isinstance(document, bytes) else orjson.dumps(document)
    with pytest.raises(SnapshotRefused) as refused:
        if max_bytes is None:
            state_from_bytes(data)
        else:
            state_from_bytes(data, max_bytes)
    return str(refused.value)


def test_what_is_not_a_state_of_this_schema_is_refused_in_one_sentence() -> None:
    document = _document()
    assert "over the 10 a snapshot may hold" in _refusal(document, max_bytes=10)
    assert "not JSON" in _refusal(b"\x00{")
    assert "not a snapshot" in _refusal([1, 2])
    assert f"this dashboard reads format {FORMAT}" in _refusal({**document, "format": FORMAT + 1})
    assert "(schema 0000)" in _refusal({**document, "schema": "0000"})
    state = document["state"]
    assert isinstance(state, list)
    assert "event_count: str where int belongs" in _refusal(
        {**document, "state": [state[0], "9", *state[2:]]}
    )
    assert "not a dashboard state" in _refusal({**document, "state": state[:-1]})
    sessions = state[0]
    assert isinstance(sessions, dict)
    sid, session = next(iter(sessions.items()))
    assert f"sessions.{sid}: not a SessionView" in _refusal(
        {**document, "state": [{sid: session[:-1]}, *state[1:]]}
    )
    turns = session[11]  # SessionView.turns
    turn = turns[0]
    bad_turn = [*turn[:2], "flying", *turn[3:]]  # TurnView.phase: a word the vocabulary lacks
    assert "'flying' is not one of" in _refusal(
        {**document, "state": [{sid: [*session[:11], [bad_turn], *session[12:]]}, *state[1:]]}
    )
    other = dict(sessions)
    other["sess_other"] = session
    assert "holds session" in _refusal({**document, "state": [other, *state[1:]]})


def test_the_schema_is_a_digest_of_the_views() -> None:
    assert len(SCHEMA) == 16 and orjson.loads(state_to_bytes(DashboardState()))["schema"] == SCHEMA
