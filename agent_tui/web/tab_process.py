"""The app process behind one browser tab: `agent-tui attach`, driven by `textual-serve`.

`textual-serve`'s `AppService` speaks Textual's web-driver protocol with the process (its
output goes to the tab's websocket, the tab's keys and size come back); this class starts the
process itself and makes sure it ends.

Invariants:
- the process is started from an argument list (`exec`), never through a shell, in a session
  of its own (so its children are ended with it), with our environment minus every secret
  variable (`vault.without_secrets`) plus what its command adds on purpose;
- `stop` asks the app to quit (Textual's own "quit" message), waits `QUIT_GRACE_S` for it, then
  sends SIGTERM to its process group, then SIGKILL; when `stop` returns the process has been
  reaped and the task reading its output has ended (only `process.wait()` is ever timed out:
  textual-serve's reader swallows a cancellation, so it is cancelled last, never waited on
  under a timeout). Quitting an attached dashboard stops nothing on any host, so closing a tab stops
  nothing either;
- `stop` may be called any number of times, from any state (also when the process never
  started or already left).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from asyncio.subprocess import Process
from collections.abc import Awaitable, Callable, Mapping, Sequence

from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from agent_tui.engine.vault import without_secrets

QUIT_GRACE_S = 5.0
TERM_GRACE_S = 3.0


class TabProcess(AppService):
    """One tab's `agent-tui attach`.

    Args:
        argv: the command, as a list.
        environment: added to the process's environment (after textual-serve's own).
        write_bytes, write_str, close: the tab's websocket.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        environment: Mapping[str, str],
        write_bytes: Callable[[bytes], Awaitable[None]],
        write_str: Callable[[str], Awaitable[None]],
        close: Callable[[], Awaitable[None]],
        download_manager: DownloadManager,
    ) -> None:
        super().__init__(
            shlex.join(argv),
            write_bytes=write_bytes,
            write_str=write_str,
            close=close,
            download_manager=download_manager,
        )
        self.argv = list(argv)
        self.environment = dict(environment)
        self._stopping: asyncio.Future[None] | None = None
        self._ended = asyncio.Event()

    @property
    def process(self) -> Process | None:
        return self._process

    async def start(self, width: int, height: int) -> None:
        await super().start(width, height)
        assert self._task is not None
        self._task.add_done_callback(lambda _task: self._ended.set())

    async def ended(self) -> None:
        """Return once the app's output has ended (it quit, or it died)."""
        await self._ended.wait()

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        # textual-serve copies our whole environment: no secret of it reaches the tab's process.
        inherited = without_secrets(self._build_environment(width=width, height=height))
        environment = {**inherited, **self.environment}
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    async def stop(self) -> None:
        """End the process (see the module docstring); every caller waits for the same end."""
        if self._stopping is None:
            self._stopping = asyncio.get_running_loop().create_future()
            try:
                await self._end()
            finally:
                self._stopping.set_result(None)
        await asyncio.shield(self._stopping)

    async def _end(self) -> None:
        process = self._process
        if process is None:
            return
        if process.returncode is None:
            await self.send_meta({"type": "quit"})  # Textual's own quit; False if its input is gone
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), QUIT_GRACE_S)
        for number, grace in ((signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, None)):
            if process.returncode is not None:
                break
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, number)
            if grace is None:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), grace)
        await process.wait()
        with contextlib.suppress(Exception):
            await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        task, self._task = self._task, None
        if task is not None:
            # Its output ends with the process, unless a child of it still holds the pipe. The
            # reader may itself end cancelled (textual-serve cancels its stderr reader, and awaits
            # it, even when that never started: a process that left at once), so it is waited on
            # with `asyncio.wait`, which says when it ended, never how.
            await asyncio.wait({task}, timeout=TERM_GRACE_S)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
