"""The record types Claude Code 2.1 keeps adding to its transcripts: `cost-state` is the turn's
cost as Claude Code counts it, records it writes into a sub-agent's log belong to that sub-agent,
the rest (`tools-used`, `atis-latch`, `api-request*`, …) is kept quietly as `source.record`, and a
type nobody knows is reported once per log, not once per line.

Fixture: tests/sample-logs/claude-code-2.1-records/ (its README says where each shape comes from).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from support_importers import events_of

from agent_tui.events.chains import chain_violations
from agent_tui.importers import ClaudeCodeImporter, detect_format, import_path
from agent_tui.importers.claude_code_words import AGENT_ROUTED, KNOWN_RECORDS
from agent_tui.reducer import project_state

RECORDS = Path(__file__).parent / "sample-logs" / "claude-code-2.1-records"
SESSION = "e7a1b2c3-4d5e-4f60-8a7b-9c0d1e2f3a41"
MAIN = f"sess_{SESSION}"
CHILD = f"sess_{SESSION}_agent-b81d0e"


def _turn_costs(events: list, session: str) -> list[float | None]:
    return [
        (e.payload.get("usage") or {}).get("costUsd")
        for e in events
        if e.type == "turn.completed" and e.session_id == session
    ]


def _line(**record: object) -> bytes:
    return orjson.dumps({"sessionId": "s1", "cwd": "/w", "timestamp": "2026-11-30T09:00:00.000Z", **record})


def _prompt(uuid: str, text: str) -> bytes:
    return _line(type="user", uuid=uuid, message={"role": "user", "content": text})


def _answer(uuid: str, text: str) -> bytes:
    usage = {"input_tokens": 100, "output_tokens": 10}
    message = {"id": "m" + uuid, "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}]}
    return _line(type="assistant", uuid=uuid, message=message | {"usage": usage})


def _cost(total: object) -> bytes:
    return orjson.dumps({"type": "cost-state", "sessionId": "s1", "totalCostUSD": total})


def _feed(importer: ClaudeCodeImporter, lines: list[bytes]) -> list:
    events = []
    for number, line in enumerate(lines, 1):
        events += importer.feed(number, line)
    return events + importer.finish()


class TestTheFixture:
    def test_the_turns_cost_what_claude_code_counted(self, tmp_path: Path) -> None:
        report = import_path(RECORDS, tmp_path)
        events = events_of(tmp_path)
        assert chain_violations(events) == []
        assert _turn_costs(events, MAIN) == [0.0123, pytest.approx(0.0456 - 0.0123)]
        # Each call keeps its own price from our table; only the turn's total is Claude Code's.
        calls = [e.payload for e in events if e.type == "model.usage" and e.session_id == MAIN]
        assert len(calls) == 4 and all(call["costUsd"] > 0 for call in calls)
        state = project_state(events)
        assert state.sessions[MAIN].spend.cost_usd == pytest.approx(0.0456)
        assert report.counts.prompts == 3  # two prompts in the main log, one in the sub-agent's

    def test_records_written_into_a_sub_agents_log_are_the_sub_agents(self, tmp_path: Path) -> None:
        import_path(RECORDS, tmp_path)
        assert sorted(path.stem for path in tmp_path.glob("*.jsonl")) == [MAIN, CHILD]
        events = events_of(tmp_path)
        child_records = [
            e.payload["recordType"] for e in events if e.session_id == CHILD and e.type == "source.record"
        ]
        assert child_records.count("api-request") == 2
        assert {"api-request-shape", "content-replacement"} <= set(child_records)
        [created] = [e.payload for e in events if e.session_id == CHILD and e.type == "session.created"]
        assert created["cwd"] == "/home/dev/shop-api"  # from its first line that has one
        assert created["parentSessionId"] == MAIN and created["agentName"] == "Explore"

    def test_the_new_types_are_kept_quietly_and_an_unknown_one_is_reported_once(self, tmp_path: Path) -> None:
        report = import_path(RECORDS, tmp_path)
        main = RECORDS / f"{SESSION}.jsonl"
        assert report.warnings == [
            f"{main}:10: unsupported Claude Code record 'hologram-state' (kept as source-specific)"
        ]
        events = events_of(tmp_path)
        kept = [e.payload["recordType"] for e in events if e.type == "source.record" and e.session_id == MAIN]
        assert kept.count("hologram-state") == 2  # both lines kept, one warning
        for record_type in ("tools-used", "atis-latch", "api-request", "api-request-blob", "cost-state"):
            assert record_type in kept and record_type in KNOWN_RECORDS
        tools = [
            e.payload["data"]["tools"]
            for e in events
            if e.type == "source.record" and e.payload["recordType"] == "tools-used"
        ]
        assert tools == [["Bash"], ["Bash", "Agent"]]

    def test_a_log_that_begins_with_state_records_is_detected(self, tmp_path: Path) -> None:
        log = tmp_path / "x.jsonl"
        first = (RECORDS / f"{SESSION}.jsonl").read_bytes().splitlines(keepends=True)[:2]
        assert [orjson.loads(line)["type"] for line in first] == ["permission-mode", "atis-latch"]
        log.write_bytes(b"".join(first))
        assert detect_format(log) == "claude-code"


class TestCostState:
    def test_a_total_below_what_the_turns_before_cost_leaves_the_turn_nothing(self) -> None:
        lines = [_prompt("u1", "one"), _answer("a1", "x"), _cost(0.5)]
        lines += [_prompt("u2", "two"), _answer("a2", "y"), _cost(0.2)]
        events = _feed(ClaudeCodeImporter("x.jsonl"), lines)
        assert _turn_costs(events, "sess_s1") == [0.5, 0.0]

    def test_the_turn_open_at_a_cost_state_takes_up_what_the_turns_before_did_not_count(self) -> None:
        # Claude Code saves its cost seldom (at the end of a session): the turns before it keep
        # our prices, the open one what is left, so the session costs what Claude Code says.
        lines = [
            _prompt("u1", "one"),
            _answer("a1", "x"),
            _prompt("u2", "two"),
            _answer("a2", "y"),
            _cost(0.01),
        ]
        events = _feed(ClaudeCodeImporter("x.jsonl"), lines)
        first, second = _turn_costs(events, "sess_s1")
        assert first is not None and first > 0 and second == pytest.approx(0.01 - first)
        [session] = project_state(events).sessions.values()
        assert session.spend.cost_usd == pytest.approx(0.01)

    def test_a_cost_before_any_turn_is_the_start_not_a_turns_cost(self) -> None:
        lines = [_cost(1.25), _prompt("u1", "one"), _answer("a1", "x"), _cost(1.5)]
        events = _feed(ClaudeCodeImporter("x.jsonl"), lines)
        assert _turn_costs(events, "sess_s1") == [0.25]

    @pytest.mark.parametrize("total", ["0.5", None, -1, True, 1e12, {"usd": 1}])
    def test_a_total_that_is_no_cost_leaves_our_prices_and_is_reported_once(self, total: object) -> None:
        importer = ClaudeCodeImporter("x.jsonl")
        lines = [_prompt("u1", "one"), _answer("a1", "x"), _cost(total), _cost(total)]
        events = _feed(importer, lines)
        priced = [e.payload["costUsd"] for e in events if e.type == "model.usage"]
        assert _turn_costs(events, "sess_s1") == [pytest.approx(sum(priced))]
        assert importer.warnings == [
            "x.jsonl:3: cost-state whose totalCostUSD is not a cost in USD (kept as source-specific)"
        ]

    def test_a_turn_without_cost_state_keeps_our_prices(self) -> None:
        events = _feed(ClaudeCodeImporter("x.jsonl"), [_prompt("u1", "one"), _answer("a1", "x")])
        priced = [e.payload["costUsd"] for e in events if e.type == "model.usage"]
        assert priced and _turn_costs(events, "sess_s1") == [pytest.approx(priced[0])]


def test_unknown_types_are_reported_once_per_type_not_per_line(tmp_path: Path) -> None:
    log = tmp_path / "s1.jsonl"
    lines = [_prompt("u1", "one")]
    lines += [orjson.dumps({"type": f"future-{i % 3}", "sessionId": "s1"}) for i in range(300)]
    log.write_bytes(b"\n".join(lines) + b"\n")
    report = import_path(log, tmp_path / "out")
    assert report.warnings == [
        f"{log}:{n}: unsupported Claude Code record 'future-{i}' (kept as source-specific)"
        for i, n in ((0, 2), (1, 3), (2, 4))
    ]
    kept = [e for e in events_of(tmp_path / "out") if e.type == "source.record"]
    assert len(kept) == 300
    shutil.rmtree(tmp_path / "out")


@pytest.mark.parametrize(
    "record",
    [
        {"type": {"api-request": 1}, "agentId": "b81d0e", "sessionId": "s1"},
        {"type": ["api-request"], "agentId": "b81d0e", "sessionId": "s1"},
        {"type": "api-request", "agentId": {"id": 1}, "sessionId": "s1"},
        {"type": "api-request", "agentId": "../../../etc/passwd", "sessionId": "s1"},
        {"type": "cost-state", "sessionId": ["s1"], "totalCostUSD": 1},
    ],
)
def test_hostile_records_are_kept_without_a_crash_or_a_path_outside(record: dict, tmp_path: Path) -> None:
    log = tmp_path / "in" / "s1.jsonl"
    log.parent.mkdir()
    log.write_bytes(_prompt("u1", "one") + b"\n" + orjson.dumps(record) + b"\n" + _answer("a1", "x") + b"\n")
    report = import_path(log, tmp_path / "out")
    written = sorted((tmp_path / "out").iterdir())
    assert all(path.parent == tmp_path / "out" and "/" not in path.name for path in written)
    assert all("could not be imported" not in warning for warning in report.warnings)
    events = events_of(tmp_path / "out")
    assert chain_violations(events) == []
    assert sum(e.type == "source.record" for e in events) == 1


def test_a_task_notification_is_read_in_linear_time_whatever_it_holds() -> None:
    # A hostile transcript: a notification of megabytes of opening tags and no closing one.
    launch = {"type": "tool_use", "id": "toolu_bg", "name": "Agent", "input": {"prompt": "p"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_bg", "content": "Async agent launched"}
    text = "<task-notification>\n<tool-use-id>toolu_bg</tool-use-id>\n" + "<result>" * 400_000
    lines = [
        _prompt("u1", "go"),
        _line(type="assistant", uuid="a1", message={"id": "m1", "content": [launch]}),
        _line(
            type="user",
            uuid="u2",
            message={"role": "user", "content": [result]},
            toolUseResult={"isAsync": True, "status": "async_launched", "agentId": "bg1"},
        ),
        _line(
            type="user",
            uuid="u3",
            message={"role": "user", "content": text},
            origin={"kind": "task-notification"},
            promptSource="system",
        ),
    ]
    events = _feed(ClaudeCodeImporter("x.jsonl"), lines)
    [delivered] = [e.payload for e in events if e.type == "subagent.delivered"]
    assert delivered["childSessionId"] == "sess_s1_agent-bg1" and delivered["status"] == "completed"
    assert [e.payload["promptPreview"] for e in events if e.type == "turn.started"] == ["go", ""]


@pytest.mark.parametrize("record_type", sorted(AGENT_ROUTED))
def test_each_record_claude_code_routes_by_agent_belongs_to_that_agent(record_type: str) -> None:
    record = orjson.dumps({"type": record_type, "sessionId": "s1", "agentId": "b81d0e", "v": 1})
    events = _feed(ClaudeCodeImporter("x.jsonl"), [_prompt("u1", "one"), record, _answer("a1", "x")])
    [kept] = [e for e in events if e.type == "source.record"]
    assert kept.session_id == "sess_s1_agent-b81d0e" and kept.payload["recordType"] == record_type
    assert [e.session_id for e in events if e.type == "turn.completed"] == ["sess_s1"]
