"""A package's public names, each imported from its module the first time it is asked for.

A package imports its names under `if TYPE_CHECKING:` (what a type checker reads) and lists them
in `__all__`; `lazy_names(__name__, __file__)` gives back its module-level `__getattr__` and
`__dir__`, which read those same imports from the package's source the first time a name is
asked for (the way `lazy_loader` reads a stub): each name is written where it is imported and in
`__all__`, and nowhere else (a test holds the two equal). A name is imported once: its value is
then kept in the package's namespace, so later lookups never reach `__getattr__`. The packages use
it so a command imports only what it uses (`agent-tui --version`, the hook, `search` each ask a
package for one name and must not pay for the rest).

It lives on the bottom floor because every lazy package, the event schema's included, is above
or on it; it imports nothing but `sys` and `importlib` until a name is first asked for (the hook
counts every module it loads), then `ast` to read the imports.
"""

from __future__ import annotations

import sys
from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports a lazy package once per tool call: `typing` costs its start-up
    from collections.abc import Callable
    from typing import Any


def lazy_names(package: str, source: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose file is `source`."""
    homes: dict[str, tuple[str, str]] = {}  # name -> (module, its name there); read when first needed

    def home_of(name: str) -> tuple[str, str] | None:
        if not homes:
            homes.update(type_checking_imports(source, package))
        return homes.get(name)

    def load(name: str) -> Any:
        home = None if name.startswith("__") else home_of(name)  # `__path__`-style probes: no read
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home[0]), home[1])
        setattr(sys.modules[package], name, value)
        return value

    def listing() -> list[str]:
        home_of("")
        return sorted({*vars(sys.modules[package]), *homes})

    return load, listing


def type_checking_imports(source: str, package: str) -> dict[str, tuple[str, str]]:
    """What the `if TYPE_CHECKING:` blocks at the top level of `source` import, by the name each
    import binds: (the module's full name, the name there)."""
    import ast
    from importlib.util import resolve_name

    with open(source, "rb") as handle:
        tree = ast.parse(handle.read(), source)
    return {
        alias.asname or alias.name: (
            resolve_name("." * node.level + (node.module or ""), package),
            alias.name,
        )
        for block in tree.body
        if isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
