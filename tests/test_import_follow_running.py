"""A turn in progress in a followed (still growing) log is running, never failed: polls that find
nothing new, or a tool call waiting for its result, leave it open; it ends when its source says
so. Only a log known to be finished (`ForeignTail.finish()`, or the import of a finished file)
closes what is still open.

Real files appended to between polls, converted by `ForeignTail` / `ForeignFollower`.
"""

from __future__ import annotations

import threading
from pathlib import Path

import orjson
from support_importers import events_of

from agent_tui.events.chains import chain_violations
from agent_tui.importers import import_path
from agent_tui.importers.convert import SessionLogWriter, SourceFile
from agent_tui.importers.follow import ForeignFollower, ForeignTail
from agent_tui.reducer import project_state

CLAUDE_SESSION = "11111111-2222-4333-8444-555555555555"
CODEX_THREAD = "019ad0e1-0000-7d4e-8f50-6a7b8c9d0e99"


def _claude(kind: str, uuid: str, second: int, **fields: object) -> dict:
    return {
        "type": kind,
        "sessionId": CLAUDE_SESSION,
        "cwd": "/w",
        "uuid": uuid,
        "timestamp": f"2026-12-06T10:00:{second:02d}.000Z",
        **fields,
    }


PROMPT = _claude("user", "u1", 1, message={"role": "user", "content": "list the files"})
CALL = _claude(
    "assistant",
    "a1",
    2,
    message={
        "id": "m1",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}],
        "usage": {"input_tokens": 10, "output_tokens": 5},
    },
)
RESULT = _claude(
    "user",
    "u2",
    9,
    message={
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}],
    },
)
ANSWER = _claude(
    "assistant",
    "a2",
    10,
    message={
        "id": "m2",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "One file: a.py."}],
    },
)
NEXT = _claude("user", "u3", 20, message={"role": "user", "content": "and the tests?"})


def _append(path: Path, *records: dict, partial: bytes = b"") -> None:
    with path.open("ab") as handle:
        handle.write(b"".join(orjson.dumps(record) + b"\n" for record in records) + partial)


def _status(out: Path) -> tuple[str, list[str | None]]:
    """The session's status and its turns' stop reasons, as the dashboard folds our logs."""
    events = events_of(out)
    assert chain_violations(events, complete=False) == []  # a followed log may end mid-turn
    [session] = [s for s in project_state(events).sessions.values() if s.parent_session_id is None]
    return session.status, [turn.stop_reason for turn in session.turns]


class TestClaudeCode:
    def test_a_turn_waiting_for_its_tool_stays_running_until_its_source_ends_it(self, tmp_path: Path) -> None:
        live, out = tmp_path / f"{CLAUDE_SESSION}.jsonl", tmp_path / "out"
        out.mkdir()
        writer = SessionLogWriter(out, truncate=False)
        tail = ForeignTail(SourceFile(live, "claude-code"), writer)
        _append(live, PROMPT, CALL)
        assert tail.poll() > 0
        assert _status(out) == ("running", [None])
        for _ in range(3):  # a long wait: polls that find nothing end nothing
            assert tail.poll() == 0
        _append(live, RESULT, partial=orjson.dumps(ANSWER)[:40])  # the answer half written
        assert tail.poll() > 0
        assert _status(out) == ("running", [None])
        events = events_of(out)
        assert [e.type for e in events if e.type.startswith("tool.")] == ["tool.started", "tool.completed"]
        _append(live, partial=orjson.dumps(ANSWER)[40:] + b"\n")
        tail.poll()
        assert _status(out) == ("running", [None])  # answered, but Claude Code may go on
        _append(live, NEXT)
        tail.poll()
        assert _status(out) == ("running", ["final", None])  # the next prompt ended the first
        writer.close()
        assert tail.importer.warnings == []

    def test_finish_closes_what_is_open_as_an_import_of_the_finished_file_does(self, tmp_path: Path) -> None:
        live, out = tmp_path / f"{CLAUDE_SESSION}.jsonl", tmp_path / "out"
        out.mkdir()
        writer = SessionLogWriter(out, truncate=False)
        tail = ForeignTail(SourceFile(live, "claude-code"), writer)
        _append(live, PROMPT, CALL)
        tail.poll()
        assert _status(out) == ("running", [None])
        assert tail.finish() > 0  # the CLI was killed mid-call: the turn is cut off
        assert _status(out) == ("failed", ["error"])
        writer.flush()
        import_path(live, tmp_path / "batch")  # the same file, not followed: closed the same way
        assert (tmp_path / "batch" / f"sess_{CLAUDE_SESSION}.jsonl").read_bytes() == (
            out / f"sess_{CLAUDE_SESSION}.jsonl"
        ).read_bytes()
        _append(live, RESULT)
        assert tail.poll() == 0 and tail.finish() == 0  # nothing is read after the end
        writer.close()

    def test_the_follower_thread_keeps_a_running_turn_open_and_stop_leaves_it_so(
        self, tmp_path: Path
    ) -> None:
        live, out = tmp_path / "project" / f"{CLAUDE_SESSION}.jsonl", tmp_path / "out"
        live.parent.mkdir()
        out.mkdir()
        _append(live, PROMPT)
        updated = threading.Event()
        follower = ForeignFollower([SourceFile(live, "claude-code")], out, on_update=updated.set)
        follower.catch_up()
        updated.clear()
        follower.start()
        try:
            _append(live, CALL)
            assert updated.wait(20), "the follower did not convert the appended lines"
            assert _status(out) == ("running", [None])
            updated.clear()
            _append(live, RESULT, ANSWER)
            assert updated.wait(20), "the follower did not convert the appended lines"
        finally:
            follower.stop()
        assert _status(out) == ("running", [None])
        assert not [e for e in events_of(out) if e.type == "turn.completed"]


class TestCodex:
    def _line(self, second: int, kind: str, payload: dict) -> dict:
        return {"timestamp": f"2026-12-06T10:00:{second:02d}.000Z", "type": kind, "payload": payload}

    def test_a_call_waiting_for_approval_is_running_until_task_complete(self, tmp_path: Path) -> None:
        live = tmp_path / f"rollout-2026-12-06T10-00-00-{CODEX_THREAD}.jsonl"
        out = tmp_path / "out"
        out.mkdir()
        writer = SessionLogWriter(out, truncate=False)
        tail = ForeignTail(SourceFile(live, "codex"), writer)
        call = {
            "type": "function_call",
            "name": "exec_command",
            "arguments": '{"cmd": "ls"}',
            "call_id": "c1",
        }
        _append(
            live,
            self._line(0, "session_meta", {"id": CODEX_THREAD, "cwd": "/w"}),
            self._line(1, "event_msg", {"type": "task_started", "turn_id": "t1"}),
            self._line(2, "event_msg", {"type": "user_message", "message": "list the files"}),
            self._line(3, "response_item", call),
        )
        tail.poll()
        assert _status(out) == ("running", [None])
        assert tail.poll() == 0
        assert _status(out) == ("running", [None])
        output = {"type": "function_call_output", "call_id": "c1", "output": "Exit code: 0\nOutput:\na.py"}
        _append(live, self._line(30, "response_item", output))
        tail.poll()
        assert _status(out) == ("running", [None])
        _append(
            live,
            self._line(31, "event_msg", {"type": "agent_message", "message": "One file: a.py."}),
            self._line(32, "event_msg", {"type": "task_complete", "turn_id": "t1"}),
        )
        tail.poll()
        assert _status(out) == ("completed", ["final"])
        writer.close()


def test_an_unsupported_type_is_said_once_for_all_the_logs_followed(tmp_path: Path) -> None:
    sources = []
    for index in range(3):
        session = f"11111111-2222-4333-8444-00000000000{index}"
        live = tmp_path / f"{session}.jsonl"
        prompt = {**PROMPT, "sessionId": session, "uuid": f"u{index}"}
        _append(
            live,
            prompt,
            {"type": "hologram-state", "sessionId": session},
            {"type": "tag", "sessionId": session},
        )
        sources.append(SourceFile(live, "claude-code"))
    (tmp_path / "out").mkdir()
    follower = ForeignFollower(sources, tmp_path / "out")
    follower.catch_up()
    follower.stop()
    assert follower.warnings == [
        f"{sources[0].path}:2: unsupported Claude Code record 'hologram-state' (kept as source-specific)"
    ]
    assert sum(len(tail.importer.warnings) for tail in follower.tails.values()) == 3  # each log's own
