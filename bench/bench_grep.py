"""The grep tool's speed: `python bench/bench_grep.py [--mb N]`.

Generates a file of N MB (default 10) of code-like lines, a few of which match, and runs the
`grep` tool on it through the tool router (pattern compiled, file read, lines matched, result
built) beside `rg -n` (when installed) or `grep -nE` on the same file and pattern, in a child
process, measured in the same run. Both must report the same lines. A second, informational row
does the same with `(a+)+$`, which Python's backtracking `re` takes exponential time on for each
line of a's followed by another character.

Every figure is the best of three rounds; each round runs the tool, then the baseline, so a busy
spell of a shared machine falls on both. Target: the tool within 4x of the baseline's time.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_log import Row, format_table

from agent_tui.engine.tools.base import ToolContext
from agent_tui.engine.tools.router import ToolRouter

TARGET_RATIO = 4.0
PATTERN = r"handle_[a-z_]+_v2\("  # the same meaning in RE2, in ERE (grep -E) and for rg
_WORDS = [
    "def", "class", "return", "import", "from", "self", "value", "result", "error", "config", "path",
    "data", "item", "list", "dict", "None", "True", "False", "for", "in", "if", "else", "while", "with",
    "open", "read", "write",
]  # fmt: skip


def make_file(path: Path, megabytes: float) -> int:
    """Write code-like lines (one in 5,000 matches PATTERN, one in 7 ends 'aaaa!'); returns how
    many match PATTERN."""
    rng = random.Random(19)
    target = int(megabytes * 1_000_000)
    lines: list[str] = []
    size = matching = 0
    while size < target:
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 12)))
        line = "    " * rng.randint(0, 3) + words
        if len(lines) % 5000 == 0:
            line += " handle_request_v2(x)"
            matching += 1
        elif len(lines) % 7 == 0:
            line += " " + "a" * rng.randint(10, 40) + "!"
        lines.append(line)
        size += len(line) + 1
    path.write_text("\n".join(lines) + "\n")
    return matching


def baseline_command(pattern: str, path: Path) -> tuple[str, list[str]]:
    rg = shutil.which("rg")
    if rg is not None:
        return "rg -n", [rg, "-n", "--no-config", pattern, str(path)]
    return "grep -nE", ["grep", "-nE", pattern, str(path)]


def run_tool(pattern: str, path: Path) -> tuple[float, int]:
    """Seconds for one grep tool call on `path`, and how many lines it printed."""
    router = ToolRouter()
    tool, args = router.parse("grep", {"pattern": pattern, "path": path.name})

    async def nothing(stream: str, text: str) -> None:
        pass

    ctx = ToolContext(
        cwd=path.parent,
        session_id="bench",
        turn_id="bench",
        tool_call_id="bench",
        on_output=nothing,
        output_budget=10_000_000,  # every matching line, as the baseline prints them
    )

    async def call() -> tuple[float, int]:
        start = time.perf_counter()
        result = await router.run(tool, args, ctx)
        elapsed = time.perf_counter() - start
        assert result.ok, result.text
        return elapsed, 0 if result.text.startswith("no matches") else result.text.count("\n")

    return anyio.run(call)


def run_baseline(command: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    assert done.returncode in (0, 1), done.stderr
    return elapsed, done.stdout.count(b"\n")


def _row(name: str, pattern: str, path: Path, *, informational: bool) -> Row:
    label, command = baseline_command(pattern, path)
    best_tool = best_base = float("inf")
    for _ in range(3):
        tool_s, tool_lines = run_tool(pattern, path)
        base_s, base_lines = run_baseline(command)
        assert tool_lines == base_lines, f"grep tool found {tool_lines} lines, {label} {base_lines}"
        best_tool, best_base = min(best_tool, tool_s), min(best_base, base_s)
    ratio = best_tool / best_base
    return Row(
        name=f"{name} (vs {label})",
        measured=best_tool * 1000,
        baseline=best_base * 1000,
        ratio=ratio,
        target="informational" if informational else f"<= {TARGET_RATIO:.0f}x {label}",
        passed=informational or ratio <= TARGET_RATIO,
        unit="ms",
    )


def bench_grep(megabytes: float = 10) -> list[Row]:
    """Rows for the benchmark table: the grep tool on a generated file beside rg / grep -E."""
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-grep-") as tmp:
        path = Path(tmp) / "big.py"
        make_file(path, megabytes)
        size = f"{megabytes:g} MB"
        return [
            _row(f"grep tool, {size} file", PATTERN, path, informational=False),
            _row(f"grep tool, (a+)+$ on {size}", "(a+)+$", path, informational=True),
        ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=10, help="size of the generated file")
    args = parser.parse_args(argv)
    rows = bench_grep(args.mb)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
