"""Field-by-field copies and constructors of the reducer's views, generated from their fields.

The fold builds a turn view and a tool call view many times per turn, and a replay checkpoint
copies every running turn; a dataclass's generated `__init__` (with its default factories) or
`copy.copy` costs several times a straight run of attribute stores. So, the way `dataclasses`
builds `__init__`, each copy and each constructor the fold needs is generated once, as
straight-line source, from `dataclasses.fields(cls)`: a field added to a view is copied and
initialised without anyone having to remember it.

Invariants:
- `compiled_copy(cls, fresh=..., shared=...)` gives `copy(obj)`: a new `cls` whose every field
  is `fresh[name](value)` where `fresh` names the field, else the same value (shared). A field
  with a default factory (a list or a dict: mutable) must be named in `fresh` or `shared`,
  otherwise this raises `TypeError` when the view's module is imported: a forgotten list would
  be shared between copies;
- `compiled_new(cls, params)` gives `new(*values)`, equal to `cls(**dict(zip(params, values)))`:
  every other field gets its default (a new `[]` or `{}` for those factories, any other factory
  called);
- neither runs `__init__`, so both refuse a class with a `__post_init__` or a frozen one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

V = TypeVar("V")

_LITERAL_TYPES = (type(None), bool, int, float, str)
_FACTORY_LITERALS: dict[Any, str] = {list: "[]", dict: "{}"}
_RESERVED = frozenset({"new", "self", "_new", "_cls"})


def compiled_copy(
    cls: type[V], fresh: Mapping[str, Callable[[Any], Any]] | None = None, shared: Iterable[str] = ()
) -> Callable[[V], V]:
    """A function copying a `cls` field by field (see the module docstring).

    Args:
        cls: a dataclass.
        fresh: field name → what makes the copy's own value from the original's.
        shared: fields with a mutable default that copies share on purpose.

    Returns:
        `copy(obj) -> cls`.
    """
    fresh = fresh or {}
    shared = frozenset(shared)
    fields = _fields_of(cls, set(fresh) | shared)
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    lines = ["def copy(self):", "    new = _new(_cls)"]
    for f in fields:
        name = f.name
        if name in fresh:
            namespace[f"_fresh_{name}"] = fresh[name]
            lines.append(f"    new.{name} = _fresh_{name}(self.{name})")
        elif f.default_factory is not dataclasses.MISSING and name not in shared:
            raise TypeError(
                f"{cls.__name__}.{name} has a mutable default: give `fresh` what makes a copy's own, "
                "or name it in `shared`"
            )
        else:
            lines.append(f"    new.{name} = self.{name}")
    lines.append("    return new")
    return _compile(lines, namespace, "copy", cls)


def compiled_new(cls: type[V], params: tuple[str, ...]) -> Callable[..., V]:
    """A constructor of `cls` taking `params` (field names) positionally, every other field its default.

    Args:
        cls: a dataclass.
        params: the fields the constructor takes, in order.

    Returns:
        `new(*values) -> cls`, equal to `cls(**dict(zip(params, values)))`.
    """
    fields = _fields_of(cls, set(params))
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    lines = [f"def new({', '.join(params)}):", "    new = _new(_cls)"]
    for f in fields:
        name = f.name
        if name in params:
            value = name
        elif f.default is not dataclasses.MISSING:
            if type(f.default) in _LITERAL_TYPES or f.default == ():
                value = repr(f.default)
            else:
                namespace[f"_default_{name}"] = f.default
                value = f"_default_{name}"
        elif f.default_factory is not dataclasses.MISSING:
            value = _FACTORY_LITERALS.get(f.default_factory, "")
            if not value:
                namespace[f"_factory_{name}"] = f.default_factory
                value = f"_factory_{name}()"
        else:
            raise TypeError(f"{cls.__name__}.{name} has no default: name it in `params`")
        lines.append(f"    new.{name} = {value}")
    lines.append("    return new")
    return _compile(lines, namespace, "new", cls)


def _fields_of(cls: type[Any], named: set[str]) -> tuple[dataclasses.Field[Any], ...]:
    if not dataclasses.is_dataclass(cls) or cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__name__} is not a mutable dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__ that a compiled copy would skip")
    fields = dataclasses.fields(cls)
    unknown = named - {f.name for f in fields}
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
    if named & _RESERVED:  # the generated source's own names
        raise TypeError(f"{cls.__name__}: a field named {', '.join(sorted(named & _RESERVED))}")
    return fields


def _compile(lines: list[str], namespace: dict[str, Any], name: str, cls: type[Any]) -> Any:
    exec("\n".join(lines), namespace)
    function = namespace[name]
    function.__qualname__ = f"{cls.__qualname__}.<compiled {name}>"
    return function
