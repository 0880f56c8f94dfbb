"""The built-in tools that only look: `read_file`, `list_dir` and `grep`.

Invariants:
- every path goes through `paths.resolve_under` / `paths.open_resolved`: nothing outside the
  session cwd is read or listed, and symlinks are never followed out;
- a credential store (`safety.credential_stores`) inside the cwd (a session in `$HOME`) is
  neither read nor listed (`path_unsafe`), and `grep` does not walk into it; one the cwd lies
  inside is the session's own;
- a FIFO or device is refused, never opened in a way that could hang (`open_regular`); a file
  with a NUL byte in its first 8 KiB is binary and not shown;
- a result carries at most `ctx.output_budget` characters of output (plus a marker saying what
  was cut) and says so with `truncated=True`;
- the work runs in a worker thread that a cancel stops between two steps (`worker`): a call
  on a huge file, directory or tree never blocks the event loop, and a cancelled turn ends at
  once;
- `grep` patterns are RE2's (`line_search`), searched in time linear in the text: no pattern
  can make a search take longer than reading the files does (within a constant factor).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import IO, Annotated

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from agent_tui.engine.tools.base import BaseTool, ToolArgs, ToolContext, ToolError, ToolResult, cut_to_budget
from agent_tui.engine.tools.line_search import LinePattern, PatternError, matching_lines
from agent_tui.engine.tools.paths import display_path, is_inside, open_under, os_error_to_tool_error
from agent_tui.engine.tools.shell_setup import current_shell_setup
from agent_tui.engine.tools.worker import Checkpoint, run_stoppable, sorted_in_steps
from agent_tui.safety.credential_stores import StorePath, current_index
from agent_tui.safety.resolution import cached_resolution

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK  # NONBLOCK: opening a FIFO must not hang the tool
_BINARY_SNIFF = 8192  # a NUL byte in this many leading bytes marks a binary file
_STEP = 4096  # lines read, or directory entries listed, between two checkpoints


class StoresInside:
    """The credential stores inside a session's directory, by real path (none, unless the
    session works in `$HOME` or above it)."""

    def __init__(self, cwd: Path, since: int | None = None) -> None:
        """`since`: when the call began (`time.monotonic_ns()`): the stores as they were then or
        later count (`credential_stores.current_index`)."""
        (root,) = cached_resolution([str(cwd)], since=since).realpaths
        index = current_index(current_shell_setup().secret_files, since=since)
        self.paths: dict[str, StorePath] = index.inside(root)

    def refuse(self, resolved: Path, user_path: str) -> None:
        """Raise `path_unsafe` if `resolved` (a real path) is a store or lies inside one."""
        for real, found in self.paths.items():
            if is_inside(str(resolved), real):
                raise ToolError(
                    "path_unsafe",
                    f"{user_path or '.'} is in a credential store ({found.store.shown}: "
                    f"{found.store.holds}); the file tools do not read it",
                )


def _open_outside_stores(
    ctx: ToolContext, user_path: str, flags: int, stores: StoresInside | None = None
) -> tuple[int, Path]:
    """`open_under`, refusing a credential store inside the cwd (`stores`, when the caller has
    them already); OSError becomes a ToolError."""
    began = time.monotonic_ns()
    try:
        fd, resolved = open_under(ctx.cwd, user_path, flags, must_exist=True)
    except OSError as error:
        raise os_error_to_tool_error(error, user_path) from None
    try:
        (stores or StoresInside(ctx.cwd, began)).refuse(resolved, user_path)
    except ToolError:
        os.close(fd)
        raise
    return fd, resolved


def open_regular(ctx: ToolContext, user_path: str, flags: int) -> tuple[int, Path]:
    """Open an existing regular file under the cwd, or raise a readable ToolError."""
    fd, resolved = _open_outside_stores(ctx, user_path, flags)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = "is a directory; use list_dir" if stat.S_ISDIR(mode) else "not a regular file"
        raise ToolError("io_error", f"{user_path}: {what}")
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
        return await run_stoppable(partial(self._read, args, ctx))

    def _read(self, args: ReadFileArgs, ctx: ToolContext, checkpoint: Checkpoint) -> ToolResult:
        fd, _ = open_regular(ctx, args.path, _READ_FLAGS)
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
                if seen % _STEP == 0:
                    checkpoint()
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
        return await run_stoppable(partial(self._list, args, ctx))

    def _list(self, args: ListDirArgs, ctx: ToolContext, checkpoint: Checkpoint) -> ToolResult:
        fd, _ = _open_outside_stores(ctx, args.path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            names = []
            with os.scandir(fd) as entries:
                for count, entry in enumerate(entries, start=1):
                    if count % _STEP == 0:
                        checkpoint()
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
        text, truncated = cut_to_budget(
            "\n".join(sorted_in_steps(names, checkpoint)) + "\n", ctx.output_budget
        )
        return ToolResult(ok=True, text=text, truncated=truncated)


# -- grep --------------------------------------------------------------------------------------

_SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", ".agent-tui", "node_modules", "__pycache__", ".venv"})
_GREP_LINE_CAP = 400
_MAX_DEPTH = 64  # levels of directories walked; each level holds one open directory
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class GrepArgs(ToolArgs):
    pattern: str = Field(
        description=(
            "Regular expression searched in each line, in RE2 syntax: like Python's re, without "
            "back-references or look-arounds."
        )
    )
    path: str = Field(
        default=".", description="File or directory to search (default: the working directory)."
    )


class GrepTool(BaseTool):
    """Search files for an RE2 regular expression; prints `path:line:text` per match.

    Binary files (a NUL byte in the first 8 KiB), symlinks, and version-control / dependency
    directories (`.git`, `node_modules`, `.venv`, ...) met during the walk are skipped. The walk
    is in sorted order and stops once the output budget is spent. A pattern RE2 cannot take
    fails the call with a message saying what is not supported; there is no fallback to
    Python's `re`, whose backtracking can take exponential time on one line.
    """

    name = "grep"
    description = (
        "Search text files under the working directory for a regular expression (RE2 syntax: "
        "like Python's re, without back-references or look-arounds). Prints 'path:line:text' for "
        "each matching line. Binary files are skipped."
    )
    Args = GrepArgs
    fixed_risk = "read"

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        return await run_stoppable(partial(self._grep, args, ctx))

    def _grep(self, args: GrepArgs, ctx: ToolContext, checkpoint: Checkpoint) -> ToolResult:
        try:
            pattern = LinePattern.compile(args.pattern)
        except PatternError as error:
            raise ToolError("unknown", error.message) from None
        stores = StoresInside(ctx.cwd)
        fd, resolved = _open_outside_stores(ctx, args.path, _READ_FLAGS, stores)
        out = _GrepOutput(ctx.output_budget, skipped=frozenset(stores.paths), top=str(resolved))
        base = display_path(ctx.cwd, resolved)
        try:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                self._walk(fd, base, pattern, out, checkpoint)
            else:
                self._search(os.dup(fd), base, pattern, out, checkpoint)
        finally:
            os.close(fd)
        deep = _too_deep_note(out.too_deep)
        if not out.lines:
            return ToolResult(ok=True, text=f"no matches for {args.pattern!r}{f' ({deep})' if deep else ''}")
        text, cut = cut_to_budget("".join(out.lines), ctx.output_budget)
        if deep:
            text += f"{'' if text.endswith(chr(10)) else chr(10)}[{deep}]\n"
        return ToolResult(ok=True, text=text, truncated=out.full or cut)

    def _walk(
        self, top_fd: int, base: str, pattern: LinePattern, out: _GrepOutput, checkpoint: Checkpoint
    ) -> None:
        """Depth first in sorted order, a directory's files before its subdirectories, holding one
        open directory per level of the current path (at most `_MAX_DEPTH`)."""
        stack: list[tuple[int, str, Iterator[str]]] = []  # (directory, its path, subdirectories left)

        def enter(fd: int, path: str) -> None:
            stack.append((fd, path, iter(())))  # first, so that it is closed if the search raises
            stack[-1] = (fd, path, iter(self._search_dir(fd, path, base, pattern, out, checkpoint)))

        try:
            enter(os.dup(top_fd), ".")
            while stack and not out.full:
                dir_fd, dirpath, left = stack[-1]
                name = next(left, None)
                if name is None:
                    os.close(dir_fd)
                    stack.pop()
                elif len(stack) >= _MAX_DEPTH:
                    out.too_deep += 1
                else:
                    try:
                        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
                    except OSError:
                        continue  # swapped for a symlink since it was listed, or unreadable: skip it
                    enter(fd, os.path.join(dirpath, name))
        finally:
            for dir_fd, _path, _left in stack:
                os.close(dir_fd)

    def _search_dir(
        self,
        dir_fd: int,
        dirpath: str,
        base: str,
        pattern: LinePattern,
        out: _GrepOutput,
        checkpoint: Checkpoint,
    ) -> list[str]:
        """Search the files of one directory in sorted order; its subdirectories to walk, sorted."""
        checkpoint()
        files, dirs = [], []
        with os.scandir(dir_fd) as entries:
            for count, entry in enumerate(entries, start=1):
                if count % _STEP == 0:
                    checkpoint()
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if (
                    out.skipped
                    and os.path.normpath(os.path.join(out.top, dirpath, entry.name)) in out.skipped
                ):
                    continue  # a credential store
                if not is_dir:
                    files.append(entry.name)
                elif entry.name not in _SKIPPED_DIRS:
                    dirs.append(entry.name)
        for name in sorted_in_steps(files, checkpoint):
            try:
                fd = os.open(name, _READ_FLAGS | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            except OSError:
                continue  # a symlink (refused by O_NOFOLLOW) or unreadable: skip it
            self._search(fd, os.path.normpath(os.path.join(base, dirpath, name)), pattern, out, checkpoint)
            if out.full:
                return []
        return sorted_in_steps(dirs, checkpoint)

    def _search(
        self, fd: int, shown: str, pattern: LinePattern, out: _GrepOutput, checkpoint: Checkpoint
    ) -> None:
        with os.fdopen(fd, "rb") as stream:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return
            if b"\x00" in stream.peek(_BINARY_SNIFF)[:_BINARY_SNIFF]:
                return
            found = matching_lines(stream, pattern, checkpoint, size=info.st_size)
            try:
                for number, line in found:
                    if len(line) > _GREP_LINE_CAP:
                        line = line[:_GREP_LINE_CAP] + "…"
                    out.add(f"{shown}:{number}:{line}\n")
                    if out.full:
                        return
            finally:
                found.close()


def _too_deep_note(count: int) -> str:
    if not count:
        return ""
    one = count == 1
    return (
        f"{count} {'directory' if one else 'directories'} nested over {_MAX_DEPTH} levels deep "
        f"{'was' if one else 'were'} not searched"
    )


class _GrepOutput:
    """What a search found so far, and what its walk leaves out: `skipped`, real paths (the
    credential stores inside the cwd) neither opened nor entered, below `top`, the real path
    the walk starts from."""

    def __init__(self, budget: int, *, skipped: frozenset[str], top: str) -> None:
        self.skipped = skipped
        self.top = top
        self.budget = budget
        self.lines: list[str] = []
        self.size = 0
        self.full = False
        self.too_deep = 0  # subdirectories not walked: they nest deeper than _MAX_DEPTH

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.size += len(line)
        if self.size > self.budget:
            self.full = True


# -- write_file / edit_file --------------------------------------------------------------------
