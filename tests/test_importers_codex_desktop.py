"""A rollout the Codex desktop app and IDE extension wrote: the context they inject as user-role
messages (the project's AGENTS.md, `<environment_context>`, `<user_instructions>`, the IDE's
open tabs around a prompt) starts no turn, and the session is named by the user's request.
Fixture: tests/sample-logs/codex-desktop/ (its README says where each shape comes from)."""

from __future__ import annotations

from pathlib import Path

from support_importers import agent_tui, events_of

from agent_tui.events.chains import chain_violations
from agent_tui.importers import CodexImporter, import_path
from agent_tui.importers.codex_words import user_request
from agent_tui.reducer import project_state

DESKTOP = Path(__file__).parent / "sample-logs" / "codex-desktop"
PROMPTS = [
    "Why are refunds for cancelled orders off by one cent?",
    "Fix it, and add a test for 0.125.",
    "Does the same bug exist in the partial refund path?",
    "Fix that one too, same way.",
    "Write a changelog entry for both fixes.",
    "Now run the slow integration suite.",
    "Skip that. Summarize what changed for the PR description.",
]


def test_seven_typed_prompts_are_seven_turns_named_by_the_first_request(tmp_path: Path) -> None:
    report = import_path(DESKTOP, tmp_path)
    assert report.warnings == []
    events = events_of(tmp_path)
    assert chain_violations(events) == []
    started = [e for e in events if e.type == "turn.started"]
    assert [e.payload["promptPreview"] for e in started] == PROMPTS
    assert not any(e.payload.get("steered") for e in events if e.type == "user.message")
    [created] = [e for e in events if e.type == "session.created"]
    assert created.payload["title"] == PROMPTS[0]
    ends = [
        (e.payload["stopReason"], e.payload.get("errorCode")) for e in events if e.type == "turn.completed"
    ]
    assert ends == [("final", None)] * 5 + [("cancelled", None), ("final", None)]
    state = project_state(events)
    [session] = state.sessions.values()
    assert session.display_name == PROMPTS[0]


def test_the_injected_context_is_kept_as_source_records(tmp_path: Path) -> None:
    import_path(DESKTOP, tmp_path)
    events = events_of(tmp_path)
    records = [e for e in events if e.type == "source.record"]
    injected = [e.payload["data"] for e in records if e.payload["recordType"] == "message.user"]
    assert [item["content"][0]["text"].split("\n", 1)[0] for item in injected] == [
        "# AGENTS.md instructions for /home/dev/shop-api",
        "<environment_context>",
        "<environment_context>",
        "<user_instructions>",
    ]
    marked = [e.payload["data"] for e in records if e.payload["recordType"] == "event_msg.user_message"]
    assert [m["kind"] for m in marked] == ["environment_context"]
    # The IDE's state around a prompt stays in that prompt's turn, once (not once per copy).
    ide = [
        (e.turn_id, e.payload["data"]["text"]) for e in records if e.payload["recordType"] == "ide_context"
    ]
    assert [turn for turn, _ in ide] == ["turn_0", "turn_2", "turn_4"]
    assert all(text.startswith("# Context from my IDE setup:") for _, text in ide)
    assert "## Open tabs:\n- partial.py: src/partial.py" in ide[1][1]
    assert not any("My request for Codex" in text for _, text in ide)
    said = [e.payload["content"] for e in events if e.type == "user.message"]
    assert said == PROMPTS  # no context reaches the conversation


def test_the_dump_reads_the_requests_only(tmp_path: Path) -> None:
    result = agent_tui("replay", str(DESKTOP), "--dump", "transcript", cache=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Context from my IDE setup" not in result.stdout and "AGENTS.md" not in result.stdout
    assert result.stdout.count('"role":"user"') == 7


def test_how_a_user_message_splits_into_request_and_context() -> None:
    ide = "# Context from my IDE setup:\n\n## Open tabs:\n- a.py: a.py\n\n## My request for Codex:\nfix a\nand b\n"
    assert user_request(ide) == (
        "fix a\nand b",
        "# Context from my IDE setup:\n\n## Open tabs:\n- a.py: a.py",
    )
    assert user_request("# Context from my IDE setup:\n\n## Open tabs:\n- a.py: a.py\n") == (
        "",
        "# Context from my IDE setup:\n\n## Open tabs:\n- a.py: a.py\n",
    )
    parts = [
        {"type": "input_text", "text": "<environment_context>\n</environment_context>"},
        {"type": "input_text", "text": "the real question"},
    ]
    assert user_request(parts) == ("the real question", "<environment_context>\n</environment_context>")
    assert user_request("  <user_instructions>x</user_instructions>") == (
        "",
        "  <user_instructions>x</user_instructions>",
    )
    # A prompt that only quotes a marker further down is the user's own words.
    assert (
        user_request("why does <environment_context> appear?")[0] == "why does <environment_context> appear?"
    )


def test_fed_line_by_line_the_copies_of_each_prompt_make_one_turn() -> None:
    importer = CodexImporter("desktop.jsonl")
    [log] = sorted(DESKTOP.rglob("*.jsonl"))
    lines = []
    for number, raw in enumerate(log.read_bytes().splitlines(keepends=True), start=1):
        lines += importer.feed_lines(number, raw)
    lines += importer.finish_lines()
    assert importer.counts.prompts == 7
