"""The grep tool against a hostile model and a hostile repository: patterns that make a
backtracking engine run for ever, patterns RE2 cannot take, and cancels in the middle of a
search over many files. Real scenario runs in a child process, a real engine, real files."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from support_engine import make_engine, steps, workspace

from agent_tui.engine.tools import read_tools
from agent_tui.engine.tools.base import ToolContext
from agent_tui.engine.tools.router import ToolRouter
from agent_tui.events.chains import chain_violations
from agent_tui.replay.sources import replay_all
from agent_tui.store import JsonlEventLog

# How long a blocked step may hold before the test gives up; never reached when all is well
# (every wait below is for an event), so a busy machine cannot fail the tests.
GUARD = 30.0

REDOS = {
    # pattern: a line on which Python's re backtracks for an exponential time
    "(a+)+$": "a" * 48 + "!",
    "(x+x+)+y": "x" * 48,
    "(a|aa)+$": "a" * 48 + "!",
    "(.*a){25}": "a" * 24 + "b" * 24,
    r"^(\w+\s?)*$": "word " * 12 + "!",
}
NOT_RE2 = {
    r"(a)\1": r"back-references (\1…) are not supported",
    "x(?=y)": "look-ahead ((?=…) is not supported",
    "(?<!x)y": "look-behind ((?<!…) is not supported",
}


def grep(pattern: str, path: str = ".") -> dict[str, Any]:
    return {"tool": "grep", "args": {"pattern": pattern, "path": path}}


def test_catastrophic_patterns_end_at_once_and_leave_the_log_whole(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for n, line in enumerate(REDOS.values()):
        (ws / f"hostile{n}.txt").write_text(line + "\n")
    (ws / "plain.txt").write_text("hello\nhello world\n")
    calls = [grep(pattern, f"hostile{n}.txt") for n, pattern in enumerate(REDOS)]
    calls += [grep(pattern) for pattern in NOT_RE2]
    calls.append(grep(r"hel+o\s(w|x)orld$"))
    scenario = {
        "sessions": [
            {"title": "hostile", "cwd": "ws", "prompt": "search", "steps": [
                {"text": ["searching"], "toolCalls": calls},
                {"text": ["done"]},
            ]},
        ],
    }  # fmt: skip
    path = tmp_path / "scenario.json"
    path.write_bytes(orjson.dumps(scenario))
    sessions = tmp_path / "sessions"
    # The timeout is the guard: with a backtracking engine this run would not end for days.
    command = ["run", str(path), "--approve", "allow", "--sessions-dir", str(sessions)]
    done = subprocess.run(
        [sys.executable, "-m", "agent_tui", *command],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "re2" not in done.stderr.lower() and "Error parsing" not in done.stderr  # RE2 logs nothing
    events = list(replay_all(sessions, "strict"))
    assert chain_violations(events) == []
    ends = [e.payload for e in events if e.type in ("tool.completed", "tool.failed")]
    assert [end["tool"] for end in ends] == ["grep"] * len(calls)
    redos, not_re2, ordinary = ends[: len(REDOS)], ends[len(REDOS) : -1], ends[-1]
    for pattern, end in zip(REDOS, redos, strict=True):
        assert end.get("result") == f"no matches for {pattern!r}", end
    for (pattern, says), end in zip(NOT_RE2.items(), not_re2, strict=True):
        assert end["errorCode"] == "unknown"
        assert end["message"].startswith(f"invalid pattern {pattern!r}: {says}; ")
        assert "RE2 syntax" in end["message"]
    assert ordinary["result"] == "plain.txt:2:hello world\n"
    assert events[-1].type == "turn.completed" and events[-1].payload["stopReason"] == "final"


class BlockOnFile:
    """Wraps `GrepTool._search` (run in the worker thread): the `at`-th file holds until `go`.

    `reached` is set when the worker gets there, `finished` when the whole grep call has
    returned or raised in its thread; `searched` counts the files it began."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, at: int) -> None:
        self.at = at
        self.searched = 0
        self.reached = threading.Event()
        self.go = threading.Event()
        self.finished = threading.Event()
        search, whole = read_tools.GrepTool._search, read_tools.GrepTool._grep

        def blocking_search(tool: Any, *args: Any) -> None:
            self.searched += 1
            if self.searched == self.at:
                self.reached.set()
                assert self.go.wait(GUARD)
            search(tool, *args)

        def recorded_grep(tool: Any, *args: Any) -> Any:
            try:
                return whole(tool, *args)
            finally:
                self.finished.set()

        monkeypatch.setattr(read_tools.GrepTool, "_search", blocking_search)
        monkeypatch.setattr(read_tools.GrepTool, "_grep", recorded_grep)

    async def wait(self, event: threading.Event) -> None:
        assert await anyio.to_thread.run_sync(event.wait, GUARD)


def many_files(root: Path, count: int = 400) -> None:
    for n in range(count):
        folder = root / f"pkg{n // 50:02}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n:03}.py").write_text("def handler():\n    return 'needle'\n" * 20)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_cancel_during_a_long_grep_ends_the_turn_and_stops_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    cwd = workspace(tmp_path)
    many_files(cwd)
    block = BlockOnFile(monkeypatch, at=5)
    engine = make_engine(tmp_path)
    async with engine:
        sid = await engine.create_session(cwd)
        engine.provider.assign(  # type: ignore[attr-defined]
            sid, steps({"text": ["x"], "toolCalls": [grep("nomatch_[0-9]+")]}, {"text": ["y"]})
        )
        handle = engine.start_turn(sid, "go")
        await block.wait(block.reached)
        engine.cancel_turn(sid)
        # The worker is still held on the 5th file: the turn ends without waiting for it.
        with anyio.fail_after(GUARD):
            assert await handle.wait() == "cancelled"
        assert not block.finished.is_set()
    block.go.set()
    await block.wait(block.finished)
    assert block.searched == 5  # the next checkpoint stopped the walk: no 6th file
    log = list(JsonlEventLog(tmp_path / "sessions" / f"{sid}.jsonl").replay("strict"))
    assert [e.payload["errorCode"] for e in log if e.type == "tool.failed"] == ["cancelled"]
    assert chain_violations(log) == []


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_event_loop_runs_while_grep_searches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    many_files(tmp_path, 20)
    block = BlockOnFile(monkeypatch, at=3)
    router = ToolRouter()

    async def nothing(stream: str, text: str) -> None:
        pass

    ctx = ToolContext(cwd=tmp_path, session_id="s", turn_id="t", tool_call_id="c", on_output=nothing)
    tool, args = router.parse("grep", {"pattern": "needle"})
    results = []

    async def call() -> None:
        results.append(await router.run(tool, args, ctx))

    async with anyio.create_task_group() as group:
        group.start_soon(call)
        await block.wait(block.reached)  # the loop ran this task while grep was mid-walk
        block.go.set()
    assert block.searched == 20
    assert results[0].ok
    assert results[0].text.splitlines()[0] == "pkg00/mod000.py:2:    return 'needle'"


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_sparse_file_of_a_terabyte_is_read_up_to_its_hole(tmp_path: Path, anyio_backend: str) -> None:
    hole = tmp_path / "hole.txt"
    hole.write_text("filler\n" * 2000 + "needle before the hole\n" * 10)
    os.truncate(hole, 1 << 40)  # a terabyte of NUL bytes, taking no disk
    (tmp_path / "plain.txt").write_text("a needle\n")

    async def nothing(stream: str, text: str) -> None:
        pass

    ctx = ToolContext(cwd=tmp_path, session_id="s", turn_id="t", tool_call_id="c", on_output=nothing)
    router = ToolRouter()
    tool, args = router.parse("grep", {"pattern": "needle"})
    with anyio.fail_after(GUARD):  # reading the whole hole would take many minutes
        result = await router.run(tool, args, ctx)
    assert result.ok and not result.truncated
    before_the_hole = [f"hole.txt:{n}:needle before the hole" for n in range(2001, 2011)]
    assert result.text.splitlines() == [*before_the_hole, "plain.txt:1:a needle"]


async def run_grep(cwd: Path, pattern: str, path: str = ".") -> Any:
    async def nothing(stream: str, text: str) -> None:
        pass

    ctx = ToolContext(cwd=cwd, session_id="s", turn_id="t", tool_call_id="c", on_output=nothing)
    router = ToolRouter()
    tool, args = router.parse("grep", {"pattern": pattern, "path": path})
    with anyio.fail_after(GUARD):
        return await router.run(tool, args, ctx)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_tree_nested_hundreds_deep_is_walked_to_a_limit_and_leaks_nothing(
    tmp_path: Path, anyio_backend: str
) -> None:
    root = tmp_path / "deep"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for level in range(1, 151):  # (pytest cleans up recursively: much deeper would break it)
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
        if level in (10, 150):
            note = os.open("note.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(note, b"needle\n")
            os.close(note)
    os.close(fd)
    before = open_fds()
    result = await run_grep(root, "needle")
    assert open_fds() == before
    shown = "/".join(["d"] * 10) + "/note.txt:1:needle"
    assert result.ok
    assert result.text == f"{shown}\n[1 directory nested over 64 levels deep was not searched]\n"


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_walk_is_sorted_files_first_and_follows_no_symlink(
    tmp_path: Path, anyio_backend: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle secret\n")
    ws = tmp_path / "ws"
    (ws / "b" / "d").mkdir(parents=True)
    for name in ("z.txt", "a.txt", "b/c.txt", "b/d/e.txt"):
        (ws / name).write_text(f"needle in {name}\n")
    (ws / "b" / "link").symlink_to(outside)
    (ws / "b" / "secret.txt").symlink_to(outside / "secret.txt")
    result = await run_grep(ws, "needle")
    assert result.text.splitlines() == [
        "a.txt:1:needle in a.txt",
        "z.txt:1:needle in z.txt",
        "b/c.txt:1:needle in b/c.txt",
        "b/d/e.txt:1:needle in b/d/e.txt",
    ]
