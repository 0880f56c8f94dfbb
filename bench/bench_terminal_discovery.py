"""Benchmark of finding a machine's Claude Code and Codex sessions (`terminal.discovery`).

5,000 stored transcripts (2,500 Claude Code sessions in 50 project folders, 2,500 Codex rollouts
in date folders, each a few lines like the CLIs' own heads, with a first line of a few KiB as the
CLIs write), listed for one project and for every project, beside listing the same number of our
own logs from their heads (`list_stored_sessions`, what the workbench lists from) in the same run.
Target: 1 s for each listing (best of 3).

    python bench/bench_terminal_discovery.py [--transcripts 5000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_log import Row, format_table

TARGET_SECONDS = 1.0
PROJECTS = 50
_PADDING = "x" * 3000  # a first prompt of a few KiB


def _write_claude(root: Path, count: int) -> Path:
    for n in range(count):
        cwd = f"/home/dev/project-{n % PROJECTS}"
        folder = root / "projects" / cwd.replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        sid = f"00000000-0000-4000-8000-{n:012d}"
        lines = [
            {"type": "ai-title", "aiTitle": f"Session {n}", "sessionId": sid},
            {
                "parentUuid": None,
                "isSidechain": False,
                "cwd": cwd,
                "sessionId": sid,
                "version": "2.1.12",
                "type": "user",
                "message": {"role": "user", "content": f"Fix test {n} {_PADDING}"},
                "uuid": f"u{n}",
                "timestamp": "2026-01-15T16:00:00.000Z",
            },
        ]
        (folder / f"{sid}.jsonl").write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return root


def _write_codex(root: Path, count: int) -> Path:
    for n in range(count):
        day = root / "sessions" / "2026" / f"{1 + n % 12:02d}" / f"{1 + n % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        tid = f"019c0d1e-0000-7000-8000-{n:012d}"
        meta = {
            "timestamp": "2026-01-15T16:00:00.000Z",
            "type": "session_meta",
            "payload": {
                "id": tid,
                "timestamp": "2026-01-15T16:00:00.000Z",
                "cwd": f"/home/dev/project-{n % PROJECTS}",
                "originator": "codex_cli_rs",
                "cli_version": "0.58.0",
                "instructions": _PADDING,
            },
        }
        prompt = {
            "timestamp": "2026-01-15T16:00:01.000Z",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": f"Fix test {n}"},
        }
        (day / f"rollout-2026-01-15T16-00-00-{tid}.jsonl").write_bytes(
            orjson.dumps(meta) + b"\n" + orjson.dumps(prompt) + b"\n"
        )
    return root


def _write_ours(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        sid = f"sess_{n:08d}"
        created = {
            "id": f"evt_{n:08d}_1",
            "sessionId": sid,
            "sequence": 1,
            "ts": "2026-01-15T16:00:00.000Z",
            "type": "session.created",
            "turnId": None,
            "payload": {
                "cwd": f"/home/dev/project-{n % PROJECTS}",
                "client": "agent-tui",
                "title": f"Fix test {n}",
            },
        }
        (folder / f"{sid}.jsonl").write_bytes(orjson.dumps(created) + b"\n")
    return folder


def _best(run: Callable[[], object], runs: int = 3) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(runs):
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    return best, result


def bench_terminal_discovery(transcripts: int = 5_000) -> list[Row]:
    from agent_tui.runtime.session_dirs import list_stored_sessions
    from agent_tui.terminal.discovery import discover

    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-terminal-") as tmp:
        base = Path(tmp)
        claude = _write_claude(base / "claude", transcripts // 2) / "projects"
        codex = _write_codex(base / "codex", transcripts - transcripts // 2) / "sessions"
        ours = _write_ours(base / "ours", transcripts)
        baseline, stored = _best(lambda: list_stored_sessions(ours, ends=False))
        assert isinstance(stored, list) and len(stored) == transcripts
        rows = []
        for name, project, every in (
            ("one project's", Path("/home/dev/project-7"), False),
            ("every project's", None, True),
        ):
            seconds, found = _best(
                partial(discover, project, all_projects=every, claude_root=claude, codex_root=codex)
            )
            assert isinstance(found, list)
            expected = transcripts if every else transcripts // PROJECTS
            assert len(found) == expected, (len(found), expected)
            rows.append(
                Row(
                    name=f"terminal sessions of {transcripts:,} transcripts, {name} (vs our logs' heads)",
                    measured=seconds * 1000,
                    baseline=baseline * 1000,
                    ratio=seconds / baseline,
                    target=f"<= {TARGET_SECONDS * 1000:,.0f} ms",
                    passed=seconds <= TARGET_SECONDS,
                    unit="ms",
                )
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transcripts", type=int, default=5_000)
    args = parser.parse_args(argv)
    rows = bench_terminal_discovery(args.transcripts)
    print(format_table(rows))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
