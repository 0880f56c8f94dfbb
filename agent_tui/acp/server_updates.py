"""Our stored events as ACP session updates: what `agent-tui acp` tells its client.

One `UpdateTranslator` per session turns events into updates, live (during `session/prompt`)
and when a session is loaded (`session/load` replays the whole log, `history=True`).

Invariants:
- a tool call is announced once (`tool_call`, status `pending`) and then only updated
  (`tool_call_update`): `in_progress` when it starts, its output so far while it streams
  (`content` replaces, so each update carries the output up to now, its last `OUTPUT_CHARS`),
  `completed` or `failed` with the result or the message at its end;
- the user's own prompt is not echoed live (the client sent it); in history it is a
  `user_message_chunk`;
- events with no ACP equivalent (context, permissions, sub-agent deliveries, turn bounds) give
  no update: the client sees their effect (a tool call that fails `permission_denied`, the
  prompt's stop reason), and our log keeps them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import AgentMessageChunk, ToolCallLocation, ToolCallProgress, ToolCallStart, UserMessageChunk

from agent_tui.acp.mapping import kind_for_tool
from agent_tui.engine.tools.router import ToolRouter
from agent_tui.events import Event

OUTPUT_CHARS = 16_000
"""How much of a running tool's output each update carries (its tail)."""

ServerUpdate = AgentMessageChunk | UserMessageChunk | ToolCallStart | ToolCallProgress


class UpdateTranslator:
    """Turns one session's events into ACP session updates.

    Args:
        cwd: the session's directory (tool paths are reported to the client as absolute paths).
    """

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._output: dict[str, str] = {}

    def updates_for(self, event: Event, *, history: bool = False) -> list[ServerUpdate]:
        """The updates `event` stands for (often none)."""
        payload = event.payload
        kind = event.type
        if kind == "model.delta":
            text = payload["text"]
            return [update_agent_message_text(text)] if text else []
        if kind == "user.message":
            return [update_user_message_text(payload["content"])] if history else []
        if kind == "model.tool_call_requested":
            return [self._announce(payload["toolCallId"], payload["tool"], payload["args"])]
        if kind == "tool.started":
            self._output[payload["toolCallId"]] = ""
            return [update_tool_call(payload["toolCallId"], status="in_progress")]
        if kind == "tool.delta":
            call_id = payload["toolCallId"]
            output = (self._output.get(call_id, "") + payload["text"])[-OUTPUT_CHARS:]
            self._output[call_id] = output
            return [update_tool_call(call_id, content=[tool_content(text_block(output))])]
        if kind in ("tool.completed", "tool.failed"):
            return [self._ended(payload, failed=kind == "tool.failed")]
        return []

    def _ended(self, payload: dict[str, Any], *, failed: bool) -> ToolCallProgress:
        """A call's last update: `completed` with its result, or `failed` with its message."""
        self._output.pop(payload["toolCallId"], None)
        raw_output: dict[str, Any]
        if failed:
            text = payload["message"]
            raw_output = {"errorCode": payload["errorCode"], "message": text}
        else:
            text = payload["result"]
            raw_output = {"result": text, "truncated": payload["truncated"]}
            if payload.get("exitCode") is not None:
                raw_output["exitCode"] = payload["exitCode"]
        return update_tool_call(
            payload["toolCallId"],
            status="failed" if failed else "completed",
            content=[tool_content(text_block(text))],
            raw_output=raw_output,
        )

    def _announce(self, call_id: str, tool: str, args: dict[str, Any]) -> ToolCallStart:
        path = args.get("path")
        locations = (
            [ToolCallLocation(path=str((self.cwd / path).resolve()))] if isinstance(path, str) else None
        )
        return start_tool_call(
            call_id,
            tool_title(tool, args),
            kind=kind_for_tool(tool),  # type: ignore[arg-type]
            status="pending",
            locations=locations,
            raw_input=args,
        )


def tool_title(tool: str, args: dict[str, Any]) -> str:
    """`shell cmd="ls src"`: the tool and a one-line preview of its arguments."""
    preview = ToolRouter.preview(args)
    return f"{tool} {preview}" if preview else tool
