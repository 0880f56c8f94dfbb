"""`TerminalAgents`: the terminal sessions of one host, followed and answered while it runs.

`TerminalAgents(engine, watched=…, hand_back_after=…).serving(project=…)` is what a host runs (the local
dashboard's project run, `agent-tui serve --relay-hooks`): inside it, the followed transcripts
are read as they grow (`TerminalLogs`), the hook events are answered (`handle`, given to the hook
socket), and the command executor stops terminal sessions through it (it is the runtime's
`TerminalSessions` port).

Invariants:
- one task group owns the follower's tasks: leaving `serving` cancels them, then lets go of
  every log it wrote (left as written: a turn in progress stays open for a later process to
  continue);
- with a `project`, the project's recent transcripts (a CLI session whose cwd is the project,
  changed within `recent`) are followed as they appear, besides those a hook announces;
- the hook socket is opened only when a `socket` is given (`HookSocket(handler, watched)`, an
  async context manager): the follower works without one (tests, a host that relays no hooks),
  and without it when another agent-tui already answers this user's hooks (a warning says so);
- every warning (a transcript refused, a log no longer followed, a hook event that failed) is
  told once to `on_warning` (the dashboard's notices, serve's stderr) as it is given;
- the sessions this host drives through ACP (`acp`: those the engine's logs record, stored ones
  read when `serving` starts, new ones as the engine stores them) are not terminal sessions:
  their transcripts are not followed, their hooks get no decision, and a transcript followed
  before its ACP session's id was recorded is let go, its sessions told to `on_dropped`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio

from agent_tui.engine.engine import SessionEngine
from agent_tui.importers.locations import recent_sessions
from agent_tui.providers.config import Config, ConfigError
from agent_tui.runtime.acp_sessions import AcpSessions, recorded_acp_sessions
from agent_tui.terminal.discovery import TerminalTranscript, transcript_at
from agent_tui.terminal.hook_socket import HookSocket, HookSocketError, Reply
from agent_tui.terminal.hook_wire import CLIS, Cli
from agent_tui.terminal.logs import TOOL_OF, TerminalLogs, TranscriptRefused
from agent_tui.terminal.questions import TRANSCRIPT_WAIT, TerminalHooks

Handler = Callable[[Cli, dict[str, Any]], Awaitable[Reply]]
SocketFactory = Callable[[Handler, Callable[[], bool]], AbstractAsyncContextManager[object]]
POLL_EVERY = 0.1
"""Seconds between two reads of the followed transcripts (a line shows within about this)."""
LOOK_EVERY = 5.0
"""Seconds between two looks for the project's new transcripts."""
RECENT = 3600.0
"""A transcript changed within this many seconds is a live session of the project."""


class TerminalAgents:
    """The terminal sessions of one host (see the module docstring).

    Args:
        engine: whose store keeps their logs and whose questions hold their requests.
        watched: whether someone would answer a question now.
        hand_back_after: seconds after which a Codex question is handed back to its terminal.
        on_dropped: told the sessions of a transcript followed before it was known as an ACP
            session's, when it is let go (the dashboard leaves them out of its tree).
        transcript_wait: seconds to wait for a transcript that lags its CLI's hooks
            (`questions.TRANSCRIPT_WAIT` for live CLIs).
        roots: each CLI's session directory (default: where the CLI keeps them).
    """

    TRANSCRIPT_WAIT = TRANSCRIPT_WAIT
    """The `transcript_wait` of a host of live CLIs (the dashboard's project run, `serve`)."""

    def __init__(
        self,
        engine: SessionEngine,
        *,
        watched: Callable[[], bool],
        hand_back_after: float = 30.0,
        roots: dict[Cli, Path] | None = None,
        transcript_wait: float = 0.0,
        on_warning: Callable[[str], object] | None = None,
        on_dropped: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.engine = engine
        self.acp = AcpSessions()
        engine.subscribe(self.acp.heard)
        self.logs = TerminalLogs(engine, roots, self.acp)
        self.logs.on_dropped = on_dropped
        self.hooks = TerminalHooks(
            engine,
            self.logs,
            watched=watched,
            hand_back_after=hand_back_after,
            transcript_wait=transcript_wait,
        )
        self.on_warning = on_warning
        self._told = 0  # how many of `warnings` `on_warning` was told

    @property
    def warnings(self) -> list[str]:
        return self.logs.warnings + self.hooks.warnings

    async def handle(self, cli: Cli, event: dict[str, Any]) -> Reply:
        """The hook socket's handler: one hook event → its reply."""
        return await self.hooks.handle(cli, event)

    # -- the runtime's `TerminalSessions` port ---------------------------------------------------
    def runs(self, session_id: str) -> bool:
        return self.logs.known(session_id)

    async def stop(self, session_id: str, *, by: str | None = None) -> int:
        return await self.hooks.stop(session_id, by=by)

    # -- running -----------------------------------------------------------------------------------
    @asynccontextmanager
    async def serving(
        self,
        *,
        project: Path | None = None,
        socket: SocketFactory | None = None,
        recent: float = RECENT,
        poll_every: float = POLL_EVERY,
    ) -> AsyncIterator[TerminalAgents]:
        """Follow and answer terminal sessions for the engine while inside (see the class)."""
        try:
            async with anyio.create_task_group() as group, AsyncExitStack() as answering:
                stored_in = getattr(self.engine.store, "root", None)
                self.acp.learn(await anyio.to_thread.run_sync(recorded_acp_sessions, stored_in))
                if socket is not None:
                    try:
                        await answering.enter_async_context(socket(self.handle, self.hooks.watched))
                    except HookSocketError as error:  # another agent-tui answers them: follow only
                        self.hooks.warnings.append(f"the CLIs' hooks are not answered here: {error}")
                if project is not None:
                    await self.follow_project(project, recent)
                    group.start_soon(self._look_for, project, recent)
                group.start_soon(self._poll, poll_every)
                self.tell_warnings()
                yield self
                group.cancel_scope.cancel()
        finally:
            self.logs.release()

    def tell_warnings(self) -> None:
        """Tell `on_warning` the warnings given since it was last told (each once)."""
        warnings = self.warnings
        if self.on_warning is not None:
            for line in warnings[self._told :]:
                self.on_warning(line)
        self._told = len(warnings)

    async def _poll(self, every: float) -> None:
        while True:
            await self.logs.catch_up()
            self.tell_warnings()
            await anyio.sleep(every)

    async def _look_for(self, project: Path, recent: float) -> None:
        while True:
            await anyio.sleep(LOOK_EVERY)
            await self.follow_project(project, recent)

    async def follow_project(self, project: Path, recent: float = RECENT) -> int:
        """Follow the transcripts of `project` changed within `recent` seconds not followed yet;
        returns how many joined."""
        joined = 0
        for transcript in project_transcripts(project, self.logs.root, recent):
            cli, path = transcript.cli, transcript.path
            if self.logs.follows(path) or {transcript.cli_id, transcript.parent_cli_id} & self.acp.ids():
                continue  # (followed already, or a session of this host's ACP agents: not a terminal's)
            try:
                joined += not self.logs.left_out(await self.logs.follow(cli, path))
            except TranscriptRefused:
                continue
        return joined


def project_transcripts(
    project: Path, root_of: Callable[[Cli], Path], recent: float = RECENT
) -> list[TerminalTranscript]:
    """The transcripts under each CLI's directory changed within `recent` seconds whose session
    works in `project` (the `cwd` of their first records), newest first, their paths resolved."""
    want = str(project.resolve())
    found: list[TerminalTranscript] = []
    for cli in CLIS:
        try:
            paths = recent_sessions(TOOL_OF[cli], timedelta(seconds=recent), root=root_of(cli))
        except OSError:  # (no such folder among them)
            continue
        for path in paths:
            transcript = transcript_at(cli, path)
            if transcript is not None and transcript.cwd == want:
                found.append(dataclasses.replace(transcript, path=path.resolve()))
    return found


HAND_BACK_AFTER = 30.0
"""`[hooks] hand_back_after`'s default (seconds)."""


def hand_back_after(config: Config) -> float:
    """`[hooks] hand_back_after` of the config file: seconds before a Codex question is handed
    back to its terminal (default 30).

    Raises:
        ConfigError: it is not a number of seconds above 0 (`PATH:LINE: …`).
    """
    table = config.data.get("hooks")
    if not isinstance(table, dict) or "hand_back_after" not in table:
        return HAND_BACK_AFTER
    value = table["hand_back_after"]
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3600:
        line = config.lines.line("hooks", "hand_back_after")
        raise ConfigError(
            f"{config.path}:{line}: [hooks] hand_back_after must be seconds, above 0 and at most 3600"
        )
    return float(value)


def hook_socket() -> SocketFactory:
    """The hook socket's server (`HookSocket(handler, watched)`, an async context manager)."""
    return HookSocket
