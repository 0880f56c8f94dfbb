"""`PresenceWatch`: which hosts are on the bus, and which stopped answering.

Each host heartbeats a `Presence` into the KV bucket `PRESENCE_BUCKET` (key: its name); the
bucket's TTL (its max age) removes a value that was not renewed. The watch follows the bucket.

Invariants:
- a host is reachable from the heartbeat that names it until either the server says its key
  went away (a delete, a purge, or the marker the server leaves when the TTL removes it) or no
  heartbeat came for a whole TTL (the one its `Presence` says, else the bucket's), by this
  process's monotonic clock, whichever is first; then it
  is unreachable "since" the time of its last heartbeat, and stays listed (its sessions are
  marked) until a heartbeat names it again;
- while the dashboard is cut off from the bus (`pause`) nothing is judged: silence it cannot
  hear is not a host's fault; after `resume` every host gets one TTL to be heard again;
- a value that is not a `Presence` is reported once through `problem`, and the host is still
  counted as heard (it wrote its key);
- `changed` is called after every change of what `hosts` says (so tests and the screen wait on
  it, never on the clock).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError, NotFoundError
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue
from pydantic import ValidationError

from agent_tui.bus.protocol import DEFAULT_PRESENCE_TTL_S, PRESENCE_BUCKET, Presence

STOP_WAIT_S = 2.0
"""How long stopping waits for the watch's task to end (it is cancelled; it is not awaited
further: what it waits for comes to nothing once the connection closes)."""
BUCKET_WAIT_S = 0.5
"""How often a watch that found no bucket yet (no host ever ran) looks again."""


@dataclass(frozen=True)
class HostPresence:
    """What the dashboard knows of one host."""

    name: str
    presence: Presence | None
    heard_at: datetime
    """When its last heartbeat was written (the server's time of the value)."""
    unreachable_since: datetime | None = None
    left_at: datetime | None = None
    """When the host removed its own presence (it stopped cleanly); its TTL lapsing instead
    makes it unreachable."""

    @property
    def reachable(self) -> bool:
        return self.unreachable_since is None and self.left_at is None


class PresenceWatch:
    """Follows `PRESENCE_BUCKET` (see the module docstring).

    Args:
        js: the JetStream context of the dashboard's connection.
        changed: called after each change of `hosts`.
        problem: called with one sentence for a value that is not a `Presence`.
        ttl: seconds without a heartbeat after which a host is unreachable (default: the
            bucket's own TTL, else `DEFAULT_PRESENCE_TTL_S`).
    """

    def __init__(
        self,
        js: JetStreamContext,
        changed: Callable[[], None],
        problem: Callable[[str], None],
        *,
        ttl: float | None = None,
    ) -> None:
        self._js = js
        self._changed = changed
        self._problem = problem
        self._ttl_given = ttl
        self.ttl = ttl or DEFAULT_PRESENCE_TTL_S
        self.hosts: dict[str, HostPresence] = {}
        self._heard: dict[str, float] = {}  # host → monotonic time of its last heartbeat
        self._watcher: KeyValue.KeyWatcher | None = None
        self._task: asyncio.Task[None] | None = None
        self._judge: asyncio.Task[None] | None = None
        self._paused = False
        self._closed = False
        self.ready = asyncio.Event()
        """Set once the bucket's current values were read (or it has none yet)."""

    async def start(self) -> None:
        self._task = asyncio.create_task(self._follow())
        self._judge = asyncio.create_task(self._judge_forever())

    async def first_read(self) -> None:
        """Return once the bucket's current values were read (`ready`), or the watch gave up
        (the server refused it: its task ended)."""
        ready = asyncio.ensure_future(self.ready.wait())
        waits: set[asyncio.Future[Any]] = {ready}
        if self._task is not None:
            waits.add(self._task)
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()

    def pause(self) -> None:
        """The bus is away: judge nothing until `resume`."""
        self._paused = True

    async def resume(self) -> None:
        """The bus is back: follow the bucket again; every host has a TTL to be heard."""
        if self._closed:
            return
        now = time.monotonic()
        for name in self._heard:
            self._heard[name] = now
        self._paused = False
        await self._stop_following()
        self._task = asyncio.create_task(self._follow())

    async def close(self) -> None:
        self._closed = True
        if self._judge is not None:
            self._judge.cancel()
        await self._stop_following()

    async def _stop_following(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            # Bounded: a cancelled request of the NATS client can wait for its reply first.
            await asyncio.wait({task}, timeout=STOP_WAIT_S)
        watcher, self._watcher = self._watcher, None
        if watcher is not None:
            with contextlib.suppress(Exception):
                await watcher.stop()

    async def _follow(self) -> None:
        kv = await self._bucket()
        if self._ttl_given is None:
            with contextlib.suppress(Exception):
                ttl = (await kv.status()).ttl
                if ttl:
                    self.ttl = ttl
        self._watcher = watcher = await kv.watchall()
        async for entry in watcher:
            if entry is None:  # the bucket's current values are all read
                self.ready.set()
                continue
            self._update(entry)

    async def _bucket(self) -> KeyValue:
        while not self._closed:
            try:
                return await self._js.key_value(PRESENCE_BUCKET)
            except (BucketNotFoundError, NotFoundError):
                self.ready.set()  # nothing to read: no host ever ran
                await asyncio.sleep(BUCKET_WAIT_S)
        raise asyncio.CancelledError

    def _update(self, entry: KeyValue.Entry) -> None:
        name = entry.key
        created = entry.created
        heard_at = created if isinstance(created, datetime) else datetime.now(UTC)
        if entry.operation in (KV_DEL, KV_PURGE):
            known = self.hosts.get(name)
            if known is not None and known.reachable:
                if entry.operation == KV_DEL:  # the host's own goodbye (the TTL's marker purges)
                    self.hosts[name] = replace(known, left_at=heard_at)
                else:
                    self.hosts[name] = replace(known, unreachable_since=known.heard_at)
                self._changed()
            return
        presence: Presence | None = None
        try:
            presence = Presence.model_validate_json(entry.value or b"")
        except ValidationError:
            self._problem(f"host {name}: its presence in {PRESENCE_BUCKET} is not readable")
        self._heard[name] = time.monotonic()
        before = self.hosts.get(name)
        self.hosts[name] = HostPresence(name, presence, heard_at)
        if before is None or not before.reachable or before.presence != presence:
            self._changed()

    async def _judge_forever(self) -> None:
        while True:
            await asyncio.sleep(max(self.ttl / 8, 0.05))
            self.judge()

    def judge(self) -> None:
        """Mark every host not heard for a TTL as unreachable."""
        if self._paused:
            return
        now = time.monotonic()
        changed = False
        for name, heard in self._heard.items():
            host = self.hosts.get(name)
            ttl = host.presence.ttl_s if host is not None and host.presence is not None else self.ttl
            if host is not None and host.reachable and now - heard >= ttl:
                self.hosts[name] = replace(host, unreachable_since=host.heard_at)
                changed = True
        if changed:
            self._changed()
