"""An MCP server's tool, offered to the model like a built-in one: `mcp__<server>__<tool>`.

Invariants:
- the model sees the server's own description (its first 2,000 characters) and JSON Schema; the arguments it sends go to
  the server as they are (the server validates them);
- the risk is what the user set for the tool or the server (`execute` by default); the server's
  `readOnlyHint` is shown in the reason but never lowers the risk: it is the server's claim;
- a result is text: text blocks as they are, a note for each image, audio or resource, and the
  structured content when there is no text; a result the server marks as an error fails the
  call with that text; progress notifications stream as `tool.delta` lines, none after the
  result came, and no more than the output budget (then one line saying more was not shown).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

import anyio
import anyio.lowlevel
import mcp_types
import orjson
from pydantic import BaseModel, ConfigDict

from agent_tui.engine.tools.base import RiskAssessment, ToolContext, ToolError, ToolResult
from agent_tui.events.model import Risk
from agent_tui.mcp.connection import McpServer

__all__ = ["PREFIX", "McpArgs", "McpTool", "tool_name"]

PREFIX = "mcp__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64  # the longest tool name the model APIs accept
_MAX_LINE = 500  # the longest progress line streamed
_MAX_DESCRIPTION = 2_000  # the most of a server's description the model is sent, per tool


class McpArgs(BaseModel):
    """Whatever the model sent: the server's schema, not ours, decides what is valid."""

    model_config = ConfigDict(extra="allow", frozen=True)


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, with characters model APIs refuse made `_`, cut to 64."""
    return f"{PREFIX}{server}__{_UNSAFE.sub('_', tool)}"[:_MAX_NAME]


class McpTool:
    """One tool of a running server.

    Args:
        server: the server it belongs to.
        tool: what the server said of it in `tools/list`.
    """

    Args: ClassVar[type[BaseModel]] = McpArgs

    def __init__(self, server: McpServer, tool: mcp_types.Tool) -> None:
        self.server = server
        self.tool = tool
        self.name = tool_name(server.name, tool.name)
        said = tool.description or tool.title or f"{tool.name[:_MAX_NAME]} (MCP server {server.name})"
        self.description = said if len(said) <= _MAX_DESCRIPTION else said[: _MAX_DESCRIPTION - 1] + "…"
        schema = dict(tool.input_schema or {})
        schema.setdefault("type", "object")
        self.input_schema: dict[str, Any] = schema

    @property
    def read_only_hint(self) -> bool:
        annotations = self.tool.annotations
        return bool(annotations and annotations.read_only_hint)

    def risk(self, args: Any) -> Risk:
        return self.server.config.risk_of(self.tool.name)

    def assess(self, args: Any, cwd: Path | None) -> RiskAssessment:
        reason = f"MCP server {self.server.name}, tool {self.tool.name[:_MAX_NAME]}"
        if self.read_only_hint:
            reason += " (the server says it only reads)"
        return RiskAssessment(self.risk(args), reason)

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        arguments = dict(args.model_extra or {}) if isinstance(args, BaseModel) else dict(args)
        # The SDK hands each progress notification to a task of its own, started as the
        # notification arrives (before the result); one more turn of the event loop lets those
        # start, and one that comes later still is dropped, so no `tool.delta` follows the answer.
        writing = anyio.Lock()
        answered = False
        room = ctx.output_budget  # what the stream may still carry

        async def report(progress: float, total: float | None, message: str | None) -> None:
            nonlocal room
            line = (message or (f"{progress:g}/{total:g}" if total else f"{progress:g}"))[:_MAX_LINE]
            async with writing:
                if answered or room <= 0:
                    return
                room -= len(line) + 1
                if room <= 0:
                    line = f"[more progress not shown: over {ctx.output_budget} characters]"
                await ctx.on_output("stdout", line + "\n")

        try:
            result = await self.server.call(self.tool.name, arguments, report)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.lowlevel.checkpoint()
                async with writing:
                    answered = True
        text = result_text(result)
        if result.is_error:
            raise ToolError("unknown", text or f"{self.tool.name} failed (the server gave no reason)")
        return ToolResult(ok=True, text=text)

    def __repr__(self) -> str:
        return f"<tool {self.name}>"


def result_text(result: mcp_types.CallToolResult) -> str:
    """What the model reads of a result: its text, and a note for what is not text."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent):
            parts.append(f"[an image ({block.mime_type}) the server returned is not shown]")
        elif isinstance(block, mcp_types.AudioContent):
            parts.append(f"[audio ({block.mime_type}) the server returned is not shown]")
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(f"[a resource: {block.uri}]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                parts.append(f"[resource {resource.uri}]\n{resource.text}")
            else:
                parts.append(f"[a binary resource {resource.uri} is not shown]")
        else:
            parts.append(f"[a {getattr(block, 'type', 'content')} block is not shown]")
    if not parts and result.structured_content is not None:
        parts.append(orjson.dumps(result.structured_content, option=orjson.OPT_INDENT_2).decode())
    return "\n".join(parts)
