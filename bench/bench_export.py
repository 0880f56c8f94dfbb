"""Benchmark of `agent-tui export`: a generated session of `--events` events (default 10,000).

The export (read the log, fold it into the document, render it) as Markdown and as HTML, against
a bare `for line in file: orjson.loads(line)` loop over the same file, CPU time of this process,
best of three, alternating. Target: each export takes under a second (the ratio to the bare loop
is shown for reading, not judged).

The session is made of turns as our engine writes them: a prompt, a model call with its words
streamed in pieces and a tool call (asked, allowed, run, its output), an edit with its diff every
fourth turn, then the final answer with usage.

    python bench/bench_export.py [--events 10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_import import cpu_best
from bench_log import Row, format_table

from agent_tui.export import export_session

TARGET_SECONDS = 1.0
SESSION = "sess_0123456789ab"


class _Writer:
    def __init__(self) -> None:
        self.lines: list[bytes] = []
        self.start = datetime(2026, 11, 29, 22, 0, tzinfo=UTC)

    def add(self, kind: str, turn: str | None, payload: dict[str, Any]) -> None:
        sequence = len(self.lines) + 1
        ts = (self.start + timedelta(milliseconds=40 * sequence)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        record = {
            "v": 1,
            "id": f"evt_0123456789ab_{sequence}",
            "sessionId": SESSION,
            "turnId": turn,
            "sequence": sequence,
            "ts": ts,
            "type": kind,
            "payload": payload,
        }
        self.lines.append(orjson.dumps(record))


def generate(events: int, directory: Path) -> Path:
    """A session log of about `events` events (whole turns)."""
    out = _Writer()
    out.add("session.created", None, {"cwd": "/work/project", "client": "agent-tui", "agentName": "lead"})
    number = 0
    while len(out.lines) < events:
        number += 1
        turn = f"turn_{number:012x}"
        call = f"call_{number:012x}"
        prompt = f"Look at module {number} and fix what the tests say."
        out.add("turn.started", turn, {"promptPreview": prompt})
        out.add("user.message", turn, {"content": prompt})
        tokens = {"instruction": 900, "transcript": 40 * number, "tools": 600}
        out.add("context.built", turn, {"step": 1, "tokens": tokens, "maxContextTokens": 200_000})
        for piece in ("I'll read ", "the module ", "and its tests ", "first."):
            out.add("model.delta", turn, {"text": piece})
        edit = number % 4 == 0
        tool = "edit_file" if edit else "shell"
        args: dict[str, Any] = (
            {"path": f"src/m{number}.py", "old": "return 1\n", "new": "return 2\n"}
            if edit
            else {"cmd": f"sed -n '1,40p' src/m{number}.py"}
        )
        preview = orjson.dumps(args).decode()
        out.add("model.tool_call_requested", turn, {"toolCallId": call, "tool": tool, "args": args})
        perm = f"perm_{number:012x}"
        risk = "write" if edit else "read"
        asked = {"requestId": perm, "toolCallId": call, "tool": tool, "risk": risk, "argsPreview": preview}
        out.add("permission.requested", turn, asked)
        answer = {"requestId": perm, "toolCallId": call, "decision": "allow", "actor": "policy"}
        out.add("permission.resolved", turn, answer)
        out.add("tool.started", turn, {"toolCallId": call, "tool": tool, "argsPreview": preview})
        result = (
            f"edited src/m{number}.py" if edit else "\n".join(f"line {i} of m{number}" for i in range(40))
        )
        done = {"toolCallId": call, "tool": tool, "result": result, "truncated": False}
        if not edit:
            done["exitCode"] = 0
        out.add("tool.completed", turn, done)
        out.add("context.built", turn, {"step": 2, "tokens": tokens, "maxContextTokens": 200_000})
        for piece in ("Fixed: ", f"module {number} ", "passes now."):
            out.add("model.delta", turn, {"text": piece})
        usage = {"promptTokens": 2_000 + number, "completionTokens": 120}
        out.add("turn.completed", turn, {"stopReason": "final", "usage": usage})
    path = directory / f"{SESSION}.jsonl"
    path.write_bytes(b"\n".join(out.lines) + b"\n")
    return path


def bench_export(events: int = 10_000) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-export-") as tmp:
        log = generate(events, Path(tmp))
        count = log.read_bytes().count(b"\n")

        def bare() -> None:
            with log.open("rb") as handle:
                for line in handle:
                    orjson.loads(line)

        best = cpu_best(
            {
                "bare": bare,
                "md": lambda: export_session(log, "md"),
                "html": lambda: export_session(log, "html"),
            },
            repeats=3,
        )
    rows = []
    for fmt in ("md", "html"):
        rows.append(
            Row(
                name=f"export a {count:,}-event session as {fmt} (CPU)",
                measured=best[fmt] * 1000,
                baseline=best["bare"] * 1000,
                ratio=best[fmt] / best["bare"],
                target=f"<= {TARGET_SECONDS * 1000:,.0f} ms",
                passed=best[fmt] <= TARGET_SECONDS,
                unit="ms",
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    args = parser.parse_args(argv)
    rows = bench_export(args.events)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
