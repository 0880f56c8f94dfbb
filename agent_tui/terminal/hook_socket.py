"""The socket the CLIs' hooks reach agent-tui on: `hooks.sock` in agent-tui's runtime dir.

`HookSocket(handler, watched)` is an async context manager: inside it, each hook that connects
sends one line (`hook_wire`), and a hook event is handed to `await handler(cli, event)`, whose
`Reply` is written back as the CLI's own hook output (`render`), one line the hook prints as it
is. The hook waits as long as the CLI lets it; when its connection closes before the reply (the
CLI killed the hook: its user answered in the terminal, or the hook's timeout ran out), the
handler's task is cancelled: that is the withdrawal signal.

Invariants:
- the runtime dir is made with `private_files.own_folder` (0700, this user's, not a link) and the
  socket in it is 0600; a connection from another user's process (`SO_PEERCRED`) is closed at
  once and nothing it sent is read or logged;
- a connection gets at most one line of `MAX_LINE` bytes, within `READ_SECONDS`; a line that is
  not a well-formed request of this version (`hook_wire.event_of`, the event one JSON object) is
  answered "no decision" (an empty line) and never reaches the handler; a ping is answered with this process's
  pid and `watched()` (someone would answer a question now), without the handler;
- the handler runs once per event, many at once; one that raises, or returns something that is
  not a `Reply`, is no decision (logged as its class, never the event), never an error out of
  the server; when the hook goes away first the handler is cancelled and nothing is written;
- `render` never allows at `PreToolUse` (that would skip the CLI's own permission check), never
  sends Codex an `interrupt` or `updatedPermissions` (Codex fails such an answer closed: its
  "always allow" is a plain allow), and gives Claude Code's "always allow" only as what it offered
  in the event (`permission_suggestions`: its allow rules and folders), never rules of ours nor a
  change of the session's mode; what it writes is one line of ASCII JSON (every other character
  escaped), the shape the hook checks (`hook_wire.output_of`);
- a socket file nobody accepts on (left by an agent-tui that died) is replaced; one a live
  agent-tui listens on is `HookSocketBusy`, naming its pid; two agent-tuis starting at once take
  turns (a lock file beside the socket), so one of them serves and the other is told so;
- a socket that cannot be made (a path too long for a Unix socket, a full disk) is
  `HookSocketError`, one sentence naming the path; a runtime dir that is not this user's own is
  `private_files.UntrustedStateError`;
- on leaving, the socket file is removed only when it is still the one this process bound (same
  inode): a later agent-tui's socket is left alone.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import socket
import stat
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

import anyio
from anyio.abc import SocketAttribute, SocketListener, SocketStream, TaskGroup
from anyio.streams.buffered import BufferedByteReceiveStream

from agent_tui.private_files import FILE_MODE, open_private, own_folder
from agent_tui.terminal import hook_wire
from agent_tui.terminal.hook_wire import (
    MAX_LINE,
    PROTOCOL,
    Cli,
    event_of,
    own_uid,
    peer_uid,
    pong_line,
    socket_path,
)

log = logging.getLogger(__name__)

READ_SECONDS = 5.0
"""How long a connected hook may take to send its one line."""
ACCEPT_RETRY_SECONDS = 0.1
"""How long to wait before accepting again after an accept failed (no file descriptor left)."""
PROBE_SECONDS = 2.0
"""How long a socket file found at start has to answer a ping before it counts as no one's."""
DEFAULT_DENY_MESSAGE = "Denied in agent-tui."
"""What the agent is told when a deny came without a reason (both CLIs want one)."""
NO_OUTPUT = b"\n"
"""The reply line that is no decision: the hook prints nothing."""


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


NO_DECISION = Reply()
Handler = Callable[[Cli, dict[str, Any]], Awaitable[Reply]]


class HookSocketError(Exception):
    """The hooks' socket cannot be served; the message is one sentence naming its path."""


class HookSocketBusy(HookSocketError):
    """Another agent-tui already answers the hooks; the message is one sentence naming it."""


class HookSocket:
    """The hooks' socket, served while the context is entered (see the module docstring).

    Args:
        handler: `async def handle(cli, event) -> Reply`, for each hook event.
        watched: whether someone would answer a question now (said to pings).
        path: where to listen; `hook_wire.socket_path()` by default (tests give another).
    """

    def __init__(self, handler: Handler, watched: Callable[[], bool], *, path: Path | None = None) -> None:
        self._handler = handler
        self._watched = watched
        self.path = socket_path() if path is None else path
        self._stack = AsyncExitStack()
        self._bound: tuple[int, int] | None = None

    async def __aenter__(self) -> Self:
        own_folder(self.path.parent)
        try:
            try:
                listener = await self._listen()
            except OSError as error:
                raise HookSocketError(
                    f"agent-tui cannot listen for the Claude Code and Codex hooks at {self.path}: "
                    f"{error.strerror or error}"
                ) from None
            self._stack.push_async_callback(self._remove_socket_file)
            await self._stack.enter_async_context(listener)
            tasks: TaskGroup = await self._stack.enter_async_context(anyio.create_task_group())
            self._stack.callback(tasks.cancel_scope.cancel)
            tasks.start_soon(self._accept, listener, tasks)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self._stack.aclose()

    # -- binding -------------------------------------------------------------------------------

    async def _listen(self) -> SocketListener:
        """Bind the socket file, replacing a stale one, under the lock beside it."""
        lock = open_private(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT)
        try:
            await anyio.to_thread.run_sync(fcntl.flock, lock, fcntl.LOCK_EX, abandon_on_cancel=True)
            raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                try:
                    raw.bind(str(self.path))
                except OSError as error:
                    if error.errno != errno.EADDRINUSE:
                        raise
                    await self._refuse_live_listener()
                    self.path.unlink(missing_ok=True)  # ours alone may write this folder: a dead one's
                    raw.bind(str(self.path))
                os.chmod(self.path, FILE_MODE)
                info = os.lstat(self.path)
                self._bound = (info.st_dev, info.st_ino)
                raw.listen(256)
                raw.setblocking(False)
            except BaseException:
                raw.close()
                raise
            return await SocketListener.from_socket(raw)
        finally:
            os.close(lock)  # releases the lock

    async def _refuse_live_listener(self) -> None:
        """Raise `HookSocketBusy` when someone accepts on the socket file already there."""
        if not stat.S_ISSOCK(os.lstat(self.path).st_mode):
            return  # a file of another kind in our own folder: nobody listens on it
        try:
            with anyio.fail_after(PROBE_SECONDS):
                stream = await anyio.connect_unix(self.path)
        except (OSError, TimeoutError):
            return  # refused: nobody accepts any more
        who = "a process that does not answer as agent-tui"
        broken = (anyio.EndOfStream, anyio.IncompleteRead, anyio.DelimiterNotFound, anyio.BrokenResourceError)
        async with stream:
            # (a ValueError: the answer is not JSON)
            with contextlib.suppress(*broken, ValueError), anyio.move_on_after(PROBE_SECONDS):
                await stream.send(hook_wire.PING_LINE)
                pong = json.loads(await BufferedByteReceiveStream(stream).receive_until(b"\n", 4096))
                if isinstance(pong, dict) and pong.get("pong") is True and isinstance(pong.get("pid"), int):
                    who = f"another agent-tui (pid {pong['pid']})"
        raise HookSocketBusy(
            f"{who} already answers the Claude Code and Codex hooks at {self.path}: "
            "quit it first, or leave the hooks to it"
        )

    async def _remove_socket_file(self) -> None:
        if self._bound is None:
            return
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            return
        if (info.st_dev, info.st_ino) == self._bound:
            self.path.unlink(missing_ok=True)

    # -- one connection ------------------------------------------------------------------------

    async def _accept(self, listener: SocketListener, tasks: TaskGroup) -> None:
        """Take connections until the socket closes; each is served in a task of its own. A failed
        accept (out of file descriptors) is waited out, never the end of the server."""
        while True:
            try:
                stream = await listener.accept()
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return
            except OSError as error:
                log.warning("the hooks' socket could not accept a connection (%s)", error.strerror)
                await anyio.sleep(ACCEPT_RETRY_SECONDS)
                continue
            tasks.start_soon(self._serve_guarded, stream)

    async def _serve_guarded(self, stream: SocketStream) -> None:
        try:
            await self._serve_one(stream)
        except Exception as error:  # one hook's failure is its own: no decision, the server goes on
            log.warning("a hook's connection failed (%s)", type(error).__name__)

    async def _serve_one(self, stream: SocketStream) -> None:
        async with stream:
            if peer_uid(stream.extra(SocketAttribute.raw_socket)) != own_uid():
                return  # another user's: not a byte of theirs is read
            reader = BufferedByteReceiveStream(stream)
            try:
                with anyio.fail_after(READ_SECONDS):
                    line = await reader.receive_until(b"\n", MAX_LINE)
            except (TimeoutError, anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
                return
            except anyio.DelimiterNotFound:  # longer than any request: not read further
                return
            request = _request(line)
            if request is None:
                reply = NO_OUTPUT
            elif isinstance(request, str):  # a ping
                reply = pong_line(os.getpid(), bool(self._watched()))
            else:
                cli, event = request
                answered = await self._decide(reader, cli, event)
                if answered is None:
                    return  # the hook went away: the question is withdrawn
                reply = render(cli, event, answered) or NO_OUTPUT
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.send(reply)

    async def _decide(
        self, reader: BufferedByteReceiveStream, cli: Cli, event: dict[str, Any]
    ) -> Reply | None:
        """The handler's reply, or None when the hook closed its end first (the handler is then
        cancelled)."""
        outcome: list[Reply] = []

        async def withdrawn_when_closed(tasks: TaskGroup) -> None:
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                while len(await reader.receive(65536)):
                    pass  # the hook sends nothing more; what it might is not read as a request
            tasks.cancel_scope.cancel()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(withdrawn_when_closed, tasks)
            outcome.append(await self._ask_handler(cli, event))
            tasks.cancel_scope.cancel()
        return outcome[0] if outcome else None

    async def _ask_handler(self, cli: Cli, event: dict[str, Any]) -> Reply:
        try:
            reply = await self._handler(cli, event)
        except Exception as error:  # a failing handler is no decision, never the end of the server
            log.warning("the hook handler failed (%s): no decision", type(error).__name__)
            return NO_DECISION
        if not isinstance(reply, Reply):
            log.warning("the hook handler returned %s, not a Reply: no decision", type(reply).__name__)
            return NO_DECISION
        return reply


def _request(line: bytes) -> tuple[Cli, dict[str, Any]] | str | None:
    """What a line asks: `(cli, event)`, `"ping"`, or None when it is not a well-formed request of
    this version."""
    if line.startswith(b'{"v":%d,"cli":' % PROTOCOL):
        return event_of(line)
    try:
        fields = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(fields, dict) and fields.get("v") == PROTOCOL and fields.get("ping") is True:
        return "ping"
    return None


def render(cli: Cli, event: dict[str, Any], reply: Reply) -> bytes:
    """The CLI's own hook output (standard output, exit status 0) for `reply` to `event`, one line;
    empty when there is nothing to say (no decision, or an event where this decision has no form).

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
        return _output({"hookSpecificOutput": {"hookEventName": name, "decision": decision}})
    if name == "PreToolUse" and reply.decision == "deny":
        return _output(
            {
                "hookSpecificOutput": {
                    "hookEventName": name,
                    "permissionDecision": "deny",
                    "permissionDecisionReason": reply.message or DEFAULT_DENY_MESSAGE,
                }
            }
        )
    return b""


def _output(fields: dict[str, Any]) -> bytes:
    """`fields` as one line of ASCII JSON (what the hook prints); empty when it would be longer
    than a line (the hook could not take it: no decision rather than a cut answer)."""
    line = json.dumps(fields, separators=(",", ":")).encode() + b"\n"
    return line if len(line) <= MAX_LINE else b""


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
