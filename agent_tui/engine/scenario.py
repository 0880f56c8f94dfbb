"""Scenario files: the scripted provider's input (the format: README.md, "Running scenarios").

A scenario that does not parse or does not fit is reported as `ScenarioError` with where it is
wrong, e.g. `demo.json: sessions[0].steps[2].text: Input should be a valid list`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agent_tui.engine.permission_rules import field_path
from agent_tui.engine.permissions import PolicyConfig
from agent_tui.events import json_problem


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScriptedToolCall(_Strict):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class Step(_Strict):
    """One model call: its text chunks become `model.delta`s, then its tool calls run."""

    text: list[str] = Field(default_factory=list)
    toolCalls: list[ScriptedToolCall] = Field(default_factory=list)
    delayMs: int = Field(default=0, ge=0)
    fail: Literal["provider_failure"] | None = None
    cancelAfterChunks: int | None = Field(default=None, ge=0)
    steer: str | None = None

    @model_validator(mode="after")
    def _answers_something(self) -> Step:
        if self.fail is None and not self.toolCalls and not "".join(self.text):
            raise ValueError("a step without toolCalls needs non-empty text (a final answer)")
        return self


class AgentScript(_Strict):
    steps: list[Step] = Field(min_length=1)
    policy: PolicyConfig | None = None


class ScenarioSession(_Strict):
    prompt: str
    steps: list[Step] = Field(min_length=1)
    title: str | None = None
    cwd: str = "."
    agentName: str | None = None
    startDelayMs: int = Field(default=0, ge=0)


class Scenario(_Strict):
    sessions: list[ScenarioSession] = Field(min_length=1)
    agents: dict[str, AgentScript] = Field(default_factory=dict)
    maxContextTokens: int = Field(default=128_000, ge=1)
    maxSteps: int = Field(default=250, ge=1)
    maxBackground: int = Field(default=4, ge=1)
    maxDepth: int = Field(default=3, ge=1)
    policy: PolicyConfig | None = None


class ScenarioError(ValueError):
    """A scenario file that cannot be used; the message says where."""

    def __init__(self, source: str, where: str, reason: str) -> None:
        super().__init__(f"{source}: {where}: {reason}" if where else f"{source}: {reason}")
        self.reason = reason


def parse_scenario(data: bytes | str, source: str = "<scenario>") -> Scenario:
    try:
        raw = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise ScenarioError(source, "", json_problem(error)) from None
    try:
        return Scenario.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        loc = tuple(part for part in first["loc"] if part not in ("function-after",))
        message = first["msg"].removeprefix("Value error, ")
        raise ScenarioError(source, field_path(loc) or "scenario", message) from None


def load_scenario(path: Path | str) -> Scenario:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ScenarioError(str(path), "", "no such file") from None
    except IsADirectoryError:
        raise ScenarioError(str(path), "", "is a directory, not a scenario file") from None
    except OSError as error:
        raise ScenarioError(str(path), "", error.strerror or str(error)) from None
    return parse_scenario(data, str(path))
