"""The words a conversation shows for events that are not plain text, said once.

Invariants:
- the model (the engine's transcript), `replay --dump transcript` and anything else that turns
  events into conversation text use these functions, so a failed tool or a sub-agent's result
  reads the same everywhere;
- `context_tokens_total` is the one sum of a `context.built` event's token parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def tool_failure_text(payload: Mapping[str, Any]) -> str:
    """A `tool.failed` as the model and the transcript see it: `error (timeout): …`."""
    return f"error ({payload['errorCode']}): {payload['message']}"


def delivery_text(payload: Mapping[str, Any]) -> str:
    """A `subagent.delivered` as its parent sees it: `[sub-agent explorer (sess_…) completed] …`."""
    return (
        f"[sub-agent {payload['agentName']} ({payload['childSessionId']}) {payload['status']}] "
        f"{payload['text']}"
    )


def rewind_text(payload: Mapping[str, Any]) -> str:
    """A `turn.rewound` as the model sees it, so it does not rely on files it wrote that are gone:
    `[the user rewound turn turn_…: restored a.txt, removed b.txt; not undone: …]`."""
    files = (
        ", ".join(f"{item['action']} {item['path']}" for item in payload["files"]) or "no file had changed"
    )
    incomplete = payload.get("incomplete")
    tail = f"; not undone: {incomplete}" if incomplete else ""
    return (
        f"[the user rewound turn {payload['rewoundTurnId']}: the files it changed are back as they "
        f"were before it ({files}){tail}]"
    )


def context_tokens_total(tokens: Mapping[str, int]) -> int:
    """Instruction, transcript and tool tokens of one model call, added up."""
    return tokens["instruction"] + tokens["transcript"] + tokens["tools"]
