"""The tool router: the one place the engine looks up, validates, rates and runs tools.

Invariants this module guarantees:
- `parse` either returns validated arguments or raises `ToolError` with one sentence a model
  can act on (the unknown name and the available ones, or the field that is wrong);
- `ctx.on_output` is never entered twice at once, whatever the tool does (the engine appends
  one `tool.delta` at a time);
- `run` never raises for a tool's failure: `ToolError`, `OSError` and any other `Exception`
  become a failed `ToolResult` with an error code; cancellation (and other `BaseException`s)
  propagates untouched, so a cancelled turn stops its tool;
- a result never carries more than `ctx.output_budget` characters of output plus the
  truncation marker, even from a tool that ignores the budget;
- `preview` is a pure function: the same arguments give the same one line of at most 120
  characters;
- `assess` and `risk` agree: `risk(name, args) == assess(name, args).risk`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, cast

import anyio
from pydantic import BaseModel, ValidationError

from agent_tui.engine.tools.base import (
    OutputCallback,
    Risk,
    RiskAssessment,
    RiskAssessor,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    cut_to_budget,
)
from agent_tui.engine.tools.paths import os_error_to_tool_error
from agent_tui.events.argument_preview import args_preview

__all__ = ["ToolRouter"]

# Tools append their own truncation marker (and shell a timeout notice) past the budget.
_MARKER_ROOM = 200


class ToolRouter:
    """A registry of tools by name.

    Args:
        tools: the tools to offer; the built-ins (`read_file`, `list_dir`, `grep`, `write_file`,
            `edit_file`, `shell`) when None.
        output_budget: the budget `make_context` puts in the contexts it builds.
    """

    def __init__(self, tools: Iterable[Tool] | None = None, *, output_budget: int = 32_000) -> None:
        if tools is None:
            from agent_tui.engine.tools.builtin import builtin_tools

            tools = builtin_tools()
        self.output_budget = output_budget
        self._tools: dict[str, Tool] = {}
        self._schemas: list[dict[str, Any]] | None = None
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        """Add a tool (the engine registers `spawn_agent` / `wait_agent`); names are unique."""
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._schemas = None

    def with_tools(self, tools: Iterable[Tool]) -> ToolRouter:
        """A new router offering this one's tools and then `tools` (a session's MCP tools)."""
        return ToolRouter([*self._tools.values(), *tools], output_budget=self.output_budget)

    def get(self, name: str) -> Tool:
        """The tool called `name`; `ToolError("not_found")` listing the tools otherwise."""
        tool = self._tools.get(name)
        if tool is None:
            available = ", ".join(self.names()) or "none"
            raise ToolError("not_found", f"unknown tool {name!r}; available: {available}")
        return tool

    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        """`{name, description, input_schema}` per tool, in registration order (for models).

        Built once and kept until the next `register`: every model call asks for them.
        """
        if self._schemas is None:
            self._schemas = [
                {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
                for tool in self._tools.values()
            ]
        return self._schemas

    def parse(self, name: str, args: Mapping[str, Any] | None) -> tuple[Tool, BaseModel]:
        """Validate a model's tool call.

        Raises:
            ToolError: `not_found` for an unknown tool, `unknown` for arguments that do not fit,
                e.g. "bad arguments for read_file: path: Field required".
        """
        tool = self.get(name)
        args = {} if args is None else args
        if not isinstance(args, Mapping):
            got = type(args).__name__
            raise ToolError("unknown", f"bad arguments for {name}: expected an object, got {got}")
        try:
            parsed = tool.Args.model_validate(dict(args))
        except ValidationError as error:
            raise ToolError("unknown", f"bad arguments for {name}: {_describe(error)}") from None
        return tool, parsed

    def assess(self, name: str, parsed_args: BaseModel, *, cwd: Path | None = None) -> RiskAssessment:
        """The risk of a parsed call, with its reason and warning (for `permission.requested`).

        Args:
            cwd: the session's working directory; with it, `write_file` onto an existing file
                carries the warning "overwrites PATH".
        """
        tool = self.get(name)
        # What `isinstance(tool, RiskAssessor)` asks, without the Protocol's attribute walk
        # (tens of microseconds, on every call)
        assess = getattr(tool, "assess", None)
        if callable(assess):
            return cast(RiskAssessor, tool).assess(parsed_args, cwd)
        return RiskAssessment(tool.risk(parsed_args))

    def risk(self, name: str, parsed_args: BaseModel) -> Risk:
        return self.assess(name, parsed_args).risk

    def make_context(
        self, *, cwd: Path, session_id: str, turn_id: str, tool_call_id: str, on_output: OutputCallback
    ) -> ToolContext:
        """A `ToolContext` carrying this router's output budget."""
        return ToolContext(cwd, session_id, turn_id, tool_call_id, on_output, self.output_budget)

    async def run(self, tool: Tool, parsed_args: BaseModel, ctx: ToolContext) -> ToolResult:
        """Run a parsed call; failures come back as `ToolResult(ok=False)`.

        Cancellation propagates. So does an exception raised by `ctx.on_output` itself (the
        engine failing to store a `tool.delta`): that is the engine's failure, not the tool's,
        and it is re-raised unchanged however the tool wrapped it.
        """
        callback_errors: list[Exception] = []
        one_at_a_time = anyio.Lock()

        async def on_output(stream: Literal["stdout", "stderr"], text: str) -> None:
            async with one_at_a_time:
                try:
                    await ctx.on_output(stream, text)
                except Exception as error:
                    callback_errors.append(error)
                    raise

        try:
            result = await tool.run(parsed_args, replace(ctx, on_output=on_output))
        except Exception as error:
            if callback_errors:
                raise callback_errors[0] from None
            return _failure(tool, error)
        if len(result.text) > ctx.output_budget + _MARKER_ROOM:
            text, _ = cut_to_budget(result.text, ctx.output_budget)
            result = replace(result, text=text, truncated=True)
        return result

    @staticmethod
    def preview(args: Mapping[str, Any]) -> str:
        """One line summarizing arguments (`agent_tui.events.argument_preview`)."""
        return args_preview(args)


def _failure(tool: Tool, error: Exception) -> ToolResult:
    """A tool's exception as a failed result: its own code, an OS error's, or `unknown`."""
    if isinstance(error, ToolError):
        return ToolResult.failure(error.code, error.message)
    if isinstance(error, OSError):
        filename = getattr(error, "filename", None)
        mapped = os_error_to_tool_error(error, os.fsdecode(filename) if filename else tool.name)
        return ToolResult.failure(mapped.code, mapped.message)
    return ToolResult.failure("unknown", f"{tool.name} failed: {type(error).__name__}: {error}")


def _describe(error: ValidationError) -> str:
    """One message per argument: the first complaint about each top-level field.

    Arguments are flat, and for an optional field pydantic reports one error per union branch
    (`offset.constrained-int`, `offset.none`); the first is the one that means something.
    """
    described: dict[str, str] = {}
    for item in error.errors():
        where = str(item["loc"][0]) if item["loc"] else "arguments"
        described.setdefault(where, f"{where}: {item['msg']}")
    return "; ".join(described.values())
