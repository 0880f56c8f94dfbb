"""The house stays small: bounds on the size of functions and modules, and one definition of
each control verb.

Sizes are counted in code lines: a line holding a token of code, so blank lines, comment lines
and docstrings do not count (a module's contract paragraph is free). The bounds are a little above
what the code met when they were set; a change that crosses one splits a function by concept or moves a
concept into a module of its own, rather than raising the bound.
"""

from __future__ import annotations

import ast
import functools
import io
import tokenize
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "agent_tui"

MAX_LONG_FUNCTIONS = 13
"""How many functions may have more than `LONG_FUNCTION` code lines."""
LONG_FUNCTION = 40
MAX_BIG_MODULES = 2
"""How many modules may have more than `BIG_MODULE` code lines."""
BIG_MODULE = 500
ONCE_VERBS = ("set_budget", "stop_subtree")
"""Control verbs that are defined once on each side: the client interface and the executor."""

_SKIPPED = frozenset(
    {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
)


def _docstring_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def code_lines(source: str, tree: ast.Module) -> set[int]:
    """The numbers of the lines of `source` that hold code (not blank, comment or docstring)."""
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in _SKIPPED:
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines - _docstring_lines(tree)


@functools.cache
def _modules() -> list[tuple[Path, ast.Module, set[int]]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        found.append((path, tree, code_lines(source, tree)))
    return found


def _functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_few_long_functions() -> None:
    long = [
        f"{path.relative_to(PACKAGE.parent)}:{function.lineno} {function.name} ({size})"
        for path, tree, lines in _modules()
        for function in _functions(tree)
        if (size := sum(1 for n in lines if function.lineno <= n <= (function.end_lineno or 0)))
        > LONG_FUNCTION
    ]
    assert len(long) <= MAX_LONG_FUNCTIONS, "\n".join(sorted(long))


def test_few_big_modules() -> None:
    big = [
        f"{path.relative_to(PACKAGE.parent)} ({len(lines)})"
        for path, _, lines in _modules()
        if len(lines) > BIG_MODULE
    ]
    assert len(big) <= MAX_BIG_MODULES, "\n".join(big)


def test_each_verb_is_defined_on_two_sides_at_most() -> None:
    where: dict[str, set[str]] = defaultdict(set)
    for path, tree, _ in _modules():
        for function in _functions(tree):
            if function.name in ONCE_VERBS:
                where[function.name].add(str(path.relative_to(PACKAGE.parent)))
    copies = {verb: sorted(files) for verb, files in where.items() if len(files) > 2}
    assert not copies, copies


def test_no_prompter_classes() -> None:
    """Open questions have one owner; nobody keeps a prompter of their own."""
    prompters = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}"
        for path, tree, _ in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name.endswith("Prompter")
    ]
    assert not prompters, prompters


def test_code_lines_leave_out_comments_blanks_and_docstrings() -> None:
    source = '"""Doc\n\nmore."""\n\n# a comment\nx = 1  # counted\n\n\ndef f():\n    """Doc."""\n    return (\n        x\n    )\n'
    assert sorted(code_lines(source, ast.parse(source))) == [6, 9, 11, 12, 13]
