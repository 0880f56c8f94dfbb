"""The hook's wire: one line a CLI's hook sends to the agent-tui that answers, one line back.

The hook (`hook_client`, run by Claude Code or Codex once per hook event) connects to the Unix
socket `socket_path()` in agent-tui's runtime dir and writes one JSON line, then reads one:

- a hook event: `{"v": 1, "cli": "claude-code" | "codex", "event": {…}}`, the event being the
  JSON object the CLI gave the hook on its standard input;
- a ping (`agent-tui hooks status`): `{"v": 1, "ping": true}`.

The reply is one `Reply` line: `{"decision": null}` (no decision: the CLI goes on as if there were
no hook), `{"decision": "allow", "remember": false}`, or `{"decision": "deny", "message": "…",
"interrupt": false}`; a ping is answered `{"v": 1, "pong": true, "pid": N, "watched": bool}`
(`watched`: someone would answer a question now).

The hook turns a reply into the CLI's own hook output with `render` (the server never needs to
know those shapes): a `PermissionRequest` allow or deny, a `PreToolUse` deny; anything else, and
no decision, is no output at all.

Invariants:
- stdlib only (`os`, `_socket`, `struct`, and `json` when a line is read or written: nothing
  that costs start-up, no `typing`, no `dataclasses`, no `pathlib` on the hook's path), and
  nothing of agent-tui but `private_files`: the hook imports this module once per tool call of
  the user's agent;
- a line is at most `MAX_LINE` bytes; anything that is not a well-formed line of this shape is
  no decision (`Reply.parse` never raises), so a hook never decides by mistake;
- `render` never allows at `PreToolUse` (that would skip the CLI's own permission check), never
  sends Codex an `interrupt` or `updatedPermissions` (Codex fails such an answer closed: its
  "always allow" is a plain allow), and gives Claude Code's "always allow" only as what it offered
  in the event (`permission_suggestions`: its allow rules and folders), never rules of ours nor a
  change of the session's mode;
- `peer_uid` is the one check of who is at the other end of the socket, on both ends.
"""

from __future__ import annotations

import _socket  # `socket` costs the hook's start-up (enum, selectors); its base class is enough
import os
import struct

from agent_tui.private_files import runtime_dir, runtime_dir_name

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs the hook's start-up: read by the type checker only
    from pathlib import Path
    from typing import Any, Literal

    Cli = Literal["claude-code", "codex"]
    Decision = Literal["allow", "deny"] | None
else:
    Cli = str
    Decision = str

PROTOCOL = 1
SOCKET_NAME = "hooks.sock"
MAX_LINE = 1 << 20
"""The longest line either side reads (1 MiB): a bigger hook event is not forwarded."""

CLIS: tuple[Cli, ...] = ("claude-code", "codex")

DEFAULT_DENY_MESSAGE = "Denied in agent-tui."
"""What the agent is told when a deny came without a reason (both CLIs want one)."""


def socket_path() -> Path:
    """Where the agent-tui that answers hooks listens: `hooks.sock` in the runtime dir."""
    return runtime_dir() / SOCKET_NAME


def socket_name() -> str:
    """`socket_path()` as a string, for the hook (`pathlib` costs its start-up)."""
    return os.path.join(runtime_dir_name(), SOCKET_NAME)


def _dumps(fields: object) -> bytes:
    import json  # not at the top: a hook that finds no agent-tui never needs it

    return json.dumps(fields, separators=(",", ":")).encode() + b"\n"


def event_line(cli: Cli, event: dict[str, Any]) -> bytes:
    """The line a hook sends for one hook event (ASCII: every other character escaped)."""
    return _dumps({"v": PROTOCOL, "cli": cli, "event": event})


PING_LINE = b'{"v":1,"ping":true}\n'
"""A ping (written out: `json` is imported only when a hook has someone to talk to)."""


def pong_line(pid: int, watched: bool) -> bytes:
    """The answer to a ping: who listens (`pid`), and whether a question would be answered now."""
    return _dumps({"v": PROTOCOL, "pong": True, "pid": pid, "watched": watched})


class Reply:
    """What agent-tui answers a hook event: a decision, or none (`decision is None`). Immutable."""

    __slots__ = ("decision", "interrupt", "message", "remember")

    decision: Decision
    remember: bool
    """With `allow`: the CLI's own "always allow" (only when the person picked it)."""
    message: str
    """With `deny`: why, for the agent."""
    interrupt: bool
    """With `deny`: stop the agent's turn too (Claude Code honours it)."""

    def __init__(
        self,
        decision: Decision = None,
        remember: bool = False,
        message: str = "",
        interrupt: bool = False,
    ) -> None:
        object.__setattr__(self, "decision", decision)
        object.__setattr__(self, "remember", remember)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "interrupt", interrupt)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Reply is immutable: cannot set {name}")

    def _key(self) -> tuple[object, ...]:
        return (self.decision, self.remember, self.message, self.interrupt)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reply) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Reply(decision={self.decision!r}, remember={self.remember!r}, "
            f"message={self.message!r}, interrupt={self.interrupt!r})"
        )

    def line(self) -> bytes:
        if self.decision is None:
            fields: dict[str, Any] = {"decision": None}
        elif self.decision == "allow":
            fields = {"decision": "allow", "remember": self.remember}
        else:
            fields = {"decision": "deny", "message": self.message, "interrupt": self.interrupt}
        return _dumps(fields)

    @classmethod
    def parse(cls, line: bytes) -> Reply:
        """The reply a line says, or no decision when it says nothing well-formed."""
        import json

        try:
            fields = json.loads(line)
        except (ValueError, RecursionError):
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


def render(cli: Cli, event: dict[str, Any], reply: Reply) -> bytes:
    """The CLI's own hook output (standard output, exit status 0) for `reply` to `event`; empty
    when there is nothing to say (no decision, or an event where this decision has no form).

    Claude Code and Codex share the shapes: `hookSpecificOutput` with `hookEventName`; at
    `PermissionRequest` a `decision` with `behavior` (`updatedPermissions` for "always allow",
    `message` and, Claude Code only, `interrupt` for a deny); at `PreToolUse` a
    `permissionDecision` of `deny` with its reason.
    """
    if reply.decision is None:
        return b""
    name = event.get("hook_event_name")
    if name == "PermissionRequest":
        decision: dict[str, Any] = {"behavior": reply.decision}
        if reply.decision == "allow":
            if reply.remember:
                rules = _suggested_allow_rules(cli, event)
                if rules:
                    decision["updatedPermissions"] = rules
        else:
            decision["message"] = reply.message or DEFAULT_DENY_MESSAGE
            if reply.interrupt and cli == "claude-code":
                decision["interrupt"] = True
        return _dumps({"hookSpecificOutput": {"hookEventName": name, "decision": decision}})
    if name == "PreToolUse" and reply.decision == "deny":
        return _dumps(
            {
                "hookSpecificOutput": {
                    "hookEventName": name,
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reply.message or DEFAULT_DENY_MESSAGE,
                }
            }
        )
    return b""


def _suggested_allow_rules(cli: Cli, event: dict[str, Any]) -> list[dict[str, Any]]:
    """The "always allow" Claude Code offered with this prompt (`permission_suggestions`), as it
    gave them: rules that allow (`addRules` with `behavior: allow`) and folders to allow
    (`addDirectories`, its dialog's "always allow access to …"); never a change of the whole
    session's mode (`setMode`) nor a rule that denies or asks. Codex (0.171.0) fails an answer
    with `updatedPermissions` closed: for it, none."""
    suggestions = event.get("permission_suggestions")
    if cli != "claude-code" or not isinstance(suggestions, list):
        return []
    return [
        suggestion
        for suggestion in suggestions
        if isinstance(suggestion, dict)
        and (
            (suggestion.get("type") == "addRules" and suggestion.get("behavior") == "allow")
            or suggestion.get("type") == "addDirectories"
        )
    ]


def peer_uid(sock: _socket.socket) -> int | None:
    """The user id of the process at the other end of the connected Unix socket `sock` (Linux
    `SO_PEERCRED`, BSD and macOS `LOCAL_PEERCRED`), or None when it cannot be known."""
    try:
        if hasattr(_socket, "SO_PEERCRED"):
            creds = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
            _pid, uid, _gid = struct.unpack("3i", creds)
            return int(uid)
        local_peercred = getattr(_socket, "LOCAL_PEERCRED", 0x001)
        # struct xucred: u_int cr_version; uid_t cr_uid; ...
        _version, uid = struct.unpack("Ii", sock.getsockopt(0, local_peercred, 76)[:8])
        return int(uid)
    except (OSError, struct.error):
        return None


def own_uid() -> int:
    """This process's user, as `peer_uid` compares it."""
    return os.geteuid()
