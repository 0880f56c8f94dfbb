"""A process's name on the bus, and a host's heartbeat.

Invariants:
- a name is held in `NAMES_BUCKET` by one process at a time: `claim_name` creates the key and
  is refused (`NameTaken`, with the holder's `NameClaim`) when another live process holds it; a
  claim left by a process of this machine that no longer runs (a host killed with `kill -9`) is
  taken over, and any other claim lapses with the bucket's TTL once its holder stops renewing it;
- a host puts its `Presence` into `PRESENCE_BUCKET` every `heartbeat_s`; both buckets keep a key
  for `ttl_s` after its last renewal, and then the server itself removes it and says so to
  watchers (a limit marker), so a dashboard waits on that change, never on a clock;
- `release` removes both keys (a host that stops cleanly is gone at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import socket
from datetime import UTC, datetime
from typing import Literal

from nats.js import JetStreamContext
from nats.js.api import KeyValueConfig
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from agent_tui.bus.protocol import NAMES_BUCKET, PRESENCE_BUCKET, NameClaim, Presence
from agent_tui.store.lock import process_alive as alive

HOST_HINT = "choose another with --host"
"""What a refused host can do (a dashboard is told to choose another name its own way)."""


class NameTaken(Exception):
    def __init__(self, claim: NameClaim, hint: str = HOST_HINT) -> None:
        self.claim = claim
        super().__init__(
            f"the name {claim.name!r} is in use on the bus by a {claim.kind} (pid {claim.pid} on "
            f"{claim.machine}, user {claim.user}, since {claim.since}): {hint}"
        )


def machine() -> str:
    return socket.gethostname()


def user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def own_claim(name: str, kind: Literal["host", "dashboard", "run"], since: str) -> NameClaim:
    """This process's claim of `name` on the bus."""
    return NameClaim(name=name, kind=kind, pid=os.getpid(), machine=machine(), user=user(), since=since)


async def bucket(stream: JetStreamContext, name: str, ttl_s: float) -> KeyValue:
    """The KV bucket, made with a TTL of `ttl_s` (and limit markers) when it does not exist."""
    try:
        return await stream.key_value(name)
    except BucketNotFoundError:
        pass
    config = KeyValueConfig(bucket=name, ttl=ttl_s, history=1)
    try:
        return await stream.create_key_value(config, limit_marker_ttl=max(ttl_s, 1.0))
    except Exception:
        return await stream.create_key_value(config)


class BusPresence:
    """The name and the heartbeat of one process."""

    def __init__(
        self, stream: JetStreamContext, claim: NameClaim, ttl_s: float, *, hint: str | None = None
    ) -> None:
        self.stream = stream
        self.claim = claim
        self.ttl_s = ttl_s
        self._hint = hint or HOST_HINT  # what a refused claimant can do
        self.names: KeyValue | None = None
        self.hosts: KeyValue | None = None

    async def claim_name(self) -> None:
        """Hold `claim.name`. Raises NameTaken."""
        names = self.names = await bucket(self.stream, NAMES_BUCKET, self.ttl_s)
        value = self.claim.model_dump_json(by_alias=True).encode()
        try:
            await names.create(self.claim.name, value)
            return
        except KeyWrongLastSequenceError:
            pass
        try:
            entry = await names.get(self.claim.name)
        except KeyNotFoundError:
            await names.put(self.claim.name, value)  # it lapsed meanwhile
            return
        holder = NameClaim.model_validate_json(entry.value or b"{}")
        ours = holder.pid == self.claim.pid and holder.machine == self.claim.machine
        gone = holder.machine == self.claim.machine and not alive(holder.pid)
        if not (ours or gone):
            raise NameTaken(holder, self._hint)
        try:
            await names.update(self.claim.name, value, last=entry.revision)
        except KeyWrongLastSequenceError:
            latest = await names.get(self.claim.name)
            raise NameTaken(NameClaim.model_validate_json(latest.value or b"{}"), self._hint) from None

    async def beat(self, presence: Presence | None) -> None:
        """Renew the name and, for a host, its presence."""
        if self.names is None:
            self.names = await bucket(self.stream, NAMES_BUCKET, self.ttl_s)
        await self.names.put(self.claim.name, self.claim.model_dump_json(by_alias=True).encode())
        if presence is not None:
            if self.hosts is None:
                self.hosts = await bucket(self.stream, PRESENCE_BUCKET, self.ttl_s)
            await self.hosts.put(presence.host, presence.model_dump_json(by_alias=True).encode())

    async def heartbeat(self, presence: Presence | None, every_s: float) -> None:
        """Beat for ever (cancel to stop); a beat that fails waits for the next one."""
        while True:
            await asyncio.sleep(every_s)  # the heartbeat's period
            with contextlib.suppress(Exception):
                await self.beat(presence)

    async def release(self) -> None:
        """Say goodbye: the presence key is deleted (a dashboard reads that as "left", where the
        TTL's own marker reads "unreachable"), the name purged for the next holder."""
        if self.hosts is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.hosts.delete(self.claim.name), 2.0)
        if self.names is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.names.purge(self.claim.name), 2.0)
