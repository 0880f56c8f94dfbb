"""`AcpCall`: a tool call of an ACP-backed turn, as the recorder and the questions see it.

Invariants:
- how far a call got (its permission request, a question waiting, the final decision, whether
  it runs) is never kept here: it is read from `logged`, the engine's record of the call in
  `SessionInfo.open_calls`, which the stored events keep; once the call is answered that record
  leaves `open_calls` and keeps its last state;
- what is kept here is only what ACP knows and the log does not: the title the agent gave, the
  risk and why, whether we run the call for the agent, a withdrawn question, the text shown,
  whether the agent said it runs (`in_progress`, which alone starts nothing), the exit code it
  reported so far.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_tui.engine.session_info import OpenCall
from agent_tui.events.model import Risk


@dataclass(eq=False)
class AcpCall:
    """A tool call of the current turn (the agent's, or a file or terminal request we run)."""

    logged: OpenCall  # the engine's record: id, tool, stage, request id, decision
    title: str
    risk: Risk
    args: dict[str, Any]  # as the agent sent them
    own: bool = False  # a file or terminal request we run for the agent
    risk_reason: str | None = None  # why it has its risk, in a few words
    withdrawn: bool = False  # its question was withdrawn (a stop), not answered by the user
    text: str = ""  # the text content shown so far (sent as tool.delta)
    marked_running: bool = False  # the agent said `in_progress` (it may still ask about it)
    exit_code: int | None = None  # as the agent reported it (None: not reported)

    @property
    def call_id(self) -> str:
        return self.logged.call_id

    @property
    def tool(self) -> str:
        return self.logged.tool

    @property
    def request_id(self) -> str | None:
        return self.logged.request_id

    @property
    def asking(self) -> bool:
        """Its permission question waits for an answer."""
        return self.logged.stage == "asking"

    @property
    def started(self) -> bool:
        return self.logged.stage == "running"

    @property
    def decision(self) -> str | None:
        """The final allow/deny, None before one."""
        return self.logged.decision
