"""One external ACP agent running as a child process, with its stdio made safe to read.

Invariants:
- the agent runs in a process group of its own (a new session, so it also has no controlling
  terminal to read our keys from); `kill()` and `close()` signal the whole group, so nothing it
  started outlives it; on Linux the kernel also kills the agent if our process dies first
  (`PR_SET_PDEATHSIG`), and an `atexit` hook kills the group of every agent still running when
  the interpreter exits;
- stdout carries JSON-RPC only: each line is checked to be one JSON object, nested no deeper
  than `MAX_DEPTH`, before the ACP connection reads it, and handed on as our logs write JSON
  (so nothing the agent sends, a huge integer say, can fail a log's write); anything else is a protocol violation that ends the agent (the first
  fault is kept as `fault`, the line quoted), and the connection then sees the end of its stream;
- stderr is read all along (so the agent never blocks on a full pipe) and its last lines are
  kept for reports (`stderr_tail`);
- `describe()` says in one line why the agent is gone: its fault, its exit status or signal,
  and what it last wrote to stderr.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import sys
import weakref
from collections import deque
from pathlib import Path

import anyio
import orjson
from acp.transports import default_environment

from agent_tui.acp.config import AcpAgentConfig
from agent_tui.engine.vault import ENVIRONMENT, without_secrets
from agent_tui.events.json_depth import MAX_DEPTH, nested_deeper
from agent_tui.runtime.agent_requests import AgentStartError

STDIO_LIMIT = 50 * 1024 * 1024
"""The longest line read from the agent's stdout (bytes)."""
STDERR_LINES = 20
STDERR_LINE_CHARS = 300
QUOTE_CHARS = 80


class AgentProcess:
    """Args:
    config: which program, arguments and environment names.
    cwd: the directory the agent runs in (the session's).
    env: where the named variables' values come from.
    """

    def __init__(self, config: AcpAgentConfig, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.config = config
        self.cwd = cwd
        self._env_source = env if env is not None else dict(ENVIRONMENT)
        self.process: asyncio.subprocess.Process | None = None
        self.reader = asyncio.StreamReader(limit=STDIO_LIMIT)
        self.fault: str | None = None
        self.returncode: int | None = None
        self.exited = anyio.Event()
        self._stderr: deque[str] = deque(maxlen=STDERR_LINES)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def writer(self) -> asyncio.StreamWriter:
        assert self.process is not None and self.process.stdin is not None
        return self.process.stdin

    async def start(self) -> None:
        """Start the program (raises `AgentStartError` with a readable reason)."""
        environment = without_secrets(default_environment())  # HOME, PATH, …: never a key by accident
        environment.update(self.config.environment(self._env_source))
        try:
            # Shielded: a cancel while the program is being started would lose the only handle
            # on it (its group would run on); it is taken at the caller's next await instead.
            with anyio.CancelScope(shield=True):
                self.process = await asyncio.create_subprocess_exec(
                    self.config.command,
                    *self.config.args,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    cwd=self.cwd,
                    env=environment,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                    limit=STDIO_LIMIT,
                )
        except FileNotFoundError:
            raise AgentStartError(
                f"{self.config.command}: command not found (is it installed and on PATH?)"
            ) from None
        except PermissionError:
            raise AgentStartError(f"{self.config.command}: permission denied (not executable?)") from None
        except OSError as error:
            raise AgentStartError(f"{self.config.command}: {error.strerror or error}") from None
        _LIVE.add(self)

    async def run(self) -> None:
        """Read stdout and stderr and wait for the exit; returns when the agent is gone."""
        assert self.process is not None
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._pump_stdout)
                group.start_soon(self._pump_stderr)
                self.returncode = await self.process.wait()
        finally:
            self.reader.feed_eof()
            # asyncio's Process has no public close: its transport, left to the garbage collector,
            # would close its pipes on an event loop that may be gone by then (an error at exit).
            transport = getattr(self.process, "_transport", None)
            if transport is not None and self.process.returncode is not None:
                transport.close()
            self.exited.set()
            _LIVE.discard(self)

    async def _pump_stdout(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        while True:
            try:
                line = await stdout.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                line = end.partial
            except asyncio.LimitOverrunError:
                self._violation(f"wrote a line longer than {STDIO_LIMIT} bytes to stdout")
                return
            if not line:
                break
            if line.strip():
                fault, message = _checked(line)
                if fault is not None:
                    self._violation(fault)
                    return
                self.reader.feed_data(message)
        self.reader.feed_eof()

    async def _pump_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        stderr = self.process.stderr
        partial = b""
        while True:
            chunk = await stderr.read(65536)
            if not chunk:
                break
            partial += chunk
            *lines, partial = partial.split(b"\n")
            for line in lines:
                self._keep_stderr(line)
            if len(partial) > STDERR_LINE_CHARS * 4:
                self._keep_stderr(partial)
                partial = b""
        if partial:
            self._keep_stderr(partial)

    def _keep_stderr(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip()
        if text:
            self._stderr.append(text[:STDERR_LINE_CHARS])

    def _violation(self, fault: str) -> None:
        self.fail(fault)
        self.reader.feed_eof()
        self.kill()

    # -- reporting -----------------------------------------------------------------------------
    def fail(self, fault: str) -> None:
        """Keep the first reason the agent is unusable (later ones add nothing)."""
        if self.fault is None:
            self.fault = fault

    def stderr_tail(self, lines: int = 5) -> str:
        return "\n".join(list(self._stderr)[-lines:])

    def describe(self) -> str:
        """One line: why the agent is gone (or unusable), and its last words on stderr."""
        parts = [f"{self.name} {self.fault}" if self.fault else self._exit_text()]
        missing = self.config.missing_env(self._env_source)
        if missing:
            parts.append(f"(not set: {', '.join(missing)})")
        tail = self.stderr_tail()
        if tail:
            parts.append("stderr: " + " | ".join(tail.splitlines()))
        return "; ".join(parts)

    def _exit_text(self) -> str:
        code = self.returncode
        if code is None:
            return f"{self.name} stopped answering"
        if code < 0:
            return f"{self.name} was killed by {signal_name(-code)}"
        return f"{self.name} exited with status {code}"

    # -- ending it -----------------------------------------------------------------------------
    def kill(self) -> None:
        """SIGKILL the agent's whole process group (safe to call at any time, any number of times)."""
        process = self.process
        if process is not None and process.returncode is None:
            _kill_group(process.pid, signal.SIGKILL)

    async def close(self, grace: float = 2.0) -> None:
        """End the agent: close its stdin, SIGTERM its group, SIGKILL it after `grace` seconds.

        Returns once the agent has exited and been reaped (`run` returned); whatever else runs in
        its process group has been sent SIGKILL by then (the kernel ends it; signals are not
        synchronous).
        """
        process = self.process
        if process is None:
            return
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                if process.stdin is not None and not process.stdin.is_closing():
                    process.stdin.close()
                _kill_group(process.pid, signal.SIGTERM)
                with anyio.move_on_after(grace):
                    await self.exited.wait()
                self.kill()
            # Whatever the agent left in its group (a daemon it forked) goes with it.
            _kill_group(process.pid, signal.SIGKILL)
            await self.exited.wait()


def signal_name(number: int) -> str:
    """`SIGKILL` for 9; `signal 99` for a number no signal has."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _checked(line: bytes) -> tuple[str | None, bytes]:
    """What is wrong with a line of the agent's stdout (None for one JSON object), and the line
    for the connection: written again as our logs write JSON (orjson), so whatever the SDK reads
    from it a log can hold (an integer past 64 bits comes through as a float)."""
    too_deep = f"wrote a message nested deeper than {MAX_DEPTH} levels to stdout"
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        if "depth" in str(error) or "recursion" in str(error):  # orjson's own limit: 1024 levels
            return too_deep, b""
        value = None
    if not isinstance(value, dict):
        return f"wrote something that is not JSON-RPC to stdout: {_quote(line)}", b""
    if nested_deeper(value, MAX_DEPTH):
        return too_deep, b""
    return None, orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)


def _quote(line: bytes) -> str:
    text = line.decode("utf-8", "replace").strip()
    return repr(text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…")


# -- nothing outlives us -------------------------------------------------------------------------
_LIVE: weakref.WeakSet[AgentProcess] = weakref.WeakSet()


def _kill_all_at_exit() -> None:
    for agent in list(_LIVE):
        agent.kill()


atexit.register(_kill_all_at_exit)


def _parent_death_signal() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _parent_death_signal()
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: ask the kernel to SIGKILL it when our process dies (Linux)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)  # type: ignore[operator]
