"""Tools: path confinement, the file tools, the shell's streaming/timeout/cancel, the router."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agent_tui.engine.tools.base import BaseTool, ToolContext, ToolError, ToolResult
from agent_tui.engine.tools.paths import _fd_real_path, open_resolved, resolve_under
from agent_tui.engine.tools.router import ToolRouter
from agent_tui.safety import RiskAssessment, assess_shell

# Commands below sleep for 30 s. A call that ends in under half that did not wait for the sleep,
# which is what these tests check; how quickly it ends is measured in bench/, not asserted here,
# so a busy machine cannot fail them.
NOT_WAITED_FOR = 15.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Recorder:
    """An `on_output` that keeps every chunk, in order."""

    def __init__(self) -> None:
        self.chunks: list[tuple[str, str]] = []

    async def __call__(self, stream: str, text: str) -> None:
        self.chunks.append((stream, text))

    def text(self, stream: str) -> str:
        return "".join(text for name, text in self.chunks if name == stream)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "foo.py").write_text("def foo():\n    return 1\n")
    (root / "notes.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    place = tmp_path / "outside"
    place.mkdir()
    (place / "secret.txt").write_text("top secret\n")
    return place


def snapshot(directory: Path) -> dict[str, Any]:
    """Everything observable about a directory tree, to prove nothing was touched."""
    found: dict[str, Any] = {}
    for path in sorted(directory.rglob("*")):
        info = path.lstat()
        content = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        found[str(path.relative_to(directory))] = (info.st_mode, info.st_mtime_ns, content)
    return found


def make_ctx(cwd: Path, recorder: Recorder | None = None, budget: int = 32_000) -> ToolContext:
    return ToolContext(
        cwd=cwd,
        session_id="sess_1",
        turn_id="turn_1",
        tool_call_id="call_1",
        on_output=recorder or Recorder(),
        output_budget=budget,
    )


async def call(router: ToolRouter, ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    tool, parsed = router.parse(name, args)
    return await router.run(tool, parsed, ctx)


# -- path confinement --------------------------------------------------------------------------

ESCAPES = [
    ("read_file", {"path": "../outside/secret.txt"}),
    ("read_file", {"path": "src/../../outside/secret.txt"}),
    ("read_file", {"path": "a/../../x"}),
    ("read_file", {"path": "/etc/passwd"}),
    ("read_file", {"path": "etc_link/passwd"}),
    ("read_file", {"path": "out_dir/secret.txt"}),
    ("read_file", {"path": "secret_link"}),
    ("read_file", {"path": "src/\x00x"}),
    ("list_dir", {"path": ".."}),
    ("list_dir", {"path": "out_dir"}),
    ("list_dir", {"path": "etc_link"}),
    ("grep", {"pattern": "secret", "path": "out_dir"}),
    ("grep", {"pattern": "secret", "path": "../outside"}),
    ("write_file", {"path": "../outside/new.txt", "content": "x"}),
    ("write_file", {"path": "secret_link", "content": "overwritten"}),
    ("write_file", {"path": "out_dir/secret.txt", "content": "overwritten"}),
    ("write_file", {"path": "out_dir/sub/new.txt", "content": "x"}),
    ("write_file", {"path": "dangling_link", "content": "x"}),
    ("edit_file", {"path": "secret_link", "old": "top", "new": "bottom"}),
    ("edit_file", {"path": "out_dir/secret.txt", "old": "top", "new": "bottom"}),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "args"), ESCAPES, ids=[f"{n}:{a['path']!r}" for n, a in ESCAPES])
async def test_every_escape_fails_path_unsafe_and_touches_nothing(
    workspace: Path, outside: Path, name: str, args: dict[str, Any]
) -> None:
    (workspace / "etc_link").symlink_to("/etc")
    (workspace / "out_dir").symlink_to(outside)
    (workspace / "secret_link").symlink_to(outside / "secret.txt")
    (workspace / "dangling_link").symlink_to(outside / "not-yet.txt")
    before_outside, before_inside = snapshot(outside), snapshot(workspace)

    result = await call(ToolRouter(), make_ctx(workspace), name, **args)

    assert (result.ok, result.error_code) == (False, "path_unsafe"), result.text
    assert "secret" not in result.text.replace("secret_link", "").replace("secret.txt", "")
    assert snapshot(outside) == before_outside
    assert snapshot(workspace) == before_inside


def test_resolve_under_accepts_inside_paths_and_symlinks_that_stay_inside(workspace: Path) -> None:
    (workspace / "alias").symlink_to(workspace / "src")
    real = workspace.resolve()
    assert resolve_under(workspace, "src/foo.py", must_exist=True) == real / "src" / "foo.py"
    assert resolve_under(workspace, "src/../notes.txt", must_exist=True) == real / "notes.txt"
    assert resolve_under(workspace, "alias/foo.py", must_exist=True) == real / "src" / "foo.py"
    assert resolve_under(workspace, str(real / "notes.txt"), must_exist=True) == real / "notes.txt"
    assert resolve_under(workspace, "", must_exist=True) == real
    assert resolve_under(workspace, "new/dir/x.txt", must_exist=False) == real / "new/dir/x.txt"
    with pytest.raises(ToolError) as missing:
        resolve_under(workspace, "nope.txt", must_exist=True)
    assert missing.value.code == "not_found"


def test_a_parent_swapped_for_a_symlink_after_the_check_is_refused(workspace: Path, outside: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "secret.txt").write_text("inside\n")
    resolved = resolve_under(workspace, "sub/secret.txt", must_exist=True)
    # the race: between the check and the open, `sub` becomes a symlink to a directory outside
    (workspace / "sub" / "secret.txt").unlink()
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(outside)
    before = snapshot(outside)
    for flags in (os.O_RDONLY, os.O_WRONLY | os.O_CREAT):
        with pytest.raises(ToolError) as caught:
            open_resolved(workspace, resolved, flags)
        assert caught.value.code == "path_unsafe"
    assert snapshot(outside) == before


def test_a_file_swapped_for_a_symlink_after_the_check_is_refused(workspace: Path, outside: Path) -> None:
    resolved = resolve_under(workspace, "notes.txt", must_exist=True)
    (workspace / "notes.txt").unlink()
    (workspace / "notes.txt").symlink_to(outside / "secret.txt")
    before = snapshot(outside)
    with pytest.raises(ToolError) as caught:
        open_resolved(workspace, resolved, os.O_WRONLY | os.O_CREAT)
    assert caught.value.code == "path_unsafe"
    assert snapshot(outside) == before


def test_the_opened_descriptor_reports_its_real_path_for_the_recheck(workspace: Path, outside: Path) -> None:
    # The second guard of open_resolved: the kernel's own name for the open file.
    fd = os.open(outside / "secret.txt", os.O_RDONLY)
    try:
        assert _fd_real_path(fd) == str((outside / "secret.txt").resolve())
    finally:
        os.close(fd)


def test_open_resolved_rechecks_that_the_path_is_inside(workspace: Path, outside: Path) -> None:
    with pytest.raises(ToolError) as caught:
        open_resolved(workspace, outside / "secret.txt", os.O_RDONLY)
    assert caught.value.code == "path_unsafe"
    resolved = resolve_under(workspace, "src/foo.py", must_exist=True)
    fd = open_resolved(workspace, resolved, os.O_RDONLY)
    try:
        assert os.read(fd, 3) == b"def"
    finally:
        os.close(fd)


# -- read_file / list_dir / grep ---------------------------------------------------------------


@pytest.mark.anyio
async def test_read_file_whole_and_by_line_window(workspace: Path) -> None:
    router, ctx = ToolRouter(), make_ctx(workspace)
    whole = await call(router, ctx, "read_file", path="notes.txt")
    assert (whole.ok, whole.text, whole.truncated) == (True, "one\ntwo\nthree\nfour\nfive\n", False)
    window = await call(router, ctx, "read_file", path="notes.txt", offset=2, limit=2)
    assert window.text == "two\nthree\n"
    tail = await call(router, ctx, "read_file", path="notes.txt", offset=4)
    assert tail.text == "four\nfive\n"
    past = await call(router, ctx, "read_file", path="notes.txt", offset=40)
    assert past.ok and "has 5 lines" in past.text


@pytest.mark.anyio
async def test_read_file_errors_are_mapped(workspace: Path) -> None:
    router, ctx = ToolRouter(), make_ctx(workspace)
    missing = await call(router, ctx, "read_file", path="missing.txt")
    assert (missing.ok, missing.error_code) == (False, "not_found")
    assert "missing.txt" in missing.text
    directory = await call(router, ctx, "read_file", path="src")
    assert (directory.ok, directory.error_code) == (False, "io_error")
    assert "list_dir" in directory.text
    (workspace / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)))
    binary = await call(router, ctx, "read_file", path="image.png")
    assert binary.ok and binary.text == "(binary file, 266 bytes; not shown)"
    os.mkfifo(workspace / "pipe")
    fifo = await call(router, ctx, "read_file", path="pipe")  # must not hang
    assert fifo.error_code == "io_error"


@pytest.mark.anyio
async def test_read_file_output_over_budget_is_cut(workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"line {n}\n" for n in range(1000)))
    result = await call(ToolRouter(), make_ctx(workspace, budget=100), "read_file", path="big.txt")
    assert result.ok and result.truncated
    assert result.text.startswith("line 0\nline 1\n")
    assert len(result.text.split("\n[output truncated")[0]) == 100
    assert "truncated" in result.text


@pytest.mark.anyio
async def test_list_dir_marks_directories_and_symlinks(workspace: Path) -> None:
    (workspace / "link").symlink_to(workspace / "notes.txt")
    router, ctx = ToolRouter(), make_ctx(workspace)
    result = await call(router, ctx, "list_dir", path=".")
    assert result.text == "link@\nnotes.txt\nsrc/\n"
    (workspace / "empty").mkdir()
    assert (await call(router, ctx, "list_dir", path="empty")).text == "(empty directory)"
    missing = await call(router, ctx, "list_dir", path="nope")
    assert missing.error_code == "not_found"
    not_dir = await call(router, ctx, "list_dir", path="notes.txt")
    assert not_dir.error_code == "io_error"


@pytest.mark.anyio
async def test_list_dir_output_over_budget_is_cut(workspace: Path) -> None:
    for n in range(50):
        (workspace / f"file_{n:03}.txt").write_text("")
    result = await call(ToolRouter(), make_ctx(workspace, budget=60), "list_dir", path=".")
    assert result.truncated and result.text.startswith("file_000.txt\nfile_001.txt\n")


@pytest.mark.anyio
async def test_grep_finds_lines_and_skips_binary_files_and_vcs_dirs(workspace: Path) -> None:
    (workspace / "src" / "bar.py").write_text("x = foo()\nprint(x)\n")
    (workspace / "blob.bin").write_bytes(b"foo\x00\x01\x02 foo")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("foo = 1\n")
    router, ctx = ToolRouter(), make_ctx(workspace)
    result = await call(router, ctx, "grep", pattern=r"foo\(")
    assert result.ok
    assert result.text == "src/bar.py:1:x = foo()\nsrc/foo.py:1:def foo():\n"
    one_file = await call(router, ctx, "grep", pattern="t[wh]", path="notes.txt")
    assert one_file.text == "notes.txt:2:two\nnotes.txt:3:three\n"
    none = await call(router, ctx, "grep", pattern="zebra")
    assert none.ok and "no matches" in none.text


@pytest.mark.anyio
async def test_grep_errors_and_budget(workspace: Path) -> None:
    router = ToolRouter()
    bad = await call(router, make_ctx(workspace), "grep", pattern="(unclosed")
    assert (bad.ok, bad.error_code) == (False, "unknown")
    assert "invalid pattern" in bad.text
    missing = await call(router, make_ctx(workspace), "grep", pattern="x", path="nope")
    assert missing.error_code == "not_found"
    (workspace / "many.txt").write_text("match\n" * 5000)
    big = await call(router, make_ctx(workspace, budget=200), "grep", pattern="match")
    assert big.ok and big.truncated
    assert big.text.startswith("many.txt:1:match\nmany.txt:2:match\n")
    assert len(big.text) < 400


# -- write_file / edit_file --------------------------------------------------------------------


@pytest.mark.anyio
async def test_write_file_creates_parents_and_overwrites(workspace: Path) -> None:
    router, ctx = ToolRouter(), make_ctx(workspace)
    created = await call(router, ctx, "write_file", path="pkg/sub/mod.py", content="x = 1\n")
    assert created.ok and created.text.startswith("created pkg/sub/mod.py")
    assert (workspace / "pkg" / "sub" / "mod.py").read_text() == "x = 1\n"
    overwritten = await call(router, ctx, "write_file", path="notes.txt", content="short\n")
    assert overwritten.ok and overwritten.text.startswith("overwrote notes.txt")
    assert (workspace / "notes.txt").read_text() == "short\n"  # truncated, no old tail left
    on_dir = await call(router, ctx, "write_file", path="src", content="x")
    assert on_dir.error_code == "io_error"


@pytest.mark.anyio
async def test_edit_file_replaces_exactly_one_occurrence(workspace: Path) -> None:
    router, ctx = ToolRouter(), make_ctx(workspace)
    result = await call(router, ctx, "edit_file", path="src/foo.py", old="return 1", new="return 2")
    assert result.ok, result.text
    assert (workspace / "src" / "foo.py").read_text() == "def foo():\n    return 2\n"


@pytest.mark.anyio
async def test_edit_file_with_zero_or_two_matches_fails_readably(workspace: Path) -> None:
    (workspace / "twice.txt").write_text("a = 1\na = 1\n")
    router, ctx = ToolRouter(), make_ctx(workspace)
    zero = await call(router, ctx, "edit_file", path="notes.txt", old="zebra", new="x")
    assert (zero.ok, zero.error_code) == (False, "not_found")
    assert "not found" in zero.text
    two = await call(router, ctx, "edit_file", path="twice.txt", old="a = 1", new="a = 2")
    assert (two.ok, two.error_code) == (False, "unknown")
    assert "2 times" in two.text and "exactly once" in two.text
    assert (workspace / "twice.txt").read_text() == "a = 1\na = 1\n"
    assert (workspace / "notes.txt").read_text() == "one\ntwo\nthree\nfour\nfive\n"
    missing = await call(router, ctx, "edit_file", path="nope.txt", old="a", new="b")
    assert missing.error_code == "not_found"


# -- shell -------------------------------------------------------------------------------------


def _group_members_alive(pgid: int) -> list[int]:
    """Pids in process group `pgid` that are not zombies (PID 1 here may not reap them)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state not in ("Z", "X"):
            alive.append(int(entry.name))
    return alive


def _pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return not _group_members_alive(pgid)


def _wait_until(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.mark.anyio
async def test_shell_streams_stdout_and_stderr_in_order_before_returning(workspace: Path) -> None:
    recorder = Recorder()
    cmd = "echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three; printf 'tail'"
    result = await call(ToolRouter(), make_ctx(workspace, recorder), "shell", cmd=cmd)
    assert result.ok and result.exit_code == 0
    assert recorder.chunks == [
        ("stdout", "one\n"),
        ("stderr", "two\n"),
        ("stdout", "three\ntail"),
    ] or recorder.chunks == [
        ("stdout", "one\n"),
        ("stderr", "two\n"),
        ("stdout", "three\n"),
        ("stdout", "tail"),
    ]
    assert result.text == "one\ntwo\nthree\ntail"


@pytest.mark.anyio
async def test_shell_never_enters_on_output_twice_at_once(workspace: Path) -> None:
    inside = False
    overlaps = 0
    chunks: list[tuple[str, str]] = []

    async def on_output(stream: str, text: str) -> None:
        nonlocal inside, overlaps
        overlaps += inside
        inside = True
        await anyio.sleep(0.001)  # an engine appending to its log yields here
        chunks.append((stream, text))
        inside = False

    ctx = ToolContext(cwd=workspace, session_id="s", turn_id="t", tool_call_id="c", on_output=on_output)
    cmd = "for i in 1 2 3 4 5 6 7 8 9 10; do echo out$i; echo err$i >&2; sleep 0.01; done"
    tool = ToolRouter().get("shell")
    result = await tool.run(tool.Args(cmd=cmd), ctx)  # straight to the tool, no router lock
    assert result.ok and overlaps == 0
    assert "".join(text for stream, text in chunks if stream == "stderr") == "".join(
        f"err{i}\n" for i in range(1, 11)
    )


@pytest.mark.anyio
async def test_shell_runs_in_the_session_cwd_and_reports_exit_codes(workspace: Path) -> None:
    router = ToolRouter()
    pwd = await call(router, make_ctx(workspace), "shell", cmd="pwd; ls src")
    assert pwd.text == f"{workspace.resolve()}\nfoo.py\n"
    failing = await call(router, make_ctx(workspace), "shell", cmd="echo nope >&2; exit 3")
    assert (failing.ok, failing.exit_code, failing.text) == (True, 3, "nope\n")


@pytest.mark.anyio
async def test_shell_output_over_budget_keeps_head_and_tail(workspace: Path) -> None:
    recorder = Recorder()
    cmd = "echo START; seq 1 20000; echo END"
    result = await call(ToolRouter(), make_ctx(workspace, recorder, budget=1000), "shell", cmd=cmd)
    assert result.ok and result.truncated and result.exit_code == 0
    assert result.text.startswith("START\n1\n2\n")
    assert result.text.endswith("19999\n20000\nEND\n")
    assert "characters cut" in result.text
    assert len(result.text) < 1100
    assert len(recorder.text("stdout")) == 1000  # the stream stops at the budget too


@pytest.mark.anyio
async def test_shell_timeout_kills_the_whole_group(workspace: Path) -> None:
    recorder = Recorder()
    started = time.monotonic()
    result = await call(
        ToolRouter(),
        make_ctx(workspace, recorder),
        "shell",
        cmd="echo $$; sleep 30 & sleep 30",
        timeoutMs=200,
    )
    elapsed = time.monotonic() - started
    assert (result.ok, result.error_code) == (False, "timeout")
    assert "timed out after 200 ms" in result.text
    assert elapsed < NOT_WAITED_FOR
    pgid = int(recorder.text("stdout").split()[0])
    assert _wait_until(lambda: _group_gone(pgid)), _group_members_alive(pgid)


@pytest.mark.anyio
async def test_shell_leaves_no_background_job_behind_after_a_normal_exit(workspace: Path) -> None:
    recorder = Recorder()
    started = time.monotonic()
    result = await call(ToolRouter(), make_ctx(workspace, recorder), "shell", cmd="sleep 30 & echo $!")
    assert result.ok and time.monotonic() - started < NOT_WAITED_FOR
    background = int(result.text.strip())
    assert _wait_until(lambda: not _pid_alive(background))


@pytest.mark.anyio
async def test_cancelling_shell_kills_grandchildren_and_reraises(workspace: Path) -> None:
    recorder = Recorder()
    ready = anyio.Event()

    async def on_output(stream: str, text: str) -> None:
        await recorder(stream, text)
        if "bg=" in recorder.text("stdout"):
            ready.set()

    router = ToolRouter()
    ctx = make_ctx(workspace, recorder)
    ctx = ToolContext(
        cwd=ctx.cwd,
        session_id="s",
        turn_id="t",
        tool_call_id="c",
        on_output=on_output,
    )
    tool, args = router.parse("shell", {"cmd": "echo $$; sh -c 'sleep 30 & echo bg=$!; sleep 30'"})
    outcome: list[str] = []

    async def run() -> None:
        try:
            await router.run(tool, args, ctx)
        except anyio.get_cancelled_exc_class():
            outcome.append("cancelled")
            raise
        outcome.append("returned")

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(5):
            await ready.wait()
        cancelled_at = time.monotonic()
        group.cancel_scope.cancel()
    assert time.monotonic() - cancelled_at < NOT_WAITED_FOR
    assert outcome == ["cancelled"]
    lines = recorder.text("stdout").split()
    pgid, grandchild = int(lines[0]), int(lines[1].removeprefix("bg="))
    assert _wait_until(lambda: _group_gone(pgid), timeout=1.0), _group_members_alive(pgid)
    assert not _pid_alive(grandchild)


def test_shell_risk_and_reason_come_from_the_classifier() -> None:
    router = ToolRouter()
    for cmd, risk in [("ls src/foo.py", "read"), ("mv a b", "destructive"), ("curl x", "network")]:
        _, args = router.parse("shell", {"cmd": cmd})
        assert router.risk("shell", args) == risk
        assert router.assess("shell", args) == assess_shell(cmd)
    _, args = router.parse("shell", {"cmd": "sed 's/a/b/e' f"})
    assert router.assess("shell", args) == RiskAssessment("execute", "`sed` script uses `e`: runs a command")
    _, args = router.parse("read_file", {"path": "a"})
    assert router.risk("read_file", args) == "read"
    _, args = router.parse("edit_file", {"path": "a", "old": "x", "new": "y"})
    assert router.assess("edit_file", args) == RiskAssessment("write")


def test_write_file_over_an_existing_file_is_flagged_as_an_overwrite(workspace: Path) -> None:
    router = ToolRouter()
    (workspace / "notes.txt").write_text("keep me")
    _, over = router.parse("write_file", {"path": "notes.txt", "content": "x"})
    _, new = router.parse("write_file", {"path": "sub/new.txt", "content": "x"})
    _, outside = router.parse("write_file", {"path": "../elsewhere.txt", "content": "x"})
    assert router.assess("write_file", over, cwd=workspace) == RiskAssessment(
        "write", "replaces the whole of notes.txt", "overwrites notes.txt"
    )
    assert router.assess("write_file", new, cwd=workspace) == RiskAssessment("write", "creates sub/new.txt")
    assert router.assess("write_file", outside, cwd=workspace).warning is None
    assert router.assess("write_file", over) == RiskAssessment("write")  # no cwd: nothing on disk to look at
    assert router.risk("write_file", over) == "write"
    assert (workspace / "notes.txt").read_text() == "keep me"


# -- the router --------------------------------------------------------------------------------


def test_unknown_tool_and_bad_arguments_read_as_sentences() -> None:
    router = ToolRouter()
    with pytest.raises(ToolError) as unknown:
        router.parse("delete_everything", {})
    assert unknown.value.code == "not_found"
    assert unknown.value.message == (
        "unknown tool 'delete_everything'; available: read_file, list_dir, grep, write_file, edit_file, shell"
    )
    with pytest.raises(ToolError) as missing:
        router.parse("read_file", {})
    assert (missing.value.code, missing.value.message) == (
        "unknown",
        "bad arguments for read_file: path: Field required",
    )
    with pytest.raises(ToolError) as wrong:
        router.parse("read_file", {"path": "a", "offset": 0})
    assert wrong.value.message == (
        "bad arguments for read_file: offset: Input should be greater than or equal to 1"
    )
    with pytest.raises(ToolError) as extra:
        router.parse("shell", {"cmd": "ls", "timeout": 5})
    assert "timeout: Extra inputs are not permitted" in extra.value.message
    with pytest.raises(ToolError):
        router.parse("shell", ["ls"])  # type: ignore[arg-type]


def test_schemas_are_json_schemas_of_the_arguments() -> None:
    expected = {
        "read_file": ({"path", "offset", "limit"}, {"path"}),
        "list_dir": ({"path"}, {"path"}),
        "grep": ({"pattern", "path"}, {"pattern"}),
        "write_file": ({"path", "content"}, {"path", "content"}),
        "edit_file": ({"path", "old", "new"}, {"path", "old", "new"}),
        "shell": ({"cmd", "timeoutMs"}, {"cmd"}),
    }
    schemas = ToolRouter().schemas()
    assert [schema["name"] for schema in schemas] == list(expected)
    for schema in schemas:
        properties, required = expected[schema["name"]]
        input_schema = schema["input_schema"]
        assert schema["description"]
        assert input_schema["type"] == "object"
        assert input_schema["additionalProperties"] is False
        assert set(input_schema["properties"]) == properties
        assert set(input_schema.get("required", [])) == required
        for prop in input_schema["properties"].values():
            assert prop["type"] in ("string", "integer") and prop["description"]
    shell = schemas[-1]["input_schema"]["properties"]["timeoutMs"]
    assert (shell["default"], shell["minimum"]) == (120_000, 1)


class _Args(BaseModel):
    what: str


class _Exploding(BaseTool):
    name = "explode"
    description = "raises what it is told to"
    Args = _Args

    async def run(self, args: _Args, ctx: ToolContext) -> ToolResult:
        if args.what == "tool-error":
            raise ToolError("budget_exceeded", "too much")
        if args.what == "missing":
            raise FileNotFoundError(2, "No such file or directory", "gone.txt")
        if args.what == "huge":
            return ToolResult(ok=True, text="x" * 10_000)
        raise RuntimeError("boom")


@pytest.mark.anyio
async def test_router_run_turns_failures_into_results(workspace: Path) -> None:
    router = ToolRouter([])
    router.register(_Exploding())
    assert router.names() == ["explode"]
    with pytest.raises(ValueError):
        router.register(_Exploding())
    ctx = make_ctx(workspace, budget=500)
    results = {
        what: await call(router, ctx, "explode", what=what)
        for what in ("tool-error", "missing", "bug", "huge")
    }
    assert (results["tool-error"].error_code, results["tool-error"].text) == ("budget_exceeded", "too much")
    assert (results["missing"].error_code, results["missing"].text) == (
        "not_found",
        "gone.txt: no such file or directory",
    )
    assert (results["bug"].error_code, results["bug"].text) == (
        "unknown",
        "explode failed: RuntimeError: boom",
    )
    assert results["huge"].ok and results["huge"].truncated and len(results["huge"].text) < 600


@pytest.mark.anyio
async def test_a_failing_output_callback_is_the_engines_error_not_the_tools(
    workspace: Path,
) -> None:
    class StoreBroke(Exception):
        pass

    async def on_output(stream: str, text: str) -> None:
        raise StoreBroke("disk full")

    ctx = ToolContext(cwd=workspace, session_id="s", turn_id="t", tool_call_id="c", on_output=on_output)
    router = ToolRouter()
    tool, args = router.parse("shell", {"cmd": "echo $$; sleep 30"})
    started = time.monotonic()
    with pytest.raises(StoreBroke, match="disk full"):
        await router.run(tool, args, ctx)
    assert time.monotonic() - started < NOT_WAITED_FOR  # the shell was killed, not waited for


def test_preview_is_one_short_deterministic_line() -> None:
    preview = ToolRouter.preview
    assert preview({"cmd": "ls src/foo.py"}) == 'cmd="ls src/foo.py"'
    assert preview({"path": "a.txt", "offset": 2}) == 'path="a.txt" offset=2'
    long = preview({"path": "x.py", "content": "line\n" * 100})
    assert len(long) == 120 and long.endswith("…") and "\n" not in long
    assert long.startswith('path="x.py" content="line\\nline')
    assert preview({"b": {"z": 1, "a": [1, 2]}}) == preview({"b": {"a": [1, 2], "z": 1}})
    assert preview({}) == ""
    assert preview({"old_text": "    return x"}) == 'old_text="    return x"'  # indentation kept
    assert preview({"a\nb": 1}) == "a b=1"  # one line whatever the keys hold
