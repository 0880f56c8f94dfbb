"""The built-in tools that change files: `write_file` and `edit_file`.

Invariants:
- every path goes through `paths.resolve_under` / `paths.open_resolved`: nothing outside the
  session cwd is created or changed, and symlinks are never followed out;
- only regular files are written; an edit replaces the one occurrence of the text it names (it
  fails, and changes nothing, when that text is missing or occurs more than once).
"""

from __future__ import annotations

import os
import stat
from functools import partial
from pathlib import Path

import anyio
from pydantic import Field

from agent_tui.engine.tools.base import BaseTool, RiskAssessment, ToolArgs, ToolContext, ToolError, ToolResult
from agent_tui.engine.tools.paths import display_path, open_resolved, os_error_to_tool_error, resolve_under
from agent_tui.engine.tools.read_tools import open_regular


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
        fd, resolved = open_regular(ctx, args.path, os.O_RDWR | os.O_NONBLOCK)
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
