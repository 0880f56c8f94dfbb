"""Claude Code logs → our logs: the chains hold, nothing is lost or invented, bytes are stable,
`--dump transcript` reads as the conversation did, follow mode tails a growing log, and the
scrubber shows an imported session with its sub-agent.

The fixtures (tests/fixtures/claude_code/, see its README) are three CLI versions' shapes; the
expected transcripts in tests/fixtures/expected/ were read line by line against the fixtures.
If the replay screen changes (another issue reworks the scrubber), regenerate the snapshot with
`--snapshot-update` and look at it.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support_importers import EXPECTED, agent_tui, events_of, fixture_dirs, logs_in, tree_bytes, types_count
from support_workbench import wait_for
from test_tui import settle, snapshot  # noqa: F401 - the snapshot fixture stores under tests/snapshots

from agent_tui.events.chains import chain_violations
from agent_tui.importers import ClaudeCodeImporter, detect_format, import_path
from agent_tui.importers.builder import NO_RESULT
from agent_tui.importers.convert import SourceFile, discover
from agent_tui.importers.follow import ForeignFollower
from agent_tui.importers.ids import safe_part
from agent_tui.importers.materialize import replay_inputs
from agent_tui.importers.source_lines import BLOCK_SIZE, SourceLines
from agent_tui.reducer import project_state
from agent_tui.tui.replay_app import ReplayApp

CLAUDE = fixture_dirs("claude_code")
V1, V20, V21 = CLAUDE


def source_counts(folder: Path) -> tuple[int, int, int]:
    """(prompts, tool calls, tool results) read straight off the fixture's lines."""
    prompts = calls = results = 0
    for path in logs_in(folder):
        for line in path.read_bytes().split(b"\n"):
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # the torn last line
            message = record.get("message") or {}
            content = message.get("content") or []
            if record.get("type") == "assistant":
                calls += sum(1 for block in content if block.get("type") == "tool_use")
            elif record.get("type") == "user":
                if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
                    results += sum(1 for b in content if b.get("type") == "tool_result")
                    continue
                text = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
                if record.get("isMeta") or record.get("isCompactSummary") or text.startswith(("[", "<")):
                    continue
                prompts += 1
    return prompts, calls, results


@pytest.mark.parametrize("folder", CLAUDE, ids=lambda p: p.name)
class TestEachFixture:
    def test_detected_by_content(self, folder: Path) -> None:
        for path in logs_in(folder):
            assert detect_format(path) == "claude-code", path

    def test_the_import_follows_the_chains(self, folder: Path, tmp_path: Path) -> None:
        import_path(folder, tmp_path)
        events = events_of(tmp_path)
        assert events and chain_violations(events) == []
        assert all(e.payload["client"] == "claude-code" for e in events if e.type == "session.created")

    def test_counts_match_the_source(self, folder: Path, tmp_path: Path) -> None:
        report = import_path(folder, tmp_path)
        events = events_of(tmp_path)
        prompts, calls, results = source_counts(folder)
        assert (report.counts.prompts, report.counts.tool_calls, report.counts.tool_results) == (
            prompts,
            calls,
            results,
        )
        answered = [e for e in events if e.type in ("tool.completed", "tool.failed")]
        assert types_count(events, "turn.started") == prompts
        assert types_count(events, "model.tool_call_requested") == calls
        assert len([e for e in answered if e.payload.get("message") != NO_RESULT]) == results

    def test_importing_twice_gives_the_same_bytes(self, folder: Path, tmp_path: Path) -> None:
        import_path(folder, tmp_path / "a")
        import_path(folder, tmp_path / "b")
        first = tree_bytes(tmp_path / "a")
        assert first and first == tree_bytes(tmp_path / "b")

    def test_dump_transcript_reads_as_the_conversation_did(self, folder: Path, tmp_path: Path) -> None:
        result = agent_tui("replay", str(folder), "--dump", "transcript", cache=tmp_path)
        assert result.returncode == 0, result.stderr
        expected = (EXPECTED / "claude_code" / f"{folder.name}.transcript.jsonl").read_text()
        assert result.stdout == expected

    def test_the_torn_last_line_is_reported_not_imported(self, folder: Path, tmp_path: Path) -> None:
        report = import_path(folder, tmp_path)
        torn = [w for w in report.warnings if "torn final line" in w]
        main = next(p for p in sorted(folder.glob("*.jsonl")) if not p.name.startswith("agent-"))
        content = main.read_bytes()
        lines, tail = content.count(b"\n"), len(content) - content.rfind(b"\n") - 1
        assert torn == [f"{main}:{lines + 1}: torn final line ({tail} bytes without a newline) left out"]


class TestMapping:
    def test_v1_inline_sidechain_is_a_child_session_delivered_to_its_parent(self, tmp_path: Path) -> None:
        import_path(V1, tmp_path)
        events = events_of(tmp_path)
        created = {e.session_id: e.payload for e in events if e.type == "session.created"}
        parent = "sess_5f0c2a51-7d1e-4b8a-9c3f-2e6d8a1b4c01"
        (child,) = [sid for sid, p in created.items() if p.get("parentSessionId") == parent]
        assert created[child]["agentName"] == "general-purpose"
        assert created[child]["title"] == "Find DEFAULT_PORT uses"
        (delivered,) = [e for e in events if e.type == "subagent.delivered"]
        assert delivered.session_id == parent and delivered.payload["childSessionId"] == child
        assert delivered.payload["status"] == "completed"

    def test_a_rejected_edit_is_the_recorded_denial_and_the_interrupt_cancels_the_turn(
        self, tmp_path: Path
    ) -> None:
        import_path(V1, tmp_path)
        events = [e for e in events_of(tmp_path) if e.session_id.endswith("4c01")]
        resolved = [e.payload for e in events if e.type == "permission.resolved"]
        assert resolved == [
            {
                "requestId": "perm_toolu_01EditPort",
                "toolCallId": "toolu_01EditPort",
                "decision": "deny",
                "actor": "user",
            }
        ]
        failed = {e.payload["toolCallId"]: e.payload["errorCode"] for e in events if e.type == "tool.failed"}
        assert failed == {"toolu_01ReadCfg": "unknown", "toolu_01EditPort": "permission_denied"}
        stops = [e.payload["stopReason"] for e in events if e.type == "turn.completed"]
        assert stops == ["cancelled", "final"]

    def test_usage_is_summed_per_model_call_with_cached_tokens(self, tmp_path: Path) -> None:
        import_path(V20, tmp_path)
        main = [e for e in events_of(tmp_path) if e.session_id == "sess_9a3e77c2-1b5d-4e2f-8a6c-3d4e5f6a7b12"]
        (end,) = [e for e in main if e.type == "turn.completed"]
        # four model calls (msg_02B1 split over three lines counts once), 1024 prompt tokens each:
        # 4 uncached, 120 written to the cache, 900 read from it; and 60 output tokens.
        # claude-sonnet-4-5: 4·$3 + 120·$3.75 + 900·$0.30 + 60·$15 per million = $0.001632 a call
        calls = [e.payload for e in main if e.type == "model.usage"]
        assert [c["step"] for c in calls] == [1, 2, 3, 4]
        assert calls[0] == {
            "step": 1,
            "promptTokens": 1024,
            "completionTokens": 60,
            "cachedTokens": 900,
            "cacheWriteTokens": 120,
            "costUsd": pytest.approx(0.001632),
        }
        assert end.payload["usage"] == {
            "promptTokens": 4096,
            "completionTokens": 240,
            "cachedTokens": 3600,
            "cacheWriteTokens": 480,
            "costUsd": pytest.approx(4 * 0.001632),
        }

    def test_compaction_and_thinking_and_unknown_records(self, tmp_path: Path) -> None:
        import_path(V20, tmp_path)
        events = events_of(tmp_path)
        (compacted,) = [e.payload for e in events if e.type == "context.compacted"]
        assert compacted["beforeTokens"] == 154212
        assert compacted["summary"].endswith("shipped orders are not.")
        kinds = [e.payload["recordType"] for e in events if e.type == "source.record"]
        assert kinds.count("thinking") == 1
        assert {"file-history-snapshot", "system.api_error", "queue-operation", "user.command"} <= set(kinds)

    def test_a_record_type_of_claude_code_2_1_is_kept_quietly(self, tmp_path: Path) -> None:
        # `worktree-state` stood for a type from a newer release; Claude Code 2.1.3xx writes it.
        report = import_path(V21, tmp_path)
        assert not [w for w in report.warnings if "unsupported" in w]
        kept = [
            e
            for e in events_of(tmp_path)
            if e.type == "source.record" and e.payload["recordType"] == "worktree-state"
        ]
        assert len(kept) == 1 and kept[0].payload["data"]["worktree"]["branch"] == "changelog"

    def test_a_line_that_is_not_json_is_kept_and_reported(self) -> None:
        importer = ClaudeCodeImporter("x.jsonl")
        importer.feed(
            1,
            b'{"type":"user","sessionId":"s1","cwd":"/w","uuid":"u1","message":{"role":"user","content":"hi"}}',
        )
        events = importer.feed(2, b"{not json")
        assert importer.warnings == ["x.jsonl:2: not valid JSON (kept as source-specific)"]
        assert [e.payload["recordType"] for e in events] == ["invalid-json"]

    def test_detection_ignores_the_file_name(self, tmp_path: Path) -> None:
        renamed = tmp_path / "notes.txt"
        shutil.copy(next(V1.glob("*.jsonl")), renamed)
        assert detect_format(renamed) == "claude-code"
        assert discover([renamed]).sources == [SourceFile(renamed, "claude-code")]


class TestCli:
    def test_import_prints_warnings_and_a_summary(self, tmp_path: Path) -> None:
        result = agent_tui("import", str(V21), "--out", str(tmp_path / "out"), cache=tmp_path)
        assert result.returncode == 0
        assert "torn final line" in result.stderr
        assert result.stdout.startswith("imported 2 Claude Code logs into ")
        assert "2 sessions, 2 prompts, 3 tool calls, 3 results" in result.stdout

    def test_unusable_input_exits_2_with_one_sentence(self, tmp_path: Path) -> None:
        (tmp_path / "notes.jsonl").write_text('{"hello": "world"}\n')
        for src in (tmp_path / "missing", tmp_path / "notes.jsonl"):
            result = agent_tui("import", str(src), "--out", str(tmp_path / "out"), cache=tmp_path)
            assert result.returncode == 2 and "Traceback" not in result.stderr
            assert result.stderr.count("\n") == 1

    def test_replay_claude_reads_the_default_folder_newest_first(self, tmp_path: Path) -> None:
        projects = tmp_path / "claude-home" / "projects" / "-home-dev-shop-api"
        shutil.copytree(V20, projects)
        home = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-home")}
        done = agent_tui("replay", "--claude", "--since", "1d", "--dump", "state", cache=tmp_path, env=home)
        assert done.returncode == 0, done.stderr
        state = orjson.loads(done.stdout)
        assert [s["agentName"] for s in state["sessions"]] == [None, "Explore"]
        old = tmp_path / "claude-home" / "projects" / "-old" / "0ld.jsonl"
        old.parent.mkdir()
        shutil.copy(next(V1.glob("*.jsonl")), old)
        os.utime(old, (1_600_000_000, 1_600_000_000))
        recent = agent_tui("replay", "--claude", "--since", "2d", "--dump", "state", cache=tmp_path, env=home)
        assert len(orjson.loads(recent.stdout)["sessions"]) == 2  # the old session is left out
        everything = agent_tui("replay", "--claude", "--dump", "state", cache=tmp_path, env=home)
        assert len(orjson.loads(everything.stdout)["sessions"]) == 4
        none = agent_tui(
            "replay", "--codex", "--dump", "state", cache=tmp_path, env={"CODEX_HOME": str(tmp_path / "no")}
        )
        assert none.returncode == 2 and "no such directory" in none.stderr


class TestFollow:
    def _grow(self, source: Path, target: Path, lines: int) -> None:
        content = source.read_bytes().split(b"\n")
        target.write_bytes(b"\n".join(content[:lines]) + b"\n")

    def test_appended_lines_grow_the_converted_log_as_a_prefix_of_the_full_import(
        self, tmp_path: Path
    ) -> None:
        main = V20 / "9a3e77c2-1b5d-4e2f-8a6c-3d4e5f6a7b12.jsonl"
        live = tmp_path / "live" / main.name
        live.parent.mkdir()
        self._grow(main, live, 4)
        follower = ForeignFollower([SourceFile(live, "claude-code")], tmp_path / "out")
        (tmp_path / "out").mkdir()
        follower.catch_up()
        log = tmp_path / "out" / "sess_9a3e77c2-1b5d-4e2f-8a6c-3d4e5f6a7b12.jsonl"
        sizes = [log.stat().st_size]
        for lines in (8, 12, 17):
            self._grow(main, live, lines)
            follower.catch_up()
            sizes.append(log.stat().st_size)
        assert sizes == sorted(sizes) and len(set(sizes)) == 4
        import_path(live, tmp_path / "batch")
        assert (tmp_path / "batch" / log.name).read_bytes().startswith(log.read_bytes())

    def test_the_follower_thread_converts_lines_as_they_are_appended(self, tmp_path: Path) -> None:
        main = V1 / "5f0c2a51-7d1e-4b8a-9c3f-2e6d8a1b4c01.jsonl"
        live = tmp_path / "live" / main.name
        live.parent.mkdir()
        self._grow(main, live, 2)
        (tmp_path / "out").mkdir()
        updated = threading.Event()
        follower = ForeignFollower([SourceFile(live, "claude-code")], tmp_path / "out", on_update=updated.set)
        follower.catch_up()
        updated.clear()
        follower.start()
        try:
            self._grow(main, live, 6)
            assert updated.wait(20), "the follower did not convert the appended lines"
        finally:
            follower.stop()
        types = [e.type for e in events_of(tmp_path / "out")]
        assert types.count("tool.completed") == 1


class TestFollowCompanions:
    def test_a_sub_agent_log_that_appears_beside_a_followed_session_joins(self, tmp_path: Path) -> None:
        session = "c4d5e6f7-8a9b-4c0d-9e1f-2a3b4c5d6e23"
        live = tmp_path / "project"
        live.mkdir()
        shutil.copy(V21 / f"{session}.jsonl", live)
        (tmp_path / "out").mkdir()
        main = live / f"{session}.jsonl"
        follower = ForeignFollower([SourceFile(main, "claude-code")], tmp_path / "out", roots=[main])
        follower.catch_up()
        assert [p.name for p in (tmp_path / "out").glob("*.jsonl")] == [f"sess_{session}.jsonl"]
        shutil.copytree(V21 / session, live / session)  # the sub-agent starts writing its own log
        assert follower.catch_up() > 0
        child = tmp_path / "out" / f"sess_{session}_agent-a7f3c2.jsonl"
        created = orjson.loads(child.read_bytes().split(b"\n")[0])
        assert created["payload"]["agentName"] == "general-purpose"
        assert follower.catch_up() == 0  # nothing new: nothing written, nothing read again


class TestScrubberLooks:
    def test_an_imported_session_with_its_sub_agent(self, snap_compare, tmp_path: Path) -> None:
        import_path(V21, tmp_path)
        files = sorted(tmp_path.glob("*.jsonl"))

        # The parent selected: its notes (kept records, dimmed), the delivery, the child in the tree.
        assert snap_compare(ReplayApp(files), terminal_size=(110, 40), run_before=settle)


class TestWrittenLogs:
    def test_every_written_line_is_the_canonical_json_of_its_event(self, tmp_path: Path) -> None:
        # The import writes its lines without building `Event`s; they must be the bytes that
        # `Event.to_json()` gives, so readers and `--dump events` agree with the files.
        import_path(V20, tmp_path)
        for log in sorted(tmp_path.glob("*.jsonl")):
            events = [e for e in events_of(tmp_path) if f"{e.session_id}.jsonl" == log.name]
            assert log.read_bytes() == b"".join(e.to_json() + b"\n" for e in events)

    def test_the_reducer_counts_kept_records_and_collapses_thinking(self, tmp_path: Path) -> None:
        import_path(V20, tmp_path)
        events = events_of(tmp_path)
        state = project_state(events)
        main = state.sessions["sess_9a3e77c2-1b5d-4e2f-8a6c-3d4e5f6a7b12"]
        kept = sum(1 for e in events if e.type == "source.record" and e.session_id == main.session_id)
        assert main.source_records == kept > 0
        notes = [m.text for m in main.turns[0].transcript if m.role == "note"]
        assert "thinking… (57 characters)" in notes
        assert "claude-code system.api_error" in notes


class TestReadingLines:
    @settings(max_examples=200, deadline=None)
    @given(
        data=st.lists(st.sampled_from([b"{}", b"a", b"\n", b"\r\n", b" ", b"\xff"]), max_size=40),
        size=st.integers(1, 9),
    )
    def test_blocks_split_into_the_lines_a_binary_file_gives(self, data: list[bytes], size: int) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "log.jsonl"
            path.write_bytes(b"".join(data))
            with path.open("rb") as handle:
                expected = list(enumerate(handle, 1))
            with path.open("rb", buffering=0) as handle:
                lines = SourceLines(handle, block_size=size)
                got = [(number, bytes(line)) for number, line in lines]
        torn = [line for _, line in expected if not line.endswith(b"\n")]
        assert got == [(number, line) for number, line in expected if line.endswith(b"\n")]
        assert lines.tail == (torn[0] if torn else b"")
        assert lines.next_number == len(expected) + (0 if torn else 1)

    def test_blank_lines_crlf_and_a_line_longer_than_a_block_import_as_their_lines_fed_one_by_one(
        self, tmp_path: Path
    ) -> None:
        main = next(V20.glob("9a3e*.jsonl"))
        *lines, torn = main.read_bytes().split(b"\n")
        record = orjson.loads(lines[3])
        record["padding"] = "é→" * BLOCK_SIZE  # three blocks of UTF-8
        lines[3] = orjson.dumps(record)
        lines[5] += b"\r"
        lines[6:6] = [b"", b"  \t\r"]
        source = tmp_path / "src" / main.name
        source.parent.mkdir()
        source.write_bytes(b"\n".join([*lines, torn]))
        report = import_path(source, tmp_path / "out")

        importer = ClaudeCodeImporter(str(source))
        events = [e for n, line in enumerate(lines, 1) if line.strip() for e in importer.feed(n, line)]
        events += importer.finish()
        written = tree_bytes(tmp_path / "out")
        assert written == {
            f"{session}.jsonl": b"".join(e.to_json() + b"\n" for e in events if e.session_id == session)
            for session in {e.session_id for e in events}
        }
        assert report.warnings[:-1] == importer.warnings
        assert report.warnings[-1].startswith(f"{source}:{len(lines) + 1}: torn final line")


class TestIds:
    @settings(max_examples=500, deadline=None)
    @given(st.text(alphabet="ab9_.- /\n\u00e9\u212a", max_size=12))
    def test_an_id_part_is_its_safe_runs_joined_by_dashes(self, source_id: str) -> None:
        # The rule: every run of characters outside [A-Za-z0-9_.-] becomes '-', dashes at the
        # ends go, and an empty result is 'x' (an id that is already safe comes back as it is).
        expected = re.sub(r"[^A-Za-z0-9_.-]+", "-", source_id).strip("-") or "x"
        assert safe_part(source_id) == expected

    def test_a_uuid_is_kept_and_unsafe_characters_are_replaced(self) -> None:
        assert safe_part("b3e1c0de-0001-4000-8000-000000000001") == "b3e1c0de-0001-4000-8000-000000000001"
        assert safe_part("-a b/c-") == "a-b-c"
        assert safe_part("\u00e9") == "x"


@pytest.mark.anyio
class TestFollowInTheScrubber:
    async def test_the_scrubber_shows_lines_appended_to_a_claude_code_log(
        self, tmp_path: Path, monkeypatch
    ) -> None:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        main = V1 / "5f0c2a51-7d1e-4b8a-9c3f-2e6d8a1b4c01.jsonl"
        lines = main.read_bytes().split(b"\n")
        live = tmp_path / "live" / main.name
        live.parent.mkdir()
        live.write_bytes(b"\n".join(lines[:3]) + b"\n")
        with replay_inputs([live.parent], follow=True) as inputs:
            app = ReplayApp(inputs.files, follow=True, watch_dir=inputs.watch_dir)
            async with app.run_test() as pilot:
                screen = app.screen_stack[0]
                await wait_for(pilot, lambda: bool(getattr(screen, "loaded", False)), "the replay to load")
                timeline = screen.timeline  # type: ignore[attr-defined]
                before = timeline.total
                live.write_bytes(b"\n".join(lines[:12]) + b"\n")  # the tool calls and the sub-agent
                await wait_for(
                    pilot,
                    lambda: timeline.total > before and len(screen.state.sessions) == 2,  # type: ignore[attr-defined]
                    "the follower and the scrubber to catch up",
                    seconds=20,
                )
                sessions = screen.state.sessions  # type: ignore[attr-defined]
        assert timeline.total > before
        assert len(sessions) == 2  # the sub-agent's log appeared in the folder and joined


def test_a_parent_log_line_whose_message_is_not_an_object_does_not_stop_the_sub_agents_naming(
    tmp_path: Path,
) -> None:
    """A sub-agent without its `.meta.json` is named from its session's Task call; a line of that
    session's log naming `subagent_type` beside a `message` that is a string is passed over."""
    session = "c4d5e6f7-8a9b-4c0d-9e1f-2a3b4c5d6e23"
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(V21 / f"{session}.jsonl", project)
    shutil.copytree(V21 / session, project / session)
    for meta in (project / session).rglob("*.meta.json"):
        meta.unlink()
    with (project / f"{session}.jsonl").open("ab") as log:
        log.write(b'\n{"type":"assistant","message":"plain words","subagent_type":"x"}\n')
    out = tmp_path / "out"
    import_path(project, out)
    child = out / f"sess_{session}_agent-a7f3c2.jsonl"
    assert orjson.loads(child.read_bytes().split(b"\n")[0])["payload"]["agentName"] == "general-purpose"
