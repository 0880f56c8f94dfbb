"""The importers against malformed records: the fixture logs with fields replaced by values of the
wrong type (lists, objects, numbers, strings, null, booleans, anywhere the importers read), and
lines that are not JSON or not objects, fed through the real import (`import_path`) and line by
line (`feed`/`finish`, as follow mode feeds them).

What holds for every such log:
- nothing raises (detection, the import, the line-by-line feed);
- both ways give the same bytes and the same warnings;
- our logs read back strictly and keep the chains (`chain_violations`);
- nothing is dropped without a word (docs/importing.md, "How records map"): every line is
  accounted for. Line N is accounted for when feeding it made events, or a warning names
  `FILE:N`, or the record (or an object inside it) is the data of a `source.record` written
  later (records are held until their session exists), or it is one of the documented uses
  that make no event of their own: a Claude Code assistant line with no text in it (its usage
  counts), a Codex `token_count` (usage, read into `turn.completed`),
  the second copy of a Codex prompt, answer or reasoning summary (its text is in the log), a
  Codex `context_compacted` or Claude Code `compact_boundary` that went into a
  `context.compacted`.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support_importers import FIXTURES, events_of, tree_bytes

from agent_tui.cli import main
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.importers import ClaudeCodeImporter, ImportInputError, detect_format, discover, import_path
from agent_tui.importers.codex_words import content_text
from agent_tui.importers.convert import SourceFile
from agent_tui.importers.detect import format_of_record
from agent_tui.importers.follow import ForeignFollower

Path_ = tuple[str | int, ...]

WRONG_VALUES: list[Any] = [
    [],
    ["x", 1],
    [{"type": "text", "text": 3}],
    {},
    {"type": ["text"], "id": {}},
    0,
    7,
    -3,
    2.5,
    "",
    "x",
    None,
    True,
    False,
]
NOT_JSON = [b"{not json", b'{"type": "user", ', b"\xff\xfe{}", b"{}}", b"{broken\r"]
NOT_OBJECTS = [b"[1, 2]", b'"a string"', b"42", b"null", b"true"]


def _fixture_logs(tool: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """(file name, its complete records) of every fixture log of `tool` (torn tails left out)."""
    logs = []
    for path in sorted((FIXTURES / tool).rglob("*.jsonl")):
        *complete, _tail = path.read_bytes().split(b"\n")
        logs.append((path.name, [orjson.loads(line) for line in complete]))
    return logs


LOGS = {"claude-code": _fixture_logs("claude_code"), "codex": _fixture_logs("codex")}


def _paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every place inside a record (a key of an object, an item of a list), depth first."""
    found: list[Path_] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        found.append((*prefix, key))
        found += _paths(inner, (*prefix, key))
    return found


def _replaced(record: Any, path: Path_, new: Any) -> Any:
    if not path:
        return new
    copy: Any = dict(record) if isinstance(record, dict) else list(record)
    copy[path[0]] = _replaced(copy[path[0]], path[1:], new)
    return copy


@st.composite
def malformed_logs(draw: st.DrawFn, tool: str) -> tuple[str, list[bytes]]:
    """A fixture log of `tool` with a few fields made the wrong type and a few broken lines."""
    name, records = draw(st.sampled_from(LOGS[tool]))
    records = list(records)
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(records) - 1))
        paths = _paths(records[index])
        if paths:
            path = draw(st.sampled_from(paths))
            records[index] = _replaced(records[index], path, draw(st.sampled_from(WRONG_VALUES)))
    lines = [orjson.dumps(record) for record in records]
    for _ in range(draw(st.integers(0, 2))):
        broken = draw(st.sampled_from(NOT_JSON + NOT_OBJECTS))
        lines.insert(draw(st.integers(0, len(lines))), broken)
    return name, lines


def _objects(value: Any, found: set[bytes]) -> set[bytes]:
    """Every object inside `value` (itself included), as canonical JSON."""
    if isinstance(value, dict):
        found.add(orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
        for inner in value.values():
            _objects(inner, found)
    elif isinstance(value, list):
        for inner in value:
            _objects(inner, found)
    return found


def _strings(value: Any, found: set[str]) -> set[str]:
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, dict):
        for inner in value.values():
            _strings(inner, found)
    elif isinstance(value, list):
        for inner in value:
            _strings(inner, found)
    return found


def _used_without_event(record: dict[str, Any], events: list[Event]) -> bool:
    """The documented uses of a line that make no event of their own (see the module docstring)."""
    compacted = any(event.type == "context.compacted" for event in events)
    if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
        return compacted
    if record.get("type") == "assistant":  # an empty answer says nothing (its usage still counts)
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        return isinstance(blocks, list) and all(block == {"type": "text", "text": ""} for block in blocks)
    payload = record.get("payload")
    item = payload if isinstance(payload, dict) else record
    kind = item.get("type")
    if kind == "token_count":
        return True
    if kind == "context_compacted":
        return compacted
    if kind in ("user_message", "agent_message"):
        text = item.get("message")
    elif kind == "agent_reasoning":
        text = item.get("text")
    elif kind == "message":
        text = content_text(item.get("content"))
    else:
        return False
    if kind == "message":  # only an empty answer says nothing: text that could not be read does
        content = item.get("content")
        parts = content if isinstance(content, list) else [{"text": content}]
        empty = all(isinstance(part, dict) and part.get("text") == "" for part in parts)
    else:
        empty = text == ""
    if empty and (kind == "agent_message" or item.get("role") == "assistant"):
        return True
    said: set[str] = set()
    for event in events:
        _strings(event.payload, said)
    return isinstance(text, str) and text != "" and text in said


def _unaccounted(
    label: str, lines: list[bytes], made: dict[int, list[Event]], events: list[Event], warnings: list[str]
) -> list[int]:
    """The numbers of the lines nothing accounts for (see the module docstring)."""
    kept: set[bytes] = set()
    for event in events:
        if event.type == "source.record":
            kept.add(orjson.dumps(event.payload["data"], option=orjson.OPT_SORT_KEYS))
    warned = {
        warning[len(label) + 1 :].split(":", 1)[0] for warning in warnings if warning.startswith(label + ":")
    }
    missing = []
    for number, line in enumerate(lines, 1):
        if made[number] or str(number) in warned:
            continue
        record = orjson.loads(line)  # a line that is not an object is always warned about
        if _objects(record, set()) & kept or _used_without_event(record, events):
            continue
        missing.append(number)
    return missing


_EXAMPLES = itertools.count()


def _check(tool: str, tmp_path: Path, name: str, lines: list[bytes]) -> None:
    folder = tmp_path / str(next(_EXAMPLES))
    folder.mkdir()
    source = folder / name
    source.write_bytes(b"".join(line + b"\n" for line in lines))
    for line in lines:  # every line on its own, first or not
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        format_of_record(record, first=True)
        format_of_record(record, first=False)
    if detect_format(source) is None:
        with pytest.raises(ImportInputError, match=str(source)):
            import_path(source, folder / "bulk")
        return

    report = import_path(source, folder / "bulk")
    (found,) = discover([source]).sources
    importer = found.importer()
    made = {number: importer.feed(number, line) for number, line in enumerate(lines, 1)}
    events = [event for number in sorted(made) for event in made[number]] + importer.finish()

    assert tree_bytes(folder / "bulk") == {
        f"{session}.jsonl": b"".join(e.to_json() + b"\n" for e in events if e.session_id == session)
        for session in {e.session_id for e in events}
    }
    assert report.warnings == importer.warnings
    written = events_of(folder / "bulk")
    assert chain_violations(written) == []
    missing = _unaccounted(str(source), lines, made, events, importer.warnings)
    assert missing == [], [lines[number - 1] for number in missing]


_FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


class TestMalformedRecords:
    @_FUZZ
    @given(log=malformed_logs("claude-code"))
    def test_claude_code_logs_with_wrong_types_import_without_loss(
        self, tmp_path: Path, log: tuple[str, list[bytes]]
    ) -> None:
        _check("claude-code", tmp_path, *log)

    @_FUZZ
    @given(log=malformed_logs("codex"))
    def test_codex_rollouts_with_wrong_types_import_without_loss(
        self, tmp_path: Path, log: tuple[str, list[bytes]]
    ) -> None:
        _check("codex", tmp_path, *log)


SESSION = '{"type":"user","sessionId":"s1","cwd":"/w","uuid":"u1","message":{"role":"user","content":"hi"}}'
META = '{"timestamp":"2025-09-24T09:00:00.000Z","type":"session_meta","payload":{"id":"t1","cwd":"/w"}}'
PROMPT = '{"timestamp":"2025-09-24T09:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}'


class TestShapesThatRaised:
    """The shapes the first fuzzing found raising, each kept and reported at its line."""

    @pytest.mark.parametrize(
        ("tool", "lines", "warning"),
        [
            (
                "claude-code",
                [SESSION, '{"type":["user"],"sessionId":"s1"}'],
                "unsupported Claude Code record ['user']",
            ),
            (
                "claude-code",
                [SESSION, '{"type":{"a":1},"sessionId":"s1"}'],
                "unsupported Claude Code record {'a': 1}",
            ),
            (
                "codex",
                [META, '{"timestamp":"2025-09-24T09:00:01.000Z","type":["event_msg"],"payload":{}}'],
                "unsupported Codex record",
            ),
            ("codex", [META, '{"type":{"message":1},"role":"user"}'], "unsupported Codex record"),
            (
                "codex",
                [META, '{"type":"response_item","payload":{"type":["message"]}}'],
                "unsupported Codex record 'response_item.['message']'",
            ),
            (
                "codex",
                [META, '{"type":"event_msg","payload":{"type":{"x":1}}}'],
                "unsupported Codex record 'event_msg.{'x': 1}'",
            ),
            (
                "codex",
                [
                    META,
                    PROMPT,
                    '{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":"many"}}}}',
                ],
                "token_count with counts that are not numbers",
            ),
            (
                "codex",
                [
                    META,
                    PROMPT,
                    '{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":[1]}}}}',
                ],
                "token_count with counts that are not numbers",
            ),
        ],
    )
    def test_a_record_of_the_wrong_shape_is_kept_and_reported(
        self, tmp_path: Path, tool: str, lines: list[str], warning: str
    ) -> None:
        source = tmp_path / "log.jsonl"
        source.write_text("".join(line + "\n" for line in lines))
        report = import_path(source, tmp_path / "out")
        assert any(w.startswith(f"{source}:{len(lines)}: {warning}") for w in report.warnings), (
            report.warnings
        )
        kept = [e.payload["data"] for e in events_of(tmp_path / "out") if e.type == "source.record"]
        assert orjson.loads(lines[-1]) in kept or orjson.loads(lines[-1]).get("payload") in kept

    def test_a_message_id_that_is_not_a_string_counts_its_line_as_one_call(self, tmp_path: Path) -> None:
        answer = {
            "type": "assistant",
            "sessionId": "s1",
            "uuid": ["u2"],
            "message": {"id": {"x": 1}, "content": "ok", "usage": {"input_tokens": 3, "output_tokens": 2}},
        }
        source = tmp_path / "log.jsonl"
        source.write_bytes(SESSION.encode() + b"\n" + orjson.dumps(answer) + b"\n")
        import_path(source, tmp_path / "out")
        (done,) = [e for e in events_of(tmp_path / "out") if e.type == "turn.completed"]
        # no model named: tokens, and no price
        assert done.payload["usage"] == {
            "promptTokens": 3,
            "completionTokens": 2,
            "cachedTokens": 0,
            "cacheWriteTokens": 0,
        }


class TestAnImporterThatFails:
    """A bug in an importer (a shape nobody foresaw) is one line naming the file and line."""

    def _failing_on_line_2(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = ClaudeCodeImporter.read_line  # what the import and `feed_lines` both call

        def read_line(self: ClaudeCodeImporter, line_number: int, raw: Any) -> Any:
            if line_number == 2:
                raise KeyError("surprise")
            return original(self, line_number, raw)

        monkeypatch.setattr(ClaudeCodeImporter, "read_line", read_line)

    def test_agent_tui_import_says_file_and_line_in_one_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        source = tmp_path / "log.jsonl"
        source.write_text(SESSION + "\n" + SESSION + "\n")
        self._failing_on_line_2(monkeypatch)
        status = main(["import", str(source), "--out", str(tmp_path / "out")])
        err = capsys.readouterr().err
        assert status == 2
        assert err == f"agent-tui: {source}:2: could not be imported (KeyError: 'surprise')\n"

    def test_follow_mode_stops_following_that_log_with_a_warning(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        source = tmp_path / "log.jsonl"
        source.write_text(SESSION + "\n")
        (tmp_path / "out").mkdir()
        self._failing_on_line_2(monkeypatch)
        follower = ForeignFollower([SourceFile(source, "claude-code")], tmp_path / "out")
        follower.catch_up()
        with source.open("a") as handle:
            handle.write(SESSION + "\n" + SESSION + "\n")
        follower.catch_up()
        assert follower.warnings == [
            f"{source}:2: could not be imported (KeyError: 'surprise') (no longer followed)"
        ]
        with source.open("a") as handle:
            handle.write(SESSION + "\n")
        assert follower.catch_up() == 0
        follower.stop()
