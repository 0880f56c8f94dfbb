"""What a `SessionBuilder` keeps running from line to line instead of working out again: the time
of one source record (serialized once, clamped once) and a turn's usage (summed as each call's
`model.usage` is written). Both must give what working it out afresh gives, on both paths (the
`LogLine` list and the lines written straight to a file)."""

from __future__ import annotations

import orjson
import pytest

from agent_tui.costs.price import Price
from agent_tui.costs.prices import PriceTable
from agent_tui.events.model import usage_total
from agent_tui.importers.builder import ImportCounts, LogLine, SessionBuilder

LATE = "2025-11-01T10:00:05.000Z"
LATER = "2025-11-01T10:00:09.000Z"


def _both(drive: object, prices: PriceTable | None = None) -> list[LogLine]:
    """The lines `drive(builder)` makes, from the list path, checked equal to the file path's."""
    listed: list[LogLine] = []
    written: list[bytes] = []
    for out, write_to in ((listed, None), ([], lambda _session: written.append)):
        builder = SessionBuilder("sess_a", "claude-code", out, ImportCounts(), prices, write_to)
        drive(builder)  # type: ignore[operator]
    assert written == [orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE) for line in listed]
    return listed


def test_a_record_time_given_again_after_a_later_one_is_clamped_every_time() -> None:
    early = "".join(["2025-11-01T10:00:01.000Z"])  # one object, given to every event below

    def drive(builder: SessionBuilder) -> None:
        builder.start_turn("turn_1", LATE, "p")
        builder.delta(early, "a")
        builder.delta(early, "b")
        builder.request_call(early, "c1", "Bash", {"command": "ls"})
        builder.delta(LATER, "c")
        builder.complete_call(early, "c1", "out")
        builder.delta(early, "d")
        builder.finish()

    lines = _both(drive)
    assert [(line["type"], line["ts"]) for line in lines] == [
        ("session.created", LATE),
        ("turn.started", LATE),
        ("user.message", LATE),
        ("model.delta", LATE),  # given `early`: clamped
        ("model.delta", LATE),  # the same object again: clamped again, not written as given
        ("model.tool_call_requested", LATE),
        ("model.delta", LATER),
        ("tool.started", LATER),  # `early` again after a later time: clamped to that one
        ("tool.completed", LATER),
        ("model.delta", LATER),
        ("turn.completed", LATER),
    ]


@pytest.mark.parametrize(
    ("cached", "written"),
    [((None, None, None), (None, None, None)), ((None, 7, 0), (3, None, 5)), ((4, 5, 6), (0, 0, 0))],
)
def test_a_turns_usage_is_the_total_of_its_calls_usage(
    cached: tuple[int | None, ...], written: tuple[int | None, ...]
) -> None:
    prices = PriceTable({"priced": Price(input=3.0, output=15.0, cached_input=0.3, cache_write=3.75)})

    def drive(builder: SessionBuilder, models: tuple[str | None, ...]) -> None:
        builder.start_turn("turn_1", LATE, "p")
        builder.delta(LATE, "text")
        for step, model in enumerate(models):
            builder.call_usage(
                LATE, f"msg_{step}", model, 1000 + step, 17 * step, cached[step], written[step]
            )
            builder.call_usage(
                LATE, f"msg_{step}", model, 1001 + step, 17 * step, cached[step], written[step]
            )
        builder.call_usage(LATE, "msg_0", "priced", 9, 9)  # written already: counted once
        builder.close_turn(LATE)

    for models in (("priced", "priced", "priced"), ("priced", None, "priced")):
        lines: list[LogLine] = []
        drive(SessionBuilder("sess_a", "claude-code", lines, ImportCounts(), prices), models)
        calls = [line["payload"] for line in lines if line["type"] == "model.usage"]
        end = lines[-1]
        assert [call["step"] for call in calls] == [1, 2, 3]
        assert end["type"] == "turn.completed"
        assert end["payload"]["usage"] == usage_total(calls)
        assert ("costUsd" in end["payload"]["usage"]) is (None not in models)
        assert _both(lambda builder, models=models: drive(builder, models), prices) == lines


def test_a_turn_with_no_call_usage_ends_without_usage() -> None:
    lines = _both(
        lambda builder: (builder.start_turn("turn_1", LATE, "p"), builder.delta(LATE, "t"), builder.finish())
    )
    assert lines[-1]["payload"] == {"stopReason": "final"}
