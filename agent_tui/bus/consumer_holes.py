"""`HoleFiller`: a session's missing events, read again from the stream, so a hole in what the
order gate (`SessionOrder`) may fold does not wait for ever.

A hole opens when a session's events come out of order (a host's republish lands after later
events) or when the gate had to drop events (it holds at most `hold_limit` per session). The
first kind usually fills itself as the republish arrives; the second never does, because the
dropped events were already read. So a hole that is still open a while after it opened (and
after the feed caught up with the stream) is filled from the stream itself: the session's own
subject is read from its start, and every event at or past the gate's next sequence is offered
again, in sequence order.

Invariants:
- what is re-read goes through the same gate as everything else (`offer`), and only what the
  gate still wants (neither folded nor held), so a re-read never folds an event twice nor counts
  as a duplicate of the stream; only valid events of that session's subject are offered
  (anything else was reported when the feed first read it);
- one re-read per session at a time, and none again for the same hole (the same next sequence);
- a hole the stream cannot fill is asked of the host that owns the session, once (`ask`: the
  host publishes the missing events again from its log, which is the whole history), and the
  session is read again once the host replied; only a hole the host cannot fill either (it did
  not answer, its log does not hold them, the dashboard may not ask) is reported, once, through
  `problem` (the session, its host, the missing sequences, why the host did not fill them and
  how many later events wait), and stays held for a later republish;
- a re-read never raises into the feed: a failure (the bus away) is tried again at the next
  event that finds the hole still open.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js import api as js_api

from agent_tui.bus.consumer_order import SessionOrder
from agent_tui.bus.protocol import STREAM, events_subject
from agent_tui.events import Event, EventValidationError, counted, event_from_json

HOLE_GRACE_S = 2.0
"""How long a hole may stay open (once the feed is live) before the stream is read for it:
long enough for a republish in flight to land on its own."""
READ_TIMEOUT_S = 5.0
"""How long a re-read waits for the next message of the session before it stops."""

AskHost = Callable[[str, str, int, int], Awaitable[str | None]]
"""Asks `host` to publish session's `first`..`last` again: None once it did (and the stream
acknowledged them), else why not, as a clause (`host build-box did not answer`)."""


class HoleFiller:
    """Fills a session's hole from the stream (see the module docstring).

    Args:
        js: the JetStream context of the dashboard's connection.
        order: the gate whose holes are filled.
        deliver: called with (host, event) for each event the gate lets through.
        problem: called with one sentence for a hole the stream cannot fill.
        live: set once the feed has read what the stream held at attach time.
        ask: asks the session's host to publish the missing events again (None: nobody to ask).
        grace: seconds a hole may stay open before the stream is read for it.
    """

    def __init__(
        self,
        js: JetStreamContext,
        order: SessionOrder,
        deliver: Callable[[str, Event], None],
        problem: Callable[[str], None],
        live: asyncio.Event,
        *,
        ask: AskHost | None = None,
        grace: float = HOLE_GRACE_S,
    ) -> None:
        self._js = js
        self._order = order
        self._deliver = deliver
        self._problem = problem
        self._live = live
        self._ask = ask
        self._grace = grace
        self._reading: dict[str, asyncio.Task[None]] = {}
        self._tried: dict[str, int] = {}  # session → the next sequence its last re-read looked for
        self.refilled = 0
        """Events the re-reads let through the gate."""

    def watch(self, session_id: str, host: str) -> None:
        """`session_id` has a hole (or lost events to the gate's limit): fill it soon."""
        if session_id in self._reading or self._tried.get(session_id) == self._order.expected(session_id):
            return
        task = asyncio.create_task(self._fill(session_id, host))
        self._reading[session_id] = task
        task.add_done_callback(lambda _task: self._reading.pop(session_id, None))

    async def close(self) -> None:
        tasks = list(self._reading.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=2.0)

    async def _fill(self, session_id: str, host: str) -> None:
        await self._live.wait()
        await asyncio.sleep(self._grace)  # a republish in flight fills it meanwhile
        expected = self._order.expected(session_id)
        if expected is None or not self._order.open(session_id):
            return
        self._tried[session_id] = expected
        try:
            await self._reread(session_id, host, expected)
        except Exception:
            self._tried.pop(session_id, None)  # the bus away: the next event tries again
            return
        hole = self._order.hole(session_id)
        if hole is None:
            return
        why = None
        if self._ask is not None:
            try:
                why = await self._ask(host, session_id, hole[0], hole[1])
            except Exception as error:  # the connection closing under it, say
                why = f"asking host {host} to publish them again failed ({type(error).__name__})"
            if why is None:  # the host published them again: the stream holds them now
                with contextlib.suppress(Exception):
                    await self._reread(session_id, host, hole[0])
                hole = self._order.hole(session_id)
                why = f"they are still missing after host {host} published them again"
        if hole is not None:
            first, last, waiting = hole
            missing = f"event {first} is" if first == last else f"events {first}–{last} are"
            because = f", and {why}" if why else ""
            self._problem(
                f"session {session_id} of host {host}: {missing} not in the stream{because}; "
                f"{counted(waiting, 'later event')} held until the host publishes what is missing again"
            )

    async def _reread(self, session_id: str, host: str, expected: int) -> None:
        """Offer the gate what the stream holds of the session at or past `expected`."""
        found = await self._read(session_id, host, expected)
        self._order.reread(session_id)
        for event in sorted(found.values(), key=lambda e: e.sequence):
            if not self._order.wants(session_id, event.sequence):
                continue
            for ready in self._order.offer(event):
                self.refilled += 1
                self._deliver(host, ready)

    async def _read(self, session_id: str, host: str, expected: int) -> dict[int, Event]:
        """The session's events at or past `expected` that the stream holds, by sequence."""
        found: dict[int, Event] = {}
        subscription = await self._js.subscribe(
            events_subject(host, session_id),
            stream=STREAM,
            ordered_consumer=True,
            deliver_policy=js_api.DeliverPolicy.ALL,
        )
        try:
            while True:
                try:
                    message = await subscription.next_msg(timeout=READ_TIMEOUT_S)
                except NatsTimeout:
                    break
                with contextlib.suppress(EventValidationError):
                    event = event_from_json(message.data)
                    if event.session_id == session_id and event.sequence >= expected:
                        found.setdefault(event.sequence, event)
                if message.metadata.num_pending == 0:
                    break
        finally:
            with contextlib.suppress(Exception):
                await subscription.unsubscribe()
        return found
