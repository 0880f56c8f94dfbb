"""Benchmark of an agent's answer rendered as Markdown: a 2,000-line answer (paragraphs, lists,
headings, fenced Python code), as the detail renders it, beside the same lines shown plain.

Three figures, CPU time of this process, best of three: the answer's first render (no block
rendered yet at that width: selecting the session, or a new width), the render after one more
streamed piece (the live case: only the last block is rendered again), and the plain lines
(`marked`, what the detail did before Markdown) as the baseline. Targets: the first render under
250 ms; a streamed piece under 50 ms, so a long answer never stalls the screen.

    python bench/bench_markdown.py [--lines 2000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_import import cpu_best
from bench_log import Row, format_table

from agent_tui.tui.answer_markdown import _block_rows, answer_lines
from agent_tui.tui.marked import marked

WIDTH = 100
TARGET_FIRST_S = 0.25
TARGET_STREAMED_S = 0.05


def answer(lines: int) -> str:
    """About `lines` lines of Markdown, as a long answer reads."""
    out: list[str] = []
    section = 0
    while len(out) < lines:
        section += 1
        out += [f"## Part {section}: what changed", ""]
        out += [
            f"The module number {section} now checks **every** input with `validate()` first,",
            "and says why.",
            "",
        ]
        out += [
            f"- item {n} of part {section}, see [the docs](https://example.com/{n})" for n in range(4)
        ] + [""]
        out += [
            "```python",
            f"def part_{section}(value: int) -> int:",
            "    if value < 0:",
            "        raise ValueError(value)",
            "    return value * 2",
            "```",
            "",
        ]
    return "\n".join(out[:lines])


def bench_markdown(lines: int = 2_000) -> list[Row]:
    text = answer(lines)
    more = text + " and one more piece"

    def first() -> None:
        _block_rows.cache_clear()
        answer_lines(text, WIDTH)

    def streamed() -> None:
        answer_lines(more + str(streamed.count), WIDTH)  # type: ignore[attr-defined]
        streamed.count += 1  # type: ignore[attr-defined]

    streamed.count = 0  # type: ignore[attr-defined]
    answer_lines(text, WIDTH)
    best = cpu_best(
        {
            "plain": lambda: [marked(line) for line in text.split("\n")],
            "first": first,
            "streamed": streamed,
        },
        3,
    )
    label = f"{lines:,}-line Markdown answer"
    return [
        Row(
            name=f"{label}, first render",
            measured=best["first"] * 1000,
            baseline=best["plain"] * 1000,
            ratio=best["first"] / best["plain"],
            target=f"<= {TARGET_FIRST_S * 1000:,.0f} ms",
            passed=best["first"] <= TARGET_FIRST_S,
            unit="ms",
        ),
        Row(
            name=f"{label}, one more streamed piece",
            measured=best["streamed"] * 1000,
            baseline=best["plain"] * 1000,
            ratio=best["streamed"] / best["plain"],
            target=f"<= {TARGET_STREAMED_S * 1000:,.0f} ms",
            passed=best["streamed"] <= TARGET_STREAMED_S,
            unit="ms",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2_000)
    args = parser.parse_args(argv)
    rows = bench_markdown(args.lines)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
