"""The event log's vocabulary: one envelope, one payload model per event type, the `Event`.

Invariants this module guarantees:
- the payload models here are the one source of the schema: the JSON Schema of a log line, the
  pydantic checks and the generated fast checks of `validation.py` are all derived from them;
- `Event.to_json()` is canonical: the same event gives the same bytes (orjson, keys in model
  order, no `None` payload fields), so `replay --dump events` is deterministic.

Reading and writing lines (validation, building payloads) is `validation.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Annotated, Any, Final, Literal, Protocol, Union

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

SCHEMA_VERSION: Final = 1

Risk = Literal["read", "write", "execute", "network", "destructive"]
Decision = Literal["allow", "deny", "ask"]
Resolution = Literal["allow", "deny", "ask", "withdrawn"]
"""A `permission.resolved`'s decision: a policy's or a person's, or `withdrawn` (a terminal
agent's question that its CLI took back: answered in its own terminal, or handed back to it)."""
Actor = Literal["policy", "user", "system"]
Remember = Literal["once", "session", "always"]
ToolErrorCode = Literal[
    "permission_denied",
    "path_unsafe",
    "not_found",
    "io_error",
    "timeout",
    "cancelled",
    "budget_exceeded",
    "unknown",
]
StopReason = Literal["final", "cancelled", "error", "max_steps"]
TurnErrorCode = Literal["context_overflow", "provider_failure", "store_failure", "budget_exceeded", "unknown"]
ToolStream = Literal["stdout", "stderr"]


class _Payload(BaseModel):
    # `defer_build`: pydantic builds a model's validator when it first validates, not when the
    # class is made. A replay checks lines with `validation.py`'s builders and never asks
    # pydantic, so every command that only reads logs is spared the start-up of building them.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class Worktree(_Payload):
    path: str
    branch: str
    baseBranch: str | None = None
    baseCommit: str | None = None


class Budget(_Payload):
    """What a session's tree may spend: dollars, tokens (prompt plus completion), or both."""

    usd: float | None = None
    tokens: int | None = None


class SessionCreated(_Payload):
    cwd: str
    client: str
    parentSessionId: str | None = None
    agentName: str | None = None
    title: str | None = None
    provider: str | None = None
    model: str | None = None
    worktree: Worktree | None = None
    budget: Budget | None = None


class TurnStarted(_Payload):
    promptPreview: str


class UserMessage(_Payload):
    content: str
    inputId: str | None = None
    steered: bool | None = None


class ContextTokens(_Payload):
    instruction: int
    transcript: int
    tools: int


class ContextBuilt(_Payload):
    step: int
    tokens: ContextTokens
    maxContextTokens: int


class ContextCompacted(_Payload):
    step: int
    beforeTokens: int
    afterTokens: int
    summary: str


class ModelDelta(_Payload):
    text: str


class ToolCallRequested(_Payload):
    toolCallId: str
    tool: str
    args: dict[str, Any]


class OfferedOption(_Payload):
    """One of the options an external (ACP) agent offers for its permission question."""

    optionId: str
    name: str
    kind: Literal["allow_once", "allow_always", "reject_once", "reject_always"]


class PermissionRequested(_Payload):
    requestId: str
    toolCallId: str
    tool: str
    risk: Risk
    argsPreview: str
    reason: str | None = None
    warning: str | None = None
    options: list[OfferedOption] | None = None  # an ACP agent's own options, in its order


class AnsweredBy(_Payload):
    """Who answered a permission request from an attached dashboard: its name, its user, its
    machine."""

    dashboard: str
    user: str
    host: str


class PermissionResolved(_Payload):
    requestId: str
    toolCallId: str
    decision: Resolution
    actor: Actor
    policy: str | None = None
    reason: str | None = None
    remember: Remember | None = None
    by: AnsweredBy | None = None
    """Who answered from elsewhere (an attached dashboard over the bus)."""


class ToolStarted(_Payload):
    toolCallId: str
    tool: str
    argsPreview: str


class ToolDelta(_Payload):
    toolCallId: str
    stream: ToolStream
    text: str


class ToolCompleted(_Payload):
    toolCallId: str
    tool: str
    result: str
    exitCode: int | None = None
    truncated: bool = False


class ToolFailed(_Payload):
    toolCallId: str
    tool: str
    errorCode: ToolErrorCode
    message: str


class SubagentDelivered(_Payload):
    childSessionId: str
    agentName: str
    status: Literal["completed", "failed"]
    text: str


class Usage(_Payload):
    """A turn's tokens summed over its model calls, and their cost from the price table in force
    when the turn ended (absent when the model's price is unknown). The one owner of a usage's
    fields; how they are written is `usage_fields` (`fields`, or the payload itself for an import,
    which makes no model per call): a model call's `ModelUsage` is one with its step."""

    promptTokens: int
    completionTokens: int
    cachedTokens: int | None = None
    cacheWriteTokens: int | None = None
    costUsd: float | None = None

    def fields(self) -> dict[str, Any]:
        """The payload (unknown fields left out, in the log's order; a `ModelUsage`'s step first)."""
        step = self.step if isinstance(self, ModelUsage) else None
        return usage_fields(
            self.promptTokens,
            self.completionTokens,
            self.cachedTokens,
            self.cacheWriteTokens,
            self.costUsd,
            step,
        )

    @classmethod
    def of_calls(cls, calls: Iterable[ModelUsage]) -> Usage | None:
        """The turn's total of its calls' usage (see `of_written`)."""
        return cls.of_written(call.fields() for call in calls)

    @classmethod
    def of_written(cls, calls: Iterable[Mapping[str, Any]]) -> Usage | None:
        """The turn's total of its calls' `model.usage` payloads (None when no call reported
        any): tokens summed, a cache count only when some call had one, the cost only when
        every call had one (`usage_total`, as a model)."""
        total = usage_total(calls)
        return None if total is None else cls(**total)


def usage_total(calls: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The payload of `Usage.of_written(calls)` without making the model (an import closes a
    turn per prompt): tokens summed, a cache count only when some call had one, the cost only
    when every call had one; None when no call reported any."""
    prompt = completion = cached = written = 0
    has_cached = has_written = False
    cost: float | None = 0.0
    count = 0
    for call in calls:
        count += 1
        prompt += call["promptTokens"]
        completion += call["completionTokens"]
        get = call.get
        if (call_cached := get("cachedTokens")) is not None:
            cached += call_cached
            has_cached = True
        if (call_written := get("cacheWriteTokens")) is not None:
            written += call_written
            has_written = True
        call_cost = get("costUsd")
        cost = None if cost is None or call_cost is None else cost + call_cost
    if not count:
        return None
    return usage_fields(
        prompt, completion, cached if has_cached else None, written if has_written else None, cost
    )


class Pricing(Protocol):
    """What a call's tokens cost (the costs' `PriceTable`); None when the model's price is unknown."""

    def cost_usd(
        self,
        model: str | None,
        prompt_tokens: int,
        completion_tokens: int,
        cached_tokens: int | None = None,
        cache_write_tokens: int | None = None,
    ) -> float | None: ...


class ModelUsage(Usage):
    """What one model call (step) used, as its provider reported it, right after its stream."""

    step: int

    @classmethod
    def priced(
        cls,
        prices: Pricing,
        step: int,
        model: str | None,
        prompt: int,
        completion: int,
        cached: int | None = None,
        written: int | None = None,
    ) -> ModelUsage:
        """Call `step`'s usage (`prompt` counts every prompt token, cache reads `cached` and
        writes `written` included), priced as `model` (no cost when its price is unknown)."""
        return cls(**cls.priced_fields(prices, step, model, prompt, completion, cached, written))

    @staticmethod
    def priced_fields(
        prices: Pricing,
        step: int,
        model: str | None,
        prompt: int,
        completion: int,
        cached: int | None = None,
        written: int | None = None,
    ) -> dict[str, Any]:
        """The `model.usage` payload of `priced(...)` without making the model: an import
        writes one per source message."""
        cost = prices.cost_usd(model, prompt, completion, cached, written)
        return usage_fields(prompt, completion, cached, written, cost, step)


def usage_fields(
    prompt: int,
    completion: int,
    cached: int | None,
    written: int | None,
    cost: float | None,
    step: int | None = None,
) -> dict[str, Any]:
    """How a usage is written (`Usage.fields`; with a model call's `step` first, `ModelUsage`'s):
    unknown fields left out, in the log's order. By hand, not `model_dump`: an import writes one
    per model call and one per turn."""
    if step is None:
        spent: dict[str, Any] = {"promptTokens": prompt, "completionTokens": completion}
    else:
        spent = {"step": step, "promptTokens": prompt, "completionTokens": completion}
    if cached is not None:
        spent["cachedTokens"] = cached
    if written is not None:
        spent["cacheWriteTokens"] = written
    if cost is not None:
        spent["costUsd"] = cost
    return spent


class SessionBudget(_Payload):
    """The user set or changed the session's budget; `by` names who (dashboard, user, host)."""

    usd: float | None = None
    tokens: int | None = None
    by: str | None = None


class TurnCompleted(_Payload):
    stopReason: StopReason
    errorCode: TurnErrorCode | None = None
    usage: Usage | None = None
    message: str | None = None


class RewoundFile(_Payload):
    """One file a rewind wrote back: `restored` (its content before the turn), `removed` (the turn
    created it), or `skipped` (a protected path, or a kind of file a rewind does not write)."""

    path: str
    action: Literal["restored", "removed", "skipped"]


class TurnRewound(_Payload):
    """The files of an earlier turn were put back as they were before it. `incomplete` says
    what the rewind could not undo (shell changes outside git, skipped files), when anything."""

    rewoundTurnId: str
    files: list[RewoundFile]
    incomplete: str | None = None


class ModelRetry(_Payload):
    """A provider call failed in a way worth retrying; the engine waits `delayMs` and calls again."""

    attempt: int
    delayMs: int
    reason: str


class SourceRecord(_Payload):
    """A record of an imported log that our vocabulary cannot say, kept as it was."""

    format: str
    recordType: str
    data: dict[str, Any]


PAYLOADS: dict[str, type[_Payload]] = {
    "session.created": SessionCreated,
    "turn.started": TurnStarted,
    "user.message": UserMessage,
    "context.built": ContextBuilt,
    "context.compacted": ContextCompacted,
    "model.delta": ModelDelta,
    "model.tool_call_requested": ToolCallRequested,
    "permission.requested": PermissionRequested,
    "permission.resolved": PermissionResolved,
    "tool.started": ToolStarted,
    "tool.delta": ToolDelta,
    "tool.completed": ToolCompleted,
    "tool.failed": ToolFailed,
    "subagent.delivered": SubagentDelivered,
    "turn.completed": TurnCompleted,
    "model.retry": ModelRetry,
    "source.record": SourceRecord,
    "turn.rewound": TurnRewound,
    "model.usage": ModelUsage,
    "session.budget": SessionBudget,
}
EVENT_TYPES: tuple[str, ...] = tuple(PAYLOADS)
CALL_PROGRESS_TYPES: frozenset[str] = frozenset(
    {
        "permission.requested",
        "permission.resolved",
        "tool.started",
        "tool.delta",
        "tool.completed",
        "tool.failed",
    }
)
"""What happens to a tool call after `model.tool_call_requested`: each of these names its call."""


def _typed(type_name: str, payload: type[_Payload]) -> type[BaseModel]:
    """One envelope model per event type, so the JSON Schema is a tagged union."""
    return type(
        "Event_" + type_name.replace(".", "_"),
        (_EnvelopeBase,),
        {
            "__annotations__": {"type": Literal[type_name], "payload": payload},
            "__module__": __name__,
        },
    )


class _EnvelopeBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # see `_Payload`

    v: Literal[1] = SCHEMA_VERSION
    id: str
    sessionId: str
    turnId: str | None
    sequence: int = Field(ge=1)
    ts: str


@cache
def line_adapter() -> TypeAdapter[Any]:
    """Pydantic's validator of one whole log line: the union of the envelopes, tagged by `type`.

    Built on first use (the JSON Schema, tests holding the fast checks to it): its twenty models
    would cost every command's start-up, and reading a log never needs them.
    """
    envelopes = tuple(_typed(name, model) for name, model in PAYLOADS.items())
    # A union built at run time from PAYLOADS: real to pydantic, `Any` to a static type checker.
    line: Any = Annotated[Union[envelopes], Field(discriminator="type")]  # noqa: UP007
    return TypeAdapter(line)


class EventValidationError(ValueError):
    """A JSON object that is not an event of this schema; `reason` says which field and why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Event:
    """A stored event: the envelope plus its payload as a validated, JSON-ready dict.

    A plain slotted class rather than a pydantic model: replaying millions of events builds one of
    these per line, and the payload was already checked against its model. `typed()` gives the
    payload model for callers that want attributes.
    """

    __slots__ = ("id", "payload", "sequence", "session_id", "ts", "turn_id", "type")

    def __init__(
        self,
        *,
        id: str,
        session_id: str,
        turn_id: str | None,
        sequence: int,
        ts: str,
        type: str,
        payload: dict[str, Any],
    ) -> None:
        self.id = id
        self.session_id = session_id
        self.turn_id = turn_id
        self.sequence = sequence
        self.ts = ts
        self.type = type
        self.payload = payload

    @classmethod
    def from_checked(cls, data: dict[str, Any]) -> Event:
        """The event of a log line's dict that was validated already (the timeline indexed it,
        the importer built it): the payload is shared, nothing is checked again.

        Raises:
            KeyError: an envelope field is missing.
        """
        event = _new_event(cls)
        event.id = data["id"]
        event.session_id = data["sessionId"]
        event.turn_id = data["turnId"]
        event.sequence = data["sequence"]
        event.ts = data["ts"]
        event.type = data["type"]
        event.payload = data["payload"]
        return event

    def typed(self) -> _Payload:
        return PAYLOADS[self.type].model_validate(self.payload)

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": SCHEMA_VERSION,
            "id": self.id,
            "sessionId": self.session_id,
            "turnId": self.turn_id,
            "sequence": self.sequence,
            "ts": self.ts,
            "type": self.type,
            "payload": self.payload,
        }

    def to_json(self) -> bytes:
        """Canonical serialization, without the trailing newline."""
        return orjson.dumps(self.to_dict())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Event) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.session_id, self.sequence, self.id))

    def __repr__(self) -> str:
        return f"Event(#{self.sequence} {self.type} {self.session_id}/{self.turn_id})"


_new_event = object.__new__  # `Event` without `__init__`'s keyword call: half the cost per line


def log_line_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of one log line, for validating our logs with other tools."""
    schema = line_adapter().json_schema()
    schema["title"] = "agent-tui event log line"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
