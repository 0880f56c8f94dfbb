"""The tool port: what a tool is, what it gets to run, and what it gives back.

Invariants this module guarantees:
- a tool's arguments are a pydantic model (`Tool.Args`); its JSON Schema (`input_schema`) is
  what models see, so the schema and the validation cannot drift apart;
- a tool reports an expected failure by raising `ToolError(code, message)`, where `code` is one
  of the `tool.failed` error codes of the event log; the router turns it into a failed
  `ToolResult`, so a tool never has to build failure results by hand;
- `ToolResult.text` is what the model reads: the output when `ok`, the message when not;
- a tool's risk comes with a reason and, for overwrites, a warning (`assess`); `risk` is the
  risk of that assessment, so the two never disagree;
- tools never write events: they stream output through `ToolContext.on_output`, which the
  engine stores as `tool.delta`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from agent_tui.events.model import Risk, ToolErrorCode
from agent_tui.safety import RiskAssessment

__all__ = [
    "BaseTool",
    "OutputCallback",
    "Risk",
    "RiskAssessment",
    "RiskAssessor",
    "Tool",
    "ToolArgs",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "cut_to_budget",
]

OutputCallback = Callable[[Literal["stdout", "stderr"], str], Awaitable[None]]

TRUNCATION_MARKER = "\n[output truncated: over {budget} characters]"


class ToolError(Exception):
    """An expected tool failure, with the error code the log stores and a message for the model.

    Args:
        code: one of the `tool.failed` error codes (`path_unsafe`, `not_found`, ...).
        message: one readable sentence; it is what the model sees.
    """

    def __init__(self, code: ToolErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: ToolErrorCode = code
        self.message = message

    def __repr__(self) -> str:
        return f"ToolError({self.code!r}, {self.message!r})"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of one tool call.

    `text` is the result when `ok`, the error message when not. `exit_code` is set by tools that
    run a process; `truncated` says the output went over the budget and was cut.
    """

    ok: bool
    text: str
    exit_code: int | None = None
    truncated: bool = False
    error_code: ToolErrorCode | None = None

    @classmethod
    def failure(cls, code: ToolErrorCode, message: str) -> ToolResult:
        return cls(ok=False, text=message, error_code=code)


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a running tool may know about its call.

    Attributes:
        cwd: the session's working directory; every path a tool touches resolves under it.
        on_output: awaited once per streamed chunk, in arrival order, one call at a time, all
            before `run` returns.
        output_budget: the most characters of output a result (and the stream) carries.
    """

    cwd: Path
    session_id: str
    turn_id: str
    tool_call_id: str
    on_output: OutputCallback
    output_budget: int = 32_000


class ToolArgs(BaseModel):
    """Base for tool argument models: unknown fields are refused, so a typo is an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@runtime_checkable
class Tool(Protocol):
    """The port every tool implements (built-ins here, `spawn_agent`/`wait_agent` in the engine).

    `name`, `description` and `Args` are read-only: a tool class usually sets them as class
    attributes (`BaseTool` declares them so).
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def Args(self) -> type[BaseModel]: ...

    @property
    def input_schema(self) -> dict[str, Any]:
        """JSON Schema of `Args`, handed to models."""
        ...

    def risk(self, args: Any) -> Risk:
        """The risk of this call, given its parsed arguments."""
        ...

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        """Do the work; raise `ToolError` for expected failures."""
        ...


@runtime_checkable
class RiskAssessor(Protocol):
    """A tool that explains its risk: a reason, and a warning for overwrites.

    `cwd` is the session's working directory when the caller knows it (a warning such as
    "overwrites notes.txt" depends on what is on disk); None gives the assessment from the
    arguments alone.
    """

    def assess(self, args: Any, cwd: Path | None) -> RiskAssessment: ...


class BaseTool:
    """Convenience base: a fixed risk, a schema derived from `Args`, no reason by default."""

    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]]
    fixed_risk: ClassVar[Risk] = "execute"

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.Args.model_json_schema()

    def risk(self, args: Any) -> Risk:
        return self.fixed_risk

    def assess(self, args: Any, cwd: Path | None) -> RiskAssessment:
        return RiskAssessment(self.risk(args))

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<tool {self.name}>"


def cut_to_budget(text: str, budget: int) -> tuple[str, bool]:
    """Cut `text` to `budget` characters and append a marker saying so.

    Returns:
        (text, truncated). The marker is appended after the cut, so the model knows the output
        is incomplete; it is not counted in the budget.
    """
    if len(text) <= budget:
        return text, False
    return text[: max(budget, 0)] + TRUNCATION_MARKER.format(budget=budget), True
