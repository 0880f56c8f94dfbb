"""An imported turn's end written directly (`TurnWriter.end_final`, `SessionBuilder.close_turn`'s common case) is what
the turn writer writes for the same ending: the payload `TurnEnd(...).payload()` gives, the
usage total `Usage.of_written` gives, and the rule for an answer without text kept."""

from __future__ import annotations

from typing import Any

import pytest

from agent_tui.events.model import Usage, usage_total
from agent_tui.events.turn_vocabulary import TurnEnd
from agent_tui.events.turn_writer import DONE, Done, TurnWriter, run_now
from agent_tui.importers.builder import ImportCounts, LogLine, SessionBuilder

TS = "2025-11-01T10:00:00.000Z"

CALLS: list[list[dict[str, Any]]] = [
    [],
    [{"step": 1, "promptTokens": 10, "completionTokens": 2}],
    [
        {"step": 1, "promptTokens": 10, "completionTokens": 2, "cachedTokens": 4, "costUsd": 0.25},
        {"step": 2, "promptTokens": 7, "completionTokens": 1, "cacheWriteTokens": 3, "costUsd": 0.5},
    ],
    [  # one call without a price: the total has no cost
        {"step": 1, "promptTokens": 10, "completionTokens": 2, "costUsd": 0.25},
        {"step": 2, "promptTokens": 7, "completionTokens": 1},
    ],
]


@pytest.mark.parametrize("calls", CALLS)
def test_the_usage_total_is_the_written_usage_of_the_model(calls: list[dict[str, Any]]) -> None:
    model = Usage.of_written(calls)
    assert usage_total(calls) == (None if model is None else model.fields())


class _Sink:
    """A synchronous commit that keeps what it is given."""

    def __init__(self) -> None:
        self.lines: list[tuple[str | None, str, dict[str, Any]]] = []

    def __call__(self, turn_id: str | None, kind: str, fields: dict[str, Any]) -> Done:
        self.lines.append((turn_id, kind, fields))
        return DONE


@pytest.mark.parametrize("calls", CALLS)
def test_a_final_end_from_the_usage_payload_is_the_turn_ends(calls: list[dict[str, Any]]) -> None:
    total = usage_total(calls)
    fast, full = _Sink(), _Sink()
    writer = TurnWriter(fast, "t", keeps_source=True)
    writer.delta("said")
    assert writer.end_final(total) is not None
    writer = TurnWriter(full, "t", keeps_source=True)
    writer.delta("said")
    run_now(writer.end(TurnEnd("final", usage=None if total is None else Usage(**total))))
    assert fast.lines == full.lines
    assert list(fast.lines[-1][2]) == list(full.lines[-1][2])  # the same keys in the same order


def test_a_final_end_without_text_is_left_to_the_writers_rule() -> None:
    sink = _Sink()
    writer = TurnWriter(sink, "t", keeps_source=True)
    writer.delta("")
    assert writer.end_final({"promptTokens": 1, "completionTokens": 1}) is None
    assert sink.lines == []


def _turn(say: str, calls: list[dict[str, Any]], reported: float | None = None) -> list[LogLine]:
    out: list[LogLine] = []
    builder = SessionBuilder("sess_t", "claude-code", out, ImportCounts())
    builder.describe("/repo", "claude-code")
    builder.start_turn("turn_1", TS, "do it")
    builder.delta(TS, say)
    for number, call in enumerate(calls, 1):
        builder.call_usage(TS, f"msg_{number}", None, call["promptTokens"], call["completionTokens"])
    if reported is not None:
        builder.report_cost(reported)
    builder.close_turn(TS)
    return out


def test_a_turn_that_said_something_ends_final_with_its_calls_usage() -> None:
    out = _turn(
        "done", [{"promptTokens": 10, "completionTokens": 2}, {"promptTokens": 7, "completionTokens": 1}]
    )
    assert out[-1]["type"] == "turn.completed"
    assert out[-1]["payload"] == {"stopReason": "final", "usage": {"promptTokens": 17, "completionTokens": 3}}


def test_a_turn_with_a_reported_cost_ends_with_that_cost() -> None:
    out = _turn("done", [{"promptTokens": 10, "completionTokens": 2}], reported=1.5)
    assert out[-1]["payload"] == {
        "stopReason": "final",
        "usage": {"promptTokens": 10, "completionTokens": 2, "costUsd": 1.5},
    }


def test_a_turn_whose_only_text_is_empty_has_no_answer() -> None:
    """Empty text is no answer: the writer's rule (not the direct path) ends the turn."""
    out = _turn("", [])
    assert out[-1]["type"] == "turn.completed"
    assert out[-1]["payload"]["stopReason"] == "error"
