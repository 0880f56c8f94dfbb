"""A `DashboardState` as bytes and back: the reducer's state at a point, kept to be folded on.

A host on the bus keeps such a snapshot so that an attaching dashboard folds only what came after
it (docs/remote.md, "Snapshots"). The bytes are JSON (orjson), never pickle: reading them runs no
code, and every value is checked against the type the views declare.

Invariants:
- `state_from_bytes(state_to_bytes(s)) == s` for every state the fold builds, and folding the
  same events into either gives equal states (the derived indexes, the session tree and the
  pending approvals, are rebuilt as the fold builds them);
- the encoding is generated from the views' own fields and type hints (`_codec`), so a field
  added to a view is written and read without a line written for it; `SCHEMA` is a digest of
  those fields and types, and bytes written under another schema (or another `FORMAT`) are
  refused as such (`SnapshotRefused`), never read into the wrong fields;
- reading never raises anything but `SnapshotRefused` (one sentence, no traceback): bytes over
  `max_bytes`, JSON that is not the schema's (a wrong type, a value a `Literal` does not allow, a
  missing or extra field), nested deeper than the views go, all refused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import orjson

from agent_tui.reducer.views import DashboardState, PermissionView, SessionView, tree_order

FORMAT = 1
"""The snapshot's format version: bumped when its layout (not the views) changes."""
MAX_BYTES = 256 * 1024 * 1024
"""The largest snapshot read by default."""


class SnapshotRefused(Exception):
    """A snapshot that cannot be read: its one-sentence reason."""


def _tuple_class(cls: type) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def _fields(cls: type) -> list[tuple[str, Any]]:
    """(name, type) of each field of a dataclass or a NamedTuple, in order."""
    hints = typing.get_type_hints(cls)
    if _tuple_class(cls):
        return [(name, hints[name]) for name in cls._fields]  # type: ignore[attr-defined]
    return [(f.name, hints[f.name]) for f in dataclasses.fields(cls)]


def _schema_text(root: type) -> str:
    """Every class the state holds, with its fields and their types, as one text."""
    seen: dict[str, str] = {}

    def visit(kind: Any) -> None:
        origin = typing.get_origin(kind)
        if origin is not None:
            for arg in typing.get_args(kind):
                if not isinstance(arg, str):
                    visit(arg)
            return
        if isinstance(kind, type) and (dataclasses.is_dataclass(kind) or _tuple_class(kind)):
            if kind.__qualname__ in seen:
                return
            fields = _fields(kind)
            seen[kind.__qualname__] = ",".join(f"{name}:{kind_!r}" for name, kind_ in fields)
            for _, kind_ in fields:
                visit(kind_)

    visit(root)
    return ";".join(f"{name}({fields})" for name, fields in sorted(seen.items()))


_KEPT_OUT = {"_tree", "_pending"}
"""`DashboardState`'s derived indexes: rebuilt from the sessions, never written."""


def _state_fields() -> list[tuple[str, Any]]:
    return [(name, kind) for name, kind in _fields(DashboardState) if name not in _KEPT_OUT]


SCHEMA = hashlib.sha256((_schema_text(SessionView) + "|" + repr(_state_fields())).encode()).hexdigest()[:16]
"""A digest of the views' fields and types: a snapshot written under another is not read."""


# -- encoding: views become JSON lists of their fields' values ---------------------------------
def _encode(value: Any) -> Any:
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return [_encode(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [_encode(getattr(value, f.name)) for f in dataclasses.fields(value)]
    if isinstance(value, dict):
        return {key: _encode(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(item) for item in value]
    return value


def state_to_bytes(state: DashboardState) -> bytes:
    """The state as JSON bytes: `{"format", "schema", "state"}`."""
    body = [_encode(getattr(state, name)) for name, _ in _state_fields()]
    return orjson.dumps({"format": FORMAT, "schema": SCHEMA, "state": body})


# -- decoding: each value checked against its declared type ------------------------------------
# A decoder reads one value; what went wrong raises `_Wrong`, to which each enclosing record,
# object and list adds its field, key or index on the way out: the path is built only for the
# one value that fails, never for the millions that read well.
Decode = Callable[[Any], Any]
_PLAIN = (str, int, float, bool, type(None))


class _Wrong(Exception):
    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what
        self.path: list[str] = []

    def within(self, step: str) -> _Wrong:
        self.path.append(step)
        return self

    def sentence(self) -> str:
        where = "".join(reversed(self.path)).lstrip(".")
        return f"{where or 'the state'}: {self.what}"


def _json_value(value: Any, depth: int = 0) -> Any:
    """A JSON value as it is (`Any` in the views): only checked not to be nested too deep."""
    if type(value) in _PLAIN:
        return value
    if depth > 64:
        raise _Wrong("nested too deep")
    if type(value) is dict:
        return {key: _json_value(item, depth + 1) for key, item in value.items()}
    return [_json_value(item, depth + 1) for item in value]


_SCALARS: dict[Any, tuple[type, ...]] = {str: (str,), bool: (bool,), float: (float, int), int: (int,)}


def _decoder(kind: Any) -> Decode:  # one branch per kind of type the views use
    """What reads a JSON value as `kind`, checking it (built once per type)."""
    if kind is Any:
        return _json_value
    if kind in _SCALARS:
        return _scalar(kind)
    if kind is type(None):
        return _none
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin is Literal:
        return _literal(frozenset(args))
    if origin in (typing.Union, types.UnionType):
        return _union(kind, args)
    if origin is dict:
        return _mapping(_decoder(args[1]))
    if origin in (list, tuple):
        ellipsis = origin is tuple and len(args) == 2 and args[1] is Ellipsis
        if ellipsis or origin is list:
            return _sequence(_decoder(args[0]), list if origin is list else tuple)
        return _fixed_tuple([_decoder(arg) for arg in args])
    if isinstance(kind, type) and (dataclasses.is_dataclass(kind) or _tuple_class(kind)):
        return _record_decoder(kind)
    raise TypeError(f"no snapshot decoder for {kind!r}")  # a view's new kind of type: add one


def _scalar(kind: type) -> Decode:
    allowed = _SCALARS[kind]

    def scalar(value: Any) -> Any:
        if type(value) not in allowed:
            raise _Wrong(f"{type(value).__name__} where {kind.__name__} belongs")
        return float(value) if kind is float else value

    return scalar


def _none(value: Any) -> None:
    if value is not None:
        raise _Wrong("a value where none belongs")


def _literal(words: frozenset[str]) -> Decode:
    def literal(value: Any) -> Any:
        if type(value) is not str or value not in words:
            raise _Wrong(f"{str(value)[:40]!r} is not one of {sorted(words)}")
        return value

    return literal


def _union(kind: Any, args: tuple[Any, ...]) -> Decode:
    options = [_decoder(arg) for arg in args if arg is not type(None)]
    optional = len(options) < len(args)

    def union(value: Any) -> Any:
        if value is None and optional:
            return None
        for option in options:
            try:
                return option(value)
            except _Wrong:
                continue
        raise _Wrong(f"a {type(value).__name__} that is none of {kind}")

    return union


def _mapping(read: Decode) -> Decode:
    def mapping(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise _Wrong("not an object")
        try:
            return {key: read(item) for key, item in value.items()}
        except _Wrong as wrong:
            raise wrong.within(f".{_failing_key(value, read)[:40]}") from None

    return mapping


def _failing_key(value: dict[str, Any], read: Decode) -> str:
    for key, item in value.items():
        try:
            read(item)
        except _Wrong:
            return key
    return "?"


def _sequence(read: Decode, make: type) -> Decode:
    def sequence(value: Any) -> Any:
        if type(value) is not list:
            raise _Wrong("not a list")
        n = 0
        try:
            out = []
            for n, item in enumerate(value):  # noqa: B007 (n names the item that fails)
                out.append(read(item))
        except _Wrong as wrong:
            raise wrong.within(f"[{n}]") from None
        return out if make is list else tuple(out)

    return sequence


def _fixed_tuple(reads: list[Decode]) -> Decode:
    def fixed(value: Any) -> tuple[Any, ...]:
        if type(value) is not list or len(value) != len(reads):
            raise _Wrong(f"not a list of {len(reads)}")
        n = 0
        try:
            out = []
            for n, (read, item) in enumerate(zip(reads, value, strict=True)):  # noqa: B007
                out.append(read(item))
        except _Wrong as wrong:
            raise wrong.within(f"[{n}]") from None
        return tuple(out)

    return fixed


_RECORDS: dict[type, Decode] = {}


def _record_decoder(cls: type) -> Decode:
    """A dataclass or NamedTuple from the list of its fields' values."""
    if cls in _RECORDS:
        return _RECORDS[cls]
    reads: list[tuple[str, Decode]] = []
    positional = _tuple_class(cls)

    def record(value: Any) -> Any:
        if type(value) is not list or len(value) != len(reads):
            raise _Wrong(f"not a {cls.__name__}")
        name = ""
        try:
            values = {}
            for (name, read), item in zip(reads, value, strict=True):
                values[name] = read(item)
        except _Wrong as wrong:
            raise wrong.within(f".{name}") from None
        return cls(*values.values()) if positional else cls(**values)

    _RECORDS[cls] = record  # before the fields: a view that holds its own kind
    reads.extend((name, _decoder(kind)) for name, kind in _fields(cls))
    return record


class _Header(NamedTuple):
    format: int
    schema: str


def state_from_bytes(data: bytes, max_bytes: int = MAX_BYTES) -> DashboardState:
    """The state `state_to_bytes` wrote.

    Raises:
        SnapshotRefused: too big, not JSON, another format or schema, or not the views' shape.
    """
    if len(data) > max_bytes:
        raise SnapshotRefused(f"{len(data):,} bytes, over the {max_bytes:,} a snapshot may hold")
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise SnapshotRefused(f"not JSON ({error})") from None
    if type(document) is not dict or set(document) != {"format", "schema", "state"}:
        raise SnapshotRefused("not a snapshot (no format, schema and state)")
    header = _Header(document["format"], document["schema"])
    if header.format != FORMAT or header.schema != SCHEMA:
        raise SnapshotRefused(
            f"written in format {str(header.format)[:20]} (schema {str(header.schema)[:20]}); "
            f"this dashboard reads format {FORMAT} (schema {SCHEMA})"
        )
    body = document["state"]
    fields = _state_fields()
    if type(body) is not list or len(body) != len(fields):
        raise SnapshotRefused("the state: not a dashboard state")
    values = {}
    for (name, kind), item in zip(fields, body, strict=True):
        try:
            values[name] = _decoder(kind)(item)
        except _Wrong as wrong:
            raise SnapshotRefused(wrong.within(name).sentence()) from None
    return _rebuilt(DashboardState(**values))


def _rebuilt(state: DashboardState) -> DashboardState:
    """The derived indexes, as the fold builds them: each session linked under its parent (by
    `tree_order`), and every pending approval in arrival order."""
    for sid, session in state.sessions.items():
        if session.session_id != sid:
            raise SnapshotRefused(f"sessions.{sid[:40]}: holds session {session.session_id[:40]!r}")
        if session.parent_session_id is not None:
            state._tree.link(sid, session.parent_session_id, tree_order(session))
    pending: list[PermissionView] = [view for s in state.sessions.values() for view in s.pending.values()]
    pending.sort(key=lambda view: view.order)
    for view in pending:
        state._pending[(view.session_id, view.request_id)] = view
    return state


__all__ = ["FORMAT", "MAX_BYTES", "SCHEMA", "SnapshotRefused", "state_from_bytes", "state_to_bytes"]
