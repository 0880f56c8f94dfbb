"""State snapshots on the bus: a host keeps the reducer's state of the stream's start, so that a
dashboard attaching folds only what came after it.

A host whose publishes are the stream's first messages (a new stream, one host publishing: the
usual private bus) folds its own acknowledged events, in the order the stream stored them,
through the same gate the dashboard reads with (`SessionOrder`), and now and then (`SnapshotKeeper`:
after `every_events` new events or `every_s` seconds, never more often than ten times what the
last write cost, the fold and the encoding in a thread) writes that state, at that stream
sequence, in `SNAPSHOT_BUCKET` under its own keys: `HOST.part-N` (`PART_BYTES` each), then
`HOST.head` (a `SnapshotHead`: format, host, stream, sequences, each part's SHA-256).

Invariants:
- a snapshot stands for the stream's messages `first_seq`..`last_seq`, every one of them this
  host's own acknowledged publishes, each stored once: the keeper stops for good (for that
  stream) at the first stream sequence it did not publish itself, and writes nothing while a
  session it folded waits for a missing event;
- `load_snapshot` (the dashboard) uses a snapshot only when it can check it: the bucket is as a
  host makes it (no republish, no subject transform, no copy of another stream), the head is
  under the key of the host it names, for the stream as it is now (same creation time, same
  first sequence: nothing was cut or deleted), the stream holds no other host's message at or
  before its last sequence (the first one on the other hosts' subjects, which the server lists,
  comes after it) and holds every session it has under that host's subject; the parts match their SHA-256, the bytes are within
  `MAX_SNAPSHOT_BYTES` and read as the views' schema (`reducer.snapshot`). Anything else is
  one sentence through `problem` and the dashboard folds the stream from its start: never a
  traceback, never a state the stream does not give;
- only a host's own credentials may write its keys (docs/remote.md, "Subject permissions"): a
  dashboard or another host cannot forge one; what a host says of its own sessions is what its
  events say, which it publishes anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import BucketNotFoundError, NotFoundError
from nats.js.kv import KeyValue
from pydantic import ValidationError

from agent_tui.bus.consumer_order import SessionOrder
from agent_tui.bus.protocol import (
    ALL_EVENTS,
    STREAM,
    SUBJECT_PREFIX,
    _Message,
    stream_oddities,
    subject_token,
    valid_name,
)
from agent_tui.events import EventValidationError, event_from_json
from agent_tui.reducer import DashboardState, apply_event
from agent_tui.reducer.snapshot import SnapshotRefused, state_from_bytes, state_to_bytes

SNAPSHOT_BUCKET = "agent-tui-snapshots"
"""The KV bucket of the hosts' snapshots: keys `HOST.head` and `HOST.part-N`."""
SNAPSHOT_FORMAT = 1
"""The head's format: a head of another format is not read (the stream is folded instead)."""
PART_BYTES = 512 * 1024
"""The largest part of a snapshot (half the server's default largest message)."""
MAX_SNAPSHOT_BYTES = 512 * 1024 * 1024
"""The largest snapshot a dashboard reads (and a host writes)."""
MAX_HEAD_BYTES = 64 * 1024
SNAPSHOT_EVERY_EVENTS = 100_000
SNAPSHOT_EVERY_S = 60.0
COST_SPACING = 10.0
"""A snapshot is written at most once per this many times the last write's cost."""
FOREIGN_WAIT_S = 5.0
READ_S = 60.0
"""How long a dashboard reads a snapshot's keys, at most."""
KV_PREFIX = f"$KV.{SNAPSHOT_BUCKET}"


class SnapshotHead(_Message):
    """What a snapshot stands for, written after its parts."""

    format: int
    host: str
    stream: str
    """`STREAM@<creation time>`: the stream it was folded from."""
    first_seq: int
    last_seq: int
    size: int
    parts: list[str]
    """The SHA-256 (hex) of each part, in order."""


def stream_id(info: js_api.StreamInfo) -> str:
    return f"{STREAM}@{info.created}"


def _head_key(host: str) -> str:
    return f"{host}.head"


def _part_key(host: str, n: int) -> str:
    return f"{host}.part-{n}"


async def snapshot_bucket(js: JetStreamContext) -> KeyValue:
    """The bucket, made (one revision per key, direct reads) when it does not exist."""
    try:
        return await js.key_value(SNAPSHOT_BUCKET)
    except BucketNotFoundError:
        pass
    return await js.create_key_value(
        js_api.KeyValueConfig(bucket=SNAPSHOT_BUCKET, history=1, direct=True, max_value_size=PART_BYTES)
    )


# -- the host's side ------------------------------------------------------------------------------
class SnapshotKeeper:
    """Folds a host's acknowledged events and writes them as snapshots (see the module docstring).

    Args:
        host: the host's name (its keys in the bucket).
        js: the host's JetStream context now (None while its link is down).
        every_events: write after this many new events ...
        every_s: ... or this many seconds after the last write, when there are new ones.
        say: called with one line when a write fails (the host goes on).
    """

    def __init__(
        self,
        host: str,
        js: Callable[[], JetStreamContext | None],
        *,
        every_events: int = SNAPSHOT_EVERY_EVENTS,
        every_s: float = SNAPSHOT_EVERY_S,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.host = host
        self._js = js
        self.every_events = every_events
        self.every_s = every_s
        self._say = say
        self._stream: str | None = None
        self._first = 0
        self._next: int | None = None  # the next stream sequence, while the stream's start is ours
        self._pending: list[bytes] = []
        self._state = DashboardState()
        self._order = SessionOrder()
        self._last_write = time.monotonic()
        self._last_cost = 0.0
        self._wake = asyncio.Event()
        self._writing = asyncio.Lock()
        self._parts = 0  # how many parts the last snapshot written had
        self.written = 0
        """Snapshots written."""
        self.last_seq = 0
        """The stream sequence of the last snapshot written (0: none)."""

    def began(self, info: js_api.StreamInfo) -> None:
        """The stream as the host found (or made) it: the keeper follows it only while it is empty
        when first seen, or is the one it already follows."""
        sid = stream_id(info)
        if sid == self._stream:
            return
        self._stream = sid
        self._pending.clear()
        self._state, self._order = DashboardState(), SessionOrder()
        if info.state.messages == 0:
            self._first = self._next = info.state.last_seq + 1
            self._order.from_anywhere = self._first > 1
        else:
            self._next = None

    def stored(self, stream_sequence: int, line: bytes) -> None:
        """One acknowledged publish (not a duplicate): kept for the next fold, when the stream's
        start is still this host's alone."""
        if self._next is None:
            return
        if stream_sequence != self._next:
            self._next = None  # another publisher's message came between: the start is not ours
            self._pending.clear()
            return
        self._next += 1
        self._pending.append(line)
        if len(self._pending) >= self.every_events:
            self._wake.set()

    async def run(self, tick: float = 1.0) -> None:
        """Write a snapshot whenever one is due, until cancelled."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), tick)
            self._wake.clear()
            if self._due():
                try:
                    await self.write()
                except Exception as error:  # a write that fails is tried at the next one
                    if self._say is not None:
                        self._say(f"could not write a state snapshot: {type(error).__name__}: {error}")

    def _due(self) -> bool:
        if not self._pending or self._next is None or self._writing.locked():
            return False
        since = time.monotonic() - self._last_write
        if since < COST_SPACING * self._last_cost:
            return False
        return len(self._pending) >= self.every_events or since >= self.every_s

    async def write(self) -> bool:
        """Fold what is pending and write the snapshot now; False when there is none to write."""
        async with self._writing:  # one write at a time (the loop's and the host's last one)
            return await self._write()

    async def _write(self) -> bool:
        js = self._js()
        if self._next is None or self._stream is None or js is None:
            return False
        last = self._next - 1
        if last == self.last_seq or last < self._first:
            return False  # nothing new since the last one (or nothing at all)
        batch, self._pending = self._pending, []
        started = time.monotonic()
        data = await asyncio.to_thread(self._fold, batch)
        if data is None:
            return False
        bucket = await snapshot_bucket(js)
        parts = [data[k : k + PART_BYTES] for k in range(0, len(data), PART_BYTES)] or [b""]
        for n, part in enumerate(parts):
            await bucket.put(_part_key(self.host, n), part)
        head = SnapshotHead(
            format=SNAPSHOT_FORMAT,
            host=self.host,
            stream=self._stream,
            first_seq=self._first,
            last_seq=last,
            size=len(data),
            parts=[hashlib.sha256(part).hexdigest() for part in parts],
        )
        await bucket.put(_head_key(self.host), head.model_dump_json().encode())
        for n in range(len(parts), self._parts):  # the last one's parts this one did not need
            await bucket.delete(_part_key(self.host, n))
        self._parts = len(parts)
        self._last_write = time.monotonic()
        self._last_cost = self._last_write - started
        self.written += 1
        self.last_seq = last
        return True

    def _fold(self, batch: list[bytes]) -> bytes | None:
        """Fold `batch` (in a thread: the state is the keeper's alone); the snapshot's bytes, or
        None when one cannot stand for the stream now (a session waits for an event)."""
        state, order = self._state, self._order
        for line in batch:
            try:
                event = event_from_json(line)
            except EventValidationError:
                continue  # a dashboard skips it too
            for ready in order.offer(event):
                apply_event(state, ready)
        if any(order.open(sid) for sid in state.sessions):
            return None
        data = state_to_bytes(state)
        return data if len(data) <= MAX_SNAPSHOT_BYTES else None


# -- the dashboard's side -------------------------------------------------------------------------
@dataclass
class LoadedSnapshot:
    """A checked snapshot: the state of the stream's messages up to `last_seq`, all `host`'s."""

    host: str
    state: DashboardState
    first_seq: int
    last_seq: int

    def expected(self) -> dict[str, int]:
        """Each session's next sequence to fold."""
        return {sid: session.last_sequence + 1 for sid, session in self.state.sessions.items()}


class _Ignored(Exception):
    """A snapshot not used: why, in a clause."""


async def load_snapshot(js: JetStreamContext, problem: Callable[[str], None]) -> LoadedSnapshot | None:
    """The newest snapshot this dashboard can check (see the module docstring), else None (each
    one not used said through `problem`, once). The bucket is read through consumers, which a
    watcher's permissions allow."""
    try:
        info = await js.stream_info(STREAM, subjects_filter=ALL_EVENTS)
        kept = await js.stream_info(f"KV_{SNAPSHOT_BUCKET}", subjects_filter=f"{KV_PREFIX}.>")
    except NotFoundError:
        return None  # no stream yet, or no host ever wrote a snapshot
    odd = stream_oddities(kept.config, f"{KV_PREFIX}.>")
    if odd:
        problem(
            "state snapshots ignored, the stream is read from its start: the bucket "
            f"{SNAPSHOT_BUCKET} is not as agent-tui makes it ({'; '.join(odd)})"
        )
        return None
    keys = dict(kept.state.subjects or {})
    subjects: dict[str, int] = dict(info.state.subjects or {})
    hosts = sorted({subject.split(".")[1] for subject in subjects if subject.count(".") == 3})
    heads: list[SnapshotHead] = []
    for host in hosts:
        if not valid_name(host) or f"{KV_PREFIX}.{_head_key(host)}" not in keys:
            continue
        try:
            heads.append(await _head(js, host, info))
        except _Ignored as why:
            problem(f"the state snapshot of host {host} is ignored, the stream is read from its start: {why}")
    for head in sorted(heads, key=lambda h: h.last_seq, reverse=True):
        try:
            await _only_host(js, head, subjects)
            state = await _state(js, head, subjects, keys)
        except _Ignored as why:
            problem(
                f"the state snapshot of host {head.host} is ignored, the stream is read from its start: {why}"
            )
            continue
        return LoadedSnapshot(head.host, state, head.first_seq, head.last_seq)
    return None


async def _read(js: JetStreamContext, subject: str, count: int, limit: int) -> dict[str, bytes]:
    """The last value of each of the `count` keys under `subject` (a consumer of the bucket's
    stream), at most `limit` bytes in all."""
    values: dict[str, bytes] = {}
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    size = 0

    async def take(message: Any) -> None:
        nonlocal size
        size += len(message.data)
        if size > limit and not done.done():
            done.set_exception(_Ignored(f"its keys hold over {limit:,} bytes"))
        values[message.subject] = message.data
        if (len(values) >= count or message.metadata.num_pending == 0) and not done.done():
            done.set_result(None)

    try:
        subscription = await js.subscribe(
            subject,
            stream=f"KV_{SNAPSHOT_BUCKET}",
            cb=take,
            ordered_consumer=True,
            deliver_policy=js_api.DeliverPolicy.LAST_PER_SUBJECT,
            pending_bytes_limit=2 * limit + 1024,
        )
    except Exception as error:
        raise _Ignored(f"its keys could not be read ({type(error).__name__})") from None
    try:
        await asyncio.wait_for(done, READ_S)
    except TimeoutError:
        raise _Ignored(f"its keys were not all read in {READ_S:.0f} s") from None
    finally:
        with contextlib.suppress(Exception):
            await subscription.unsubscribe()
    return values


async def _head(js: JetStreamContext, host: str, info: js_api.StreamInfo) -> SnapshotHead:
    """The host's head, checked against the stream as it is."""
    key = f"{KV_PREFIX}.{_head_key(host)}"
    raw = (await _read(js, key, 1, MAX_HEAD_BYTES)).get(key, b"")
    try:
        head = SnapshotHead.model_validate_json(raw)
    except ValidationError as error:
        raise _Ignored(f"its head is not a snapshot head ({error.error_count()} errors)") from None
    if head.format != SNAPSHOT_FORMAT:
        raise _Ignored(f"it is in format {head.format}, this dashboard reads format {SNAPSHOT_FORMAT}")
    if head.host != host:
        raise _Ignored(f"its head names host {head.host[:64]!r}")
    if head.stream != stream_id(info):
        raise _Ignored("it was made from another stream (the stream was made again since)")
    if head.first_seq != info.state.first_seq or not head.first_seq <= head.last_seq <= info.state.last_seq:
        raise _Ignored(
            f"it stands for stream sequences {head.first_seq}..{head.last_seq}, the stream holds "
            f"{info.state.first_seq}..{info.state.last_seq}"
        )
    if info.state.num_deleted:
        raise _Ignored("messages were deleted from the stream")
    if not 0 <= head.size <= MAX_SNAPSHOT_BYTES or len(head.parts) != max(1, -(-head.size // PART_BYTES)):
        raise _Ignored(f"it says it holds {head.size:,} bytes in {len(head.parts)} parts")
    return head


async def _only_host(js: JetStreamContext, head: SnapshotHead, subjects: dict[str, int]) -> None:
    """The server shows no other host's message at or before the snapshot's last sequence."""
    own = f"{SUBJECT_PREFIX}.{head.host}."
    others = sorted(
        {f"{SUBJECT_PREFIX}.{s.split('.')[1]}.*.events" for s in subjects if not s.startswith(own)}
    )
    if not others:
        return
    first = await _first_sequence(js, others, head.first_seq)
    if first is None or first <= head.last_seq:
        raise _Ignored(f"other hosts' events are in the stream before stream sequence {head.last_seq}")


async def _first_sequence(js: JetStreamContext, filters: list[str], start: int) -> int | None:
    """The stream sequence of the first message on `filters` from `start` (None: not read)."""
    found: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def first(message: Any) -> None:
        if not found.done():
            found.set_result(int(message.metadata.sequence.stream))

    config = js_api.ConsumerConfig(filter_subjects=filters, headers_only=True, opt_start_seq=start)
    try:
        subscription = await js.subscribe(
            "",
            stream=STREAM,
            cb=first,
            ordered_consumer=True,
            deliver_policy=js_api.DeliverPolicy.BY_START_SEQUENCE,
            config=config,
        )
    except Exception:
        return None
    try:
        return await asyncio.wait_for(found, FOREIGN_WAIT_S)
    except TimeoutError:
        return None
    finally:
        with contextlib.suppress(Exception):
            await subscription.unsubscribe()


async def _state(
    js: JetStreamContext, head: SnapshotHead, subjects: dict[str, int], keys: dict[str, int]
) -> DashboardState:
    prefix = f"{KV_PREFIX}.{head.host}."
    values = await _read(
        js,
        f"{prefix}>",
        sum(1 for key in keys if key.startswith(prefix)),
        MAX_SNAPSHOT_BYTES + MAX_HEAD_BYTES,
    )
    parts: list[bytes] = []
    for n, digest in enumerate(head.parts):
        part = values.get(f"{KV_PREFIX}.{_part_key(head.host, n)}")
        if part is None or hashlib.sha256(part).hexdigest() != digest:
            raise _Ignored(f"part {n} is missing or does not match its head (written again meanwhile?)")
        parts.append(part)
    data = b"".join(parts)
    if len(data) != head.size:
        raise _Ignored(f"its parts hold {len(data):,} bytes, its head says {head.size:,}")
    try:
        state = await asyncio.to_thread(state_from_bytes, data, MAX_SNAPSHOT_BYTES)
    except SnapshotRefused as refused:
        raise _Ignored(str(refused)) from None
    for sid, session in state.sessions.items():
        subject = f"{SUBJECT_PREFIX}.{head.host}.{subject_token(sid)}.events"
        if subjects.get(subject, 0) < session.event_count:
            raise _Ignored(
                f"it holds session {sid[:64]!r}, which the stream does not hold as host {head.host}'s"
            )
    return state
