"""`SessionSide`: what the helpers of one ACP-backed session use of it, handed over explicitly.

The questions (`AgentQuestions`) and the endpoint the agent calls, its file and terminal requests
(`ClientTools`), each serve one `AcpAgentSession`. They get this instead of the
session itself, so none of them reaches back through it (and none imports it): the session's id,
name and directory, its recorder, its one ordered writer, the task group to run background work
in, the permission engine, and the engine's `Questions`.

Invariants:
- every log write of a helper goes through `write` (the session's `OrderedWriter`), so the log
  keeps the agent's order;
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from agent_tui.acp.recorder import AcpRecorder
from agent_tui.engine.permissions import PermissionEngine
from agent_tui.engine.questions import Questions

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class SessionSide:
    session_id: str
    name: str
    cwd: Path
    recorder: AcpRecorder
    run_in_order: Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]
    spawn: Callable[..., None]  # `spawn(fn, *args)`: run in the session's task group
    permissions: PermissionEngine
    questions: Questions
    agent_path: Callable[[], tuple[str, ...]]

    def write(self, work: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """Run one piece of log writing in the session's order."""
        return self.run_in_order(work)
