"""The context Codex injects as user-role messages never starts a turn: the desktop app's and
the CLI's rollouts hold the user's typed prompts as turns, and nothing else.

Fixture: tests/sample-logs/codex-context/ (its README says where each shape comes from).
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from support_importers import events_of

from agent_tui.events.chains import chain_violations
from agent_tui.importers import CodexImporter, import_path
from agent_tui.importers.codex_words import user_request

CONTEXT = Path(__file__).parent / "sample-logs" / "codex-context"
PROMPTS = [
    "Use $release-notes to draft notes for the refund fix.",
    "Ask a helper to check the partial refund path, then run the slow suite.",
    "Summarize what changed for the PR description.",
]
INJECTED = [
    "# AGENTS.md instructions for /home/dev/shop-api",
    "<environment_context>",
    "<skill>",
    "<subagent_notification>",
    "Warning: apply_patch was requested via exec_command. Use the apply_patch tool instead of exec_command.",
    "<turn_aborted>",
    "<environment_context>",
    "<EXTENSION_CONTEXT>",
    '<hook_prompt hook_run_id="stop-1">Also mention the new test.</hook_prompt>',
]


def _rollout() -> Path:
    [log] = CONTEXT.rglob("*.jsonl")
    return log


def _turns(events: list) -> list[tuple[str | None, str, str | None]]:
    started = {e.turn_id: e.payload["promptPreview"] for e in events if e.type == "turn.started"}
    return [
        (e.turn_id, started[e.turn_id], e.payload["stopReason"]) for e in events if e.type == "turn.completed"
    ]


def test_a_rollout_with_injected_context_has_exactly_the_users_turns(tmp_path: Path) -> None:
    report = import_path(CONTEXT, tmp_path)
    assert report.warnings == []
    events = events_of(tmp_path)
    assert chain_violations(events) == []
    assert _turns(events) == [
        ("turn_t1", PROMPTS[0], "final"),
        ("turn_t2", PROMPTS[1], "cancelled"),
        ("turn_t3", PROMPTS[2], "final"),
    ]
    said = [e.payload for e in events if e.type == "user.message"]
    assert said == [{"content": prompt} for prompt in PROMPTS]  # nothing steered, nothing injected


def test_the_injected_context_is_kept_where_it_came(tmp_path: Path) -> None:
    import_path(CONTEXT, tmp_path)
    kept = [
        (e.turn_id, e.payload["data"]["content"][0]["text"].split("\n", 1)[0])
        for e in events_of(tmp_path)
        if e.type == "source.record" and e.payload["recordType"] == "message.user"
    ]
    assert [text for _, text in kept] == INJECTED
    turns = [turn for turn, _ in kept]
    assert turns == [None, None, "turn_t1", "turn_t2", "turn_t2", None, None, "turn_t3", "turn_t3"]


def test_without_turn_markers_the_context_starts_no_turn_either(tmp_path: Path) -> None:
    # Older releases wrote no task_started: a user message was the only sign of a new turn.
    live = tmp_path / "rollout-2026-12-01T10-00-00-019ad0e1-2b3c-7d4e-8f50-6a7b8c9d0e12.jsonl"
    kept = [
        line
        for line in _rollout().read_bytes().splitlines(keepends=True)
        if orjson.loads(line)["payload"].get("type") not in ("task_started", "task_complete")
    ]
    live.write_bytes(b"".join(kept))
    import_path(live, tmp_path / "out")
    events = events_of(tmp_path / "out")
    assert [prompt for _, prompt, _ in _turns(events)] == PROMPTS
    assert [e.payload["content"] for e in events if e.type == "user.message"] == PROMPTS


def test_a_turn_codex_started_on_context_alone_has_an_empty_prompt_and_no_warning() -> None:
    # A sub-agent's notification can wake an idle parent: Codex marks the turn, no one typed.
    lines = [
        {"type": "session_meta", "payload": {"id": "t-1", "cwd": "/w"}},
        {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t9"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<subagent_notification>\n{}\n</subagent_notification>"}
                ],
            },
        },
        {"type": "event_msg", "payload": {"type": "agent_message", "message": "The helper is done."}},
        {"type": "event_msg", "payload": {"type": "task_complete", "turn_id": "t9"}},
    ]
    importer = CodexImporter("x.jsonl")
    events = []
    for number, line in enumerate(lines, 1):
        events += importer.feed(number, orjson.dumps({"timestamp": "2026-12-01T10:00:00.000Z", **line}))
    events += importer.finish()
    assert importer.warnings == []
    assert _turns(events) == [("turn_t9", "", "final")]
    assert importer.counts.prompts == 0


@pytest.mark.parametrize(
    "text", INJECTED + ["  <Turn_Aborted>\nx\n</turn_aborted>", "<external_docs>x</external_docs>"]
)
def test_each_marker_is_context_not_a_request(text: str) -> None:
    assert user_request([{"type": "input_text", "text": text}]) == ("", text)


@pytest.mark.parametrize(
    "text",
    ["Warning: the tests are slow", "<skills> are what I want to learn", "What does <turn_aborted> mean?"],
)
def test_words_that_only_look_like_a_marker_are_a_request(text: str) -> None:
    assert user_request([{"type": "input_text", "text": text}]) == (text, "")


def test_an_unknown_record_type_is_reported_once_per_log() -> None:
    importer = CodexImporter("x.jsonl")
    importer.feed(
        1,
        orjson.dumps(
            {"timestamp": "2026-12-01T10:00:00.000Z", "type": "session_meta", "payload": {"id": "t"}}
        ),
    )
    for number in range(2, 50):
        line = {
            "timestamp": "2026-12-01T10:00:00.000Z",
            "type": "event_msg",
            "payload": {"type": "thread_goal"},
        }
        importer.feed(number, orjson.dumps(line))
    assert importer.warnings == [
        "x.jsonl:2: unsupported Codex record 'event_msg.thread_goal' (kept as source-specific)"
    ]
