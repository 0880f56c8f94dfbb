"""What the import checks share: naming a module of `agent_tui` and resolving what it imports.

`module_name` turns a file of the package into its dotted name; `imported_module` makes the
target of a `from ... import` absolute, resolving a relative one against the importing module's
package (a package's `__init__` is its own package).
"""

from __future__ import annotations

import ast
from pathlib import Path

import agent_tui

PACKAGE_ROOT = Path(agent_tui.__file__).resolve().parent


def module_name(path: Path) -> str:
    """`agent_tui/tui/app.py` → `agent_tui.tui.app`; a package's `__init__.py` → the package."""
    names = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
    if names[-1] == "__init__":
        names.pop()
    return ".".join(names)


def imported_module(node: ast.ImportFrom, module: str, *, is_package: bool) -> str:
    """The absolute name of the module `node` (in module `module`) imports from."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, *(node.module.split(".") if node.module else [])])
