"""`StdioWire`: the JSON-RPC lines of `agent-tui acp` on stdin and stdout, checked before the SDK.

The ACP SDK takes a message-level transport (`send`, `receive`, `close`); this is ours, so what
a client (or anyone at the pipe) sends is judged here, and a broken stdout ends the server
instead of failing every write.

Invariants:
- `receive` hands the SDK only well-formed JSON-RPC 2.0 messages: a request or notification
  (`method` a string, `params` an object or array if present), or a response (an `id`, and a
  `result` or an `error` object); a line that is not JSON is answered with a parse error
  (-32700), one that is JSON but not such a message with an invalid request (-32600), both with
  the request's `id` when it has a usable one, else `null`, as JSON-RPC says; a line longer than
  the limit is a parse error too, and so is one nested deeper than the parser goes (1024) or
  holding what a log cannot (a lone surrogate escape, `NaN`, a number past a float's range: the
  line is read with orjson, as the logs are written); one nested deeper than `MAX_DEPTH` arrays
  and objects is an invalid request; the reading goes on at the next line;
- `send` never raises: once stdout is gone (the client closed it: EPIPE, noticed at once for a
  pipe; a full disk; a closed descriptor) nothing more is written, `gone` says why
  (`client_left` when the client closed it), the turns are stopped (`on_ending`) and `receive`
  ends (`None`);
- when stdin closes, or `end()` is called (a signal), nothing new is taken in, `on_ending` is
  called (it stops the turns), every request under way is answered (a prompt with `cancelled`),
  and then `receive` ends; after `END_GRACE` seconds it ends whatever is still unanswered;
- stdout may be a pipe, a socket, a terminal or a regular file (`agent-tui acp > file`); stdin
  is read by a daemon thread, so nothing waits on it at exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import stat
import threading
from collections.abc import Callable
from typing import Any

import orjson

from agent_tui.events import json_problem
from agent_tui.events.json_depth import MAX_DEPTH, nested_deeper
from agent_tui.runtime.os_errors import os_reason

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
END_GRACE = 5.0
"""How long `end()` waits for the requests under way to be answered (seconds)."""
OVERLONG = b"\x00overlong\n"
"""What the reader hands over for a line past the limit (not JSON, so never a message)."""


class StdoutClosed(Exception):
    """File descriptor 1 is not open: there is nowhere to answer the client."""


class StdioWire:
    """The SDK's `Transport` over file descriptors `stdin` and `stdout` (a copy of the real one).

    Args:
        stdin: the descriptor requests come in on.
        stdout: the descriptor answers go out on (ours: closed by `close`).
        limit: the longest line read (bytes).
        on_ending: called once when the input ends (stdin closed, `end()`): stop the turns, so
            the requests under way can be answered.
    """

    def __init__(self, stdin: int, stdout: int, *, limit: int, on_ending: Callable[[], None]) -> None:
        self.limit = limit
        self._on_ending = on_ending
        self.gone: str | None = None
        """Why stdout can no longer be written (None while it can)."""
        self.client_left = False
        """Stdout is gone because the client closed its end (nothing to say about that)."""
        self._closing = False
        self._stdout = stdout
        self._loop = asyncio.get_running_loop()
        self._incoming: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._writer: asyncio.StreamWriter | None = None
        self._write_lock = asyncio.Lock()
        self._stdin = stdin
        self._ended = False  # `receive` returns None from now on
        self._ending = False  # nothing new is taken; ends once `_open` is answered
        self._open: set[str | int | None] = set()  # ids of requests not answered yet
        threading.Thread(target=self._read_lines, name="acp-stdin", daemon=True).start()

    @classmethod
    async def open(
        cls, stdout: int, *, limit: int, on_ending: Callable[[], None], stdin: int = 0
    ) -> StdioWire:
        """The wire on `stdin` and `stdout`: a pipe, socket or terminal stdout gets an
        asynchronous writer (a slow client does not block the loop); a file is written directly."""
        wire = cls(stdin, stdout, limit=limit, on_ending=on_ending)
        mode = os.fstat(stdout).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode):
            file = os.fdopen(stdout, "wb", buffering=0, closefd=False)
            protocol = _StdoutProtocol(wire._lose)
            transport, _ = await wire._loop.connect_write_pipe(lambda: protocol, file)
            wire._writer = asyncio.StreamWriter(transport, protocol, None, wire._loop)
        return wire

    # -- reading -------------------------------------------------------------------------------
    def _read_lines(self) -> None:
        with contextlib.suppress(OSError, ValueError):  # stdin closed or unreadable: the end of the input
            reader = os.fdopen(self._stdin, "rb", closefd=False)
            while True:
                line = reader.readline(self.limit + 1)
                if not line:
                    break
                if len(line) > self.limit and not line.endswith(b"\n"):
                    while (rest := reader.readline(self.limit + 1)) and not rest.endswith(b"\n"):
                        pass  # the rest of an overlong line
                    line = OVERLONG
                self._hand_over(line)
        self._hand_over(None)

    def _hand_over(self, line: bytes | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server is done
            self._loop.call_soon_threadsafe(self._incoming.put_nowait, line)

    async def receive(self) -> dict[str, Any] | None:
        while True:
            if self._ended:
                return None
            line = await self._incoming.get()
            if line is None and not self._ended:
                self.end()  # stdin closed: the requests under way are answered first
                if not self._ended:
                    continue
            if line is None or self._ended:
                self._ended = True
                return None
            if self._ending or not line.strip():
                continue  # stopping: nothing new is taken
            message = await self._judge(line)
            if message is not None:
                if "method" in message and "id" in message:
                    self._open.add(message["id"])
                return message

    async def _judge(self, line: bytes) -> dict[str, Any] | None:
        """The message on `line`, or None once it was answered with an error."""
        if line == OVERLONG:
            await self._refuse(None, PARSE_ERROR, "Parse error", f"a line longer than {self.limit} bytes")
            return None
        try:
            message = orjson.loads(line)  # as our logs write JSON: what it reads, a log can hold
        except orjson.JSONDecodeError as error:
            await self._refuse(None, PARSE_ERROR, "Parse error", json_problem(error))
            return None
        request_id = message.get("id") if isinstance(message, dict) else None
        if isinstance(request_id, bool) or not isinstance(request_id, str | int):
            request_id = None  # not one an answer can carry
        if nested_deeper(message, MAX_DEPTH):
            details = f"a message nested deeper than {MAX_DEPTH} levels"
            await self._refuse(request_id, INVALID_REQUEST, "Invalid Request", details)
            return None
        if not isinstance(message, dict):
            await self._refuse(None, INVALID_REQUEST, "Invalid Request", "a message is a JSON object")
            return None
        problem = _problem(message)
        if problem is not None:
            await self._refuse(request_id, INVALID_REQUEST, "Invalid Request", problem)
            return None
        return message

    async def _refuse(self, request_id: Any, code: int, text: str, details: str) -> None:
        error = {"code": code, "message": text, "data": {"details": details}}
        await self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def end(self) -> None:
        """End the input (a signal): nothing new is taken, and once every request under way is
        answered (or `END_GRACE` has passed) `receive` returns None."""
        if self._ending:
            return
        self._ending = True
        self._on_ending()
        if self._open:
            self._loop.call_later(END_GRACE, self._finish)
        else:
            self._finish()

    def _finish(self) -> None:
        if not self._ended:
            self._ended = True
            self._incoming.put_nowait(None)

    # -- writing -------------------------------------------------------------------------------
    async def send(self, message: dict[str, Any]) -> None:
        try:
            await self._send(message)
        finally:
            if "method" not in message and ("result" in message or "error" in message):
                self._open.discard(message.get("id"))
                if self._ending and not self._open:
                    self._finish()

    async def _send(self, message: dict[str, Any]) -> None:
        if self.gone is not None:
            return
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        async with self._write_lock:
            try:
                if self._writer is not None:
                    self._writer.write(data)
                    await self._writer.drain()
                else:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(self._stdout, view) :]
            except (OSError, RuntimeError) as error:  # RuntimeError: the transport closed
                self._lose(error)

    def _lose(self, error: BaseException | None) -> None:
        """Stdout is gone (`error`; None: the pipe closed): stop the turns (no answer can reach
        the client) and end."""
        if self._closing:
            return  # our own close
        if self.gone is None:
            self.client_left = error is None or isinstance(error, BrokenPipeError | ConnectionResetError)
            self.gone = os_reason(error) if isinstance(error, OSError) else "the client closed its end"
            if not self._ending:
                self._ending = True
                self._on_ending()
            self._finish()

    async def close(self) -> None:
        self._closing = True
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
        with contextlib.suppress(OSError):
            os.close(self._stdout)


def _problem(message: dict[str, Any]) -> str | None:
    """Why `message` is not a JSON-RPC 2.0 request, notification or response (None if it is)."""
    if message.get("jsonrpc") != "2.0":
        return 'a message says "jsonrpc": "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return "a method is a string"
        if "params" in message and not isinstance(message["params"], dict | list | None):
            return "params are an object or an array"
        if "id" in message and (
            not isinstance(message["id"], str | int | None) or isinstance(message["id"], bool)
        ):
            return "an id is a string, a number or null"
        return None
    if "id" not in message:
        return "a message has a method (a request) or an id (a response)"
    if not isinstance(message["id"], int) or isinstance(message["id"], bool):
        return "a response answers one of our requests, whose ids are numbers"
    if "error" in message:
        if not isinstance(message["error"], dict):
            return "an error is an object"
        return None
    if "result" not in message:
        return "a response has a result or an error"
    return None


class _StdoutProtocol(asyncio.streams.FlowControlMixin):
    """Flow control for the stdout pipe (what `drain` waits on), and word when the client closes
    its end: the pipe is watched, so that is known at once, not at the next write."""

    def __init__(self, lost: Callable[[BaseException | None], None]) -> None:
        super().__init__()
        self._lost = lost

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._lost(exc)
