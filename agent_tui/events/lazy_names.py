"""A package's public names, each imported from its module the first time it is asked for.

A package lists which module holds each of its names (`{".model": ("Event", ...)}`; a module
outside the package by its full name); `lazy_names` gives back the package's module-level
`__getattr__` and `__dir__` (its `__all__` stays a list written out, as type checkers read it). A name is imported once: its value is then kept in the
package's namespace, so later lookups never reach `__getattr__`. The packages use it so a command
imports only what it uses (`agent-tui --version`, the hook, `search` each ask a package for one
name and must not pay for the rest); the names a type checker sees stay the package's own
`TYPE_CHECKING` imports.

It lives on the bottom floor because every lazy package, the event schema's included, is above
or on it; it imports nothing but `sys` and `importlib` (the hook counts every module it loads).
"""

from __future__ import annotations

import sys
from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports a lazy package once per tool call: `typing` costs its start-up
    from collections.abc import Callable, Mapping
    from typing import Any


def lazy_names(
    package: str, modules: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose names are in `modules`."""
    home = {name: module for module, names in modules.items() for name in names}

    def load(name: str) -> Any:
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def listing() -> list[str]:
        return sorted({*vars(sys.modules[package]), *home})

    return load, listing
