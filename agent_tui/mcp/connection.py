"""One running MCP server: started, listed, called, stopped, through the `mcp` SDK.

Invariants:
- `serve` owns the server's connection for its whole life in one task (the SDK's transports
  are context managers that must be left by the task that entered them); it returns only when
  `stop` was called or the server failed to start, and leaves no process behind: a stdio server
  is started by our own transport (`mcp.stdio`) in a process group of its own, and the whole
  group is killed when the connection closes (the server's children too, even when the server
  itself exited);
- a stdio server runs under our launcher (`mcp.launch`), in a private empty folder of its own
  (or the `cwd` its config names), never in the session's directory, with its whole process
  tree ended when it stops, and with the environment shell commands get
  (`engine.tools.tool_env.shell_environment`: no keys) plus the variables its config names;
  its stderr goes to a private file, never to the terminal, and its last line is the reason
  given when the server fails to start;
- at most `MAX_TOOLS` tools are taken from a server;
- `ready` is set once the server listed its tools or failed (`status`, `reason` say which),
  never later than the config's `start_timeout` after `serve` began;
- the SDK's own log never reaches the terminal (Python's last-resort handler is kept away);
- `call` never waits longer than the timeout, and every failure (not running, crashed,
  timed out, refused, malformed answer) raises `ToolError` with one sentence a model can read;
  cancellation propagates untouched.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import IO, Any, Literal

import anyio
import httpx2
import mcp_types
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp_types import CONNECTION_CLOSED
from pydantic import ValidationError

from agent_tui.engine.tools.base import ToolError
from agent_tui.engine.tools.shell_setup import current_shell_setup
from agent_tui.engine.tools.tool_env import shell_environment
from agent_tui.mcp.bounded_http import BoundedTransport
from agent_tui.mcp.config import McpServerConfig
from agent_tui.mcp.stdio import MAX_LINE, StdioProcess, stdio_streams

__all__ = ["MAX_TOOLS", "McpServer", "Progress", "ServerStatus"]

# The SDK logs what it makes of a bad answer (with a traceback); we say it in the call's failure.
# Unconfigured, Python would print that on the terminal, under the dashboard or `agent-tui run`.
logging.getLogger("mcp").addHandler(logging.NullHandler())

MAX_TOOLS = 200
"""The most tools taken from one server (each is offered to the model on every call)."""

ServerStatus = Literal["starting", "running", "failed", "stopped"]
Progress = ProgressFnT
"""Told each progress notification of a call: (progress, total or None, message or None)."""


class McpServer:
    """One configured server, from start to stop.

    Args:
        config: how to reach it.
    """

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self.status: ServerStatus = "starting"
        self.reason: str | None = None
        """Why the server is not running, in one line (None while it runs)."""
        self.tools: list[mcp_types.Tool] = []
        self.ready = anyio.Event()
        self._stop = anyio.Event()
        self._session: ClientSession | None = None
        self._stderr: IO[str] | None = None
        self.process = StdioProcess()
        """A stdio server's process (its pid is its group's id), once started."""

    @property
    def name(self) -> str:
        return self.config.name

    def stop(self) -> None:
        """Ask `serve` to close the connection (and the process) and return."""
        self._stop.set()

    async def serve(self) -> None:
        """Start the server, list its tools, and hold the connection until `stop`."""
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(ClientSession(read, write))
                with anyio.fail_after(self.config.start_timeout):
                    await session.initialize()
                    self.tools = await _all_tools(session)
                self._session = session
                self.status = "running"
                self.ready.set()
                await self._stop.wait()
        except Exception as error:
            self._failed(self._start_failure(error))
        finally:
            self._session = None
            if self.status == "running":
                self.status = "stopped"
            self.ready.set()
            if self._stderr is not None:
                self._stderr.close()

    async def call(
        self, tool: str, arguments: dict[str, Any], progress: Progress
    ) -> mcp_types.CallToolResult:
        """Call one of the server's tools (its own name), streaming its progress.

        Raises:
            ToolError: `not_found` when the server is not running, `timeout` past the config's
                timeout, `io_error` when the server went away, `unknown` for an answer that
                is not a tool result.
        """
        session = self._session
        server = f"MCP server {self.name}"
        if session is None or self.status != "running":
            raise ToolError("not_found", f"{server} is not running: {self.reason or self.status}")
        timeout = self.config.timeout
        with anyio.move_on_after(timeout) as scope:
            try:
                result = await session.call_tool(tool, arguments, progress_callback=progress)
            except Exception as error:
                raise self._call_failure(tool, error) from None
        if scope.cancelled_caught:
            raise ToolError("timeout", f"{server} did not answer {tool} within {timeout:g} s")
        if not isinstance(result, mcp_types.CallToolResult):
            raise ToolError("unknown", f"{server} answered {tool} with something other than a tool result")
        return result

    # -- the transports ------------------------------------------------------------------------
    def _transport(self) -> Any:
        config = self.config
        if config.command is not None:
            # Closed by `serve` when the server is gone; read for the reason a start failed.
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            env = shell_environment(current_shell_setup()) | config.environment()
            args = list(config.args)
            return stdio_streams(
                config.command, args, env=env, cwd=config.cwd, errlog=self._stderr, known=self.process
            )
        return _http(config)

    # -- reasons -------------------------------------------------------------------------------
    def _failed(self, reason: str) -> None:
        self.status = "failed"
        missing = self.config.missing_variables()
        if missing:
            reason = f"{reason} ({', '.join(missing)} not set)"
        self.reason = reason

    def _start_failure(self, error: BaseException) -> str:
        error = _innermost(error)
        command = self.config.command
        if isinstance(error, TimeoutError):  # `fail_after`, before the OSErrors it is one of
            return f"did not start within {self.config.start_timeout:g} s"
        if isinstance(error, FileNotFoundError) and command is not None:
            return f"cannot run {command}: no such program"
        if isinstance(error, OSError) and command is not None:
            return f"cannot run {command}: {error.strerror or error}"
        said = self._last_stderr_line()
        if said and command is not None and said.startswith(f"cannot run {command}: "):
            return said  # the launcher's line: the program could not be started
        if said:
            return f"exited while starting: {said}"
        if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
            return "exited while starting (it wrote nothing on stderr)"
        if isinstance(error, httpx2.HTTPError):
            return f"cannot reach {self.config.url}: {error}"
        return f"failed to start: {_error_text(error)}"

    def _call_failure(self, tool: str, error: BaseException) -> ToolError:
        error = _innermost(error)
        server = f"MCP server {self.name}"
        if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
            self.status = "failed"
            if self.process.too_long:
                self.reason = f"it sent a message over {MAX_LINE // 2**20} MB"
                return ToolError(
                    "io_error", f"{server} answered {tool} with a message over {MAX_LINE // 2**20} MB"
                )
            self.reason = "it exited during a call"
            return ToolError("io_error", f"{server} exited during the call ({tool} has no result)")
        if isinstance(error, MCPError):
            return ToolError("unknown", f"{server} refused {tool}: {_error_text(error.message)}")
        if isinstance(error, ValidationError):
            first = error.errors()[0] if error.errors() else None
            said = f" ({'.'.join(str(part) for part in first['loc'])}: {first['msg']})" if first else ""
            return ToolError("unknown", f"{server} answered {tool} with a malformed result{said}")
        return ToolError("unknown", f"{server} failed {tool}: {_error_text(error)}")

    def _last_stderr_line(self) -> str | None:
        stderr = self._stderr
        if stderr is None or stderr.closed:
            return None
        try:
            stderr.flush()
            stderr.seek(0)
            lines = [line.strip() for line in stderr.read()[-4000:].splitlines() if line.strip()]
        except (OSError, ValueError):
            return None
        return lines[-1][:200] if lines else None


@asynccontextmanager
async def _http(config: McpServerConfig) -> AsyncIterator[Any]:
    timeout = httpx2.Timeout(config.timeout, read=max(config.timeout, 300.0))
    async with (
        httpx2.AsyncClient(
            headers=config.header_values(), timeout=timeout, transport=BoundedTransport(MAX_LINE)
        ) as client,
        streamable_http_client(config.url or "", http_client=client) as streams,
    ):
        yield streams


async def _all_tools(session: ClientSession) -> list[mcp_types.Tool]:
    """The server's tools, page by page, the first `MAX_TOOLS` of them (a server that pages
    forever stops being asked there)."""
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    while True:
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        listed = await session.list_tools(params=params)
        tools.extend(listed.tools)
        cursor = listed.next_cursor
        if not cursor or len(tools) >= MAX_TOOLS:
            return tools[:MAX_TOOLS]


def _innermost(error: BaseException) -> BaseException:
    """The first leaf of an exception group (task groups wrap what their tasks raised)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _error_text(error: BaseException | str) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__
