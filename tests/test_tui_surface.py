"""The dashboard stands on a small public surface: `tui/` imports nothing private of agent-tui.

Every module under `agent_tui/tui/` is parsed with `ast` (a module added later is checked too,
and an import inside a function counts like any other). Of agent-tui it may import only:
- `agent_tui.ports`: the engine and runtime names the dashboard may use;
- `agent_tui.reducer`, `agent_tui.replay`, `agent_tui.events`: through their packages, and
  only names they list in `__all__` (never a submodule, never a name that merely happens to be
  in the package's namespace);
- its own modules, `agent_tui.tui.*`;
and never a name, nor a module, beginning with `_`.
"""

from __future__ import annotations

import ast
from importlib import import_module
from pathlib import Path
from typing import NamedTuple

import pytest
from support_imports import PACKAGE_ROOT, imported_module, module_name

import agent_tui.ports

TUI_ROOT = PACKAGE_ROOT / "tui"

PUBLIC_SURFACE = ("agent_tui.ports", "agent_tui.reducer", "agent_tui.replay", "agent_tui.events")
"""The modules of agent-tui (outside `tui/` itself) that the dashboard may import from."""

PORT_HOMES = (
    "agent_tui.engine",
    "agent_tui.runtime",
    "agent_tui.turns",
    "agent_tui.demo",
    "agent_tui.export",
    "agent_tui.search",
    "agent_tui.bus",
    "agent_tui.costs",
    "agent_tui.mcp",
    "agent_tui.terminal",
)
"""Where the names `agent_tui.ports` re-exports are defined."""


class TuiImport(NamedTuple):
    where: str  # `agent_tui/tui/app.py:12`, for messages
    module: str  # absolute (`agent_tui.ports`)
    name: str | None  # the name taken from it (`from M import name`), None for `import M`


def tui_imports(source: str, module: str, *, is_package: bool, where: str = "<source>") -> list[TuiImport]:
    """Every import of agent-tui in `source` (module `module`), relative ones made absolute."""
    found: list[TuiImport] = []
    for node in ast.walk(ast.parse(source)):
        at = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            found += [TuiImport(at, alias.name, None) for alias in node.names if _ours(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            target = imported_module(node, module, is_package=is_package)
            if _ours(target):
                found += [TuiImport(at, target, alias.name) for alias in node.names]
    return found


def _ours(module: str) -> bool:
    return module.split(".")[0] == "agent_tui"


def problems_of(found: TuiImport) -> list[str]:
    """Why `found` is not allowed in `tui/` (empty when it is)."""
    problems = []
    parts = found.module.split(".")
    if any(part.startswith("_") for part in parts) or (found.name or "").startswith("_"):
        problems.append("a private name")
    own = parts[:2] == ["agent_tui", "tui"]
    if not own and found.module not in PUBLIC_SURFACE:
        problems.append(f"not the public surface ({', '.join(PUBLIC_SURFACE)})")
    elif not own and found.name is not None and found.name not in import_module(found.module).__all__:
        problems.append(f"{found.name} is not in {found.module}.__all__")
    return problems


def tui_modules() -> list[Path]:
    return sorted(TUI_ROOT.rglob("*.py"))


def all_tui_imports() -> list[TuiImport]:
    found: list[TuiImport] = []
    for path in tui_modules():
        where = str(path.relative_to(PACKAGE_ROOT.parent))
        source = path.read_text(encoding="utf-8")
        found += tui_imports(source, module_name(path), is_package=path.name == "__init__.py", where=where)
    return found


def test_the_tui_imports_only_the_public_surface_of_agent_tui() -> None:
    wrong = [
        f"{found.where}: {found.module}{f' → {found.name}' if found.name else ''}: {'; '.join(problems)}"
        for found in all_tui_imports()
        if (problems := problems_of(found))
    ]
    assert not wrong, "\n".join(wrong)


def test_the_scan_sees_the_tui_importing_each_part_of_its_surface() -> None:
    # Guards the test above against a scanner that finds nothing: the dashboard really uses
    # every part of its surface, and the scan must see each use.
    used = {found.module for found in all_tui_imports()}
    assert set(PUBLIC_SURFACE) <= used, sorted(set(PUBLIC_SURFACE) - used)
    assert len(tui_modules()) > 20


@pytest.mark.parametrize("name", agent_tui.ports.__all__)
def test_every_port_is_the_engines_or_runtimes_own_object(name: str) -> None:
    value = getattr(agent_tui.ports, name)
    home = getattr(value, "__module__", "")
    assert home.startswith(PORT_HOMES), home


class TestTheSurfaceCheck:
    """The check above is only as good as its rules: each kind of breach must be caught."""

    @pytest.mark.parametrize(
        ("source", "why"),
        [
            ("from agent_tui.engine.permissions import PermissionAnswer\n", "not the public surface"),
            ("from agent_tui.runtime.workbench import AgentSpec\n", "not the public surface"),
            ("from agent_tui.reducer.state import epoch_ms\n", "not the public surface"),
            ("from agent_tui.replay.timeline import Timeline\n", "not the public surface"),
            ("import agent_tui.engine.engine\n", "not the public surface"),
            ("import agent_tui\n", "not the public surface"),
            ("from agent_tui import SessionEngine\n", "not the public surface"),
            ("def later():\n    from agent_tui.engine import scenario\n", "not the public surface"),
            ("from ...engine.scenario import load_scenario\n", "not the public surface"),
            ("from agent_tui.replay import timeline\n", "timeline is not in agent_tui.replay.__all__"),
            ("from agent_tui.reducer import state\n", "state is not in agent_tui.reducer.__all__"),
            ("from agent_tui.ports import _private\n", "a private name"),
            ("from agent_tui.tui.widgets.scrubber import _cell_style\n", "a private name"),
            ("from agent_tui.tui import _theme\n", "a private name"),
        ],
    )
    def test_a_breach_is_named(self, source: str, why: str) -> None:
        found = tui_imports(source, "agent_tui.tui.screens.sample", is_package=False)
        assert found, source
        assert any(why in problem for item in found for problem in problems_of(item)), source

    @pytest.mark.parametrize(
        "source",
        [
            "from agent_tui.ports import PermissionAnswer, Questions\n",
            "from agent_tui.reducer import DashboardState, epoch_ms\n",
            "from agent_tui.replay import Timeline\n",
            "from agent_tui.events import Event\n",
            "from agent_tui.tui.messages import SessionSelected\n",
            "from ..formatting import short_path\n",
            "import textual.app\n",
        ],
    )
    def test_the_surface_itself_passes(self, source: str) -> None:
        found = tui_imports(source, "agent_tui.tui.screens.sample", is_package=False)
        assert [problem for item in found for problem in problems_of(item)] == []
