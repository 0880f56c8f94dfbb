"""The config's `notify_command`: a program told each notification as JSON on its stdin.

For phones and other setups (an `ntfy publish`, a Pushover `curl`, a desktop notifier): the
dashboard runs it for every notification it would show while the user is away.

Invariants:
- it runs without a shell (the argument list as written, no word splitting, no expansion), with
  the environment a shell command gets (`shell_environment`: no model key, nothing secret-looking
  unless `shell_env.include` names it), its stdout and stdin apart from the terminal's (the
  JSON goes in through a pipe, its output is dropped);
- `send` never raises and never waits longer than `timeout` seconds (plus the moment it takes
  to kill a process): a command that cannot start, exits non-zero or runs too long comes back as
  one sentence naming the command; the one that ran too long is killed with its whole process
  group, so nothing it started lingers;
- cancelling `send` (the dashboard quits) kills the command the same way.
"""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass

from agent_tui.engine.tools.shell_setup import current_shell_setup
from agent_tui.engine.tools.tool_env import shell_environment

__all__ = ["NOTIFY_TIMEOUT_SECONDS", "NotifyCommand"]

NOTIFY_TIMEOUT_SECONDS = 10.0
"""How long a notify command may run."""
_STDERR_CHARS = 200


@dataclass(frozen=True)
class NotifyCommand:
    """Attributes:
    argv: the program and its arguments (`notify_command` in the config file).
    timeout: seconds it may run.
    where: where it was configured (`PATH:LINE`), for the sentence a failure reads as.
    """

    argv: tuple[str, ...]
    timeout: float = NOTIFY_TIMEOUT_SECONDS
    where: str = ""

    async def send(self, payload: bytes) -> str | None:
        """Run the command with `payload` on its stdin; None when it exited 0, else why not."""
        where = f" ({self.where})" if self.where else ""
        name = f"notify_command {' '.join(self.argv)!r}{where}"
        try:
            process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                env=shell_environment(current_shell_setup()),  # a shell command's: no keys
                start_new_session=True,
            )
        except OSError as error:
            return f"{name} could not start: {error.strerror or error}"
        try:
            _, stderr = await asyncio.wait_for(process.communicate(payload), self.timeout)
        except TimeoutError:
            await _kill(process)
            return f"{name} did not finish within {self.timeout:g} s and was stopped"
        except BaseException:
            await _kill(process)
            raise
        if process.returncode:
            said = " ".join(stderr.decode("utf-8", "replace").split())[-_STDERR_CHARS:]
            return f"{name} exited with status {process.returncode}" + (f": {said}" if said else "")
        return None


async def _kill(process: asyncio.subprocess.Process) -> None:
    """End `process` and its process group, and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        await asyncio.wait_for(process.wait(), 5)
    except TimeoutError:
        pass
