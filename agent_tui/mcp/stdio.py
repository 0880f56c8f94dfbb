"""Our stdio transport for an MCP server: we start the process, the SDK gets its two streams.

The SDK's `ClientSession` takes any pair of message streams; starting the process here (rather
than through the SDK's `stdio_client`, which keeps the process to itself) is what lets us know
its process group for sure and bound what it may send.

Invariants:
- the server runs under our launcher (`mcp.launch`), which leads a new session (its pid is its
  process group's id): in a private empty folder of its own unless `cwd` (the user's config)
  names one, never in the session's directory, with exactly the environment it is given, its
  stderr going to `errlog`; the launcher ends the server's whole process tree, children that
  left the group by `setsid` included, when the server exits or the launcher is stopped;
- `known.pid` is the launcher's pid as soon as it runs, and when the context is left
  (normally, by an error or by cancellation) the whole tree is gone: stdin is closed, the
  server gets `GRACE` seconds to exit, then the launcher gets SIGTERM (it kills the tree) and
  `GRACE` more seconds, then its group gets SIGKILL; when the server exits by itself, the
  launcher kills what is left of its tree at once, so the connection ends with it even when a
  child held its stdout;
- each line the server writes is one JSON-RPC message; a line that is not one reaches the
  session as an exception (the SDK's way), and a line longer than `MAX_LINE` bytes ends the
  connection (`too_long` is then set), so a server cannot make us hold or parse an unbounded
  message; reading a long line stays linear in its length.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import anyio
import anyio.lowlevel
import mcp_types
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from agent_tui.mcp.launch import launch_command

__all__ = ["GRACE", "MAX_LINE", "StdioProcess", "end_group", "stdio_streams"]

MAX_LINE = 16 * 1024 * 1024
"""The most bytes one message of a server may take (a larger one ends the connection)."""
GRACE = 2.0
"""Seconds a server has to exit once its stdin is closed, before its group is killed."""

_POLL = 0.2  # seconds between looks at whether the server exited (a few wake-ups a second)

Streams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]


@dataclass
class StdioProcess:
    """What the transport knows of the server's process."""

    pid: int | None = None
    too_long: bool = False
    """The server sent a line over `MAX_LINE` bytes, and the connection was ended for it."""


@asynccontextmanager
async def stdio_streams(
    command: str,
    args: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None,
    errlog: IO[str],
    known: StdioProcess,
) -> AsyncIterator[Streams]:
    """Start the server and yield (read, write) streams for a `ClientSession` (see the module)."""
    process = await anyio.open_process(
        launch_command(command, args, cwd), env=dict(env), cwd="/", stderr=errlog, start_new_session=True
    )
    known.pid = process.pid
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_read, process, to_session, known)
            group.start_soon(_write, process, from_session, to_session)
            group.start_soon(_end_with_the_server, process)
            try:
                yield read_stream, write_stream
            finally:
                group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await _stop(process)
            for stream in (read_stream, write_stream, to_session, from_session):
                await stream.aclose()


async def _read(
    process: Process, to_session: MemoryObjectSendStream[SessionMessage | Exception], known: StdioProcess
) -> None:
    assert process.stdout is not None
    pending = bytearray()
    async with to_session:
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in process.stdout:
                lines = chunk.split(b"\n")
                if len(lines) == 1:  # no end of line in this chunk: only the length to check
                    pending += chunk
                    if len(pending) > MAX_LINE:
                        known.too_long = True
                        return
                    continue
                pending += lines[0]
                for line in [bytes(pending), *lines[1:-1]]:
                    if len(line) > MAX_LINE:
                        known.too_long = True
                        return
                    if line.strip():
                        await to_session.send(_message(line))
                pending = bytearray(lines[-1])


async def _end_with_the_server(process: Process) -> None:
    """Once the server exited, kill its group: a child left holding the server's stdout would
    keep the connection open (what the server wrote before it exited is still read)."""
    await _exited(process)
    end_group(process.pid)


async def _exited(process: Process) -> None:
    """Return once the process exited (not `wait`, which on newer Pythons also waits for its
    pipes to close, which a child holding them can put off forever)."""
    while process.returncode is None:
        await anyio.sleep(_POLL)


def _message(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as error:
        return error


async def _write(
    process: Process,
    from_session: MemoryObjectReceiveStream[SessionMessage],
    to_session: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    assert process.stdin is not None
    try:
        async with from_session:
            async for message in from_session:
                text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await process.stdin.send((text + "\n").encode())
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        await to_session.aclose()  # the server stopped reading: the session sees the end


async def _stop(process: Process) -> None:
    """Close stdin, give the server `GRACE` seconds, then have the launcher end its tree, and
    kill the launcher's whole group if it did not within `GRACE` seconds more."""
    if process.stdin is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    with anyio.move_on_after(GRACE):
        await _exited(process)
    if process.returncode is None:
        with suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, signal.SIGTERM)
        with anyio.move_on_after(GRACE):
            await _exited(process)
    end_group(process.pid)
    with anyio.move_on_after(GRACE):
        await process.aclose()


def end_group(pgid: int) -> None:
    """SIGKILL what is left of a server's process group (nothing when it is gone)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
