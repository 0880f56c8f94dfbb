"""The built-in tools: files under the session cwd, and a shell.

Invariants this module guarantees:
- every path goes through `paths.resolve_under` / `paths.open_resolved`: nothing outside the
  session cwd is read, listed, created or changed, and symlinks are never followed out;
- a result carries at most `ctx.output_budget` characters of output (plus a marker saying what
  was cut) and says so with `truncated=True`;
- `shell` runs `/bin/sh -c CMD` in its own process group; when `run` returns, raises or is
  cancelled, that whole group has been sent SIGKILL and the shell reaped, so nothing it started
  (background jobs, grandchildren) outlives the call; every chunk it printed within the budget
  has been passed to `ctx.on_output` before `run` returns.
"""

from __future__ import annotations

import codecs
import os
import re
import signal
import stat
import subprocess
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import IO, Annotated, Any

import anyio
from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from agent_tui.engine.tools.base import (
    BaseTool,
    Risk,
    RiskAssessment,
    Tool,
    ToolArgs,
    ToolContext,
    ToolError,
    ToolResult,
    cut_to_budget,
)
from agent_tui.engine.tools.paths import (
    display_path,
    open_resolved,
    open_under,
    os_error_to_tool_error,
    resolve_under,
)
from agent_tui.safety import assess_shell

__all__ = [
    "EditFileTool",
    "GrepTool",
    "ListDirTool",
    "ReadFileTool",
    "ShellTool",
    "WriteFileTool",
    "builtin_tools",
]

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK  # NONBLOCK: opening a FIFO must not hang the tool
_BINARY_SNIFF = 8192  # a NUL byte in this many leading bytes marks a binary file


def _open_regular(ctx: ToolContext, user_path: str, flags: int) -> tuple[int, Path]:
    """Open an existing regular file under the cwd, or raise a readable ToolError."""
    try:
        fd, resolved = open_under(ctx.cwd, user_path, flags, must_exist=True)
    except OSError as error:
        raise os_error_to_tool_error(error, user_path) from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        os.close(fd)
        raise ToolError("io_error", f"{user_path}: is a directory; use list_dir")
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ToolError("io_error", f"{user_path}: not a regular file")
    return fd, resolved


def _lines(stream: IO[bytes], cap: int) -> Iterator[bytes]:
    """Lines of a binary stream, each cut to `cap` bytes (the rest of a longer line is skipped)."""
    while True:
        line = stream.readline(cap)
        if not line:
            return
        if len(line) == cap and not line.endswith(b"\n"):
            while True:
                more = stream.readline(cap)
                if not more or more.endswith(b"\n") or len(more) < cap:
                    break
        yield line


# -- read_file ---------------------------------------------------------------------------------


_Positive = Annotated[int, Field(ge=1)]


class ReadFileArgs(ToolArgs):
    path: str = Field(description="File to read, relative to the working directory.")
    offset: _Positive | SkipJsonSchema[None] = Field(
        default=None, description="First line to return, counting from 1 (default 1)."
    )
    limit: _Positive | SkipJsonSchema[None] = Field(
        default=None, description="Most lines to return (default: to the end of the file)."
    )


class ReadFileTool(BaseTool):
    """Read a text file, optionally a window of lines (`offset` is 1-based).

    Invalid UTF-8 is shown with replacement characters; a binary file (a NUL byte in its first
    8 KiB) is not shown at all, only its size.
    """

    name = "read_file"
    description = (
        "Read a text file under the working directory. Optional `offset` (first line, 1-based) "
        "and `limit` (number of lines) read a window of a long file."
    )
    Args = ReadFileArgs
    fixed_risk = "read"

    async def run(self, args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
        return await anyio.to_thread.run_sync(partial(self._read, args, ctx))

    def _read(self, args: ReadFileArgs, ctx: ToolContext) -> ToolResult:
        fd, _ = _open_regular(ctx, args.path, _READ_FLAGS)
        start = args.offset or 1
        budget = ctx.output_budget
        cap = budget * 4 + 4  # a line this long decodes to more than the budget
        chunks: list[str] = []
        size = 0
        seen = 0
        truncated = False
        with os.fdopen(fd, "rb") as stream:
            if b"\x00" in stream.peek(_BINARY_SNIFF)[:_BINARY_SNIFF]:
                size_bytes = os.fstat(stream.fileno()).st_size
                return ToolResult(ok=True, text=f"(binary file, {size_bytes} bytes; not shown)")
            for seen, raw in enumerate(_lines(stream, cap), start=1):
                if seen < start:
                    continue
                if args.limit is not None and seen >= start + args.limit:
                    break
                text = raw.decode("utf-8", errors="replace")
                chunks.append(text)
                size += len(text)
                if size > budget:
                    truncated = True
                    break
        if not chunks and start > 1:
            return ToolResult(ok=True, text=f"(no lines: {args.path} has {seen} lines)")
        text, cut = cut_to_budget("".join(chunks), budget)
        return ToolResult(ok=True, text=text, truncated=truncated or cut)


# -- list_dir ----------------------------------------------------------------------------------


class ListDirArgs(ToolArgs):
    path: str = Field(description="Directory to list, relative to the working directory ('.').")


class ListDirTool(BaseTool):
    """List a directory: sorted names, `name/` for directories, `name@` for symlinks."""

    name = "list_dir"
    description = "List a directory under the working directory. Directories end in '/', symlinks in '@'."
    Args = ListDirArgs
    fixed_risk = "read"

    async def run(self, args: ListDirArgs, ctx: ToolContext) -> ToolResult:
        return await anyio.to_thread.run_sync(partial(self._list, args, ctx))

    def _list(self, args: ListDirArgs, ctx: ToolContext) -> ToolResult:
        try:
            fd, _ = open_under(ctx.cwd, args.path, os.O_RDONLY | os.O_DIRECTORY, must_exist=True)
        except OSError as error:
            raise os_error_to_tool_error(error, args.path) from None
        try:
            names = []
            with os.scandir(fd) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        names.append(entry.name + "@")
                    elif entry.is_dir(follow_symlinks=False):
                        names.append(entry.name + "/")
                    else:
                        names.append(entry.name)
        finally:
            os.close(fd)
        if not names:
            return ToolResult(ok=True, text="(empty directory)")
        text, truncated = cut_to_budget("\n".join(sorted(names)) + "\n", ctx.output_budget)
        return ToolResult(ok=True, text=text, truncated=truncated)


# -- grep --------------------------------------------------------------------------------------

_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", ".agent-tui", "node_modules", "__pycache__", ".venv"})
_GREP_LINE_CAP = 400


class GrepArgs(ToolArgs):
    pattern: str = Field(description="Python regular expression searched in each line.")
    path: str = Field(
        default=".", description="File or directory to search (default: the working directory)."
    )


class GrepTool(BaseTool):
    """Search files for a Python regular expression; prints `path:line:text` per match.

    Binary files (a NUL byte in the first 8 KiB), symlinks, and version-control / dependency
    directories (`.git`, `node_modules`, `.venv`, ...) met during the walk are skipped. The walk
    is in sorted order and stops once the output budget is spent.
    """

    name = "grep"
    description = (
        "Search text files under the working directory for a Python regular expression. "
        "Prints 'path:line:text' for each matching line. Binary files are skipped."
    )
    Args = GrepArgs
    fixed_risk = "read"

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        try:
            regex = re.compile(args.pattern)
        except re.error as error:
            raise ToolError("unknown", f"invalid pattern {args.pattern!r}: {error}") from None
        return await anyio.to_thread.run_sync(partial(self._grep, regex, args, ctx))

    def _grep(self, regex: re.Pattern[str], args: GrepArgs, ctx: ToolContext) -> ToolResult:
        try:
            fd, resolved = open_under(ctx.cwd, args.path, _READ_FLAGS, must_exist=True)
        except OSError as error:
            raise os_error_to_tool_error(error, args.path) from None
        out = _GrepOutput(ctx.output_budget)
        base = display_path(ctx.cwd, resolved)
        try:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                self._walk(fd, base, regex, out)
            else:
                self._search(os.dup(fd), base, regex, out)
        finally:
            os.close(fd)
        if not out.lines:
            return ToolResult(ok=True, text=f"no matches for {args.pattern!r}")
        text, cut = cut_to_budget("".join(out.lines), ctx.output_budget)
        return ToolResult(ok=True, text=text, truncated=out.full or cut)

    def _walk(self, top_fd: int, base: str, regex: re.Pattern[str], out: _GrepOutput) -> None:
        for dirpath, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=top_fd):
            dirnames[:] = sorted(name for name in dirnames if name not in _SKIPPED_DIRS)
            for name in sorted(filenames):
                try:
                    fd = os.open(name, _READ_FLAGS | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
                except OSError:
                    continue  # a symlink (refused by O_NOFOLLOW) or unreadable: skip it
                self._search(fd, os.path.normpath(os.path.join(base, dirpath, name)), regex, out)
                if out.full:
                    return

    def _search(self, fd: int, shown: str, regex: re.Pattern[str], out: _GrepOutput) -> None:
        with os.fdopen(fd, "rb") as stream:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            if b"\x00" in stream.peek(_BINARY_SNIFF)[:_BINARY_SNIFF]:
                return
            for number, raw in enumerate(_lines(stream, 1 << 20), start=1):
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if regex.search(line):
                    if len(line) > _GREP_LINE_CAP:
                        line = line[:_GREP_LINE_CAP] + "…"
                    out.add(f"{shown}:{number}:{line}\n")
                    if out.full:
                        return


class _GrepOutput:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.lines: list[str] = []
        self.size = 0
        self.full = False

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.size += len(line)
        if self.size > self.budget:
            self.full = True


# -- write_file / edit_file --------------------------------------------------------------------


class WriteFileArgs(ToolArgs):
    path: str = Field(description="File to write, relative to the working directory.")
    content: str = Field(description="The complete new content of the file.")


def _write_all(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    os.ftruncate(fd, len(data))


class WriteFileTool(BaseTool):
    """Create or overwrite a file (missing parent directories inside the cwd are created)."""

    name = "write_file"
    description = (
        "Create or overwrite a file under the working directory with the given content. "
        "Missing parent directories are created."
    )
    Args = WriteFileArgs
    fixed_risk = "write"

    def assess(self, args: WriteFileArgs, cwd: Path | None) -> RiskAssessment:
        """`write`; with a cwd, a file that exists already is flagged: "overwrites PATH"."""
        if cwd is None:
            return RiskAssessment("write")
        try:
            resolved = resolve_under(cwd, args.path, must_exist=False)
        except ToolError as error:
            return RiskAssessment("write", error.message)
        if os.path.lexists(resolved):
            return RiskAssessment("write", f"replaces the whole of {args.path}", f"overwrites {args.path}")
        return RiskAssessment("write", f"creates {args.path}")

    async def run(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        return await anyio.to_thread.run_sync(partial(self._write, args, ctx))

    def _write(self, args: WriteFileArgs, ctx: ToolContext) -> ToolResult:
        resolved = resolve_under(ctx.cwd, args.path, must_exist=False)
        existed = os.path.lexists(resolved)
        data = args.content.encode("utf-8")
        try:
            fd = open_resolved(
                ctx.cwd,
                resolved,
                os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK,
                make_parents=True,
                display=args.path,
            )
        except OSError as error:
            raise os_error_to_tool_error(error, args.path) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ToolError("io_error", f"{args.path}: not a regular file")
            _write_all(fd, data)
        except OSError as error:
            raise os_error_to_tool_error(error, args.path) from None
        finally:
            os.close(fd)
        verb = "overwrote" if existed else "created"
        shown = display_path(ctx.cwd, resolved)
        return ToolResult(ok=True, text=f"{verb} {shown} ({len(data)} bytes)")


class EditFileArgs(ToolArgs):
    path: str = Field(description="File to edit, relative to the working directory.")
    old: str = Field(min_length=1, description="Exact text to replace; must occur exactly once.")
    new: str = Field(description="Replacement text.")


class EditFileTool(BaseTool):
    """Replace one exact occurrence of `old` with `new`.

    Zero occurrences fail with `not_found`, several with `unknown`; both messages tell the model
    what to do next. Bytes that are not UTF-8 are preserved (surrogateescape round trip).
    """

    name = "edit_file"
    description = (
        "Replace the text `old` with `new` in a file under the working directory. `old` must "
        "occur exactly once in the file; include surrounding lines to make it unique."
    )
    Args = EditFileArgs
    fixed_risk = "write"

    async def run(self, args: EditFileArgs, ctx: ToolContext) -> ToolResult:
        return await anyio.to_thread.run_sync(partial(self._edit, args, ctx))

    def _edit(self, args: EditFileArgs, ctx: ToolContext) -> ToolResult:
        fd, resolved = _open_regular(ctx, args.path, os.O_RDWR | os.O_NONBLOCK)
        try:
            with os.fdopen(os.dup(fd), "rb") as stream:
                text = stream.read().decode("utf-8", errors="surrogateescape")
            count = text.count(args.old)
            if count == 0:
                raise ToolError(
                    "not_found",
                    f"{args.path}: the text in `old` was not found; read the file and copy the "
                    "text exactly, including whitespace",
                )
            if count > 1:
                raise ToolError(
                    "unknown",
                    f"{args.path}: the text in `old` occurs {count} times; include more "
                    "surrounding lines so it occurs exactly once",
                )
            _write_all(fd, text.replace(args.old, args.new, 1).encode("utf-8", "surrogateescape"))
        except OSError as error:
            raise os_error_to_tool_error(error, args.path) from None
        finally:
            os.close(fd)
        return ToolResult(ok=True, text=f"edited {display_path(ctx.cwd, resolved)}")


# -- shell -------------------------------------------------------------------------------------

_DRAIN_GRACE_S = 1.0
_DEFAULT_TIMEOUT_MS = 120_000


class ShellArgs(ToolArgs):
    cmd: str = Field(description="Command line run with /bin/sh -c in the working directory.")
    timeoutMs: int = Field(
        default=_DEFAULT_TIMEOUT_MS,
        ge=1,
        le=3_600_000,
        description="Kill the command after this many milliseconds (default 120000).",
    )


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone (PermissionError: only zombies left, on some systems)


class _ShellOutput:
    """Budgeted capture of a command's combined output.

    The first `budget` characters are streamed and kept (head); the last `budget` characters
    are kept too (tail), so a cut result shows both the start and the end, where errors and
    summaries usually are.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.head: list[str] = []
        self.head_size = 0
        self.tail = ""
        self.total = 0
        # stdout and stderr are pumped by two tasks, but the engine stores deltas one at a time
        self._delivering = anyio.Lock()

    async def deliver(self, stream: Any, text: str, ctx: ToolContext) -> None:
        async with self._delivering:
            await self._deliver(stream, text, ctx)

    async def _deliver(self, stream: Any, text: str, ctx: ToolContext) -> None:
        self.total += len(text)
        self.tail = (self.tail + text)[-self.budget :] if self.budget > 0 else ""
        room = self.budget - self.head_size
        if room <= 0:
            return
        shown = text[:room]
        self.head.append(shown)
        self.head_size += len(shown)
        # Shielded: a chunk is either delivered whole or not at all, even under cancellation.
        with anyio.CancelScope(shield=True):
            await ctx.on_output(stream, shown)

    @property
    def truncated(self) -> bool:
        return self.total > self.budget

    def text(self) -> str:
        if not self.truncated:
            return "".join(self.head)
        keep_head = self.budget // 2
        keep_tail = self.budget - keep_head
        head = "".join(self.head)[:keep_head]
        tail = self.tail[-keep_tail:] if keep_tail else ""
        cut = self.total - len(head) - len(tail)
        return f"{head}\n[output truncated: {cut} characters cut]\n{tail}"


class ShellTool(BaseTool):
    """Run a shell command in the session cwd, streaming its output.

    A non-zero exit status is still a successful call (`ok=True`, the status in `exit_code`): the
    model reads the status and the output and decides what to do. `exit_code` is negative when a
    signal ended the shell (Python's convention). Only a timeout (`error_code="timeout"`) or a
    failure to start the shell is a failed result.

    Process lifetime: the command runs as `/bin/sh -c CMD` in a new session (its own process
    group). When the shell exits, anything it left running in that group is killed, so the call
    ends when the shell does; on timeout, and when the awaiting task is cancelled, the whole
    group gets SIGKILL in a shielded `finally`, the shell is reaped and the cancellation goes on.
    stdin is `/dev/null`.

    Output: stdout and stderr are read concurrently; each chunk (decoded as UTF-8) is awaited on
    `ctx.on_output`, one call at a time, in arrival order, until `ctx.output_budget` characters
    were streamed (later output is still read, but not streamed). The result text is the
    combined output; past the budget it keeps the first and the last half of the budget.
    """

    name = "shell"
    description = (
        "Run a command with /bin/sh -c in the working directory and return its combined "
        "stdout and stderr and its exit code. Optional timeoutMs (default 120000)."
    )
    Args = ShellArgs

    def risk(self, args: ShellArgs) -> Risk:
        return assess_shell(args.cmd).risk

    def assess(self, args: ShellArgs, cwd: Path | None) -> RiskAssessment:
        """The classifier's risk and reason (`agent_tui.safety.assess_shell`)."""
        return assess_shell(args.cmd)

    async def run(self, args: ShellArgs, ctx: ToolContext) -> ToolResult:
        output = _ShellOutput(ctx.output_budget)
        try:
            process = await anyio.open_process(
                ["/bin/sh", "-c", args.cmd],
                cwd=ctx.cwd,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as error:
            raise ToolError(
                "io_error", f"cannot start /bin/sh in {ctx.cwd}: {error.strerror or error}"
            ) from None
        pgid = process.pid  # a new session: the shell leads its own process group
        try:
            with anyio.move_on_after(args.timeoutMs / 1000) as deadline:
                async with anyio.create_task_group() as pumps:
                    assert process.stdout is not None and process.stderr is not None
                    pumps.start_soon(_pump, process.stdout, "stdout", output, ctx)
                    pumps.start_soon(_pump, process.stderr, "stderr", output, ctx)
                    await process.wait()
                    # Left-over background jobs would hold the pipes open: end them with the
                    # shell. A daemon that left the group gets a grace period, then we stop
                    # reading.
                    _kill_group(pgid)
                    pumps.cancel_scope.deadline = anyio.current_time() + _DRAIN_GRACE_S
        finally:
            with anyio.CancelScope(shield=True):
                _kill_group(pgid)
                await process.aclose()
        if deadline.cancelled_caught:
            message = f"command timed out after {args.timeoutMs} ms and was killed"
            so_far = output.text()
            if so_far:
                message += "; output so far:\n" + so_far
            return ToolResult(ok=False, text=message, truncated=output.truncated, error_code="timeout")
        return ToolResult(
            ok=True, text=output.text(), exit_code=process.returncode, truncated=output.truncated
        )


async def _pump(stream: Any, name: str, output: _ShellOutput, ctx: ToolContext) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    async for chunk in stream:
        text = decoder.decode(chunk)
        if text:
            await output.deliver(name, text, ctx)
    tail = decoder.decode(b"", final=True)
    if tail:
        await output.deliver(name, tail, ctx)


def builtin_tools() -> list[Tool]:
    """Fresh instances of every built-in tool, in the order models see them."""
    return [
        ReadFileTool(),
        ListDirTool(),
        GrepTool(),
        WriteFileTool(),
        EditFileTool(),
        ShellTool(),
    ]
