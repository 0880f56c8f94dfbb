"""`Publisher`: every event a host logs goes on the bus after it is logged, in order, once.

Invariants:
- `heard` is the engine's listener: called after the event's JSONL append, it only notes the
  session's newest sequence and queues the line; it never waits, never raises, never slows or
  stops an agent, whatever the bus does;
- the line is published exactly as logged, on `events_subject(host, session)`, with
  `Nats-Msg-Id: <sessionId>:<sequence>`; at most `window` publishes are awaiting their
  acknowledgement at once (`js.publish_async`), acknowledgements are settled oldest first, so
  `marks[S]` ("published up to") only ever grows and every sequence up to it is in the stream;
- a failed or late acknowledgement, or the link going away, is an outage: the queue is dropped
  (the logs hold every event), the publisher waits for the link, then republishes each session
  from its log past its mark; the stream's duplicate window drops what it had already;
- at start the mark of a session is the larger of the marks file (`.bus-marks/<host>.json` in
  the sessions directory, kept for the stream it was written for) and the stream's own last
  message on the session's subject, so a host killed with `kill -9` publishes only what is
  missing;
- `refill` publishes a session's logged events again on a dashboard's request (the stream lost
  them): it is done by the same loop, from the log, with the same subject and message id as
  every publish (`_from_log`), so it keeps each session's order of publishes, leaves the marks
  as they are, and the stream's duplicate window drops what it still remembers; it returns
  once the stream acknowledged all of them;
- every acknowledged publish the stream stored anew (not a duplicate) goes to `snapshots` (the
  host's `SnapshotKeeper`), oldest first, with the line and its stream sequence;
- the stream (`protocol.STREAM`) is created, when it is missing, with the configured limits and
  a duplicate window of `DUPLICATE_WINDOW_S` before anything is published; one that exists is
  left as it is (a host never updates, purges or deletes it: its credentials need not allow it);
- a stream that disappears under a running host (deleted on the server) is created again and
  every session is published again from its log, from its first event; that is said in one
  line through the link's `say`, once per disappearance.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from nats.js.api import DiscardPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError

from agent_tui.bus.config import BusSettings
from agent_tui.bus.host_link import PUBLISH_WINDOW, BusLink
from agent_tui.bus.protocol import (
    ALL_EVENTS,
    DUPLICATE_WINDOW_S,
    MSG_ID_HEADER,
    STREAM,
    events_subject,
    message_id,
    sequence_of,
)
from agent_tui.bus.snapshots import SnapshotKeeper
from agent_tui.events import Event
from agent_tui.private_files import UntrustedStateError, read_trusted, write_private
from agent_tui.store.jsonl import iter_lines

ACK_TIMEOUT_S = 5.0
MAX_QUEUED = 200_000
"""Events queued in memory before the publisher reads the logs instead (a slow bus)."""
MARKS_EVERY_S = 1.0
STREAM_DELETED = f"$JS.EVENT.ADVISORY.STREAM.DELETED.{STREAM}"
"""The server's advisory when the stream is deleted (a host's credentials may subscribe to it)."""


class _Outage(Exception):
    pass


class RefillFailed(Exception):
    """A refill's publishes were not acknowledged (the bus went away meanwhile)."""


@dataclass
class _Refill:
    """A session's sequences `first`..`last` to publish again, and who waits for them."""

    session_id: str
    first: int
    last: int
    done: asyncio.Future[tuple[int, int]]
    """(published, stored anew), once every publish is acknowledged."""
    acks: list[asyncio.Future[Any]] = field(default_factory=list)


class Publisher:
    def __init__(self, host: str, sessions_dir: Path, link: BusLink, settings: BusSettings) -> None:
        self.host = host
        self.sessions_dir = sessions_dir
        self.link = link
        self.settings = settings
        self.latest: dict[str, int] = {}
        """Each session's newest logged sequence."""
        self.marks: dict[str, int] = {}
        """Each session's "published up to": every sequence up to it is acknowledged."""
        self.stream_sequences: dict[str, int] = {}
        """The stream sequence of each session's last acknowledged event (this run)."""
        self._sent: dict[str, int] = {}
        self._queue: deque[tuple[str, int, bytes]] = deque()
        self._live = False  # the queue holds every event past `_sent` (else: read the logs)
        self._window: deque[tuple[str, int, asyncio.Future[Any], float, bytes]] = deque()
        self._wake = asyncio.Event()
        self._progress = asyncio.Event()
        self._stream_id: str | None = None
        self._marks_dirty = False
        self._marks_written = 0.0
        self._refills: deque[_Refill] = deque()
        self._acks: list[asyncio.Future[Any]] | None = None  # where `_send` also puts its futures
        self._counting: set[asyncio.Task[None]] = set()
        self._stream_deleted = False  # the server said so (`STREAM_DELETED`)
        self._made_again = False  # the stream was found gone: say so once it is made again
        self._advisory_client: Any = None
        self.snapshots: SnapshotKeeper | None = None
        """Hears every acknowledged publish that is not a duplicate, in stream order."""
        self.before: Callable[[], Awaitable[None]] | None = None
        """Awaited before each batch is published (the host: its control subject is served
        before a permission request it could answer goes out)."""
        link.watchers.append(self._link_changed)

    # -- the engine's side ---------------------------------------------------------------------
    def heard(self, event: Event) -> None:
        session_id = event.session_id
        self.latest[session_id] = event.sequence
        if self._live:
            if len(self._queue) >= MAX_QUEUED:
                self._live = False
                self._queue.clear()
            else:
                self._queue.append((session_id, event.sequence, event.to_json()))
        self._wake.set()

    def note_stored(self, session_id: str, last_sequence: int) -> None:
        """A session whose log already holds `last_sequence` events (one reopened at start)."""
        if last_sequence > self.latest.get(session_id, 0):
            self.latest[session_id] = last_sequence
            self._wake.set()

    async def refill(self, session_id: str, first: int, last: int) -> tuple[int, int]:
        """Publish the session's logged sequences `first`..`last` again; once the stream
        acknowledged them, (how many were published, how many it stored anew).

        Raises:
            RefillFailed: the bus went away before every publish was acknowledged.
        """
        done: asyncio.Future[tuple[int, int]] = asyncio.get_running_loop().create_future()
        self._refills.append(_Refill(session_id, first, last, done))
        self._wake.set()
        return await done

    def published_all(self) -> bool:
        return all(self.marks.get(sid, 0) >= seq for sid, seq in self.latest.items())

    async def flushed(self, timeout: float) -> bool:
        """Wait until every logged event is acknowledged, or `timeout` passed; whether it was."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.published_all():
            left = deadline - loop.time()
            if left <= 0:
                return False
            self._progress.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._progress.wait(), left)
        return True

    # -- the loop ------------------------------------------------------------------------------
    async def run(self) -> None:
        """Publish for ever (cancel to stop); outages are waited out."""
        while True:
            await self.link.connected.wait()
            try:
                if self._stream_id is None:
                    await self._ensure_stream()
                    await self._read_marks()
                await self._hear_deletion()
                await self._publish()
            except _Outage:
                self._drop_in_flight()
                if not self.link.connected.is_set():
                    continue
                if await self._stream_gone():
                    self._start_again()
                    continue
                await asyncio.sleep(0.2)  # a late ack on a live link: a retry's pause

    async def _stream_gone(self) -> bool:
        """Whether the stream is missing from a server that answers (deleted under this host)."""
        stream = self.link.stream
        if stream is None or self._stream_id is None:
            return False
        try:
            await stream.stream_info(STREAM)
        except NotFoundError:
            return True
        except Exception:
            return False  # not an answer: the outage is the link's
        return False

    def _start_again(self) -> None:
        """The stream was deleted: make it again and publish every log from its start."""
        self._made_again = True
        self._stream_id = None
        self.marks.clear()
        self.stream_sequences.clear()
        self._sent.clear()
        self._marks_dirty = True

    async def _hear_deletion(self) -> None:
        """Hear the server's advisory when the stream is deleted (once per client: it
        resubscribes after a reconnect), so an idle host makes it again too."""
        client = self.link.client
        if client is None or client is self._advisory_client:
            return

        async def deleted(_message: Any) -> None:
            self._stream_deleted = True
            self._wake.set()

        try:
            await client.subscribe(STREAM_DELETED, cb=deleted)
        except Exception as error:
            raise _Outage(str(error)) from None
        self._advisory_client = client

    async def _ensure_stream(self) -> None:
        stream = self.link.stream
        assert stream is not None
        config = StreamConfig(
            name=STREAM,
            subjects=[ALL_EVENTS],
            storage=StorageType.FILE,
            duplicate_window=DUPLICATE_WINDOW_S,
            max_age=self.settings.max_age_s,
            max_bytes=self.settings.max_bytes,
            discard=DiscardPolicy.OLD,
        )
        try:
            try:
                info = await stream.stream_info(STREAM)
            except NotFoundError:
                info = await stream.add_stream(config)
        except Exception as error:
            raise _Outage(str(error)) from None
        if self._made_again:
            self._made_again = False
            self.link.say(
                f"the stream {STREAM} was gone from the bus (deleted on the server?): made it "
                "again; publishing every session again from the logs"
            )
        self._stream_id = f"{STREAM}@{info.created}"
        if self.snapshots is not None:
            self.snapshots.began(info)

    async def _read_marks(self) -> None:
        """The marks of this stream from the marks file, raised to the stream's last messages."""
        kept: dict[str, int] = {}
        try:
            data = json.loads(read_trusted(self._marks_path()))
            if data.get("stream") == self._stream_id:
                kept = {str(k): int(v) for k, v in data.get("marks", {}).items()}
        except (OSError, ValueError, AttributeError, TypeError, UntrustedStateError):
            pass  # another user's marks in a shared folder say nothing: the stream's last messages do
        stream = self.link.stream
        assert stream is not None
        for session_id in list(self.latest):
            mark = kept.get(session_id, 0)
            try:
                last = await stream.get_last_msg(STREAM, events_subject(self.host, session_id))
                found = sequence_of((last.headers or {}).get(MSG_ID_HEADER, ""))
                if found is not None and found[0] == session_id:
                    mark = max(mark, found[1])
                    self.stream_sequences[session_id] = last.seq or 0
            except NotFoundError:
                pass
            except Exception as error:
                raise _Outage(str(error)) from None
            self.marks[session_id] = max(mark, self.marks.get(session_id, 0))
        self._sent = dict(self.marks)

    def _marks_path(self) -> Path:
        return self.sessions_dir / ".bus-marks" / f"{self.host}.json"

    def write_marks(self) -> None:
        """Keep the marks on disk (whole, by rename)."""
        if self._stream_id is None:
            return
        path = self._marks_path()
        try:
            write_private(path, orjson.dumps({"stream": self._stream_id, "marks": self.marks}))
        except OSError:
            return  # the stream's last messages say the same at the next start
        self._marks_dirty = False

    async def _publish(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if self._stream_deleted:
                self._stream_deleted = False
                raise _Outage("the stream was deleted")
            if self.before is not None:
                await self.before()
            if not self._live:
                self._live = True  # from now on the queue hears everything; the logs give the rest
                self._queue.clear()
                for session_id, latest in list(self.latest.items()):
                    if self._sent.get(session_id, 0) < latest:
                        await self._from_log(session_id, latest)
            while self._refills:
                await self._refill(self._refills[0])
                self._refills.popleft()
            await self._send_queued()
            if not self._live:
                continue
            self._settle_done()
            if self._marks_dirty and loop.time() - self._marks_written >= MARKS_EVERY_S:
                self._marks_written = loop.time()
                self.write_marks()
            if not self._queue and self._live:
                await self._idle(loop.time())

    async def _send_queued(self) -> None:
        """Send what the queue holds, in order, from the log where the queue was dropped."""
        while self._queue:
            session_id, sequence, line = self._queue.popleft()
            sent = self._sent.get(session_id, 0)
            if sequence <= sent:
                continue
            if sequence > sent + 1:  # the queue was dropped meanwhile: the log has the rest
                await self._from_log(session_id, sequence - 1)
            await self._send(session_id, sequence, line)
            if not self._live:
                return

    async def _idle(self, now: float) -> None:
        """Wait for an acknowledgement, a new event, or the marks' next write; raise when the
        oldest publish waits past its timeout."""
        self._wake.clear()
        if self._window:
            left = self._window[0][3] + ACK_TIMEOUT_S - now
            if left <= 0:
                raise _Outage("no acknowledgement")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), left)
        elif self._marks_dirty:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), MARKS_EVERY_S)
        else:
            await self._wake.wait()

    async def _refill(self, refill: _Refill) -> None:
        """Publish a refill's sequences from the log (an outage meanwhile: it is done again)."""
        session_id = refill.session_id
        sent = self._sent.get(session_id, 0)
        self._sent[session_id] = refill.first - 1
        refill.acks.clear()
        self._acks = refill.acks
        try:
            await self._from_log(session_id, refill.last)
        finally:
            self._acks = None
            refilled = self._sent.get(session_id, 0)
            # what was sent before still holds; past it only when the refill continued it
            self._sent[session_id] = max(sent, refilled) if sent >= refill.first - 1 else sent
        task = asyncio.get_running_loop().create_task(_count_acks(refill))
        self._counting.add(task)
        task.add_done_callback(self._counting.discard)

    async def _from_log(self, session_id: str, upto: int) -> None:
        """Publish the session's logged events past what was sent, up to `upto`."""
        path = self.sessions_dir / f"{session_id}.jsonl"
        sent = self._sent.get(session_id, 0)
        if not path.is_file():
            return
        for _, line, complete in iter_lines(path):  # lazily: a long log is never held whole
            if not complete or not line.strip():
                continue
            try:
                sequence = int(orjson.loads(line)["sequence"])
            except (ValueError, KeyError, TypeError):
                continue  # a line the store would not have written; hydration names it
            if sequence <= sent:
                continue
            if sequence > upto:
                break
            await self._send(session_id, sequence, line)
            sent = sequence

    async def _send(self, session_id: str, sequence: int, line: bytes) -> None:
        if not self.link.connected.is_set():
            raise _Outage("the link is down")
        stream = self.link.stream
        assert stream is not None
        try:
            future = await stream.publish_async(
                events_subject(self.host, session_id),
                line,
                headers={MSG_ID_HEADER: message_id(session_id, sequence)},
            )
        except Exception as error:
            raise _Outage(str(error)) from None
        future.add_done_callback(lambda _future: self._wake.set())  # an acknowledgement wakes the loop
        if self._acks is not None:
            self._acks.append(future)
        self._window.append((session_id, sequence, future, asyncio.get_running_loop().time(), line))
        self._sent[session_id] = sequence
        if len(self._window) >= PUBLISH_WINDOW:
            self._settle_done()
            if len(self._window) >= PUBLISH_WINDOW:
                await self._settle_oldest()

    def _settle_done(self) -> None:
        """Settle the acknowledged publishes at the head of the window (never waits)."""
        window = self._window
        while window and window[0][2].done():
            session_id, sequence, future, _, line = window[0]
            if future.cancelled():
                raise _Outage("the link went away")
            error = future.exception()
            if error is not None:
                raise _Outage(str(error))
            window.popleft()
            ack = future.result()
            if sequence > self.marks.get(session_id, 0):
                self.marks[session_id] = sequence
                self.stream_sequences[session_id] = int(getattr(ack, "seq", 0) or 0)
                self._marks_dirty = True
                self._progress.set()
            if self.snapshots is not None and not getattr(ack, "duplicate", False):
                self.snapshots.stored(int(ack.seq), line)

    async def _settle_oldest(self) -> None:
        """Wait for the oldest publish's acknowledgement (the window is full)."""
        _, _, future, sent_at, _ = self._window[0]
        left = max(0.0, sent_at + ACK_TIMEOUT_S - asyncio.get_running_loop().time())
        try:
            await asyncio.wait_for(asyncio.shield(future), left)
        except (TimeoutError, asyncio.CancelledError) as error:
            if isinstance(error, asyncio.CancelledError) and not future.cancelled():
                raise
            raise _Outage("no acknowledgement") from None
        except Exception as error:
            raise _Outage(str(error)) from None
        self._settle_done()

    def _drop_in_flight(self) -> None:
        for _, _, future, _, _ in self._window:
            if not future.done():
                future.cancel()
            elif not future.cancelled():
                future.exception()  # taken: asyncio would print each one left untaken
        self._window.clear()
        self._queue.clear()
        self._live = False
        self._sent = dict(self.marks)

    def _link_changed(self, up: bool) -> None:
        if not up:
            for _, _, future, _, _ in self._window:
                if not future.done():
                    future.cancel()  # the settle in progress sees an outage at once
        self._wake.set()


async def _count_acks(refill: _Refill) -> None:
    """Settle a refill's future once its publishes are acknowledged (or one failed)."""
    results = await asyncio.gather(*refill.acks, return_exceptions=True)
    if refill.done.done():
        return
    if any(isinstance(result, BaseException) for result in results):
        refill.done.set_exception(RefillFailed("the bus went away before the stream acknowledged them"))
        return
    stored = sum(1 for ack in results if not getattr(ack, "duplicate", False))
    refill.done.set_result((len(results), stored))
