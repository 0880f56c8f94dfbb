"""The house rules that code can check: each package imports only from the floors below it, the
libraries with a room of their own stay in it, and the CLI starts without the heavy parts.

The floors are the table below (docs/architecture.md explains them). Every module under
`agent_tui/` is parsed with `ast`, including ones added after this test was written, and every
`import` in it counts: at the top, inside a function, under `TYPE_CHECKING`.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import NamedTuple

import pytest
from support_imports import PACKAGE_ROOT, imported_module, module_name

import agent_tui

FLOORS: dict[str, int] = {
    "events": 0,
    "costs": 0,  # prices and what tokens cost: data the reducer, engine and importers share
    "demo": 0,
    "private_files": 0,  # the files and folders agent-tui keeps: 0600 in 0700, whose they are
    "store": 1,
    "turns": 1,
    "safety": 1,
    "importers": 1,
    "reducer": 1,
    "engine": 2,
    "replay": 2,
    "export": 2,
    "providers": 3,
    "search": 3,  # reads logs (store, replay's sources); the dashboard reaches it through ports
    "mcp": 4,  # MCP servers' tools: the config file's [mcp.NAME], the SDK, tools for the engine
    "runtime": 5,
    "acp": 6,
    "terminal": 6,  # Claude Code and Codex run in the user's terminals: hooks, transcripts followed
    "bus": 7,  # hosts and attached dashboards: runs the runtime's agents, publishes their events
    "ports": 8,  # what the dashboard may use of the engine and the runtime
    "tui": 9,
    "web": 9,  # the attached dashboard served to browsers: runs `agent-tui attach` per tab
    "cli": 10,
    "__main__": 11,  # `python -m agent_tui`: runs the CLI
}
"""Each part of `agent_tui` (a package, or a top-level module) and its floor: a part may import
only parts on lower floors, never one on its own floor or above."""

LIBRARY_HOMES: dict[str, frozenset[str]] = {
    "textual": frozenset({"tui"}),
    "openai": frozenset({"providers"}),
    "anthropic": frozenset({"providers"}),
    "acp": frozenset({"acp"}),
    "tree_sitter": frozenset({"safety"}),
    "tree_sitter_bash": frozenset({"safety"}),
    "re2": frozenset({"engine"}),
    "nats": frozenset({"bus"}),
    "textual_serve": frozenset({"web"}),
    "aiohttp": frozenset({"web"}),
    "mcp": frozenset({"mcp"}),
    "mcp_types": frozenset({"mcp"}),
    "genai_prices": frozenset({"costs"}),
    "setproctitle": frozenset({"cli"}),
}
"""Third-party libraries with a room of their own, and the only parts that may import them."""


class Import(NamedTuple):
    path: str  # relative to the repository, for messages
    line: int
    module: str  # the absolute name imported (`agent_tui.events.model`, `textual.app`)


def part_of(module: str) -> str | None:
    """The part of `agent_tui` a module name belongs to (`agent_tui.engine.tools.router` → engine),
    or None for the root package itself and for anything outside `agent_tui`."""
    names = module.split(".")
    if names[0] != "agent_tui" or len(names) == 1:
        return None
    return names[1]


def package_modules() -> list[Path]:
    """The files of `agent_tui` that are modules of it: every folder above them is a package.

    (The demo's scratch project under `demo/workspace/` is data, not part of the package.)
    """
    modules = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        folders = [PACKAGE_ROOT / above for above in path.relative_to(PACKAGE_ROOT).parents]
        if all((folder / "__init__.py").exists() for folder in folders):
            modules.append(path)
    return modules


def imports_in(source: str, module: str, *, is_package: bool, path: str = "<source>") -> list[Import]:
    """Every module that `source` (the text of module `module`) imports, as absolute names.

    Relative imports are resolved against the module's package. `from agent_tui import Name`
    counts as importing the module that `agent_tui` loads `Name` from (its lazy public names).
    """
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [Import(path, node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = imported_module(node, module, is_package=is_package)
            if target == "agent_tui":
                for alias in node.names:
                    lazy = agent_tui._HOMES.get(alias.name)
                    sub = f"agent_tui.{alias.name}"
                    if lazy is not None:
                        found.append(Import(path, node.lineno, lazy))
                    elif (PACKAGE_ROOT / alias.name).is_dir() or (PACKAGE_ROOT / f"{alias.name}.py").exists():
                        found.append(Import(path, node.lineno, sub))
            elif node.module is None:  # `from . import x`: x may be a module of the package
                found += [Import(path, node.lineno, f"{target}.{alias.name}") for alias in node.names]
            else:
                found.append(Import(path, node.lineno, target))
    return sorted(found, key=lambda found: found.line)


@cache
def all_imports() -> dict[str, list[Import]]:
    """Every import of every module under `agent_tui/`, by the importing part."""
    by_part: dict[str, list[Import]] = {}
    for path in package_modules():
        module = module_name(path)
        part = part_of(module)
        if part is None:
            continue  # agent_tui/__init__.py: lazy names only, it imports no part
        shown = str(path.relative_to(PACKAGE_ROOT.parent))
        source = path.read_text(encoding="utf-8")
        found = imports_in(source, module, is_package=path.name == "__init__.py", path=shown)
        by_part.setdefault(part, []).extend(found)
    return by_part


def parts_on_disk() -> set[str]:
    parts = {p.name for p in PACKAGE_ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    parts |= {p.stem for p in PACKAGE_ROOT.glob("*.py") if p.name != "__init__.py"}
    return parts


def test_every_part_of_the_package_has_a_floor() -> None:
    # A new package must be placed in the house (and in docs/architecture.md) before it lands.
    missing = sorted(parts_on_disk() - set(FLOORS))
    assert not missing, f"give these a floor in FLOORS: {missing}"


@pytest.mark.parametrize("part", sorted(FLOORS))
def test_a_part_imports_only_from_lower_floors(part: str) -> None:
    floor = FLOORS[part]
    upward = [
        f"{found.path}:{found.line}: imports {found.module} (floor {FLOORS.get(other, 'none')}, not below {floor})"
        for found in all_imports().get(part, [])
        if (other := part_of(found.module)) is not None
        and other != part
        and FLOORS.get(other, floor) >= floor
    ]
    assert not upward, "\n".join(upward)


@pytest.mark.parametrize("library", sorted(LIBRARY_HOMES))
def test_a_library_with_a_room_is_imported_only_there(library: str) -> None:
    homes = LIBRARY_HOMES[library]
    strays = [
        f"{found.path}:{found.line}: imports {found.module} (only {', '.join(sorted(homes))} may)"
        for part, found_list in all_imports().items()
        if part not in homes
        for found in found_list
        if found.module.split(".")[0] == library
    ]
    assert not strays, "\n".join(strays)


class TestTheImportScanner:
    """The checks above are only as good as the scanner: it must see every kind of import."""

    def test_absolute_relative_nested_and_lazy_imports_are_all_found(self) -> None:
        source = (
            "import textual.app\n"
            "from agent_tui.events import Event\n"
            "from . import sink\n"
            "from .frames import Frame\n"
            "from ..store import jsonl\n"
            "from agent_tui import SessionEngine, reducer, __version__\n"
            "def later():\n"
            "    import agent_tui.engine.engine\n"
            "if False:\n"
            "    from agent_tui.runtime.runner import ScenarioRun\n"
        )
        found = [i.module for i in imports_in(source, "agent_tui.turns.registry", is_package=False)]
        assert found == [
            "textual.app",
            "agent_tui.events",
            "agent_tui.turns.sink",
            "agent_tui.turns.frames",
            "agent_tui.store",
            "agent_tui.engine.engine",
            "agent_tui.reducer",
            "agent_tui.engine.engine",
            "agent_tui.runtime.runner",
        ]

    def test_relative_imports_in_a_package_init_resolve_against_the_package(self) -> None:
        found = imports_in("from .model import Event\n", "agent_tui.events", is_package=True)
        assert [i.module for i in found] == ["agent_tui.events.model"]

    def test_it_sees_the_imports_the_house_is_built_on(self) -> None:
        seen = {
            (part, part_of(found.module) or found.module.split(".")[0])
            for part, imports in all_imports().items()
            for found in imports
        }
        for edge in [("store", "events"), ("engine", "turns"), ("tui", "textual"), ("cli", "tui")]:
            assert edge in seen, edge


def test_nothing_outside_tui_loads_textual_when_imported() -> None:
    # The static check sees our own imports; this one also catches a dependency that drags
    # Textual in. Every module outside `tui/` is imported in one fresh interpreter.
    modules = [
        module_name(path)
        for path in package_modules()
        if part_of(module_name(path)) not in (None, "tui", "__main__")
    ]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_public_names_resolve_lazily() -> None:
    code = "import sys, agent_tui; print('agent_tui.engine.engine' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    for name in agent_tui.__all__:
        assert getattr(agent_tui, name) is not None


def test_help_does_not_import_the_engine_or_textual() -> None:
    code = (
        "import sys\nfrom agent_tui.cli import main\ntry:\n    main(['--help'])\n"
        "except SystemExit:\n    pass\n"
        "print(any(m.startswith(('textual', 'agent_tui.engine', 'pydantic')) for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"


def module_graph() -> dict[str, set[str]]:
    """Which module of `agent_tui` imports which (any import: at the top, in a function, under
    `TYPE_CHECKING`), `from package import module` counted as importing that module."""
    modules = {module_name(path): path for path in package_modules()}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                edges |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                target = imported_module(node, module, is_package=is_package)
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    edges.add(sub if sub in modules else target)
        graph[module] = {edge for edge in edges if edge in modules and edge != module}
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, round a circle (Tarjan's components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(graph.get(module, ())):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


KNOWN_CIRCLES: list[list[str]] = [
    # The test fails when one is cut and left here, or a new one appears.
]


def test_no_module_imports_itself_round_a_circle() -> None:
    """Not even under `TYPE_CHECKING`: a circle means modules that cannot be read apart."""
    circles = sorted(import_circles(module_graph()))
    new = [circle for circle in circles if circle not in KNOWN_CIRCLES]
    assert not new, "modules importing each other: " + "; ".join(" ↔ ".join(c) for c in new)
    cut = [circle for circle in KNOWN_CIRCLES if circle not in circles]
    assert not cut, f"these circles are gone: take them out of KNOWN_CIRCLES: {cut}"


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_circles(graph) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": set()}) == []
