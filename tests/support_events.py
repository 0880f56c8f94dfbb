"""Builders of valid events and session logs, shared by the tests (conftest.py turns them into fixtures).

`SAMPLE_PAYLOADS` holds one valid payload per event type with every optional field filled in;
`build_event` and `build_session` give events that pass validation and follow the log's chains.
"""

from __future__ import annotations

from typing import Any

from agent_tui.events import Event, payload_from

# One valid payload per event type, every optional field filled in.
SAMPLE_PAYLOADS: dict[str, dict[str, Any]] = {
    "session.created": {
        "cwd": "/work/demo",
        "client": "tests",
        "parentSessionId": "sess_parent",
        "agentName": "explorer",
        "title": "lead",
        "provider": "openai",
        "model": "gpt-4.1-mini",
        "worktree": {"path": "/work/demo/.agent-tui/worktrees/x", "branch": "agent/x"},
        "budget": {"usd": 2.5, "tokens": 500000},
    },
    "turn.started": {"promptPreview": "Rename src/foo.py to bar.py"},
    "user.message": {"content": "Rename src/foo.py to bar.py", "inputId": "in_1", "steered": True},
    "context.built": {
        "step": 1,
        "tokens": {"instruction": 120, "transcript": 3400, "tools": 800},
        "maxContextTokens": 8000,
    },
    "context.compacted": {"step": 2, "beforeTokens": 9000, "afterTokens": 2100, "summary": "so far"},
    "model.delta": {"text": "I'll check first. ✓"},
    "model.tool_call_requested": {
        "toolCallId": "call_1",
        "tool": "shell",
        "args": {"cmd": "ls src", "timeoutMs": 500},
    },
    "permission.requested": {
        "requestId": "perm_1",
        "toolCallId": "call_1",
        "tool": "shell",
        "risk": "destructive",
        "argsPreview": "mv src/foo.py src/bar.py",
        "reason": "mv: moves over a file",
        "warning": "overwrites src/bar.py",
        "options": [
            {"optionId": "allow-once", "name": "Yes", "kind": "allow_once"},
            {"optionId": "reject", "name": "No", "kind": "reject_once"},
        ],
    },
    "permission.resolved": {
        "requestId": "perm_1",
        "toolCallId": "call_1",
        "decision": "allow",
        "actor": "user",
        "policy": "default",
        "reason": "looks fine",
        "remember": "session",
        "by": {"dashboard": "laptop", "user": "ana", "host": "laptop-machine"},
    },
    "tool.started": {"toolCallId": "call_1", "tool": "shell", "argsPreview": "ls src"},
    "tool.delta": {"toolCallId": "call_1", "stream": "stderr", "text": "foo.py\n"},
    "tool.completed": {
        "toolCallId": "call_1",
        "tool": "shell",
        "result": "foo.py\n",
        "exitCode": 0,
        "truncated": False,
    },
    "tool.failed": {
        "toolCallId": "call_2",
        "tool": "write_file",
        "errorCode": "permission_denied",
        "message": "denied by the user",
    },
    "subagent.delivered": {
        "childSessionId": "sess_child",
        "agentName": "explorer",
        "status": "completed",
        "text": "Found 3 files.",
    },
    "turn.completed": {
        "stopReason": "error",
        "errorCode": "provider_failure",
        "usage": {
            "promptTokens": 4200,
            "completionTokens": 120,
            "cachedTokens": 4000,
            "cacheWriteTokens": 200,
            "costUsd": 0.0031,
        },
        "message": "401 Unauthorized: invalid api key",
    },
    "model.retry": {"attempt": 1, "delayMs": 2000, "reason": "429 Too Many Requests"},
    "source.record": {"format": "claude-code", "recordType": "summary", "data": {"summary": "x"}},
    "turn.rewound": {
        "rewoundTurnId": "turn_1",
        "files": [{"path": "a.txt", "action": "restored"}, {"path": "b.txt", "action": "removed"}],
        "incomplete": "1 shell command ran in this turn",
    },
    "model.usage": {
        "step": 1,
        "promptTokens": 4200,
        "completionTokens": 120,
        "cachedTokens": 4000,
        "cacheWriteTokens": 200,
        "costUsd": 0.0031,
    },
    "session.budget": {"usd": 5, "tokens": 1000000, "by": "laptop"},
}

# The event types of one ordinary turn, in log order (after `session.created`).
TURN_TYPES = (
    "turn.started",
    "user.message",
    "context.built",
    "model.delta",
    "model.delta",
    "model.tool_call_requested",
    "permission.requested",
    "permission.resolved",
    "tool.started",
    "tool.delta",
    "tool.completed",
    "context.built",
    "model.delta",
    "turn.completed",
)


def build_event(
    sequence: int,
    type_name: str = "model.delta",
    *,
    session_id: str = "sess_test",
    turn_id: str | None = "turn_1",
    **fields: Any,
) -> Event:
    """A valid event: the sample payload of `type_name`, with `fields` overriding its fields."""
    payload = {**SAMPLE_PAYLOADS[type_name], **fields}
    return Event(
        id=f"evt_{session_id}_{sequence}",
        session_id=session_id,
        turn_id=None if type_name == "session.created" else turn_id,
        sequence=sequence,
        ts=f"2026-11-29T22:{sequence // 60 % 60:02d}:{sequence % 60:02d}.000Z",
        type=type_name,
        payload=payload_from(type_name, payload),
    )


def build_session(count: int, *, session_id: str = "sess_test", first: int = 1) -> list[Event]:
    """Events `first..first+count-1` of one session's log: `session.created`, then whole turns."""
    events = []
    for sequence in range(first, first + count):
        if sequence == 1:
            events.append(build_event(1, "session.created", session_id=session_id))
            continue
        turn, position = divmod(sequence - 2, len(TURN_TYPES))
        type_name = TURN_TYPES[position]
        fields: dict[str, Any] = {}
        if type_name == "model.delta":
            fields["text"] = f"chunk {sequence} of turn {turn} "
        events.append(
            build_event(
                sequence,
                type_name,
                session_id=session_id,
                turn_id=f"turn_{turn + 1}",
                **fields,
            )
        )
    return events
