"""The tests import their helpers one way: as top-level modules (`support_reducer`), never as
`tests.support_reducer`.

pytest puts tests/ on `sys.path` (the folder has no `__init__.py`) and loads each test file and
conftest.py as a top-level module. A helper imported as `tests.x` too would be loaded a second
time under that name: two copies of its module-level state (a class, a cache, a registry), and
an `isinstance` that fails across them. mypy checks tests/ the same way (`mypy_path`).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def test_no_test_file_imports_a_helper_through_the_tests_package() -> None:
    offenders = []
    for path in sorted(TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            offenders += [
                f"{path.name}:{node.lineno}: {name}" for name in names if name.split(".")[0] == "tests"
            ]
    assert offenders == []


def test_nothing_imports_conftest() -> None:
    """conftest.py is pytest's to load; what tests share lives in a support module."""
    offenders = [
        f"{path.name}:{node.lineno}"
        for path in sorted(TESTS.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_bytes(), str(path)))
        if (isinstance(node, ast.ImportFrom) and node.module == "conftest")
        or (isinstance(node, ast.Import) and any(alias.name == "conftest" for alias in node.names))
    ]
    assert offenders == []
