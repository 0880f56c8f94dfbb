"""A lazy package's names come from its own `TYPE_CHECKING` imports: what the type checker reads is
what `__getattr__` loads, and `__all__` lists the same names.

Each of our lazy packages is checked name for name in a fresh process; a package written here
checks the reading itself (relative imports, `as` names, a probe for a dunder that reads nothing).
"""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

import agent_tui
from agent_tui.events.lazy_names import type_checking_imports

ROOT = Path(agent_tui.__file__).parent
LAZY = sorted(
    ".".join(path.with_suffix("").relative_to(ROOT.parent).parts).removesuffix(".__init__")
    for path in ROOT.rglob("*.py")
    if "\n__getattr__, __dir__ = lazy_names(__name__, __file__)\n" in path.read_text(encoding="utf-8")
)

EACH_NAME = """
import sys
from importlib import import_module
from agent_tui.events.lazy_names import type_checking_imports
package = import_module(sys.argv[1])
homes = type_checking_imports(package.__file__, package.__name__)
wrong = [
    name for name, (module, there) in homes.items()
    if getattr(package, name) is not getattr(import_module(module), there)
]
print(sorted(package.__all__) == sorted(homes), wrong, set(dir(package)) >= set(homes))
"""


def test_every_lazy_package_is_found() -> None:
    assert {"agent_tui.ports", "agent_tui.events", "agent_tui.reducer", "agent_tui.replay"} <= set(LAZY)


@pytest.mark.parametrize("package", LAZY)
def test_each_name_is_loaded_from_where_the_type_checker_reads_it(package: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", EACH_NAME, package], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "[]", "True"]
    assert type_checking_imports(import_module(package).__file__ or "", package)  # it has names


def test_relative_imports_and_other_names_are_read_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "lazypkg"
    package.mkdir()
    (package / "one.py").write_text("VALUE = 1\nOTHER = 2\n")
    (package / "two.py").write_text("def made() -> str:\n    return 'two'\n")
    (package / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "from agent_tui.events.lazy_names import lazy_names\n"
        "if TYPE_CHECKING:\n"
        "    from .one import VALUE, OTHER as renamed\n"
        "    from lazypkg.two import made\n"
        "    import json  # not a name of the package\n"
        "if False:\n"
        "    from .one import VALUE as never\n"
        "__getattr__, __dir__ = lazy_names(__name__, __file__)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    lazy = import_module("lazypkg")
    assert not hasattr(lazy, "__wrapped__")  # a probe for a dunder reads nothing, loads nothing
    assert "lazypkg.one" not in sys.modules
    assert (lazy.VALUE, lazy.renamed, lazy.made()) == (1, 2, "two")
    for missing in ("OTHER", "never", "json"):
        with pytest.raises(AttributeError, match=f"module 'lazypkg' has no attribute '{missing}'"):
            getattr(lazy, missing)
    assert {"VALUE", "renamed", "made"} <= set(dir(lazy))
    monkeypatch.delitem(sys.modules, "lazypkg")
    for name in ("lazypkg.one", "lazypkg.two"):
        monkeypatch.delitem(sys.modules, name, raising=False)
