"""The words of Claude Code's session logs: record and block types, markers, and how a block's
text reads.

Shared by the importer (`claude_code.py`); the names and texts follow what Claude Code writes
(see docs/importing.md). Changing a marker here changes how an import reads old logs.
"""

from __future__ import annotations

from typing import Any

import orjson

FORMAT = "claude-code"
CLIENT = "claude-code"
TASK_TOOLS = frozenset({"Task", "Agent"})
KNOWN_RECORDS = frozenset(
    {
        "summary",
        "ai-title",
        "custom-title",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "attachment",
        "agent-setting",
        "agent-name",
        "pr-link",
        "last-prompt",
        "tag",
        "mode",
        # Claude Code 2.1: session state it appends as it changes (the last one wins on resume)
        "ended-by-model",
        "continued-in",
        "relocated",
        "agent-color",
        "frame-link",
        "artifact-comment-monitor",
        "artifact-autoreact-ledger",
        "bridge-session",
        "history-suppression",
        "file-history-delta",
        "attribution-snapshot",
        "permission-mode",
        "isolation-latch",
        "session-owner",
        "dev-mods",
        "memory-mode",
        "atis-latch",
        "tools-used",
        "worktree-state",
        "cost-state",
        "repl-mode",
        "content-replacement",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "fork-context-ref",
        "observer-ref",
        # Claude Code 2.1.332
        "api-request-resumed",
        "data-flow-incomplete",
        "data-flow-records",
        "derived-from",
        "resume-head-vouch",
    }
)
"""The record types Claude Code writes besides `user`, `assistant` and `system` (the table its
transcript writer keeps, as of 2.1.332): kept as `source.record` without a warning, or mapped
(`cost-state`, the titles, `progress`)."""
AGENT_ROUTED = frozenset(
    {
        "content-replacement",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "api-request-resumed",
        "data-flow-incomplete",
        "data-flow-records",
        "fork-context-ref",
        "observer-ref",
    }
)
"""Records Claude Code writes into a sub-agent's own log when they carry its `agentId` (they have
no `isSidechain`): they belong to that sub-agent's session, not to the main one."""
SYSTEM_ORIGINS = frozenset({"task-notification", "auto-continuation", "observer-activity"})
"""`origin.kind`s of a user line Claude Code wrote itself to start a turn (a background agent's
notification, …); such a line also says `promptSource: "system"`, a typed one `"typed"`."""


def notice_field(text: str, tag: str) -> str | None:
    """The text of the first `<tag>…</tag>` in a `<task-notification>` (the `Agent` call that
    launched the agent it reports, `tool-use-id`; how it ended, `status`: `completed` or else;
    its answer, `result`), None when it has none. Found with `str.find`, in time linear in the
    text whatever it holds (a transcript is untrusted)."""
    start = text.find(f"<{tag}>")
    if start < 0:
        return None
    start += len(tag) + 2
    end = text.find(f"</{tag}>", start)
    return text[start:end] if end >= 0 else None


COST_STATE = "cost-state"
"""The session's running totals as Claude Code's own cost counter has them (`totalCostUSD`: the
whole session's so far, in USD), written again whenever the cost grows."""
TITLE_RECORDS = {"summary": "summary", "ai-title": "aiTitle", "custom-title": "customTitle"}
COMMAND_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-memory-input>",
)
INTERRUPTED = "[Request interrupted by user"
USER_REJECTED = ("doesn't want to proceed", "doesn't want to take this action", "User rejected")
RISK = {
    "Read": "read",
    "Glob": "read",
    "Grep": "read",
    "LS": "read",
    "NotebookRead": "read",
    "TodoWrite": "read",
    "Edit": "write",
    "MultiEdit": "write",
    "Write": "write",
    "NotebookEdit": "write",
    "WebFetch": "network",
    "WebSearch": "network",
}


def is_rejection(text: str) -> bool:
    """Whether a failed call's result says the user turned the call down."""
    for marker in USER_REJECTED:  # noqa: SIM110 - a loop is quicker than any() over a generator
        if marker in text:
            return True
    return False


def risk_for(tool: str) -> str:
    """The risk our schema needs for a denial: by the tool's kind (shell and unknown: execute)."""
    return RISK.get(tool, "execute")


def block_text(content: Any) -> str:
    """A message's or tool result's text: a string, or its text blocks joined (images noted)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else orjson.dumps(content).decode()
    parts = []
    for block in content:
        if isinstance(block, dict):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind in ("image", "document"):
                parts.append(f"[{kind}]")
        elif isinstance(block, str):
            parts.append(block)
    return "\n".join(parts)
