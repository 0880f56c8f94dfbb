"""Codex rollouts → our logs: the chains hold, the counts match the source, bytes are stable,
`--dump transcript` reads as the conversation did, spawned agents are child sessions, and follow
mode tails a growing rollout. Fixtures: tests/fixtures/codex/ (see its README)."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from support_importers import EXPECTED, FIXTURES, agent_tui, events_of, fixture_dirs, tree_bytes, types_count

from agent_tui.events.chains import chain_violations
from agent_tui.importers import CodexImporter, detect_format, import_path
from agent_tui.importers.builder import NO_RESULT
from agent_tui.importers.convert import SourceFile
from agent_tui.importers.follow import ForeignFollower

CODEX = fixture_dirs("codex")
LEGACY, MID, MULTI = CODEX
_CONTEXT = ("<environment_context>", "<user_instructions>")


def records(folder: Path) -> list[dict]:
    """Every complete record of the fixture's rollouts, as (payload-level) dicts."""
    found = []
    for path in sorted(folder.rglob("*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            found.append(record.get("payload", record) | {"_kind": record.get("type")})
    return found


def source_counts(folder: Path) -> tuple[int, int, int]:
    """(prompts, tool calls, tool results) read straight off the rollouts. A prompt is a
    `user_message` event, or in the first releases (no events) a user message item that is not
    injected context; a spawned agent's history copied from its parent (older than its
    session_meta) is not its own."""
    prompts = calls = results = 0
    for path in sorted(folder.rglob("*.jsonl")):
        rows = [orjson.loads(line) for line in path.read_bytes().split(b"\n")[:-1]]
        born = rows[0].get("timestamp", "")
        has_events = any(row.get("type") == "event_msg" for row in rows)
        for row in rows[1:]:
            if row.get("timestamp", born) < born:
                continue
            item = row.get("payload", row)
            kind = item.get("type")
            if has_events and kind == "user_message":
                prompts += 1
            elif not has_events and kind == "message" and item.get("role") == "user":
                prompts += not item["content"][0]["text"].startswith(_CONTEXT)
            elif kind in ("function_call", "custom_tool_call"):
                calls += 1
            elif kind in ("function_call_output", "custom_tool_call_output"):
                results += 1
    return prompts, calls, results


@pytest.mark.parametrize("folder", CODEX, ids=lambda p: p.name)
class TestEachFixture:
    def test_detected_by_content(self, folder: Path) -> None:
        assert {detect_format(path) for path in folder.rglob("*.jsonl")} == {"codex"}

    def test_the_import_follows_the_chains(self, folder: Path, tmp_path: Path) -> None:
        import_path(folder, tmp_path)
        events = events_of(tmp_path)
        assert events and chain_violations(events) == []
        assert all(e.payload["client"] == "codex" for e in events if e.type == "session.created")

    def test_counts_match_the_source(self, folder: Path, tmp_path: Path) -> None:
        report = import_path(folder, tmp_path)
        events = events_of(tmp_path)
        prompts, calls, results = source_counts(folder)
        assert (report.counts.prompts, report.counts.tool_calls, report.counts.tool_results) == (
            prompts,
            calls,
            results,
        )
        started = types_count(events, "turn.started")
        steered = sum(1 for e in events if e.type == "user.message" and e.payload.get("steered"))
        assert started + steered == prompts
        assert types_count(events, "model.tool_call_requested") == calls
        answered = [e for e in events if e.type in ("tool.completed", "tool.failed")]
        assert len([e for e in answered if e.payload.get("message") != NO_RESULT]) == results

    def test_importing_twice_gives_the_same_bytes(self, folder: Path, tmp_path: Path) -> None:
        import_path(folder, tmp_path / "a")
        import_path(folder, tmp_path / "b")
        first = tree_bytes(tmp_path / "a")
        assert first and first == tree_bytes(tmp_path / "b")

    def test_dump_transcript_reads_as_the_conversation_did(self, folder: Path, tmp_path: Path) -> None:
        result = agent_tui("replay", str(folder), "--dump", "transcript", cache=tmp_path)
        assert result.returncode == 0, result.stderr
        assert result.stdout == (EXPECTED / "codex" / f"{folder.name}.transcript.jsonl").read_text()

    def test_a_second_replay_reads_the_cache(self, folder: Path, tmp_path: Path) -> None:
        first = agent_tui("replay", str(folder), "--dump", "events", cache=tmp_path)
        entries = sorted((tmp_path / "agent-tui" / "imports").iterdir())
        again = agent_tui("replay", str(folder), "--dump", "events", cache=tmp_path)
        assert first.stdout == again.stdout and first.stderr == again.stderr
        assert sorted((tmp_path / "agent-tui" / "imports").iterdir()) == entries


class TestMapping:
    def test_legacy_rollouts_without_timestamps_use_the_header_time(self, tmp_path: Path) -> None:
        import_path(LEGACY, tmp_path)
        events = events_of(tmp_path)
        assert {e.ts for e in events} == {"2025-05-07T10:11:12.345Z"}
        completed = [e.payload for e in events if e.type == "tool.completed"]
        assert [(c["result"], c.get("exitCode")) for c in completed] == [
            ("test:\n\tpytest -q tests/ --cov", 0),
            ("error: unrecognized arguments: --cov", 4),
        ]

    def test_a_rejected_command_is_the_recorded_denial(self, tmp_path: Path) -> None:
        import_path(MID, tmp_path)
        events = events_of(tmp_path)
        (requested,) = [e.payload for e in events if e.type == "permission.requested"]
        assert (requested["toolCallId"], requested["tool"], requested["risk"]) == (
            "call_r2",
            "shell",
            "execute",
        )
        failed = {e.payload["toolCallId"]: e.payload["errorCode"] for e in events if e.type == "tool.failed"}
        assert failed == {"call_r2": "permission_denied", "call_r5": "cancelled"}

    def test_turns_end_by_the_source_and_usage_is_the_growth_of_the_totals(self, tmp_path: Path) -> None:
        import_path(MID, tmp_path)
        ends = [e.payload for e in events_of(tmp_path) if e.type == "turn.completed"]
        assert [end["stopReason"] for end in ends] == ["final", "cancelled", "final"]
        # priced as gpt-5-codex (the costs themselves: test_importers_costs.py)
        assert ends[0]["usage"] == {
            "promptTokens": 11800, "completionTokens": 420, "cachedTokens": 8200, "costUsd": pytest.approx(0.009725)
        }  # fmt: skip
        assert ends[2]["usage"] == {
            "promptTokens": 3300, "completionTokens": 100, "cachedTokens": 3800, "costUsd": pytest.approx(0.001475)
        }  # fmt: skip

    def test_compaction_and_the_duplicate_copies(self, tmp_path: Path) -> None:
        import_path(MID, tmp_path)
        events = events_of(tmp_path)
        (compacted,) = [e.payload for e in events if e.type == "context.compacted"]
        assert compacted["summary"].startswith("The user asked to fix refund rounding")
        assert compacted["beforeTokens"] == 6600
        deltas = [e.payload["text"] for e in events if e.type == "model.delta"]
        assert len(deltas) == len(set(deltas)) == 2  # each answer once, though Codex wrote it twice
        kinds = [e.payload["recordType"] for e in events if e.type == "source.record"]
        assert kinds.count("reasoning") == 1

    def test_a_spawned_agent_is_a_child_session_delivered_by_wait(self, tmp_path: Path) -> None:
        import_path(MULTI, tmp_path)
        events = events_of(tmp_path)
        created = {e.session_id: e.payload for e in events if e.type == "session.created"}
        parent, child = (
            "sess_019c0d1e-2f3a-7b4c-8d5e-6f7a8b9c0d73",
            "sess_019c0d1e-5a6b-7c8d-9e0f-1a2b3c4d5e84",
        )
        assert created[child]["parentSessionId"] == parent and created[child]["agentName"] == "explorer"
        (delivered,) = [e.payload for e in events if e.type == "subagent.delivered"]
        assert delivered == {
            "childSessionId": child,
            "agentName": "explorer",
            "status": "completed",
            "text": "Refunds are computed by compute_refund in src/refunds.py.",
        }
        inherited = [e for e in events if e.session_id == child and e.type == "source.record"]
        assert [e.payload["recordType"] for e in inherited][:3] == [
            "session_meta",
            "inherited.event_msg",
            "inherited.response_item",
        ]
        exec_done = [e.payload for e in events if e.type == "tool.completed" and e.session_id == child]
        assert exec_done[0]["exitCode"] == 0

    def test_unsupported_records_are_kept_and_reported_with_file_and_line(self, tmp_path: Path) -> None:
        report = import_path(MID, tmp_path)
        (path,) = MID.rglob("*.jsonl")
        assert (
            f"{path}:31: unsupported Codex record 'event_msg.thread_name_updated' (kept as source-specific)"
            in report.warnings
        )
        kept = [
            e for e in events_of(tmp_path) if e.payload.get("recordType") == "event_msg.thread_name_updated"
        ]
        assert kept[0].payload["data"]["name"] == "Refund rounding"

    def test_a_rollout_with_no_session_meta_is_named_after_its_file(self) -> None:
        importer = CodexImporter("dir/rollout-x.jsonl")
        importer.feed(
            1,
            b'{"timestamp":"2025-09-24T09:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}',
        )
        events = importer.finish()
        assert events[-1].type == "turn.completed" and events[-1].session_id == "sess_rollout-x"


class TestFollow:
    def test_a_growing_rollout_grows_the_converted_log(self, tmp_path: Path) -> None:
        (source,) = MID.rglob("*.jsonl")
        lines = source.read_bytes().split(b"\n")
        live = tmp_path / "live.jsonl"
        live.write_bytes(b"\n".join(lines[:10]) + b"\n" + lines[10][:40])  # a line still being written
        (tmp_path / "out").mkdir()
        follower = ForeignFollower([SourceFile(live, "codex")], tmp_path / "out")
        follower.catch_up()
        log = tmp_path / "out" / "sess_0199b1c2-d3e4-7f56-8a7b-9c0d1e2f3a62.jsonl"
        before = log.read_bytes()
        live.write_bytes(b"\n".join(lines[:20]) + b"\n")
        assert follower.catch_up() > 0
        after = log.read_bytes()
        assert after.startswith(before) and len(after) > len(before)
        shutil.copy(live, tmp_path / "whole.jsonl")
        import_path(tmp_path / "whole.jsonl", tmp_path / "batch")
        assert (tmp_path / "batch" / log.name).read_bytes().startswith(after)
        assert follower.warnings == []

    def test_a_line_that_is_not_json_gives_the_same_bytes_in_bulk_and_in_follow_mode(
        self, tmp_path: Path
    ) -> None:
        live = tmp_path / "live.jsonl"
        live.write_bytes(
            b'{"timestamp":"2025-09-24T09:00:00.000Z","type":"session_meta","payload":{"id":"t1","cwd":"/w"}}\n'
            b'{"timestamp":"2025-09-24T09:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}\n'
            b"{not json\n"
            b'{"timestamp":"2025-09-24T09:00:02.000Z","type":"event_msg","payload":{"type":"agent_message","message":"hello"}}\n'
            b'{"timestamp":"2025-09-24T09:00:03.000Z","type":"event_msg","payload":{"type":"task_complete"}}\n'
        )
        (tmp_path / "follow").mkdir()
        follower = ForeignFollower([SourceFile(live, "codex")], tmp_path / "follow")
        follower.catch_up()
        follower.stop()
        import_path(live, tmp_path / "bulk")
        assert tree_bytes(tmp_path / "follow") == tree_bytes(tmp_path / "bulk")
        (kept,) = [e for e in events_of(tmp_path / "bulk") if e.payload.get("recordType") == "invalid-json"]
        assert kept.payload["data"] == {"line": "{not json"}
        assert follower.warnings == [f"{live}:3: not valid JSON (kept as source-specific)"]


class TestMixedFolder:
    def test_a_folder_may_mix_codex_claude_code_and_our_own_logs(self, tmp_path: Path) -> None:
        mixed = tmp_path / "mixed"
        mixed.mkdir()
        (rollout,) = LEGACY.glob("*.jsonl")
        shutil.copy(rollout, mixed / "a.jsonl")
        shutil.copy(
            next((FIXTURES / "claude_code" / "v1.0-inline-sidechain").glob("*.jsonl")), mixed / "b.jsonl"
        )
        ours = sorted((Path(__file__).parent / "sample-logs" / "complete").glob("*.jsonl"))[0]
        shutil.copy(ours, mixed / ours.name)
        (mixed / "notes.jsonl").write_text('{"hello": "world"}\n')
        result = agent_tui("replay", str(mixed), "--dump", "state", cache=tmp_path)
        assert result.returncode == 0, result.stderr
        clients = {s["sessionId"] for s in orjson.loads(result.stdout)["sessions"]}
        assert {
            "sess_0196a8f2-3c4d-7e5f-8a9b-0c1d2e3f4a51",
            "sess_5f0c2a51-7d1e-4b8a-9c3f-2e6d8a1b4c01",
            ours.stem,
        } <= clients
        assert (
            f"{mixed / 'notes.jsonl'}: not a Claude Code, Codex or agent-tui log (skipped)" in result.stderr
        )
