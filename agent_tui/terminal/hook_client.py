"""The hook: `python -I -c "from agent_tui.terminal.hook_client import run; run()" claude-code|codex`
(as installed; also `python -m agent_tui.terminal.hook_client CLI` and `agent-tui hook CLI`).

Claude Code and Codex run it once per hook event, the event as one JSON object on its standard
input. It forwards the event's bytes, unparsed, to the agent-tui listening at
`hook_wire.socket_name()` (`hook_wire.raw_event_line`), waits for the one reply line, and prints
it when it is the CLI's own hook output (`hook_wire.output_of`): the agent-tui that answers
renders that output for the CLI and the event (`hook_socket.render`), so the hook never parses
JSON.

Invariants:
- it always exits 0 (ended by SIGTERM or SIGHUP too: Claude Code sends SIGTERM at the hook's
  timeout) and prints either nothing (no decision: the CLI goes on as without the hook)
  or one line of the CLI's hook output; Claude Code reads exit status 2 as "block", so no failure
  of ours may show as a status;
- no decision, at once, when: the event is bigger than `MAX_LINE` or does not look like one JSON
  object (`{` first, `}` last); there is no socket or nobody accepts on it; the socket's folder is
  not this user's own folder (a link, another's, or open to others); the process at the other end
  is another user's (`peer_uid`); the reply is not one line of the output's shape (another
  version's, garbage, too long), or the connection closes before one; an event that looks like an
  object but is not well-formed JSON is forwarded and answered no decision by agent-tui, its
  handler never asked;
- it waits for the reply with no time limit of its own: the CLI's hook timeout ends it (and a
  person answering in Claude Code's own dialog kills it), which closes the connection: that is
  how the agent-tui that asked learns the question was withdrawn;
- it reads nothing of the environment but what `private_files.runtime_dir_name()` reads, and
  forwards none of it; it imports the standard library's cheapest modules and `hook_wire` only
  (its start-up is the agent's latency: no `json`, no `re`), and never restarts itself;
- nothing but the one event line is ever sent, and only after the checks above passed.
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
    output_of,
    own_uid,
    peer_uid,
    raw_event_line,
    socket_name,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs the hook's start-up
    from typing import BinaryIO

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
    """The hook output for the event read from `stdin` (a binary stream), empty for no decision."""
    if cli not in CLIS:
        sys.stderr.write(f"agent-tui hook: expected claude-code or codex, got {cli!r}: no decision\n")
        return b""
    data = stdin.read(MAX_LINE + 1)
    if len(data) > MAX_LINE:
        return b""
    line = raw_event_line(cli, data)
    if line is None:
        return b""
    sock = _connect()
    if sock is None:
        return b""
    try:
        return _ask(sock, line)
    finally:
        sock.close()


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


def _ask(sock: _socket.socket, line: bytes) -> bytes:
    """Send `line` and return what to print for the reply (empty: the connection closed, or the
    reply is not the CLI's hook output)."""
    try:
        sock.sendall(line)
        sock.settimeout(None)  # the CLI's timeout is the only one
        received = b""
        while b"\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                return b""
            received += chunk
            if len(received) > MAX_LINE:
                return b""
    except OSError:
        return b""
    return output_of(received.split(b"\n", 1)[0])


def _own_folder(folder: str) -> bool:
    """Whether `folder` is a folder (not a link) of this user's that nobody else can enter."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == own_uid() and not info.st_mode & 0o077


def run() -> None:
    """The installed command's entry (`python -I -c "from … import run; run()" CLI`)."""
    sys.exit(main())


if __name__ == "__main__":
    run()
