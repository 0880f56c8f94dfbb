"""The import's lines written straight to their files (`LineImporter.write_to`) are the bytes
`orjson.dumps` gives of the `LogLine` dicts the other path makes, whatever the source's times
and ids hold (quotes, backslashes, control characters, non-ASCII), and as the turn changes."""

from __future__ import annotations

from collections.abc import Callable

import orjson
import pytest

from agent_tui.importers.builder import ImportCounts, LogLine, SessionBuilder

HOSTILE = [
    "2025-11-01T10:00:00.000Z",
    'a"b\\c\n\x01é☃ 2025-11-01T10:00Z',
    "",
    "\u2028zzzzzzzzzzzzzzzzzzzzzzzZ",
]


def _drive(builder: SessionBuilder, stamp: str) -> None:
    builder.describe('/repo "x"', "claude-code", title="t\\itle")
    builder.record(stamp, "summary", {"summary": 'a "quoted" \\ line'})  # session-level: no turn id
    for turn, ts in enumerate((stamp, "2025-11-01T10:00:01.000Z", stamp), 1):
        builder.start_turn(f"turn_{turn}", ts, f'prompt {turn} "é"')
        builder.delta(ts, 'text\n"with" quotes')
        builder.request_call(ts, f"call_{turn}", "Bash", {"command": 'echo "é"'})
        builder.complete_call(ts, f"call_{turn}", "out")
        builder.call_usage(ts, f"msg_{turn}", None, 10, 2)
    builder.finish()


@pytest.mark.parametrize("stamp", HOSTILE)
def test_lines_written_directly_are_the_dumped_dicts(stamp: str) -> None:
    listed: list[LogLine] = []
    _drive(SessionBuilder("sess_a", "claude-code", listed, ImportCounts()), stamp)
    written: list[bytes] = []
    opened: list[str] = []

    def write_to(session_id: str) -> Callable[[bytes], object]:
        opened.append(session_id)
        return written.append

    direct: list[LogLine] = []
    _drive(SessionBuilder("sess_a", "claude-code", direct, ImportCounts(), write_to=write_to), stamp)
    assert direct == []  # nothing goes to the list
    assert opened == ["sess_a"]  # the file is asked for once, with the first line
    assert written == [orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE) for line in listed]
    assert len(written) > 10
