"""The hook's wire: one line a CLI's hook sends to the agent-tui that answers, one line back.

The hook (`hook_client`, run by Claude Code or Codex once per hook event) connects to the Unix
socket `socket_path()` in agent-tui's runtime dir and writes one line, then reads one:

- a hook event: `{"v":2,"cli":"claude-code"|"codex","event":<the CLI's hook stdin>}`, the event's
  bytes as the CLI wrote them (not parsed by the hook: `raw_event_line`), its raw line breaks made
  tabs; the server reads as the event exactly the bytes between that fixed prefix and the line's
  final `}`, as one JSON object in UTF-8 (`event_of`), so an event can neither add a field to the
  request nor replace one;
- a ping (`agent-tui hooks status`): `{"v":2,"ping":true}`.

The reply to an event is the CLI's own hook output, rendered by the server (`hook_socket.render`)
from its handler's `Reply`, the CLI and the event: one line that starts `{"hookSpecificOutput":`
(`OUTPUT_PREFIX`), which the hook prints as it is (`output_of`), or an empty line for no decision;
a ping is answered `{"v":2,"pong":true,"pid":N,"watched":bool}` (`watched`: someone would answer a
question now). Another version (`PROTOCOL`) on either side is no decision: a request of another
version is answered the empty line, and a reply of another shape is not printed.

`hook_socket.Reply` (`decision` None, "allow" or "deny", `remember`, `message`, `interrupt`) is
what a handler answers.

Invariants:
- stdlib only (`os`, `_socket`, `struct`: nothing that costs start-up, no `json` nor `re` on the
  hook's path, no `typing`, no `dataclasses`, no `pathlib`), and nothing of agent-tui but
  `private_files`: the hook imports this module once per tool call of the user's agent;
- a line is at most `MAX_LINE` bytes, newline included; an event line is sent only when the
  event's bytes look like one JSON object (`{` first and `}` last, blanks aside) and fit; a raw
  line break in the event is made a tab, which keeps exactly what is valid JSON (both are blanks
  between tokens; both are refused inside a string);
- anything that is not a well-formed line of these shapes is no decision on both sides
  (`event_of` and `output_of` never raise), so a hook never decides by mistake;
- the hook prints a reply only when it is one line of printable ASCII of the output's shape:
  nothing else from the socket reaches the CLI;
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
else:
    Cli = str

PROTOCOL = 2
SOCKET_NAME = "hooks.sock"
MAX_LINE = 1 << 20
"""The longest line either side reads or sends (1 MiB, newline included): a bigger hook event is
not forwarded."""

CLIS: tuple[Cli, ...] = ("claude-code", "codex")

EVENT_PREFIXES: dict[Cli, bytes] = {
    cli: b'{"v":%d,"cli":"%s","event":' % (PROTOCOL, cli.encode()) for cli in CLIS
}
"""What an event line starts with, for each CLI (the event's bytes follow, then `}`)."""

OUTPUT_PREFIX = b'{"hookSpecificOutput":'
"""What every reply that is a decision starts with: the CLI's own hook output."""

_BLANKS = b" \t\r\n"
_UNPRINTABLE = bytes(range(32)) + b"\x7f"


def socket_path() -> Path:
    """Where the agent-tui that answers hooks listens: `hooks.sock` in the runtime dir."""
    return runtime_dir() / SOCKET_NAME


def socket_name() -> str:
    """`socket_path()` as a string, for the hook (`pathlib` costs its start-up)."""
    return os.path.join(runtime_dir_name(), SOCKET_NAME)


def _dumps(fields: object) -> bytes:
    import json  # not at the top: agent-tui's side only, never the hook's

    return json.dumps(fields, separators=(",", ":")).encode() + b"\n"


def raw_event_line(cli: Cli, data: bytes) -> bytes | None:
    """The line a hook sends for the event `data` (the CLI's hook stdin, not parsed), or None when
    `cli` is not one of `CLIS`, `data` does not look like one JSON object (`{` first, `}` last,
    blanks aside) or the line would be longer than `MAX_LINE`."""
    prefix = EVENT_PREFIXES.get(cli)
    event = data.strip(_BLANKS)
    if prefix is None or event[:1] != b"{" or event[-1:] != b"}":
        return None
    line = prefix + event.replace(b"\n", b"\t") + b"}\n"
    return line if len(line) <= MAX_LINE else None


def event_of(line: bytes) -> tuple[Cli, dict[str, Any]] | None:
    """The CLI and the hook event an event line (without its newline) carries: the event is exactly
    the bytes between the CLI's prefix and the final `}`, one JSON object in UTF-8; None for a line
    of another shape or version."""
    import json

    if not line.endswith(b"}"):
        return None
    for cli, prefix in EVENT_PREFIXES.items():
        if line.startswith(prefix):
            try:
                event = json.loads(line[len(prefix) : -1].decode("utf-8"))
            except (ValueError, RecursionError):
                return None
            return (cli, event) if isinstance(event, dict) else None
    return None


def output_of(line: bytes) -> bytes:
    """What the hook prints for the reply `line` (without its newline): the line and a newline
    when it is the CLI's hook output (`OUTPUT_PREFIX`, a final `}`, printable ASCII only), else
    nothing (no decision)."""
    if (
        line.startswith(OUTPUT_PREFIX)
        and line.endswith(b"}")
        and len(line) < MAX_LINE
        and line.isascii()
        and len(line.translate(None, _UNPRINTABLE)) == len(line)
    ):
        return line + b"\n"
    return b""


PING_LINE = b'{"v":%d,"ping":true}\n' % PROTOCOL
"""A ping."""


def pong_line(pid: int, watched: bool) -> bytes:
    """The answer to a ping: who listens (`pid`), and whether a question would be answered now."""
    return _dumps({"v": PROTOCOL, "pong": True, "pid": pid, "watched": watched})


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
