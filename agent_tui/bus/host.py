"""`BusHost`: a process that runs agents and offers them on the bus (`serve`, `run --bus`).

Invariants:
- the host's logs are the truth: the bus only hears what they already hold (`Publisher`), and
  nothing the bus does (away at start, gone for hours, refusing a publish) stops, slows or
  fails an agent: the host keeps logging, tries again in the background, says so on stderr,
  and republishes from the logs when the bus is back (a `HostNotice` on `notice_subject`);
- the host holds its name on the bus for as long as it runs, and heartbeats its `Presence`;
- the control subject is served by `ControlServer` over a `CommandExecutor` (`executor`): the
  workbench's on `serve` (finishing sessions' work included), the engine's alone (stop, steer,
  follow-up, budgets) on `run --bus`; the bus's own verbs (sessions, republish) are `HostLog`'s;
- while its publishes are the stream's first messages, it keeps a state snapshot of them in
  `SNAPSHOT_BUCKET` (`SnapshotKeeper`, off the path of publishing) for dashboards to start from;
- `close()` flushes what is logged to the bus for a bounded time, writes its last snapshot
  (bounded too), keeps the marks, lets go of
  the name and the presence, and closes the link; it never raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from agent_tui.bus.attach_target import BusUnreachable
from agent_tui.bus.config import BusSettings
from agent_tui.bus.control_server import ControlServer
from agent_tui.bus.host_link import BusLink
from agent_tui.bus.presence import BusPresence, NameTaken, machine, now, own_claim, user
from agent_tui.bus.protocol import (
    HostNotice,
    HostSessions,
    Presence,
    SessionSummary,
    WaitingRequest,
    events_subject,
    notice_subject,
)
from agent_tui.bus.publisher import Publisher, RefillFailed
from agent_tui.bus.snapshots import SnapshotKeeper
from agent_tui.engine.engine import SessionEngine
from agent_tui.runtime.command_executor import CommandExecutor, Refused, review_limit
from agent_tui.runtime.workbench import Workbench
from agent_tui.store.jsonl import iter_lines

__all__ = ["BusHost", "BusUnreachable", "NameTaken"]

FLUSH_TIMEOUT_S = 10.0


class BusHost:
    def __init__(
        self,
        settings: BusSettings,
        *,
        name: str,
        kind: str,
        sessions_dir: Path,
        say: Callable[[str], None],
        cwd: Path | None = None,
    ) -> None:
        self.settings = settings
        self.cwd = cwd
        """The host's own directory (`serve --cwd`), said in its presence."""
        self.name = name
        self.kind = kind
        self.sessions_dir = sessions_dir
        self.say = say
        self.link = BusLink(settings, say)
        self.publisher = Publisher(name, sessions_dir, self.link, settings)
        self.snapshots = self.publisher.snapshots = SnapshotKeeper(name, lambda: self.link.stream, say=say)
        self.started_at = now()
        self.presence: BusPresence | None = None
        self.control: ControlServer | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._unsubscribe: list[Callable[[], None]] = []
        self._name_refused: NameTaken | None = None
        self._name_claimed_by_start = False
        self.link.watchers.append(self._link_changed)
        self.publisher.before = self.control_ready

    def presence_record(self) -> Presence:
        from agent_tui import __version__

        return Presence(
            host=self.name,
            pid=os.getpid(),
            machine=machine(),
            user=user(),
            startedAt=self.started_at,
            version=__version__,
            sessionsDir=str(self.sessions_dir),
            cwd=str(self.cwd) if self.cwd is not None else None,
            kind="serve" if self.kind == "serve" else "run",
            heartbeatS=self.settings.heartbeat_s,
            ttlS=self.settings.presence_ttl_s,
        )

    async def start(self, *, required: bool) -> None:
        """Connect (raising BusUnreachable or NameTaken when `required`), else connect in the
        background; then publish, heartbeat and serve controls whenever the link is up."""
        for path in sorted(self.sessions_dir.glob("*.jsonl")):
            self.publisher.note_stored(path.stem, _last_sequence(path))
        if required:
            self._name_claimed_by_start = True
            await self.link.open()
            await self._claim_name()
        else:
            self.link.open_in_background()
        self._tasks.append(asyncio.get_running_loop().create_task(self.publisher.run()))
        self._tasks.append(asyncio.get_running_loop().create_task(self.snapshots.run()))

    def executor(
        self, engine: SessionEngine, *, workbench: Workbench | None = None, project: Path | None = None
    ) -> CommandExecutor:
        """What carries out the commands this host is asked for (the workbench's on `serve`)."""

        def limit() -> int:
            client = self.link.client
            return review_limit(client.max_payload if client is not None else None)

        return CommandExecutor(
            engine,
            workbench=workbench,
            project=project,
            bus=HostLog(engine, self.publisher),
            review_limit=limit,
        )

    def attach(self, engine: SessionEngine, executor: CommandExecutor | None = None) -> None:
        """Publish `engine`'s events and serve `executor` (default: the engine's alone) on the
        control subject."""
        self._unsubscribe.append(engine.subscribe(self.publisher.heard))
        executor = executor or self.executor(engine)
        self.control = ControlServer(self.name, self.link, executor, say=self.say)
        if self.link.connected.is_set():
            self._tasks.append(asyncio.get_running_loop().create_task(self.control.start()))

    async def control_ready(self) -> None:
        """Return once the control subject is served (when the bus is up): a host says it serves
        only after a request sent then finds its responder; the publisher awaits it before each
        batch, so a permission request goes out once an answer to it can come back."""
        control = self.control
        if control is not None and not control.serving:
            with contextlib.suppress(Exception):
                await control.start()

    async def _claim_name(self) -> None:
        stream = self.link.stream
        assert stream is not None
        presence = self.presence = BusPresence(
            stream,
            own_claim(self.name, "host" if self.kind == "serve" else "run", self.started_at),
            self.settings.presence_ttl_s,
        )
        await presence.claim_name()
        record = self.presence_record()
        with contextlib.suppress(Exception):
            await presence.beat(record)  # present before the host says it serves
        self._tasks.append(
            asyncio.get_running_loop().create_task(presence.heartbeat(record, self.settings.heartbeat_s))
        )

    async def _link_changed(self, up: bool) -> None:
        if not up:
            return
        if self.presence is None and self._name_refused is None and not self._name_claimed_by_start:
            try:
                await self._claim_name()
            except NameTaken as error:
                self._name_refused = error
                self.say(f"{error}; this run's events are not published")
                await self.link.close()
                return
            except Exception:
                return
        if self.control is not None:
            with contextlib.suppress(Exception):
                await self.control.start()
        away = self.link.away_since
        if away is not None and self.link.client is not None:
            notice = HostNotice(
                host=self.name,
                state="back",
                since=away,
                message=f"the bus was away since {away}; what was logged meanwhile is published",
            )
            with contextlib.suppress(Exception):
                await self.link.client.publish(notice_subject(self.name), notice.model_dump_json().encode())

    async def close(self, flush_timeout: float = FLUSH_TIMEOUT_S) -> bool:
        """Flush, keep the marks, let go of the name, close. Whether everything was published."""
        flushed = False
        await self.link.settle()
        if self.link.connected.is_set():
            flushed = await self.publisher.flushed(flush_timeout)
        if flushed:  # what was published, kept for the dashboards that attach later
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.snapshots.write(), flush_timeout)
        for undo in self._unsubscribe:
            undo()
        if self.control is not None:
            await self.control.stop()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.publisher.write_marks()
        if self.presence is not None and self.link.connected.is_set():
            await self.presence.release()
        await self.link.close()
        return flushed


def _last_sequence(path: Path) -> int:
    last = 0
    with contextlib.suppress(OSError):
        for _, line, complete in iter_lines(path):
            if complete and line.strip():
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    last = int(orjson.loads(line)["sequence"])
    return last


def _created(path: Path) -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError, StopIteration):
        _, line, _ = next(iter_lines(path))
        event = orjson.loads(line)
        if event.get("type") == "session.created":
            return dict(event["payload"])
    return {}


class HostLog:
    """The bus's own verbs on a host: its sessions as the stream has them, and a hole refilled."""

    def __init__(self, engine: SessionEngine, publisher: Publisher) -> None:
        self.engine = engine
        self.publisher = publisher
        self._created: dict[str, dict[str, Any]] = {}

    async def republish(self, session_id: str, first: int, last: int | None) -> tuple[int, int]:
        """Publish the session's logged events `first`..`last` (None: its end) again."""
        logged = self.publisher.latest.get(session_id)
        if logged is None:
            raise Refused(f"no session {session_id} is logged on this host")
        if first > logged or (last is not None and last > logged):
            asked = first if last is None or first > logged else last
            raise Refused(f"session {session_id}'s log on this host ends at event {logged}, before {asked}")
        try:
            return await self.publisher.refill(session_id, first, last or logged)
        except RefillFailed as error:
            raise Refused(str(error)) from None

    def sessions(self) -> dict[str, Any]:
        """A `HostSessions` as a reply's detail."""
        publisher = self.publisher
        host = publisher.host
        running = {info.id for info in self.engine.sessions() if info.live_turn is not None}
        family = self.engine.budgets.index
        summaries = []
        for session_id, latest in sorted(publisher.latest.items()):
            created = self._created.get(session_id)
            if created is None:
                created = self._created[session_id] = _created(
                    self.publisher.sessions_dir / f"{session_id}.jsonl"
                )
            summaries.append(
                SessionSummary(
                    sessionId=session_id,
                    subject=events_subject(host, session_id),
                    lastSequence=latest,
                    publishedSequence=publisher.marks.get(session_id, 0),
                    streamSequence=publisher.stream_sequences.get(session_id),
                    parentSessionId=family.parent_of(session_id) or created.get("parentSessionId"),
                    created=created,
                    running=session_id in running,
                )
            )
        questions = self.engine.questions
        asked = questions.waiting() if questions.answerer is None else []
        # The engine's questions are the one owner: the reply reads their fields by name.
        waiting = [WaitingRequest.model_validate(request, from_attributes=True) for request in asked]
        return HostSessions(host=host, sessions=summaries, waiting=waiting).model_dump(by_alias=True)
