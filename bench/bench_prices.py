"""Pricing speed: `python bench/bench_prices.py [--calls N]`.

Prices N model calls (default 100,000: an import of a long history prices one per source message)
with the prices agent-tui ships, the maintained table of `genai-prices`, beside the hand-written
table it replaced (the same models at the prices that table had, looked up as the user's own
`[prices]` still are), in the same run on the same calls. The calls mix the common models, their
dated and vendor-prefixed names, cache reads and writes, and a model nobody prices.

The first price, which imports the library and reads its table, is timed on its own (a fresh
process). Every figure is the best of three rounds, the rounds alternating new, old.
Target: pricing a call costs at most 20 µs with the maintained table.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_log import Row, format_table

from agent_tui.costs.maintained import MaintainedPrices
from agent_tui.costs.prices import Price, PriceTable

TARGET_US = 20.0

OLD_TABLE = PriceTable(
    {
        "claude-sonnet-4-5": Price(3.0, 15.0, cached_input=0.3, cache_write=3.75),
        "claude-opus-4-1": Price(15.0, 75.0, cached_input=1.5, cache_write=18.75),
        "claude-haiku-4-5": Price(1.0, 5.0, cached_input=0.1, cache_write=1.25),
        "gpt-5": Price(1.25, 10.0, cached_input=0.125),
        "gpt-5-codex": Price(1.25, 10.0, cached_input=0.125),
        "gpt-4.1": Price(2.0, 8.0, cached_input=0.5),
        "gpt-4.1-mini": Price(0.4, 1.6, cached_input=0.1),
        "o3": Price(2.0, 8.0, cached_input=0.5),
    }
)
"""The hand-written table's way: the same models at the prices it had, one dict look-up each."""

MODELS = (
    "claude-sonnet-4-5",
    "claude-sonnet-4-5-20250929",
    "anthropic/claude-opus-4-1",
    "claude-haiku-4-5",
    "gpt-5",
    "gpt-5-codex",
    "gpt-4.1",
    "gpt-4.1-mini-2025-04-14",
    "o3",
    "my-local-llama",
)

FIRST_PRICE = """\
import time
start = time.perf_counter()
from agent_tui.costs.prices import shipped_prices
shipped_prices().cost_usd("claude-sonnet-4-5", 1000, 100)
print(time.perf_counter() - start)
"""


def calls(count: int) -> list[tuple[str, int, int, int, int]]:
    """`count` calls: a model, then prompt, completion, cached and cache-written tokens."""
    rng = random.Random(36)
    made = []
    for _ in range(count):
        prompt = rng.randint(500, 400_000)
        cached = rng.randint(0, prompt)
        written = rng.randint(0, prompt - cached) if rng.random() < 0.3 else 0
        made.append((rng.choice(MODELS), prompt, rng.randint(1, 8_000), cached, written))
    return made


def _round(table: PriceTable, work: list[tuple[str, int, int, int, int]]) -> float:
    start = time.perf_counter()
    for model, prompt, completion, cached, written in work:
        table.cost_usd(model, prompt, completion, cached, written)
    return (time.perf_counter() - start) / len(work) * 1e6


def bench_prices(count: int = 100_000) -> list[Row]:
    work = calls(count)
    first = float(
        subprocess.run([sys.executable, "-c", FIRST_PRICE], capture_output=True, text=True, check=True).stdout
    )
    new_best = old_best = float("inf")
    for _ in range(3):
        new_best = min(new_best, _round(PriceTable({}, MaintainedPrices()), work))
        old_best = min(old_best, _round(OLD_TABLE, work))
    return [
        Row(
            name=f"pricing a call, maintained table ({count:,} calls)",
            measured=new_best,
            baseline=old_best,
            ratio=new_best / old_best,
            target=f"<= {TARGET_US:.0f} µs",
            passed=new_best <= TARGET_US,
            unit="µs",
        ),
        Row(
            name="the first price (imports the table)",
            measured=first * 1000,
            baseline=first * 1000,
            ratio=1.0,
            target="informational",
            passed=True,
            unit="ms",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000, help="model calls to price")
    args = parser.parse_args(argv)
    rows = bench_prices(args.calls)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
