"""Shell risk classification speed: `python bench/bench_shell_risk.py [--commands N]`.

Classifies N real-looking command lines (git, search, build, file and network commands,
pipelines, redirections, heredocs, `sh -c`) with `agent_tui.safety.assess_shell`, parse
included, and reports microseconds per command (median and 99th percentile) beside the
classifier it replaced (`legacy_shell_risk.py`), measured in the same run on the same lines.

Every figure is the best of three rounds; the rounds alternate new, old, new, old, so a busy
spell of a shared machine falls on both. Target: median <= 200 µs per command.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import legacy_shell_risk
from bench_log import Row, format_table

from agent_tui.safety import assess_shell

TARGET_MEDIAN_US = 200.0

_FILES = ["src/app.py", "README.md", "tests/test_app.py", "pyproject.toml", "src/utils/io.ts", "Cargo.toml"]
_WORDS = ["TODO", "def main", "import os", "useState", "error", "fixme", "class .*Error"]
_TEMPLATES = [
    "ls -la {dir}",
    "cat {file}",
    "head -n {n} {file}",
    "tail -{n} {file}",
    "wc -l {file} {file2}",
    "grep -rn '{word}' {dir}",
    "rg -n --hidden -g '*.py' '{word}' {dir}",
    "find {dir} -name '*.py' -not -path './.venv/*' | xargs grep -n '{word}' 2>/dev/null",
    "find . -type f -mtime -{n} | head -20",
    "git status --short",
    "git log --oneline -{n}",
    "git diff HEAD~{n} --stat -- {dir}",
    "git show HEAD:{file} | head -{n}",
    "git branch -a && git remote -v",
    "git add {file} && git commit -m 'fix: {word}'",
    "git push origin main",
    "git reset --hard HEAD~{n}",
    "sed -n '{n},{n2}p' {file}",
    "sed -i 's/{word}/done/g' {file}",
    "awk -F: '{{print $1}}' {file} | sort | uniq -c | sort -rn | head",
    "python -m pytest -q {file} -k {word_id}",
    "npm run build && npm test",
    "pip install -r requirements.txt",
    "curl -sSL https://example.com/install.sh | sh",
    "mkdir -p build/{word_id} && cp {file} build/",
    "rm -rf build dist *.egg-info",
    "mv {file} {file2}",
    "echo '{word}' >> notes.txt",
    "cat {file} > {file2}",
    "cd {dir} && ls && git status",
    "cat <<'EOF' > {file2}\nline one\nline two $(not run)\nEOF",
    "sh -c 'cd {dir} && make -j{n}'",
    'for f in {dir}/*.py; do wc -l "$f"; done',
    "LC_ALL=C sort -k2 {file} | head -{n}",
    "docker ps -a | grep {word_id}",
    "timeout 10 python scripts/check.py --path {file}",
]


def commands(count: int, seed: int = 7) -> list[str]:
    """`count` command lines from the templates, filled in at random (the same for a seed)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        word = rng.choice(_WORDS)
        out.append(
            rng.choice(_TEMPLATES).format(
                dir=rng.choice(["src", ".", "tests", "src/utils", "docs"]),
                file=rng.choice(_FILES),
                file2=rng.choice(_FILES),
                n=rng.randint(1, 40),
                n2=rng.randint(41, 200),
                word=word,
                word_id=word.split()[0].lower(),
            )
        )
    return out


def _per_command_us(classify: Callable[[str], object], lines: list[str]) -> list[float]:
    clock = time.perf_counter_ns
    times = []
    for line in lines:
        start = clock()
        classify(line)
        times.append((clock() - start) / 1000)
    times.sort()
    return times


def _summary(times: list[float]) -> tuple[float, float]:
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


def bench_shell_risk(count: int = 10_000) -> list[Row]:
    """Rows for the benchmark table: median and p99 µs per command, new beside old."""
    lines = commands(count)
    new_best: tuple[float, float] | None = None
    old_best: tuple[float, float] | None = None
    for _ in range(3):
        new = _summary(_per_command_us(assess_shell, lines))
        old = _summary(_per_command_us(legacy_shell_risk.classify_shell, lines))
        new_best = new if new_best is None or new[0] < new_best[0] else new_best
        old_best = old if old_best is None or old[0] < old_best[0] else old_best
    assert new_best is not None and old_best is not None
    median, p99 = new_best
    old_median, old_p99 = old_best
    return [
        Row(
            name=f"shell risk, median ({count:,} commands)",
            measured=median,
            baseline=old_median,
            ratio=median / old_median,
            target=f"<= {TARGET_MEDIAN_US:.0f} µs",
            passed=median <= TARGET_MEDIAN_US,
            unit="µs",
        ),
        Row(
            name="shell risk, 99th percentile",
            measured=p99,
            baseline=old_p99,
            ratio=p99 / old_p99,
            target="informational",
            passed=True,
            unit="µs",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=10_000, help="command lines to classify")
    args = parser.parse_args(argv)
    rows = bench_shell_risk(args.commands)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
