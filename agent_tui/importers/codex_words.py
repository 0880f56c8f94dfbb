"""The words of Codex rollouts: record and event types, injected-context markers, and how a
message's or a tool output's text reads.

Shared by the importer (`codex.py`); the names follow codex-rs's rollout and protocol types
(see docs/importing.md).
"""

from __future__ import annotations

import re
from typing import Any

import orjson

FORMAT = "codex"
CLIENT = "codex"
RESPONSE_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
        "context_compaction",
        "tool_search_call",
        "tool_search_output",
        "image_generation_call",
    }
)
KEPT_LINES = frozenset({"world_state", "token_usage_record"})
"""Line types of newer rollouts (0.17x) kept as they are: the model's world state (environments,
instructions) and each response's token usage, which the `token_count` totals also give."""
KEPT_EVENTS = frozenset(
    {
        "token_count",
        "context_compacted",
        "entered_review_mode",
        "exited_review_mode",
        "undo_completed",
        "thread_rolled_back",
        "thread_goal_updated",
        "item_completed",
        "thread_settings_applied",
        "patch_apply_end",
        "mcp_tool_call_end",
        "web_search_end",
        "image_generation_end",
        "exec_command_end",
        "view_image_tool_call",
        "collab_agent_spawn_end",
        "collab_agent_interaction_end",
        "collab_waiting_end",
        "collab_close_end",
        "collab_resume_end",
        "collab_tool_call",
        "dynamic_tool_call_request",
        "dynamic_tool_call_response",
        "guardian_assessment",
        "sub_agent_activity",
        "plan_update",
        "warning",
        "error",
        "agent_reasoning_raw_content",
    }
)
CONTEXT_PREFIXES = tuple(
    prefix.lower()
    for prefix in (
        "<environment_context>",
        "<user_instructions>",
        "# AGENTS.md",
        "<permissions",
        "<INSTRUCTIONS>",
        "<user_shell_command>",
        "<turn_aborted>",
        "<subagent_notification>",
        "<skill>",
        "<extension_context>",
        "<goal_context>",
        "<hook_prompt",
        "<external_",
        "<context_update>",
        "Warning: apply_patch was requested via ",
        "Warning: The maximum number of unified exec processes you can keep open is",
        "Warning: Your account was flagged for potentially high-risk cyber activity",
    )
)
"""How the texts Codex injects as user-role messages begin, lowercased (Codex matches them
regardless of case): the project's AGENTS.md, the sandbox and directory it runs in, a skill's
instructions, the note that the previous turn was interrupted, a sub-agent's notification to its
parent, a hook's prompt or context, and the warnings of older releases. The list follows Codex's
own (`codex-rs/core/src/context/contextual_user_message.rs`, which filters them out of the
conversation the same way): context for the model, never a prompt of the user's."""
CONTEXT_KINDS = frozenset({"user_instructions", "environment_context"})
"""The `kind`s of a `user_message` event (some releases) that mark injected context."""
IDE_CONTEXT = "# Context from my IDE setup:"
"""How the IDE extension and the desktop app begin a prompt they prefix with the editor's state
(the active file, the open tabs, a selection); the user's own words follow `IDE_REQUEST`."""
IDE_REQUEST = re.compile(r"^#{1,3} My request for Codex:[ \t]*$\n?", re.MULTILINE)


def injected_parts(item: dict[str, Any]) -> list[bool] | None:
    """Which content parts of a user message Codex says it put there itself (0.17x: each part's
    `provenance` in `internal_chat_message_metadata_passthrough`, `user` for what the user
    typed, `harness`, `tool`, `skills`, … for the rest); None when the message does not say."""
    passthrough = item.get("internal_chat_message_metadata_passthrough")
    parts = passthrough.get("content_item_metadata") if isinstance(passthrough, dict) else None
    if not isinstance(parts, list) or len(parts) != len(item.get("content") or ()):
        return None
    injected = []
    for part in parts:
        provenance = part.get("provenance") if isinstance(part, dict) else None
        kind = provenance.get("type") if isinstance(provenance, dict) else None
        injected.append(isinstance(kind, str) and kind != "user")
    return injected


def user_request(content: Any, injected: list[bool] | None = None) -> tuple[str, str]:
    """A user message's content as (what the user asked, the context injected around it).

    A part Codex marked as its own (`injected`, from `injected_parts`) is context; so is each
    text part that begins like injected context (`CONTEXT_PREFIXES`); a part
    that begins with the IDE's `# Context from my IDE setup:` is context up to `## My request for
    Codex:` and the request after it (all context when that heading is missing). The request is
    empty when the whole message was injected.
    """
    parts = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    asked: list[str] = []
    context: list[str] = []
    for index, part in enumerate(parts):
        text = content_text([part]) if isinstance(part, dict) else part if isinstance(part, str) else ""
        stripped = text.lstrip()
        if (injected is not None and index < len(injected) and injected[index]) or stripped[
            :80
        ].lower().startswith(CONTEXT_PREFIXES):
            context.append(text)
        elif stripped.startswith(IDE_CONTEXT):
            heading = IDE_REQUEST.search(stripped)
            if heading is None:
                context.append(text)
            else:
                context.append(stripped[: heading.start()].rstrip())
                asked.append(stripped[heading.end() :])
        else:
            asked.append(text)
    return "\n".join(asked).strip("\n") if any(a.strip() for a in asked) else "", "\n\n".join(context)


EXIT_CODE = re.compile(r"^(?:Exit code|Process exited with code):? (-?\d+)", re.MULTILINE)
THREAD_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
RISK = {"apply_patch": "write", "shell": "execute", "exec_command": "execute", "local_shell": "execute"}


def content_text(content: Any) -> str:
    """The text of a message's content items (`input_text`, `output_text`, …; images noted)."""
    if isinstance(content, str):
        return content
    parts = []
    for item in content if isinstance(content, list) else ():
        if isinstance(item, dict):
            text = item.get("text")
            if isinstance(text, str):
                parts.append(text)
            elif str(item.get("type", "")).endswith("image"):
                parts.append("[image]")
    return "\n".join(parts)


def unreadable(content: Any) -> bool:
    """Whether a message's content has an item `content_text` cannot read (it would be lost)."""
    if isinstance(content, str):
        return False
    if not isinstance(content, list):
        return True
    for item in content:
        if not isinstance(item, dict):
            return True
        if not isinstance(item.get("text"), str) and not str(item.get("type", "")).endswith("image"):
            return True
    return False


def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object a tool's output holds (None: no JSON, or JSON of another kind)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def output_text(output: Any) -> tuple[str, int | None, bool]:
    """A tool output as (text, exit code if recorded, failed flag)."""
    failed = False
    if isinstance(output, dict):  # {content, success} in some releases
        failed = output.get("success") is False
        output = output.get("content", output.get("output", ""))
    text = content_text(output) if not isinstance(output, str) else output
    exit_code = None
    if text.startswith("{") and '"output"' in text:  # {"output": …, "metadata": {"exit_code": …}}
        decoded = json_object(text) or {}
        if isinstance(decoded.get("output"), str):
            metadata = decoded.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            return decoded["output"], code if type(code) is int else None, failed
    match = EXIT_CODE.search(text, 0, 300)
    if match:
        exit_code = int(match.group(1))
    return text, exit_code, failed
