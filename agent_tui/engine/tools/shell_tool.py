"""The built-in `shell` tool: one command line, run by `/bin/sh -c` in the session cwd.

Invariants:
- the command runs in its own process group; when `run` returns, raises or is cancelled, that
  whole group has been sent SIGKILL and the shell reaped, so nothing it started (background
  jobs, grandchildren) outlives the call;
- every chunk it printed within `ctx.output_budget` has been passed to `ctx.on_output` before
  `run` returns; the result says when output was cut (`truncated=True`);
- its risk is the shell classifier's (`agent_tui.safety.assess_shell`), never assumed; with the
  session's cwd, git reads are checked against the repository's own config (`repository_check`)
  and the paths a read names against the cwd, the sandbox and the credential stores
  (`ReadScope`);
- the command gets `tool_env.shell_environment`: no key, no secret-looking variable unless the
  setup includes it, git hardened; with the setup's sandbox on and bwrap working, it runs in
  the sandbox (`sandbox.py`), with the network only when its risk is `network`.
"""

from __future__ import annotations

import codecs
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
from pydantic import Field

from agent_tui.engine.tools.base import (
    BaseTool,
    Risk,
    RiskAssessment,
    ToolArgs,
    ToolContext,
    ToolError,
    ToolResult,
)
from agent_tui.engine.tools.repository_check import repository_check
from agent_tui.engine.tools.sandbox import sandbox_status, sandboxed_argv
from agent_tui.engine.tools.shell_setup import ShellSetup, current_shell_setup
from agent_tui.engine.tools.tool_env import shell_environment
from agent_tui.safety import ReadScope, assess_shell

_DRAIN_GRACE_S = 1.0
_DEFAULT_TIMEOUT_MS = 120_000


class ShellArgs(ToolArgs):
    cmd: str = Field(description="Command line run with /bin/sh -c in the working directory.")
    timeoutMs: int = Field(
        default=_DEFAULT_TIMEOUT_MS,
        ge=1,
        le=3_600_000,
        description="Kill the command after this many milliseconds (default 120000).",
    )


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone (PermissionError: only zombies left, on some systems)


class _ShellOutput:
    """Budgeted capture of a command's combined output.

    The first `budget` characters are streamed and kept (head); the last `budget` characters
    are kept too (tail), so a cut result shows both the start and the end, where errors and
    summaries usually are.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.head: list[str] = []
        self.head_size = 0
        self.tail = ""
        self.total = 0
        # stdout and stderr are pumped by two tasks, but the engine stores deltas one at a time
        self._delivering = anyio.Lock()

    async def deliver(self, stream: Any, text: str, ctx: ToolContext) -> None:
        async with self._delivering:
            self.total += len(text)
            self.tail = (self.tail + text)[-self.budget :] if self.budget > 0 else ""
            room = self.budget - self.head_size
            if room <= 0:
                return
            shown = text[:room]
            self.head.append(shown)
            self.head_size += len(shown)
            # Shielded: a chunk is either delivered whole or not at all, even under cancellation.
            with anyio.CancelScope(shield=True):
                await ctx.on_output(stream, shown)

    @property
    def truncated(self) -> bool:
        return self.total > self.budget

    def text(self) -> str:
        if not self.truncated:
            return "".join(self.head)
        keep_head = self.budget // 2
        keep_tail = self.budget - keep_head
        head = "".join(self.head)[:keep_head]
        tail = self.tail[-keep_tail:] if keep_tail else ""
        cut = self.total - len(head) - len(tail)
        return f"{head}\n[output truncated: {cut} characters cut]\n{tail}"


class ShellTool(BaseTool):
    """Run a shell command in the session cwd, streaming its output.

    A non-zero exit status is still a successful call (`ok=True`, the status in `exit_code`): the
    model reads the status and the output and decides what to do. `exit_code` is negative when a
    signal ended the shell (Python's convention). Only a timeout (`error_code="timeout"`) or a
    failure to start the shell is a failed result.

    Process lifetime: the command runs as `/bin/sh -c CMD` in a new session (its own process
    group). When the shell exits, anything it left running in that group is killed, so the call
    ends when the shell does; on timeout, and when the awaiting task is cancelled, the whole
    group gets SIGKILL in a shielded `finally`, the shell is reaped and the cancellation goes on.
    stdin is `/dev/null`.

    Environment and sandbox: `setup` (default: `current_shell_setup()` at each call) says which
    variables pass and whether the sandbox is wanted; in the sandbox the group holds bwrap and
    everything inside it (and when the shell ends, the sandbox's PID namespace ends with every
    process in it, even one that left the group), and a command ended by signal N reports exit status 128+N (bwrap's
    way), where an unsandboxed one reports -N.

    Output: stdout and stderr are read concurrently; each chunk (decoded as UTF-8) is awaited on
    `ctx.on_output`, one call at a time, in arrival order, until `ctx.output_budget` characters
    were streamed (later output is still read, but not streamed). The result text is the
    combined output; past the budget it keeps the first and the last half of the budget.
    """

    name = "shell"
    description = (
        "Run a command with /bin/sh -c in the working directory and return its combined "
        "stdout and stderr and its exit code. Optional timeoutMs (default 120000)."
    )
    Args = ShellArgs

    def __init__(self, setup: ShellSetup | None = None) -> None:
        self._setup = setup

    @property
    def setup(self) -> ShellSetup:
        """The setup a call made now runs with: the tool's own, else the context's."""
        return self._setup or current_shell_setup()

    def command_line(self, args: ShellArgs, cwd: Path, setup: ShellSetup) -> list[str]:
        """What is started for this call: `/bin/sh -c CMD`, inside bwrap when sandboxed."""
        argv = ["/bin/sh", "-c", args.cmd]
        if not setup.sandbox:
            return argv
        status = sandbox_status()
        if status.bwrap is None:
            return argv
        risk = self.risk(args)
        return sandboxed_argv(
            status.bwrap,
            argv,
            cwd,
            network=risk == "network",
            writable=risk != "read",
            secret_files=setup.secret_files,
        )

    def risk(self, args: ShellArgs) -> Risk:
        return assess_shell(args.cmd).risk

    def assess(self, args: ShellArgs, cwd: Path | None) -> RiskAssessment:
        """The classifier's risk and reason (`agent_tui.safety.assess_shell`); with `cwd`, a
        line of git reads is `execute` when the repository's config can run programs, and a
        line of reads is `execute` when it names a credential store or, outside the sandbox,
        reads outside `cwd` (`agent_tui.safety.read_scope`)."""
        if cwd is None:
            return assess_shell(args.cmd)
        setup = self.setup
        sandboxed = setup.sandbox and sandbox_status().available
        scope = ReadScope.of(cwd, sandboxed=sandboxed, secret_files=setup.secret_files)
        return assess_shell(args.cmd, repository_check(cwd), scope)

    async def run(self, args: ShellArgs, ctx: ToolContext) -> ToolResult:
        output = _ShellOutput(ctx.output_budget)
        setup = self.setup
        try:
            # Shielded: the shell may already run before `open_process` returns, and a cancel
            # landing in between would leave its group running with nobody to kill it. The
            # cancel is taken at the first await below, where the `finally` kills the group.
            with anyio.CancelScope(shield=True):
                process = await anyio.open_process(
                    self.command_line(args, ctx.cwd, setup),
                    cwd=ctx.cwd,
                    env=shell_environment(setup),
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
        except OSError as error:
            raise ToolError(
                "io_error", f"cannot start /bin/sh in {ctx.cwd}: {error.strerror or error}"
            ) from None
        pgid = process.pid  # a new session: the shell leads its own process group
        try:
            with anyio.move_on_after(args.timeoutMs / 1000) as deadline:
                async with anyio.create_task_group() as pumps:
                    assert process.stdout is not None and process.stderr is not None
                    pumps.start_soon(_pump, process.stdout, "stdout", output, ctx)
                    pumps.start_soon(_pump, process.stderr, "stderr", output, ctx)
                    await process.wait()
                    # Left-over background jobs would hold the pipes open: end them with the
                    # shell. A daemon that left the group gets a grace period, then we stop
                    # reading.
                    _kill_group(pgid)
                    pumps.cancel_scope.deadline = anyio.current_time() + _DRAIN_GRACE_S
        finally:
            with anyio.CancelScope(shield=True):
                _kill_group(pgid)
                await process.aclose()
        if deadline.cancelled_caught:
            message = f"command timed out after {args.timeoutMs} ms and was killed"
            if so_far := output.text():
                message += "; output so far:\n" + so_far
            return ToolResult(ok=False, text=message, truncated=output.truncated, error_code="timeout")
        return ToolResult(
            ok=True, text=output.text(), exit_code=process.returncode, truncated=output.truncated
        )


async def _pump(stream: Any, name: str, output: _ShellOutput, ctx: ToolContext) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    async for chunk in stream:
        text = decoder.decode(chunk)
        if text:
            await output.deliver(name, text, ctx)
    if tail := decoder.decode(b"", final=True):
        await output.deliver(name, tail, ctx)
