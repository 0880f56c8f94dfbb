"""The event log's vocabulary: one envelope, one payload model per event type.

Invariants this module guarantees:
- every line of a session log parses into exactly one `Event` whose `payload` is the model
  registered for its `type`; an unknown type or a payload that does not fit raises
  `EventValidationError` naming the field that is wrong;
- `Event.to_json()` is canonical: the same event gives the same bytes (orjson, keys in model
  order, no `None` payload fields), so `replay --dump events` is deterministic.
"""

from __future__ import annotations

from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

SCHEMA_VERSION = 1

Risk = Literal["read", "write", "execute", "network", "destructive"]
Decision = Literal["allow", "deny", "ask"]
Actor = Literal["policy", "user", "system"]
Remember = Literal["once", "session", "always"]
ToolErrorCode = Literal[
    "permission_denied", "path_unsafe", "not_found", "io_error", "timeout", "cancelled",
    "budget_exceeded", "unknown",
]
StopReason = Literal["final", "cancelled", "error", "max_steps"]
TurnErrorCode = Literal["context_overflow", "provider_failure", "store_failure", "unknown"]
ToolStream = Literal["stdout", "stderr"]


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class SessionCreated(_Payload):
    cwd: str
    client: str
    parentSessionId: str | None = None
    agentName: str | None = None
    title: str | None = None


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


class PermissionRequested(_Payload):
    requestId: str
    toolCallId: str
    tool: str
    risk: Risk
    argsPreview: str


class PermissionResolved(_Payload):
    requestId: str
    toolCallId: str
    decision: Decision
    actor: Actor
    policy: str | None = None
    reason: str | None = None
    remember: Remember | None = None


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
    promptTokens: int
    completionTokens: int


class TurnCompleted(_Payload):
    stopReason: StopReason
    errorCode: TurnErrorCode | None = None
    usage: Usage | None = None


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
}
EVENT_TYPES: tuple[str, ...] = tuple(PAYLOADS)


def _typed(type_name: str, payload: type[_Payload]) -> type[BaseModel]:
    """One envelope model per event type, so the JSON Schema is a tagged union."""
    return type(
        "Event_" + type_name.replace(".", "_"),
        (_EnvelopeBase,),
        {
            "__annotations__": {"type": Literal[type_name], "payload": payload},  # type: ignore[valid-type]
            "__module__": __name__,
        },
    )


class _EnvelopeBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    v: Literal[1] = SCHEMA_VERSION
    id: str
    sessionId: str
    turnId: str | None
    sequence: int = Field(ge=1)
    ts: str


_ENVELOPES = [_typed(name, model) for name, model in PAYLOADS.items()]
EventLine = Annotated[Union[tuple(_ENVELOPES)], Field(discriminator="type")]  # type: ignore[valid-type]
_LINE_ADAPTER: TypeAdapter[Any] = TypeAdapter(EventLine)


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

    __slots__ = ("id", "session_id", "turn_id", "sequence", "ts", "type", "payload")

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


def _describe(error: ValidationError, prefix: str = "") -> str:
    first = error.errors()[0]
    loc = ".".join(str(part) for part in first["loc"])
    where = f"{prefix}{loc}" if loc else prefix.rstrip(".") or "event"
    return f"{where}: {first['msg']}"


# -- fast structural check ---------------------------------------------------------------------
# Replay validates every line of logs with millions of events, and pydantic costs several times a
# JSON decode per object. So each payload model is compiled once into a table of
# (field, accepted types or values, required) and checked by `_fits`; only a payload that fails the
# fast check goes through pydantic (strict) to produce the error message. The tables are derived
# from the models, so the schema has one source.

_Check = tuple[str, "tuple[type, ...] | frozenset[Any] | _Compiled", bool]


class _Compiled:
    __slots__ = ("fields", "names", "required")

    def __init__(self, model: type[BaseModel]) -> None:
        self.fields: list[tuple[str, Any, bool, bool]] = []
        for name, info in model.model_fields.items():
            accepted, nullable = _accepted(info.annotation)
            self.fields.append((name, accepted, info.is_required(), nullable))
        self.names = frozenset(model.model_fields)
        self.required = frozenset(name for name, _, required, _ in self.fields if required)


def _accepted(annotation: Any) -> tuple[Any, bool]:
    args = get_args(annotation)
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        inner = [arg for arg in args if arg is not type(None)]
        accepted, _ = _accepted(inner[0])
        return accepted, len(inner) < len(args)
    if origin is Literal:
        return frozenset(args), False
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _Compiled(annotation), False
    if origin is dict or annotation is dict:
        return (dict,), False
    if annotation is bool:
        return (bool,), False
    if annotation in (int, str):
        return (annotation,), False
    raise TypeError(f"no fast check for {annotation!r}")


def _fits(compiled: _Compiled, data: Any) -> bool:
    if type(data) is not dict:
        return False
    keys = data.keys()
    if not (compiled.required <= keys and keys <= compiled.names):
        return False
    for name, accepted, _required, nullable in compiled.fields:
        if name not in data:
            continue
        value = data[name]
        if value is None:
            if not nullable:
                return False
        elif type(accepted) is tuple:
            if type(value) not in accepted:
                return False
        elif type(accepted) is frozenset:
            if type(value) is bool or value not in accepted:
                return False
        elif not _fits(accepted, value):
            return False
    return True


_COMPILED = {name: _Compiled(model) for name, model in PAYLOADS.items()}
_ENVELOPE_KEYS = frozenset({"v", "id", "sessionId", "turnId", "sequence", "ts", "type", "payload"})
_ENVELOPE_REQUIRED = _ENVELOPE_KEYS - {"v"}


def event_from_dict(data: Any) -> Event:
    """Validate one decoded log line. Raises `EventValidationError` with a one-line reason."""
    if type(data) is not dict:
        raise EventValidationError(f"expected a JSON object, got {type(data).__name__}")
    type_name = data.get("type")
    compiled = _COMPILED.get(type_name) if type(type_name) is str else None
    if compiled is None:
        raise EventValidationError(f"unknown event type {type_name!r}")
    keys = data.keys()
    if not (_ENVELOPE_REQUIRED <= keys and keys <= _ENVELOPE_KEYS):
        missing = sorted(_ENVELOPE_REQUIRED - keys)
        if missing:
            raise EventValidationError(f"{missing[0]}: field required")
        raise EventValidationError(f"unexpected field {sorted(keys - _ENVELOPE_KEYS)[0]!r}")
    if data.get("v", SCHEMA_VERSION) != SCHEMA_VERSION:
        raise EventValidationError(f"unsupported schema version {data.get('v')!r}")
    session_id = data["sessionId"]
    turn_id = data["turnId"]
    sequence = data["sequence"]
    event_id = data["id"]
    ts = data["ts"]
    if type(session_id) is not str or type(event_id) is not str or type(ts) is not str:
        raise EventValidationError("id, sessionId and ts must be strings")
    if turn_id is not None and type(turn_id) is not str:
        raise EventValidationError("turnId: must be a string or null")
    if type(sequence) is not int or sequence < 1:
        raise EventValidationError(f"sequence: expected an integer >= 1, got {sequence!r}")
    payload = data["payload"]
    if not _fits(compiled, payload):
        try:
            PAYLOADS[type_name].model_validate(payload, strict=True)
        except ValidationError as error:
            raise EventValidationError(_describe(error, "payload.")) from None
        raise EventValidationError("payload: does not fit its schema")  # pragma: no cover
    return Event(
        id=event_id, session_id=session_id, turn_id=turn_id, sequence=sequence, ts=ts,
        type=type_name, payload=payload,
    )


def event_from_json(line: bytes | str) -> Event:
    """Decode and validate one log line (without its newline)."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        raise EventValidationError(f"invalid JSON ({error.args[0]})") from None
    return event_from_dict(data)


def make_payload(type_name: str, **fields: Any) -> dict[str, Any]:
    """Build and validate the payload of a `type_name` event, as the JSON-ready dict it is stored as.

    Fields left as `None` are dropped, so the stored line carries only what is known.
    """
    compiled = _COMPILED.get(type_name)
    if compiled is None:
        raise EventValidationError(f"unknown event type {type_name!r}")
    payload = {key: value for key, value in fields.items() if value is not None}
    if not _fits(compiled, payload):
        try:
            model = PAYLOADS[type_name].model_validate(payload)
        except ValidationError as error:
            raise EventValidationError(_describe(error, f"{type_name}.")) from None
        payload = model.model_dump(mode="json", exclude_none=True)
    return payload


def log_line_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of one log line, for validating our logs with other tools."""
    schema = _LINE_ADAPTER.json_schema()
    schema["title"] = "agent-tui event log line"
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema
