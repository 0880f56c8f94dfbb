"""Check that the importers write the same bytes as another revision (before trusting a speed-up).

Both revisions import the same sources in child processes (the other revision's code taken with
`git archive`, so the working tree is left alone): the generated log of `bench_import.py`, a
smaller one whose messages name models the price table knows, knows under another name or does
not know and report usage of every shape, and the test fixtures (Claude Code and Codex). Each
source is imported into files (`import_path`) and fed line by line with a user's price table and
with an empty one (`feed`); the check compares a hash of every output. Exit 1 when any differs.

    python bench/import_same_bytes.py [--ref HEAD] [--mb 100]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
GENERATED_MODEL = '"model":"claude-sonnet-4-5-20250929"'
MODELS = [
    "claude-sonnet-4-5-20250929",
    "anthropic/claude-opus-4-1",
    "house-model",
    "claude-haiku-4-5-latest",
    "gpt-5",
    "openai/gpt-5-2025-08-07",
    "o3-pro",
    None,
]
USAGES = [
    '"usage":{"input_tokens":4,"output_tokens":90}',
    '"usage":{"input_tokens":7,"cache_read_input_tokens":123,"output_tokens":5}',
    '"usage":{"input_tokens":1,"cache_creation_input_tokens":77,"output_tokens":0}',
    '"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}',
    '"usage":{"input_tokens":"x","output_tokens":1}',
]


def make_sources(root: Path, megabytes: float) -> None:
    # Imported here, not at the top: bench_import puts this checkout first on the path, and a
    # child hashing the other revision must import that revision's code.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_import import SESSION, write_claude_log

    for fixture in sorted((FIXTURES / "claude_code").iterdir()) + sorted((FIXTURES / "codex").iterdir()):
        if fixture.is_dir():
            shutil.copytree(fixture, root / f"{fixture.parent.name}-{fixture.name}")
    (root / "bench").mkdir()
    write_claude_log(root / "bench" / f"{SESSION}.jsonl", megabytes)
    variety = root / "variety"
    variety.mkdir()
    plain = variety / "plain.tmp"
    write_claude_log(plain, 2, seed=11)
    rng = random.Random(3)
    lines = []
    for line in plain.read_text().splitlines(keepends=True):
        if GENERATED_MODEL in line:
            model = rng.choice(MODELS)
            line = line.replace(GENERATED_MODEL, f'"model":"{model}"' if model else '"model":null')
            line = re.sub(r'"usage":\{[^}]*\}', rng.choice(USAGES), line)
        lines.append(line)
    (variety / f"{SESSION[:-4]}aaaa.jsonl").write_text("".join(lines))
    plain.unlink()
    for log in FIXTURES.rglob("*.jsonl"):
        if "subagents" not in log.parts:
            shutil.copy(log, variety / log.name)


def hashes_of(sources: Path) -> dict[str, str]:
    """What this process's code writes for each source (run in a child per revision)."""
    import agent_tui
    from agent_tui.costs.prices import Price, PriceTable, shipped_prices
    from agent_tui.importers import ClaudeCodeImporter, CodexImporter, import_path

    found = {"code": str(Path(agent_tui.__file__).parent)}
    with tempfile.TemporaryDirectory() as tmp:
        for source in sorted(sources.iterdir()):
            out = Path(tmp) / source.name
            import_path(source, out)
            for log in sorted(out.rglob("*.jsonl")):
                found[str(log.relative_to(tmp))] = hashlib.sha256(log.read_bytes()).hexdigest()
    own = shipped_prices().with_overrides(
        {"house-model": Price(2.0, 8.0, 0.5), "claude-sonnet-4-5": Price(1.0, 2.0)}
    )
    for log in sorted((sources / "variety").glob("*.jsonl")):
        kind: Any = CodexImporter if log.name.startswith("rollout-") else ClaudeCodeImporter
        for name, prices in (("own prices", own), ("no prices", PriceTable({}))):
            importer = kind(str(log), prices=prices)
            digest = hashlib.sha256()
            for number, line in enumerate(log.read_bytes().splitlines(keepends=True), 1):
                for event in importer.feed(number, line):
                    digest.update(event.to_json() + b"\n")
            for event in importer.finish():
                digest.update(event.to_json() + b"\n")
            found[f"{log.name} fed, {name}"] = digest.hexdigest()
    return found


def run_in(tree: Path, sources: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, str(Path(__file__).resolve()), "--hash", str(sources)]
    done = subprocess.run(command, env=env, cwd=sources, capture_output=True, check=True)
    found = json.loads(done.stdout)
    if found.pop("code") != str(tree / "agent_tui"):
        raise SystemExit(f"the child for {tree} did not run its code")
    return dict(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="HEAD", help="the revision to compare the working tree with")
    parser.add_argument("--mb", type=float, default=100, help="size of the generated bench log in MB")
    parser.add_argument("--hash", type=Path, help=argparse.SUPPRESS)  # a child: print its hashes
    args = parser.parse_args(argv)
    if args.hash is not None:
        print(json.dumps(hashes_of(args.hash)))
        return 0
    with tempfile.TemporaryDirectory(prefix="import_same_bytes_") as tmp:
        ref, sources = Path(tmp) / "ref", Path(tmp) / "sources"
        ref.mkdir()
        sources.mkdir()
        archive = subprocess.run(["git", "archive", args.ref], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(ref)], input=archive.stdout, check=True)
        make_sources(sources, args.mb)
        before, after = run_in(ref, sources), run_in(ROOT, sources)
    differ = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    for name in differ:
        print(f"differs: {name}")
    print(f"{len(before)} outputs compared with {args.ref}: {len(differ) or 'none'} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
