"""`TreeTools`: the tools a session tree has of its own (its MCP servers), opened for its root.

Invariants:
- a root's tools are opened once in this process, at its tree's first model turn; a sub-agent's
  turn that starts while they are opening waits for that opening, then shares them;
- an opening cancelled part-way closes what it started, so the next turn opens them again;
- `close` stops a root's tools and forgets them (its next turn opens them again).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import anyio
from anyio.abc import TaskGroup

from agent_tui.engine.session_info import SessionInfo
from agent_tui.engine.tools.base import Tool
from agent_tui.engine.tools.router import ToolRouter


class SessionTools(Protocol):
    """Tools a root session gets besides the engine's (its MCP servers'), shared by its
    sub-agents. `open` starts what serves them in `group` (the engine's task group) and returns
    once they are ready or failed; `close` stops a session's (without waiting); `close_all` stops
    everything, before the engine's task group is left."""

    async def open(self, session_id: str, cwd: Path, group: TaskGroup) -> Sequence[Tool]: ...
    def close(self, session_id: str) -> None: ...
    def close_all(self) -> None: ...


class TreeTools:
    """Which roots' `SessionTools` are open (see the module docstring)."""

    def __init__(self, tools: SessionTools) -> None:
        self.tools = tools
        self._opened: set[str] = set()
        self._opening: dict[str, anyio.Lock] = {}  # one opening at a time per root

    async def open(self, root: SessionInfo, router: ToolRouter, group: TaskGroup) -> ToolRouter | None:
        """The root's tools over `router` (None when it has none of its own), opened if not yet."""
        async with self._opening.setdefault(root.id, anyio.Lock()):
            if root.id not in self._opened:
                try:
                    tools = await self.tools.open(root.id, root.cwd, group)
                except BaseException:  # cancelled while they start: the next turn starts them again
                    self.tools.close(root.id)
                    raise
                self._opened.add(root.id)
                root.router = router.with_tools(tools) if tools else None
        return root.router

    def close(self, root_id: str) -> None:
        self._opened.discard(root_id)
        self._opening.pop(root_id, None)
        self.tools.close(root_id)
