"""Checking log lines and building payloads fast, from the models of `model.py`.

Invariants this module guarantees:
- every line of a session log parses into exactly one `Event` whose `payload` fits the model
  registered for its `type`; an unknown type or a payload that does not fit raises
  `EventValidationError` naming the field that is wrong;
- the generated fast paths accept exactly what pydantic's strict validation of the same models
  accepts (they may send a line to the slow path, never accept more); the slow path gives every
  error message, so messages have one source. Property tests hold both;
- `payload_from` stores what was given (fields left `None` are dropped), keys in model order;
- nothing is generated at import: each type's functions are made the first time a line (or a
  writer) of that type asks for them, so a command that reads a few types compiles only those.

It runs a little over our usual length because the code generators and the functions they feed
share private compiled tables; split, each half would reach into the other's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

import orjson
from pydantic import BaseModel, ValidationError

from agent_tui.events.json_words import json_problem
from agent_tui.events.model import PAYLOADS, SCHEMA_VERSION, Event, EventValidationError

__all__ = [
    "BUILDERS_WITHOUT_V",
    "BUILDERS_WITH_V",
    "event_from_dict",
    "event_from_json",
    "payload_from",
]


def _describe(error: ValidationError, prefix: str = "") -> str:
    first = error.errors()[0]
    loc = ".".join(str(part) for part in first["loc"])
    where = f"{prefix}{loc}" if loc else prefix.rstrip(".") or "event"
    return f"{where}: {first['msg']}"


# -- fast structural check ---------------------------------------------------------------------
# Replay validates every line of logs with millions of events, and pydantic costs several times a
# JSON decode per object. So each payload model is compiled once into a small straight-line
# function (generated source, as `dataclasses` does) that answers "does this fit?" without
# allocating; only an object that fails it goes the slow way (`_reject`, then pydantic in strict
# mode) to produce the error message. The checks are derived from the models, so the schema has
# one source, and a property test holds them to pydantic's strict verdict.

_MISSING = object()
_new_event = object.__new__


class _Rejected(Exception):
    """A value a fast path does not accept; the general path says why (or accepts it after all)."""


class _ListOf:
    """A field holding a list of one nested model (`list[Model]`)."""

    __slots__ = ("item",)

    def __init__(self, item: _Compiled) -> None:
        self.item = item


class _Compiled:
    """The fast paths of one payload model: `check(data) -> bool` for a reader, and
    `make(fields) -> payload` for the writer, each generated when first asked for."""

    __slots__ = ("_check", "_make", "model", "required")

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model
        self.required = frozenset(name for name, info in model.model_fields.items() if info.is_required())
        self._check: Any = None
        self._make: Any = None

    @property
    def check(self) -> Any:
        if self._check is None:
            self._check = self._generate()
        return self._check

    @property
    def make(self) -> Any:
        if self._make is None:
            self._make = self._generate_make()
        return self._make

    def _generate(self) -> Any:
        namespace: dict[str, Any] = {"_MISSING": _MISSING}
        fetch, tests = [], []
        optional = 0
        for k, (name, info) in enumerate(self.model.model_fields.items()):
            accepted, nullable = _accepted(info.annotation)
            test = _value_test(f"v{k}", accepted, namespace, f"_{k}")
            if nullable:
                test = f"v{k} is not None and ({test})"
            if info.is_required():
                fetch.append(f"        v{k} = data[{name!r}]")
                tests += [f"    if {test}:", "        return False"]
            else:
                optional += 1
                tests += [
                    f"    v{k} = data.get({name!r}, _MISSING)",
                    f"    if v{k} is not _MISSING:",
                    "        present += 1",
                    f"        if {test}:",
                    "            return False",
                ]
        lines = ["def check(data):", "    if type(data) is not dict:", "        return False"]
        if fetch:
            lines += ["    try:", *fetch, "    except KeyError:", "        return False"]
        if optional:
            lines.append("    present = 0")
        lines += tests
        lines.append(f"    return len(data) == {len(self.required)}{' + present' if optional else ''}")
        exec("\n".join(lines), namespace)
        return namespace["check"]

    def _generate_make(self) -> Any:
        """`make(fields) -> payload` for the writer (`payload_from`): the given fields checked, in
        model order (nested models too), `None`s dropped. Raises (`_Rejected`, KeyError) for what
        it does not take as it is; the pydantic path then coerces it or says what is wrong."""
        namespace: dict[str, Any] = {"_MISSING": _MISSING, "_Rejected": _Rejected}
        lines = ["def make(f):", "    out = {}"]
        required = 0  # keys `f` must have; `given` counts the optional ones it has on top
        for k, (name, info) in enumerate(self.model.model_fields.items()):
            test, value = _make_field(k, _accepted(info.annotation)[0], namespace)
            if info.is_required():
                required += 1
                lines += [
                    f"    v{k} = f[{name!r}]",
                    f"    if {test}:",
                    "        raise _Rejected",
                    f"    out[{name!r}] = {value}",
                ]
            else:
                lines += [
                    f"    v{k} = f.get({name!r}, _MISSING)",
                    f"    if v{k} is not _MISSING:",
                    "        given += 1",
                    f"        if v{k} is not None:",
                    f"            if {test}:",
                    "                raise _Rejected",
                    f"            out[{name!r}] = {value}",
                ]
        lines.insert(2, f"    given = {required}")
        # Any other key of `f` is one no field accounts for: unknown, so not ours to take.
        lines += ["    if len(f) != given:", "        raise _Rejected", "    return out"]
        exec("\n".join(lines), namespace)
        return namespace["make"]


def _make_field(k: int, accepted: Any, namespace: dict[str, Any]) -> tuple[str, str]:
    """For `make`: the test that field `v{k}` does NOT fit `accepted`, and what is stored."""
    if isinstance(accepted, _Compiled):  # its own `make` checks and orders it
        namespace[f"_make_{k}"] = accepted.make
        return f"type(v{k}) is not dict", f"_make_{k}(v{k})"
    if isinstance(accepted, _ListOf):  # each item made (checked, ordered) by its model
        namespace[f"_make_{k}"] = accepted.item.make
        return f"type(v{k}) is not list", f"[_make_{k}(item) for item in v{k}]"
    test = _value_test(f"v{k}", accepted, namespace, f"_{k}")
    # A float is stored as pydantic stores it: `2` becomes `2.0`.
    return test, f"float(v{k})" if accepted is float else f"v{k}"


def _value_test(var: str, accepted: Any, namespace: dict[str, Any], suffix: str) -> str:
    """Python source that is true when `var` does NOT fit `accepted`."""
    if isinstance(accepted, _Compiled):
        namespace["_check" + suffix] = accepted.check
        return f"not _check{suffix}({var})"
    if isinstance(accepted, _ListOf):
        namespace["_check" + suffix] = accepted.item.check
        return f"type({var}) is not list or not all(map(_check{suffix}, {var}))"
    if isinstance(accepted, frozenset):
        # Check the type first: an unhashable value (a list) must fail, not raise.
        namespace["_values" + suffix] = accepted
        types = {type(value) for value in accepted}
        if len(types) == 1:
            namespace["_type" + suffix] = types.pop()
            return f"type({var}) is not _type{suffix} or {var} not in _values{suffix}"
        namespace["_types" + suffix] = frozenset(types)
        return f"type({var}) not in _types{suffix} or {var} not in _values{suffix}"
    if accepted is dict:
        return f"type({var}) is not dict or any(type(key) is not str for key in {var})"
    if accepted is float:
        # JSON has one number: `2` is as much a price as `2.0` (bool, an int subclass, is not).
        return f"type({var}) is not float and type({var}) is not int"
    return f"type({var}) is not {accepted.__name__}"


def _accepted(annotation: Any) -> tuple[Any, bool]:
    """What a field accepts: a type, a frozenset of literal values or a nested model; and nullable."""
    args = get_args(annotation)
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        inner = [arg for arg in args if arg is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"no fast check for {annotation!r}")
        accepted, _ = _accepted(inner[0])
        return accepted, len(inner) < len(args)
    if origin is Literal:
        return frozenset(args), False
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _Compiled(annotation), False
    if origin is dict and args and args[0] is str and args[1] is Any:
        return dict, False
    if origin is list and len(args) == 1 and isinstance(args[0], type) and issubclass(args[0], BaseModel):
        return _ListOf(_Compiled(args[0])), False
    if annotation in (bool, int, float, str):
        return annotation, False
    raise TypeError(f"no fast check for {annotation!r}")


class _PerType(dict[str, Any]):
    """Something generated per event type, made the first time a type is looked up (`[name]`;
    an unknown type raises KeyError). Compiling every type's functions up front cost each
    command's start-up more than a replay of a big log spends in the types it meets."""

    __slots__ = ("_generate",)

    def __init__(self, generate: Callable[[str], Any]) -> None:
        super().__init__()
        self._generate = generate

    def __missing__(self, type_name: str) -> Any:
        if type_name not in PAYLOADS:
            raise KeyError(type_name)
        # Keyed by the interned name, so `event.type` of a replayed event is one shared string.
        name = sys.intern(type_name)
        made = self[name] = self._generate(name)
        return made


_COMPILED = _PerType(lambda name: _Compiled(PAYLOADS[name]))
_ENVELOPE_KEYS = frozenset({"v", "id", "sessionId", "turnId", "sequence", "ts", "type", "payload"})
_ENVELOPE_REQUIRED = _ENVELOPE_KEYS - {"v"}


# -- the decoded-line fast path (replay) -------------------------------------------------------
# `event_from_dict` takes any Python object. A replayed line is what `orjson.loads` returned: a
# tree of exactly dict (with str keys), list, str, int, float, bool and None. For such values
# cheaper operations imply several of the checks above, so replay uses one generated function per
# event type ("builder") that checks the envelope and the payload and builds the `Event` in one
# go, with as few interpreter steps as it can:
# - a successful `value["key"]` means `value` is a dict (a list, str or scalar raises TypeError),
#   and a dict's keys are all str, so `dict[str, Any]` needs only the type check; a model with no
#   required field has no such subscript, so its builder checks the type itself;
# - `value + ""` raises TypeError unless `value` is a str;
# - `value in {"read", "write"}` is False for every non-str value or raises TypeError (list,
#   dict), so a literal of strings needs no separate type check;
# - `sequence ^ expected` is 0 only for the int `expected` itself, given `expected >= 2` (a float
#   raises TypeError; `true` is 1);
# - `v is _ONE`: orjson gives the cached small int for 1; any other 1 just takes the slow path.
# A builder may refuse more than `event_from_dict` does, never less: whatever it does not accept
# (including a sequence other than `expected`) it signals by raising (`_Rejected`, KeyError,
# TypeError), and the caller asks the general path, which either says what is wrong or accepts
# the line. So error messages have one source, and a test holds the builders to
# `event_from_dict` on decoded JSON.


_ONE = 1


def _json_field(
    var: str, accepted: Any, nullable: bool, namespace: dict[str, Any], suffix: str
) -> tuple[str | None, str | None]:
    """How a builder checks one decoded value: (a condition true when it does NOT fit, or a
    statement that raises when it does not fit); one of the two is None."""
    if accepted is str:
        statement = f'{var} + ""'
        return None, (f"if {var} is not None: {statement}" if nullable else statement)
    if isinstance(accepted, _Compiled):
        namespace["_json_check" + suffix] = _json_check(accepted)
        test = f"not _json_check{suffix}({var})"
    elif isinstance(accepted, _ListOf):
        namespace["_json_check" + suffix] = _json_check(accepted.item)
        test = f"type({var}) is not list or not all(map(_json_check{suffix}, {var}))"
    elif isinstance(accepted, frozenset) and all(type(value) is str for value in accepted):
        namespace["_values" + suffix] = accepted
        test = f"{var} not in _values{suffix}"
    elif accepted is dict:
        test = f"type({var}) is not dict"
    else:
        test = _value_test(var, accepted, namespace, suffix)
    return (f"({var} is not None and ({test}))" if nullable else f"({test})"), None


def _json_fields(
    compiled: _Compiled, var: str, namespace: dict[str, Any]
) -> tuple[list[str], list[str], list[str], list[str]]:
    """Source for the fields of the decoded dict `var` of model `compiled`: fetches of the required
    fields (KeyError/TypeError when absent), conditions and raising statements checking them, and
    the lines checking the optional ones (counting the present ones in `present`)."""
    fetch: list[str] = []
    tests: list[str] = []
    statements: list[str] = []
    optional: list[str] = []
    for k, (name, info) in enumerate(compiled.model.model_fields.items()):
        value = f"{var}_{k}"
        accepted, nullable = _accepted(info.annotation)
        test, statement = _json_field(value, accepted, nullable, namespace, f"_{var}_{k}")
        if info.is_required():
            fetch.append(f"{value} = {var}[{name!r}]")
            if test:
                tests.append(test)
            else:
                statements.append(statement)  # type: ignore[arg-type]
        else:
            optional += [
                f"{value} = {var}.get({name!r}, _MISSING)",
                f"if {value} is not _MISSING:",
                "    present += 1",
            ]
            optional += [f"    if {test}:", "        raise _Rejected"] if test else [f"    {statement}"]
    return fetch, tests, statements, optional


def _size_check(var: str, required: int, optional: list[str], indent: str) -> list[str]:
    """The key-count check of a dict with optional fields whose required ones were all fetched."""
    return [
        f"{indent}if len({var}) != {required}:",
        f"{indent}    present = 0",
        *(f"{indent}    {line}" for line in optional),
        f"{indent}    if len({var}) != {required} + present:",
        f"{indent}        raise _Rejected",
    ]


def _json_check(compiled: _Compiled) -> Any:
    """`check(value) -> bool` of a nested model, for a value decoded from JSON."""
    namespace: dict[str, Any] = {"_MISSING": _MISSING, "_Rejected": _Rejected}
    fetch, tests, statements, optional = _json_fields(compiled, "d", namespace)
    required = len(compiled.required)
    if not fetch:  # no subscript proves `d` a dict (a list's length may match too)
        tests.insert(0, "type(d) is not dict")
    if not optional:
        tests.append(f"len(d) != {required}")
    lines = ["def check(d):", "    try:", *(f"        {line}" for line in fetch)]
    if tests:
        lines += ["        if " + " or ".join(tests) + ":", "            return False"]
    lines += [f"        {line}" for line in statements]
    if optional:
        lines += _size_check("d", required, optional, "        ")
    lines += ["    except (_Rejected, KeyError, TypeError):", "        return False", "    return True"]
    exec("\n".join(lines), namespace)
    return namespace["check"]


# The envelope fields, and the builders' names for them.
_ENVELOPE_V = (
    ("v", "v"),
    ("id", "event_id"),
    ("sessionId", "session_id"),
    ("turnId", "turn_id"),
    ("sequence", "sequence"),
    ("ts", "ts"),
    ("payload", "p"),
)


def _json_builder(type_name: str, compiled: _Compiled, with_v: bool) -> Any:
    """`build(data, expected) -> Event` for decoded lines of `type_name` with (or without) `v`,
    whose sequence must be `expected` (an int >= 2; anything else makes every line raise)."""
    namespace: dict[str, Any] = {
        "_MISSING": _MISSING,
        "_Rejected": _Rejected,
        "_new_event": _new_event,
        "_Event": Event,
        "_TYPE": type_name,
        "_ONE": _ONE,
    }
    fetch, tests, statements, optional = _json_fields(compiled, "p", namespace)
    required = len(compiled.required)
    checks = ["sequence ^ expected", f"len(data) != {8 if with_v else 7}"]
    if with_v:  # `v` must be the integer 1: `true` and `1.0` are not (see event_from_dict)
        checks.insert(0, "v is not _ONE")
    if not fetch:  # no subscript proves the payload a dict (an empty list has length 0 too)
        checks.append("type(p) is not dict")
    if not optional:
        checks.append(f"len(p) != {required}")
    lines = [
        "def build(data, expected):",
        # Plain subscripts: cheaper than one `itemgetter` call and unpacking its tuple.
        *(f"    {name} = data[{key!r}]" for key, name in _ENVELOPE_V[0 if with_v else 1 :]),
        *(f"    {line}" for line in fetch),
        "    if " + " or ".join(checks + tests) + ":",
        "        raise _Rejected",
        *_ENVELOPE_STRINGS,
        *(f"    {line}" for line in statements),
    ]
    if optional:
        lines += _size_check("p", required, optional, "    ")
    exec("\n".join(lines + _NEW_EVENT), namespace)
    return namespace["build"]


_ENVELOPE_STRINGS = [
    '    event_id + ""',
    '    session_id + ""',
    '    ts + ""',
    "    if turn_id is not None:",
    '        turn_id + ""',
]
"""A built `build`'s check that the envelope's ids and time are strings (`+ ""` raises otherwise)."""
_NEW_EVENT = [
    "    event = _new_event(_Event)",
    "    event.id = event_id",
    "    event.session_id = session_id",
    "    event.turn_id = turn_id",
    "    event.sequence = sequence",
    "    event.ts = ts",
    "    event.type = _TYPE",
    "    event.payload = p",
    "    return event",
]
"""The end of a built `build`: the checked line made an `Event` without pydantic."""


BUILDERS_WITH_V: dict[str, Any] = _PerType(lambda name: _json_builder(name, _COMPILED[name], True))
"""`build(data, expected)` by event type, for lines with `v` (the writer always writes it)."""
BUILDERS_WITHOUT_V: dict[str, Any] = _PerType(lambda name: _json_builder(name, _COMPILED[name], False))
"""The same for lines without `v` (valid, but not what `append` writes)."""


def event_from_dict(data: Any) -> Event:
    """Validate one decoded log line. Raises `EventValidationError` with a one-line reason."""
    # The fast path only decides "valid" (replay runs it per line, so it avoids set operations
    # and keyword calls); `_reject` finds out what is wrong.
    if type(data) is dict:
        try:
            type_name = data["type"]
            event_id = data["id"]
            session_id = data["sessionId"]
            turn_id = data["turnId"]
            sequence = data["sequence"]
            ts = data["ts"]
            payload = data["payload"]
        except KeyError:
            raise _reject(data) from None
        # All seven required keys are there, so the key set is right iff the only other is `v`.
        size = len(data)
        if (
            (size == 7 or (size == 8 and type(data.get("v")) is int and data["v"] == SCHEMA_VERSION))
            and type(type_name) is str
            and type(event_id) is str
            and type(session_id) is str
            and type(ts) is str
            and (turn_id is None or type(turn_id) is str)
            and type(sequence) is int
            and sequence >= 1
            and type_name in PAYLOADS
            and _COMPILED[type_name].check(payload)
        ):
            # Event's fields set directly: a keyword call costs as much as the checks above.
            event = _new_event(Event)
            event.id = event_id
            event.session_id = session_id
            event.turn_id = turn_id
            event.sequence = sequence
            event.ts = ts
            event.type = type_name
            event.payload = payload
            return event
    raise _reject(data)


def _reject(data: Any) -> EventValidationError:
    """The reason `data` is not an event, naming the first field that is wrong."""
    if type(data) is not dict:
        return EventValidationError(f"expected a JSON object, got {type(data).__name__}")
    if "type" not in data:
        return EventValidationError("type: field required")
    type_name = data["type"]
    if type(type_name) is not str or type_name not in PAYLOADS:
        return EventValidationError(f"type: unknown event type {type_name!r}")
    keys = data.keys()
    missing = sorted(_ENVELOPE_REQUIRED - keys)
    if missing:
        return EventValidationError(f"{missing[0]}: field required")
    extra = sorted(str(key) for key in keys - _ENVELOPE_KEYS)
    if extra:
        return EventValidationError(f"{extra[0]}: unexpected field")
    if "v" in data and (type(data["v"]) is not int or data["v"] != SCHEMA_VERSION):
        return EventValidationError(f"v: unsupported schema version {data['v']!r}")
    for name in ("id", "sessionId", "ts"):
        if type(data[name]) is not str:
            return EventValidationError(f"{name}: expected a string, got {_json_type(data[name])}")
    if data["turnId"] is not None and type(data["turnId"]) is not str:
        return EventValidationError(f"turnId: expected a string or null, got {_json_type(data['turnId'])}")
    sequence = data["sequence"]
    if type(sequence) is not int or sequence < 1:
        return EventValidationError(f"sequence: expected an integer >= 1, got {sequence!r}")
    try:
        PAYLOADS[type_name].model_validate(data["payload"], strict=True)
    except ValidationError as error:
        return EventValidationError(_describe(error, "payload."))
    return EventValidationError("payload: does not fit its schema")  # pragma: no cover


def _json_type(value: Any) -> str:
    names = {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def event_from_json(line: bytes | str) -> Event:
    """Decode and validate one log line (without its newline)."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        raise EventValidationError(json_problem(error)) from None
    return event_from_dict(data)


def payload_from(type_name: str, fields: dict[str, Any]) -> dict[str, Any]:
    """Build and validate the payload of a `type_name` event, as the JSON-ready dict it is stored as.

    Fields left as `None` are dropped, so the stored line carries only what is known. Keys come
    out in model order (nested models too) whatever order they were given in, so equal payloads
    serialize to equal bytes. `fields` is not copied when it already fits (the engine's path).
    """
    if type_name not in PAYLOADS:
        raise EventValidationError(f"unknown event type {type_name!r}")
    compiled = _COMPILED[type_name]
    try:
        return compiled.make(fields)
    except (_Rejected, KeyError, TypeError):
        pass
    payload = {key: value for key, value in fields.items() if value is not None}
    try:
        model = compiled.model.model_validate(payload)
    except ValidationError as error:
        raise EventValidationError(_describe(error, f"{type_name}.")) from None
    # exclude_unset: like the fast path, store what was given, not the model's defaults.
    return model.model_dump(mode="json", exclude_none=True, exclude_unset=True)
