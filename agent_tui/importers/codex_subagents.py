"""The sub-agents a Codex rollout spawned: who each child thread is, and delivering its result.

A parent rollout names its children in three places: a `spawn_agent` call's output
(`{"agent_id": …, "nickname": …}`, or just a thread id in the text), and the
`collab_agent_spawn_end` / `collab_tool_call` events (`new_thread_id`, `new_agent_role`). A
`wait` (or `wait_agent`) call's output reports their ends, `{"status": {thread: {"completed":
text} | {"errored": text} | …}}`: each child's first end becomes one `subagent.delivered`, named
by the agent name learnt for its thread ("subagent" when none was).
"""

from __future__ import annotations

from typing import Any

from agent_tui.importers.builder import SessionBuilder
from agent_tui.importers.codex_words import THREAD_ID, json_object
from agent_tui.importers.ids import session_id_for


class CodexChildren:
    """The child threads of one rollout and which of them were delivered."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}  # spawned thread id → agent name
        self._delivered: set[str] = set()

    def spawned(self, text: str, args: dict[str, Any]) -> None:
        """A `spawn_agent` call's output, with the call's `args`."""
        decoded = json_object(text) or {}
        thread = decoded.get("agent_id")
        if not isinstance(thread, str):
            match = THREAD_ID.search(text)
            thread = match.group(0) if match else None
        if thread:
            name = args.get("agent_type") or args.get("task_name") or args.get("role") or "subagent"
            if isinstance(decoded.get("nickname"), str) and name == "subagent":
                name = decoded["nickname"]
            self._names[thread] = str(name)

    def announced(self, event: dict[str, Any]) -> None:
        """A `collab_agent_spawn_end` or `collab_tool_call` event (a name learnt earlier stays)."""
        thread = event.get("new_thread_id")
        if isinstance(thread, str):
            role = event.get("new_agent_role") or event.get("new_agent_nickname") or "subagent"
            self._names.setdefault(thread, str(role))

    def wait_result(self, builder: SessionBuilder, ts: str, text: str) -> None:
        """A `wait` call's output: deliver each child that ended and was not delivered yet."""
        statuses = (json_object(text) or {}).get("status")
        if not isinstance(statuses, dict):
            return
        for thread, status in statuses.items():
            if thread in self._delivered or not isinstance(status, dict):
                continue
            for key, failed in (("completed", False), ("errored", True)):
                if key in status:
                    self._delivered.add(thread)
                    final = status[key]
                    name = self._names.get(thread, "subagent")
                    builder.delivered(
                        ts, session_id_for(thread), name, failed, final if isinstance(final, str) else ""
                    )
