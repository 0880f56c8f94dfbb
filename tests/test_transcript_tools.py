"""What a real model is given: tool calls folded into the transcript, the preflight, the system prompt."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from support_events import build_event

from agent_tui.engine.context import ContextBuilder, TranscriptBuilder
from agent_tui.engine.provider import ModelMessage, ToolCall
from agent_tui.providers.prompt import INSTRUCTIONS_LIMIT, project_instructions, system_prompt


def fold(*specs: tuple[str, dict]) -> TranscriptBuilder:
    builder = TranscriptBuilder()
    for sequence, (kind, fields) in enumerate(specs, start=2):
        builder.apply(build_event(sequence, kind, **fields))
    return builder


STEP_WITH_TWO_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("user.message", {"content": "look around", "inputId": None, "steered": None}),
    ("context.built", {"step": 1}),
    ("model.delta", {"text": "Let me "}),
    ("model.delta", {"text": "look."}),
    ("model.tool_call_requested", {"toolCallId": "call_a", "tool": "list_dir", "args": {"path": "."}}),
    ("model.tool_call_requested", {"toolCallId": "call_b", "tool": "read_file", "args": {"path": "x"}}),
    ("permission.requested", {"toolCallId": "call_a", "tool": "list_dir"}),
    ("tool.completed", {"toolCallId": "call_a", "tool": "list_dir", "result": "x\n"}),
    (
        "tool.failed",
        {"toolCallId": "call_b", "tool": "read_file", "errorCode": "not_found", "message": "x: gone"},
    ),
    ("context.built", {"step": 2}),
    ("model.delta", {"text": "Done."}),
)


class TestToolCallsInTheTranscript:
    def test_an_assistant_message_carries_its_steps_calls_before_their_results(self) -> None:
        messages = fold(*STEP_WITH_TWO_CALLS).messages
        assert messages == [
            ModelMessage("user", "look around"),
            ModelMessage(
                "assistant",
                "Let me look.",
                tool_calls=(
                    ToolCall("list_dir", {"path": "."}, "call_a"),
                    ToolCall("read_file", {"path": "x"}, "call_b"),
                ),
            ),
            ModelMessage("tool", "x\n", "call_a", "list_dir"),
            ModelMessage("tool", "error (not_found): x: gone", "call_b", "read_file"),
            ModelMessage("assistant", "Done."),
        ]

    def test_a_step_with_calls_and_no_text_gets_an_empty_assistant_message(self) -> None:
        messages = fold(
            ("user.message", {"content": "go", "inputId": None, "steered": None}),
            ("context.built", {"step": 1}),
            ("model.tool_call_requested", {"toolCallId": "call_a", "tool": "list_dir", "args": {}}),
            ("tool.completed", {"toolCallId": "call_a", "tool": "list_dir", "result": "ok"}),
        ).messages
        assert messages[1] == ModelMessage("assistant", "", tool_calls=(ToolCall("list_dir", {}, "call_a"),))

    def test_the_fold_is_the_same_however_often_the_messages_are_read(self) -> None:
        once = fold(*STEP_WITH_TWO_CALLS)
        stepwise = TranscriptBuilder()
        for sequence, (kind, fields) in enumerate(STEP_WITH_TWO_CALLS, start=2):
            stepwise.apply(build_event(sequence, kind, **fields))
            _ = stepwise.messages  # reading in between must not change the result
        assert stepwise.messages == once.messages
        assert stepwise.tokens == once.tokens

    def test_tool_calls_count_toward_the_estimate(self) -> None:
        without = fold(*STEP_WITH_TWO_CALLS[:4])
        with_calls = fold(*STEP_WITH_TWO_CALLS[:6])
        assert with_calls.tokens > without.tokens


class TestPreflight:
    def test_without_a_report_it_is_the_estimate(self) -> None:
        transcript = fold(*STEP_WITH_TWO_CALLS)
        builder = ContextBuilder("system text")
        assert builder.preflight(transcript) == builder.estimate_tokens(transcript.tokens)

    def test_a_reported_count_plus_what_was_added_since_is_used_when_larger(self) -> None:
        transcript = fold(*STEP_WITH_TWO_CALLS[:6])
        builder = ContextBuilder("system text")
        sent = transcript.tokens
        transcript.record_prompt_tokens(5_000, sent)
        for sequence, (kind, fields) in enumerate(STEP_WITH_TWO_CALLS[6:], start=20):
            transcript.apply(build_event(sequence, kind, **fields))
        added = transcript.tokens - sent
        assert added > 0
        got = builder.preflight(transcript)
        assert got.total == 5_000 + added
        assert (got.instruction, got.tools) == (
            builder.estimate_tokens(0).instruction,
            builder.estimate_tokens(0).tools,
        )

    def test_a_report_below_the_estimate_never_lowers_it(self) -> None:
        transcript = fold(*STEP_WITH_TWO_CALLS)
        builder = ContextBuilder("system text")
        transcript.record_prompt_tokens(1, transcript.tokens)
        assert builder.preflight(transcript) == builder.estimate_tokens(transcript.tokens)

    def test_compaction_forgets_the_report(self) -> None:
        transcript = fold(*STEP_WITH_TWO_CALLS)
        transcript.record_prompt_tokens(90_000, transcript.tokens)
        transcript.apply(build_event(40, "context.compacted", summary="short"))
        assert transcript.reported is None


class TestSystemPrompt:
    def test_names_the_directory_the_tools_and_the_rules(self, tmp_path: Path) -> None:
        tools = [{"name": "list_dir", "description": "List a directory. More words.", "input_schema": {}}]
        text = system_prompt(tmp_path, tools)
        assert str(tmp_path.resolve()) in text
        assert "- list_dir: List a directory." in text and "More words" not in text
        assert "approval" in text and "outside it" in text
        assert system_prompt(tmp_path, tools) == text

    def test_agents_md_is_read_and_claude_md_only_without_it(self, tmp_path: Path) -> None:
        (tmp_path / "CLAUDE.md").write_text("Use tabs.")
        assert "Use tabs." in system_prompt(tmp_path, [])
        (tmp_path / "AGENTS.md").write_text("Run make test before you finish.")
        text = system_prompt(tmp_path, [])
        assert "from AGENTS.md" in text and "Run make test" in text and "Use tabs." not in text

    def test_an_instruction_file_that_leads_outside_the_directory_is_not_read(self, tmp_path: Path) -> None:
        secret = tmp_path / "secret.txt"
        secret.write_text("TOP SECRET")
        cwd = tmp_path / "project"
        cwd.mkdir()
        os.symlink(secret, cwd / "AGENTS.md")
        found = project_instructions(cwd)
        assert found.text is None and found.warning is not None and "AGENTS.md not read" in found.warning
        assert "TOP SECRET" not in system_prompt(cwd, [])

    def test_a_long_instruction_file_is_clipped_and_says_so(self, tmp_path: Path) -> None:
        (tmp_path / "AGENTS.md").write_text("x" * (INSTRUCTIONS_LIMIT + 10))
        text = system_prompt(tmp_path, [])
        assert f"cut off after {INSTRUCTIONS_LIMIT:,} characters" in text
        assert "x" * (INSTRUCTIONS_LIMIT + 1) not in text
