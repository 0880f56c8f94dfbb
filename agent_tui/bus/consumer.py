"""`StreamFeed`: every host's events, read from the stream with an ordered consumer.

An attached dashboard reads `STREAM` (all of `ALL_EVENTS`) with one JetStream ordered consumer:
the server delivers the stream in order, and the client re-creates the consumer where it left
off when it sees a hole in the delivery. This feed adds what the dashboard needs on top.

Invariants:
- the feed remembers the last stream sequence it took; a message at or below it (a delivery the
  client repeats after re-creating its consumer) is skipped, so each stored message is looked
  at once;
- after a reconnect (`resume`) the consumer is made again from the next stream sequence, so an
  outage of the server (or of the network) loses nothing and repeats nothing;
- each message is checked before it is handed on: it must be one event's log line, its subject
  must be `agent-tui.<host>.<token>.events` with `token == subject_token(event.sessionId)`, and
  a session belongs to the first host that published it; anything else is reported once through
  `problem` (naming the subject and stream sequence) and never folded (a subject is split once,
  and its session's token and owner are checked at its first event: neither can change, so the
  next events of that session on that subject pass them as they are; any other session's event
  there is checked in full);
- events are handed to `deliver(host, event)` only through `SessionOrder`, so a session's events
  reach it once each and in sequence order, whatever the stream holds; a session left with a
  hole (or with events the gate dropped) is handed to the `HoleFiller`, which reads it again
  from the stream and, when the stream lost them, asks the host for them, so a hole never waits
  for ever unsaid;
- a stream that republishes, rewrites subjects, copies another stream or holds other subjects
  than `ALL_EVENTS` is said once through `problem` when the feed starts;
- `live` is set once the feed has taken every message the stream held when it started (or
  the stream was empty): from then on the dashboard shows what happens as it happens. Becoming
  live is a change of its own (`became_live`), told even when the last messages were held by
  the order gate and so folded nothing;
- a read that goes on from a state snapshot (`start_after`) folds exactly what a read from the
  start would fold after the snapshot's last sequence: the gate knows each of its sessions'
  next sequence and their host.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import NotFoundError

from agent_tui.bus.consumer_holes import HOLE_GRACE_S, AskHost, HoleFiller
from agent_tui.bus.consumer_order import DEFAULT_HOLD_LIMIT, SessionOrder
from agent_tui.bus.protocol import ALL_EVENTS, STREAM, SUBJECT_PREFIX, stream_oddities, subject_token
from agent_tui.events import Event, EventValidationError, event_from_json

STREAM_WAIT_S = 0.5
"""How often an attach that found no stream yet (no host ever published) looks again."""
IDLE_HEARTBEAT_S = 2.0
"""The consumer's idle heartbeat: the client re-creates a consumer that missed two."""
PENDING_MESSAGES = 1_000_000
"""Messages the client may buffer ahead of the fold (a fast start reads far ahead)."""


@dataclass(frozen=True)
class StartAt:
    """Where a read of the stream begins: its start (neither), a stream sequence, or a time."""

    sequence: int | None = None
    time: datetime | None = None


class StreamFeed:
    """Reads the events stream (see the module docstring).

    Args:
        js: the JetStream context of the dashboard's connection.
        deliver: called with (host, event) for each event that may be folded, in order.
        problem: called with one sentence for each message that is not a valid event.
        start: where to begin.
        became_live: called once, when the feed becomes `live`.
        hold_limit: events held per session while a hole waits (`SessionOrder`).
        hole_grace: seconds a hole may stay open before it is read again (`HoleFiller`).
        ask_host: asks a session's host to publish what the stream lost again (`HoleFiller`).
    """

    def __init__(
        self,
        js: JetStreamContext,
        deliver: Callable[[str, Event], None],
        problem: Callable[[str], None],
        *,
        start: StartAt | None = None,
        became_live: Callable[[], None] | None = None,
        hold_limit: int = DEFAULT_HOLD_LIMIT,
        hole_grace: float = HOLE_GRACE_S,
        ask_host: AskHost | None = None,
    ) -> None:
        self._js = js
        self._became_live = became_live
        self._deliver = deliver
        self._problem = problem
        self._start = start or StartAt()
        self.order = SessionOrder(from_anywhere=self._start != StartAt(), hold_limit=hold_limit)
        self.last_stream_sequence = 0
        """The last stream sequence taken (0: none yet)."""
        self.live = asyncio.Event()
        self.holes = HoleFiller(js, self.order, deliver, problem, self.live, ask=ask_host, grace=hole_grace)
        self._live_at: int | None = None
        self._subscription: JetStreamContext.PushSubscription | None = None
        self._host_of: dict[str, str] = {}
        self._subjects: dict[str, _Subject] = {}
        self._waiting: asyncio.Task[None] | None = None
        self._closed = False
        self.messages = 0
        """Messages taken (each stored message once)."""

    def host_of(self, session_id: str) -> str | None:
        return self._host_of.get(session_id)

    def start_after(self, host: str, last_seq: int, first_seq: int, expected: dict[str, int]) -> None:
        """Read on from a state snapshot of the stream's messages up to `last_seq`, all `host`'s
        (`snapshots.load_snapshot`), before `start`: its sessions are `host`'s and folded up to
        `expected` (each one's next sequence); the read begins at `last_seq + 1`."""
        self.order.from_anywhere = first_seq > 1
        for session_id, sequence in expected.items():
            self.order.prime(session_id, sequence)
            self._host_of[session_id] = host
        self.last_stream_sequence = last_seq

    async def start(self) -> None:
        """Begin reading; when no host has made the stream yet, keep looking in the background."""
        if not await self._subscribe(first=True):
            self._waiting = asyncio.create_task(self._wait_for_stream())

    async def _wait_for_stream(self) -> None:
        while not self._closed:
            await asyncio.sleep(STREAM_WAIT_S)
            with contextlib.suppress(Exception):  # the bus is away: `resume` comes later
                if await self._subscribe(first=True):
                    return

    async def resume(self) -> None:
        """After a reconnect: a new consumer from the next stream sequence."""
        if self._closed:
            return
        await self._drop_subscription()
        if self._waiting is not None and not self._waiting.done():
            return  # still waiting for a stream: that loop subscribes
        if not await self._subscribe(first=self.last_stream_sequence == 0 and self._live_at is None):
            self._waiting = asyncio.create_task(self._wait_for_stream())

    async def close(self) -> None:
        self._closed = True
        await self.holes.close()
        if self._waiting is not None:
            self._waiting.cancel()
            await asyncio.wait({self._waiting}, timeout=2.0)  # see PresenceWatch: bounded
        await self._drop_subscription()

    async def _drop_subscription(self) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()

    async def _subscribe(self, *, first: bool) -> bool:
        """Make the ordered consumer; False when the stream does not exist (yet)."""
        try:
            info = await self._js.stream_info(STREAM)
        except NotFoundError:
            return False
        if first:
            odd = stream_oddities(info.config, ALL_EVENTS)
            if odd:  # whoever made it so (a host may make a missing stream) could publish for another host
                self._problem(
                    f"the stream {STREAM} is not as agent-tui makes it ({'; '.join(odd)}): events may "
                    "show under another host than the one that sent them; ask the server's administrator "
                    "to make it again"
                )
            self._live_at = info.state.last_seq
            if info.state.first_seq > 1:
                self.order.from_anywhere = True  # the stream's limits cut its start
            if info.state.messages == 0 or self.last_stream_sequence >= info.state.last_seq:
                self._set_live()
        config = js_api.ConsumerConfig()
        # After a reconnect: on from the next stream sequence; else where the read was asked to begin.
        start = self.last_stream_sequence + 1 if self.last_stream_sequence else self._start.sequence
        if start is not None:
            policy = js_api.DeliverPolicy.BY_START_SEQUENCE
            config.opt_start_seq = start
        elif self._start.time is not None:
            policy = js_api.DeliverPolicy.BY_START_TIME
            config.opt_start_time = self._start.time
        else:
            policy = js_api.DeliverPolicy.ALL
        self._subscription = await self._js.subscribe(
            ALL_EVENTS,
            stream=STREAM,
            cb=self._on_message,
            ordered_consumer=True,
            deliver_policy=policy,
            config=config,
            idle_heartbeat=IDLE_HEARTBEAT_S,
            pending_msgs_limit=PENDING_MESSAGES,
            pending_bytes_limit=PENDING_MESSAGES * 1024,
        )
        return True

    async def _on_message(self, message: object) -> None:
        """One delivered message (a `nats.aio.msg.Msg`)."""
        sequence, pending = _positions(message.reply)  # type: ignore[attr-defined]
        if sequence <= self.last_stream_sequence:
            return
        self.last_stream_sequence = sequence
        self.messages += 1
        self._check(message.subject, message.data, sequence)  # type: ignore[attr-defined]
        if not self.live.is_set() and (
            pending == 0 or (self._live_at is not None and sequence >= self._live_at)
        ):
            self._set_live()

    def _set_live(self) -> None:
        if self.live.is_set():
            return
        self.live.set()
        if self._became_live is not None:
            self._became_live()

    def _check(self, subject: str, data: bytes, sequence: int) -> None:
        place = self._subjects.get(subject)
        if place is None:
            parts = subject.split(".")
            if len(parts) != 4 or parts[0] != SUBJECT_PREFIX or parts[3] != "events":
                self._problem(f"{_where(subject, sequence)}: not an events subject; skipped")
                return
            place = self._subjects[subject] = _Subject(host=parts[1], token=parts[2])
        try:
            event = event_from_json(data)
        except EventValidationError as error:
            self._problem(f"{_where(subject, sequence)}: not an event ({error}); skipped")
            return
        session_id = event.session_id
        host = place.host
        if session_id != place.session_id:  # not this subject's session as checked before
            if subject_token(session_id) != place.token:
                self._problem(
                    f"{_where(subject, sequence)}: holds an event of session {session_id!r}; skipped"
                )
                return
            owner = self._host_of.setdefault(session_id, host)
            if owner != host:
                self._problem(
                    f"{_where(subject, sequence)}: session {session_id} belongs to host {owner}; skipped"
                )
                return
            place.session_id = session_id
        ready = self.order.offer(event)
        for next_event in ready:
            self._deliver(host, next_event)
        if not ready and self.order.open(session_id):
            self.holes.watch(session_id, host)


@dataclass(slots=True)
class _Subject:
    """What the feed knows of one subject it read: its host and session token, and the session
    whose events on it passed the token and ownership checks (a session's owner never changes,
    so a later event of that session on that subject passes them again)."""

    host: str
    token: str
    session_id: str | None = None


def _where(subject: str, sequence: int) -> str:
    return f"{subject} (stream sequence {sequence})"


def _positions(reply: str) -> tuple[int, int]:
    """(stream sequence, messages pending) of a delivery's reply subject, read as the client's
    `Msg.metadata` reads it (`$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer
    seq>.<time>.<pending>`, or the form with a domain and an account hash before the stream),
    without building the metadata object on the path taken for every event."""
    tokens = reply.split(".")
    if len(tokens) == 9:
        return int(tokens[5]), int(tokens[8])
    return int(tokens[7]), int(tokens[10])
