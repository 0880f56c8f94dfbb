"""Benchmark of the Claude Code importer: a generated log of `--mb` megabytes (default 100).

The importer (read the file, convert every line, write our logs) against a bare
`for line in file: orjson.loads(line)` loop over the same file, both timed in this run (CPU time
of this process, best of five, alternating). Target: the import takes under 2x the bare loop.

The log is made of realistic turns: a prompt, a thinking block, text and a tool call split over
lines that share a message id (as Claude Code 2.x writes them), a file read whose result comes
twice (the tool result and `toolUseResult`), a failed command, an edit whose `toolUseResult`
carries the whole original file and a structured patch (as Claude Code records edits), a final
answer with usage.

    python bench/bench_import.py [--mb 100]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_log import Row, format_table

from agent_tui.importers.convert import SessionLogWriter, SourceFile, convert_source

TARGET_RATIO = 2.0
REPEATS = 5


def cpu_best(runs: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Best CPU time of each run (this process's, so other work on a shared machine disturbs it
    less than wall time), running them in turn `repeats` times."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeats):
        for name, run in runs.items():
            gc.collect()
            started = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - started)
    return best


SESSION = "b3e1c0de-0000-4000-8000-00000000beef"
_WORDS = [
    "the",
    "order",
    "refund",
    "cancel",
    "shipped",
    "test",
    "file",
    "module",
    "rate",
    "round",
    "cent",
    "value",
    "fails",
    "passes",
    "line",
    "code",
]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


class _Writer:
    def __init__(self) -> None:
        self.n = 0
        self.parent: str | None = None

    def line(self, kind: str, body: dict[str, Any], **extra: Any) -> bytes:
        self.n += 1
        uuid = f"b3e1c0de-{self.n:04x}-4000-8000-{self.n:012d}"
        second = self.n % 60
        minute = (self.n // 60) % 60
        hour = (self.n // 3600) % 24
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/shop-api",
            "sessionId": SESSION,
            "version": "2.0.46",
            "gitBranch": "main",
            "type": kind,
            **body,
            "uuid": uuid,
            "timestamp": f"2025-11-{1 + self.n // 86400 % 28:02d}T{hour:02d}:{minute:02d}:{second:02d}.000Z",
            **extra,
        }
        self.parent = uuid
        return orjson.dumps(record) + b"\n"


def _assistant(w: _Writer, msg: str, block: dict[str, Any]) -> bytes:
    message = {
        "id": msg,
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [block],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 4,
            "cache_creation_input_tokens": 300,
            "cache_read_input_tokens": 40000,
            "output_tokens": 90,
        },
    }
    return w.line("assistant", {"message": message}, requestId="req_" + msg)


def _turn(w: _Writer, rng: random.Random, k: int) -> list[bytes]:
    read_id, run_id, edit_id, msg = f"toolu_r{k}", f"toolu_b{k}", f"toolu_e{k}", f"msg_{k}"
    file_text = "\n".join(f"{i:6d}→{_text(rng, 9)}" for i in range(1, 60))
    user = {"role": "user", "content": _text(rng, 30)}
    original = "\n".join(_text(rng, 10) for _ in range(240))  # a mid-size source file
    edit = {
        "file_path": "/home/dev/shop-api/src/orders.py",
        "old_string": _text(rng, 8),
        "new_string": _text(rng, 8),
    }
    patch = [
        {
            "oldStart": 12,
            "oldLines": 3,
            "newStart": 12,
            "newLines": 3,
            "lines": [_text(rng, 8) for _ in range(6)],
        }
    ]
    return [
        w.line("user", {"message": user}),
        _assistant(
            w, msg + "a", {"type": "thinking", "thinking": _text(rng, 60), "signature": "Eq" + "x" * 300}
        ),
        _assistant(w, msg + "a", {"type": "text", "text": _text(rng, 25)}),
        _assistant(
            w,
            msg + "a",
            {
                "type": "tool_use",
                "id": read_id,
                "name": "Read",
                "input": {"file_path": "/home/dev/shop-api/src/orders.py"},
            },
        ),
        w.line(
            "user",
            {
                "message": {
                    "role": "user",
                    "content": [{"tool_use_id": read_id, "type": "tool_result", "content": file_text}],
                }
            },
            toolUseResult={
                "type": "text",
                "file": {"filePath": "src/orders.py", "content": file_text, "numLines": 59},
            },
        ),
        _assistant(
            w,
            msg + "b",
            {
                "type": "tool_use",
                "id": run_id,
                "name": "Bash",
                "input": {"command": "pytest -q", "description": "Run tests"},
            },
        ),
        w.line(
            "user",
            {
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": run_id,
                            "type": "tool_result",
                            "content": "Exit code 1\n" + _text(rng, 40),
                            "is_error": True,
                        }
                    ],
                }
            },
            toolUseResult="Error: Exit code 1",
        ),
        _assistant(w, msg + "c", {"type": "tool_use", "id": edit_id, "name": "Edit", "input": edit}),
        w.line(
            "user",
            {
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": edit_id,
                            "type": "tool_result",
                            "content": "The file src/orders.py has been updated.",
                        }
                    ],
                }
            },
            toolUseResult={
                **edit,
                "originalFile": original,
                "structuredPatch": patch,
                "userModified": False,
                "replaceAll": False,
            },
        ),
        _assistant(w, msg + "d", {"type": "text", "text": _text(rng, 50)}),
    ]


def write_claude_log(path: Path, megabytes: float, seed: int = 7) -> int:
    """A Claude Code log of about `megabytes` MB at `path`; returns its size in bytes."""
    rng = random.Random(seed)
    writer = _Writer()
    target = int(megabytes * 1_000_000)
    size = 0
    with path.open("wb") as handle:
        k = 0
        while size < target:
            chunk = b"".join(_turn(writer, rng, k))
            handle.write(chunk)
            size += len(chunk)
            k += 1
    return size


def bench_import(megabytes: float, workdir: Path) -> list[Row]:
    source = workdir / f"{SESSION}.jsonl"
    size = write_claude_log(source, megabytes)
    out = workdir / "out"
    out.mkdir()

    def bare() -> None:
        loads = orjson.loads
        with source.open("rb") as handle:
            for line in handle:
                loads(line)

    def convert() -> None:
        convert_source(SourceFile(source, "claude-code"), SessionLogWriter(out))

    best = cpu_best({"bare": bare, "import": convert}, repeats=REPEATS)
    ratio = best["import"] / best["bare"]
    return [
        Row(
            name=f"import a {size / 1e6:,.0f} MB Claude Code log (time)",
            measured=best["import"] * 1000,
            baseline=best["bare"] * 1000,
            ratio=ratio,
            target=f"< {TARGET_RATIO:.2f}x the bare orjson.loads loop",
            passed=ratio < TARGET_RATIO,
            unit="ms CPU",
        )
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100, help="size of the generated log in MB")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_import_") as tmp:
        rows = bench_import(args.mb, Path(tmp))
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
