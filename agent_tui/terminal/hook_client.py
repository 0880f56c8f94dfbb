"""The hook: `python -I -m agent_tui.terminal.hook_client claude-code|codex` (or `agent-tui hook …`).

Claude Code and Codex run it once per hook event, the event as one JSON object on its standard
input. It forwards the event to the agent-tui listening at `hook_wire.socket_name()`, waits for
the one reply line, and prints the CLI's own hook output for it (`hook_wire.render`).

Invariants:
- it always exits 0 (ended by SIGTERM or SIGHUP too: Claude Code sends SIGTERM at the hook's
  timeout) and prints either nothing (no decision: the CLI goes on as without the hook)
  or one decision the CLI understands; Claude Code reads exit status 2 as "block", so no failure
  of ours may show as a status;
- no decision, at once, when: the event is bigger than `MAX_LINE` or not a JSON object; there is
  no socket or nobody accepts on it; the socket's folder is not this user's own folder (a link,
  another's, or open to others); the process at the other end is another user's (`peer_uid`);
  the reply is not a well-formed `Reply`, or the connection closes before one;
- it waits for the reply with no time limit of its own: the CLI's hook timeout ends it (and a
  person answering in Claude Code's own dialog kills it), which closes the connection: that is
  how the agent-tui that asked learns the question was withdrawn;
- it reads nothing of the environment but what `private_files.runtime_dir_name()` reads, and
  forwards none of it; it imports the standard library's cheapest modules and `hook_wire` only
  (its start-up is the agent's latency; `json` only once someone of this user's accepted), and
  never restarts itself;
- nothing but the one event line is ever sent, and only after both checks above passed: a
  malformed event is no decision with nothing sent.
"""

from __future__ import annotations

import _signal  # not `signal` nor `socket`: they cost the hook's start-up (enum, selectors)
import _socket
import os
import stat
import sys

from agent_tui.terminal.hook_wire import (
    CLIS,
    MAX_LINE,
    Reply,
    event_line,
    own_uid,
    peer_uid,
    render,
    socket_name,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs the hook's start-up
    from typing import Any, BinaryIO

CONNECT_SECONDS = 2.0
"""How long connecting and sending may take (a listener that does not accept is no one)."""


def main(argv: list[str] | None = None) -> int:
    """Run the hook for the CLI named by `argv[0]`; the status is always 0."""
    args = sys.argv[1:] if argv is None else argv
    for number in (_signal.SIGTERM, _signal.SIGHUP):  # Claude Code sends SIGTERM at the hook's timeout
        _signal.signal(number, _quit)
    try:
        output = answer(args[0] if args else "", sys.stdin.buffer)
    except BaseException:  # whatever went wrong, the CLI gets no decision
        output = b""
    if output:
        try:
            sys.stdout.buffer.write(output)
            sys.stdout.buffer.flush()
        except OSError:
            pass
    return 0


def _quit(number: int, frame: object) -> None:
    """End at once with status 0 and nothing printed: no decision."""
    os._exit(0)


def answer(cli: str, stdin: BinaryIO) -> bytes:
    """The hook output for the event read from `stdin` (a binary stream), empty for no decision.

    The socket is looked for before the event is parsed: with no agent-tui listening (the usual
    case) the hook never imports `json`, which would be a third of its start-up."""
    if cli not in CLIS:
        sys.stderr.write(f"agent-tui hook: expected claude-code or codex, got {cli!r}: no decision\n")
        return b""
    data = stdin.read(MAX_LINE + 1)
    if len(data) > MAX_LINE:
        return b""
    sock = _connect()
    if sock is None:
        return b""
    try:
        event = _event(data)
        if event is None:
            return b""
        line = event_line(cli, event)
        if len(line) > MAX_LINE:
            return b""
        reply = _ask(sock, line)
    finally:
        sock.close()
    return b"" if reply is None else render(cli, event, reply)


def _event(data: bytes) -> dict[str, Any] | None:
    """The hook event `data` holds: a JSON object, or None."""
    import json

    try:
        event = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) else None


def _connect() -> _socket.socket | None:
    """A connection to the agent-tui that listens at the hooks' socket, when its folder is this
    user's own and the process that accepted is this user's; else None."""
    path = socket_name()
    if not _own_folder(os.path.dirname(path)):
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_SECONDS)
        sock.connect(path)
        if peer_uid(sock) == own_uid():
            return sock
    except OSError:
        pass
    sock.close()
    return None


def _ask(sock: _socket.socket, line: bytes) -> Reply | None:
    """Send `line` and return the reply (None: the connection closed, or no well-formed line)."""
    try:
        sock.sendall(line)
        sock.settimeout(None)  # the CLI's timeout is the only one
        received = b""
        while b"\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            received += chunk
            if len(received) > MAX_LINE:
                return None
    except OSError:
        return None
    return Reply.parse(received.split(b"\n", 1)[0])


def _own_folder(folder: str) -> bool:
    """Whether `folder` is a folder (not a link) of this user's that nobody else can enter."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == own_uid() and not info.st_mode & 0o077


if __name__ == "__main__":
    sys.exit(main())
