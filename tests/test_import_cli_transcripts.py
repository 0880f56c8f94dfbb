"""Transcripts the real Claude Code 2.1.332 and Codex 0.171.0 wrote (tests/sample-logs/
cli-transcripts/, see its README) import without a warning, with exactly the turns their user and
their CLI started, sub-agents delivered where they reported, Claude Code's own cost, and, followed
line by line, a session that is running until its turns end, never failed."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from support_importers import events_of

from agent_tui.events.chains import chain_violations
from agent_tui.importers import CodexImporter, import_path
from agent_tui.importers.convert import SessionLogWriter, discover
from agent_tui.importers.follow import ForeignTail
from agent_tui.reducer import project_state

TRANSCRIPTS = Path(__file__).parent / "sample-logs" / "cli-transcripts"
CLAUDE = TRANSCRIPTS / "claude-code-2.1.332"
CODEX = TRANSCRIPTS / "codex-0.171.0"
CLAUDE_MAIN = "sess_00000000-0000-4000-8000-000000000001"
CLAUDE_CHILD = CLAUDE_MAIN + "_agent-a0000000000000001"
CODEX_MAIN = "sess_00000000-0000-7000-8000-000000000001"
CODEX_CHILD = "sess_00000000-0000-7000-8000-00000000000a"


def _turns(events: list, session: str) -> list[tuple[str, str]]:
    started = {e.turn_id: e.payload["promptPreview"] for e in events if e.type == "turn.started"}
    return [
        (started[e.turn_id], e.payload["stopReason"])
        for e in events
        if e.type == "turn.completed" and e.session_id == session
    ]


class TestClaudeCode:
    def test_one_typed_turn_and_one_claude_code_started_for_its_background_agent(
        self, tmp_path: Path
    ) -> None:
        report = import_path(CLAUDE, tmp_path)
        assert report.warnings == []
        events = events_of(tmp_path)
        assert chain_violations(events) == []
        assert _turns(events, CLAUDE_MAIN) == [("run it", "final"), ("", "final")]
        assert report.counts.prompts == 2  # "run it", and the sub-agent's task
        [notice] = [
            e
            for e in events
            if e.type == "source.record" and e.payload["recordType"] == "user.task-notification"
        ]
        assert notice.payload["data"]["origin"]["kind"] == "task-notification"

    def test_the_background_agent_delivers_when_its_notification_comes(self, tmp_path: Path) -> None:
        import_path(CLAUDE, tmp_path)
        events = events_of(tmp_path)
        turns = [e.turn_id for e in events if e.type == "turn.started" and e.session_id == CLAUDE_MAIN]
        [delivered] = [e for e in events if e.type == "subagent.delivered"]
        assert delivered.turn_id == turns[1]  # not at the launch's result, in the first turn
        assert delivered.payload["childSessionId"] == CLAUDE_CHILD
        assert delivered.payload["status"] == "completed"
        assert delivered.payload["agentName"] == "general-purpose"
        [child] = [e.payload for e in events if e.type == "session.created" and e.session_id == CLAUDE_CHILD]
        assert child["parentSessionId"] == CLAUDE_MAIN
        state = project_state(events)
        assert state.sessions[CLAUDE_CHILD].parent_session_id == CLAUDE_MAIN

    def test_the_session_costs_what_claude_code_counted(self, tmp_path: Path) -> None:
        import_path(CLAUDE, tmp_path)
        main = CLAUDE / "00000000-0000-4000-8000-000000000001.jsonl"
        totals = [
            record["totalCostUSD"]
            for record in map(orjson.loads, main.read_bytes().splitlines())
            if record.get("type") == "cost-state"
        ]
        state = project_state(events_of(tmp_path))
        assert state.sessions[CLAUDE_MAIN].spend.cost_usd == pytest.approx(totals[-1])

    def test_followed_line_by_line_it_is_never_failed(self, tmp_path: Path) -> None:
        statuses = _follow_line_by_line(CLAUDE, tmp_path, CLAUDE_MAIN)
        assert set(statuses) == {"running"}  # its last turn waits for the next prompt
        state = project_state(events_of(tmp_path / "out"))
        assert [turn.stop_reason for turn in state.sessions[CLAUDE_MAIN].turns] == ["final", None]


class TestCodex:
    def test_the_parent_has_its_one_turn_and_the_notification_after_it_starts_none(
        self, tmp_path: Path
    ) -> None:
        report = import_path(CODEX, tmp_path)
        assert report.warnings == []
        events = events_of(tmp_path)
        assert chain_violations(events) == []
        assert _turns(events, CODEX_MAIN) == [("run it", "final")]
        assert _turns(events, CODEX_CHILD) == [("Create the sub marker file.", "final")]
        kept = [
            e.payload["data"]["content"][0]["text"].split("\n", 1)[0]
            for e in events
            if e.session_id == CODEX_MAIN
            and e.type == "source.record"
            and e.payload["recordType"] == "message.user"
        ]
        assert kept == ["<environment_context>", "<subagent_notification>"]
        records = {e.payload["recordType"] for e in events if e.type == "source.record"}
        assert {"world_state", "token_usage_record", "event_msg.thread_settings_applied"} <= records
        [child] = [e.payload for e in events if e.type == "session.created" and e.session_id == CODEX_CHILD]
        assert child["parentSessionId"] == CODEX_MAIN

    def test_a_part_codex_marks_as_its_own_is_context_whatever_it_says(self) -> None:
        rollout = sorted(CODEX.rglob("*.jsonl"))[0]
        lines = rollout.read_bytes().splitlines()
        [environment] = [n for n, line in enumerate(lines) if b"<environment_context>" in line]
        injected = orjson.loads(lines[environment])
        injected["payload"]["content"][0]["text"] = "Today the tests run offline."  # no marker of ours
        lines[environment] = orjson.dumps(injected)
        importer = CodexImporter("x.jsonl")
        events = []
        for number, line in enumerate(lines, 1):
            events += importer.feed(number, line)
        events += importer.finish()
        assert [e.payload["content"] for e in events if e.type == "user.message"] == ["run it"]

    def test_followed_line_by_line_it_is_never_failed(self, tmp_path: Path) -> None:
        statuses = _follow_line_by_line(CODEX, tmp_path, CODEX_MAIN)
        assert "failed" not in statuses
        assert statuses[0] == "running" and statuses[-1] == "completed"  # task_complete ended it


def _follow_line_by_line(folder: Path, tmp_path: Path, session: str) -> list[str]:
    """The session's status after each line of its main log is appended and polled."""
    [source] = [s for s in discover([folder]).sources if session.removeprefix("sess_") in s.path.name]
    live = tmp_path / "live" / source.path.name
    live.parent.mkdir()
    live.write_bytes(b"")
    out = tmp_path / "out"
    out.mkdir()
    writer = SessionLogWriter(out, truncate=False)
    tail = ForeignTail(type(source)(live, source.format), writer)
    statuses: list[str] = []
    for line in source.path.read_bytes().splitlines(keepends=True):
        with live.open("ab") as handle:
            handle.write(line)
        if tail.poll():
            events = events_of(out)
            assert chain_violations(events, complete=False) == []
            found = project_state(events).sessions.get(session)
            if found is not None:
                statuses.append(found.status)
    writer.close()
    assert tail.importer.warnings == []
    return statuses


SAMPLES = Path(__file__).parent / "sample-logs"
NEW_FIXTURES = [CLAUDE, CODEX, SAMPLES / "claude-code-2.1-records", SAMPLES / "codex-context"]


@pytest.mark.parametrize("folder", NEW_FIXTURES, ids=lambda path: path.name)
def test_the_same_bytes_twice_and_followed_to_its_end_as_imported(folder: Path, tmp_path: Path) -> None:
    import_path(folder, tmp_path / "a")
    import_path(folder, tmp_path / "b")
    imported = {path.name: path.read_bytes() for path in sorted((tmp_path / "a").glob("*.jsonl"))}
    assert imported and imported == {
        path.name: path.read_bytes() for path in sorted((tmp_path / "b").glob("*.jsonl"))
    }
    followed = tmp_path / "followed"
    followed.mkdir()
    writer = SessionLogWriter(followed, truncate=False)
    for source in discover([folder]).sources:
        tail = ForeignTail(source, writer)
        tail.poll()
        tail.finish()
    writer.close()
    assert {path.name: path.read_bytes() for path in sorted(followed.glob("*.jsonl"))} == imported
