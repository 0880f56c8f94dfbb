"""The hook's wire: one line a CLI's hook sends to the agent-tui that answers, one line back.

The hook (`hook_client`, run by Claude Code or Codex once per hook event) connects to the Unix
socket `socket_path()` in agent-tui's runtime dir and writes one JSON line, then reads one:

- a hook event: `{"v": 1, "cli": "claude-code" | "codex", "event": {…}}`, the event being the
  JSON object the CLI gave the hook on its standard input, as it was;
- a ping (`agent-tui hooks status`): `{"v": 1, "ping": true}`.

The reply is one `Reply` line: `{"decision": null}` (no decision: the CLI goes on as if there were
no hook), `{"decision": "allow", "remember": false}`, or `{"decision": "deny", "message": "…",
"interrupt": false}`; a ping is answered `{"v": 1, "pong": true, "pid": N, "watched": bool}`
(`watched`: someone would answer a question now).

Invariants:
- stdlib only, and nothing of agent-tui but `private_files`: the hook imports this module;
- a line is at most `MAX_LINE` bytes; anything that is not a well-formed line of this shape is
  no decision (`Reply.parse` never raises), so a hook never decides by mistake.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent_tui.private_files import runtime_dir

PROTOCOL = 1
SOCKET_NAME = "hooks.sock"
MAX_LINE = 1 << 20
"""The longest line either side reads (1 MiB): a bigger hook event is not forwarded."""

Cli = Literal["claude-code", "codex"]
CLIS: tuple[Cli, ...] = ("claude-code", "codex")


def socket_path() -> Path:
    """Where the agent-tui that answers hooks listens: `hooks.sock` in the runtime dir."""
    return runtime_dir() / SOCKET_NAME


def event_line(cli: Cli, event: dict[str, Any]) -> bytes:
    """The line a hook sends for one hook event."""
    return json.dumps({"v": PROTOCOL, "cli": cli, "event": event}, separators=(",", ":")).encode() + b"\n"


PING_LINE = json.dumps({"v": PROTOCOL, "ping": True}).encode() + b"\n"


@dataclass(frozen=True)
class Reply:
    """What agent-tui answers a hook event: a decision, or none (`decision is None`)."""

    decision: Literal["allow", "deny"] | None = None
    remember: bool = False
    """With `allow`: the CLI's own "always allow" (only when the person picked it)."""
    message: str = ""
    """With `deny`: why, for the agent."""
    interrupt: bool = False
    """With `deny`: stop the agent's turn too (Claude Code honours it)."""

    def line(self) -> bytes:
        if self.decision is None:
            fields: dict[str, Any] = {"decision": None}
        elif self.decision == "allow":
            fields = {"decision": "allow", "remember": self.remember}
        else:
            fields = {"decision": "deny", "message": self.message, "interrupt": self.interrupt}
        return json.dumps(fields, separators=(",", ":")).encode() + b"\n"

    @classmethod
    def parse(cls, line: bytes) -> Reply:
        """The reply a line says, or no decision when it says nothing well-formed."""
        try:
            fields = json.loads(line)
        except ValueError:
            return NO_DECISION
        if not isinstance(fields, dict):
            return NO_DECISION
        decision = fields.get("decision")
        if decision == "allow":
            return cls("allow", remember=fields.get("remember") is True)
        if decision == "deny":
            message = fields.get("message")
            return cls(
                "deny",
                message=message if isinstance(message, str) else "",
                interrupt=fields.get("interrupt") is True,
            )
        return NO_DECISION


NO_DECISION = Reply()
