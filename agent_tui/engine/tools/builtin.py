"""The built-in tools, in the order models see them: files under the session cwd, and a shell.

Each lives in the module of its kind (`read_tools`, `write_tools`, `shell_tool`); this one only
lists them.
"""

from __future__ import annotations

from agent_tui.engine.tools.base import Tool
from agent_tui.engine.tools.read_tools import GrepTool, ListDirTool, ReadFileTool
from agent_tui.engine.tools.shell_tool import ShellTool
from agent_tui.engine.tools.write_tools import EditFileTool, WriteFileTool

__all__ = ["builtin_tools"]


def builtin_tools() -> list[Tool]:
    """Fresh instances of every built-in tool, in the order models see them."""
    return [ReadFileTool(), ListDirTool(), GrepTool(), WriteFileTool(), EditFileTool(), ShellTool()]
