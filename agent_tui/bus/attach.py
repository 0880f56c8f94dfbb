"""`AttachedBus`: an attached dashboard's view of every host on the bus, and its controls.

It connects to the bus (`attach_target`), reads the events stream (`StreamFeed`), follows the
hosts' presence (`PresenceWatch`) and asks hosts for actions (`BusCommands`). It runs no
agent and owns nothing on a host: closing it stops nothing.

Invariants:
- its name is held in `NAMES_BUCKET` (a `NameClaim` of kind `dashboard`, renewed within the
  bucket's TTL) from `open` until `close`, which lets it go; a name another process holds is
  refused at `open` (`BusUnreachable` with the holder's details; a default name is drawn again
  instead); credentials that may not write the bucket leave the name unheld, said once in
  `problems`;
- what its credentials may not do is decided host by host (`rights`, a `ControlRights`), each
  host when it is first seen (a heartbeat or an event) and the hosts present at `open` before
  `open` returns: a dashboard refused on every host is `read_only`, and a host whose control
  subject was refused is refused again without sending;
- a hole in a session that the stream cannot fill is asked of its host (`republish`, once per
  hole, unless the dashboard may not ask it), whose log is the whole history;
- `state` is folded by the one reducer (`apply_event`, or the `fold` a test wraps), only with
  what `StreamFeed` hands on: each session's events once, in sequence order, so `state` equals
  the fold of the hosts' logs (`replay --dump state`) up to what the stream held; reading the
  whole stream (no `start`), it begins from the newest state snapshot a host keeps that checks
  out against the stream (`snapshots.load_snapshot`), folding only what came after it: the same
  state; a snapshot it cannot use is said in `problems` and the stream is read from its start;
- every session has the host that published it (`host_of`); a host is listed (`hosts`) from its
  first heartbeat or its first event, whichever comes first;
- `connected` is False from a disconnect until the reconnect; on the reconnect the feed and the
  presence watch start again where they were, so the state catches up with no loss and no
  repeat;
- listeners hear every folded event and every other change (presence, connection, a problem)
  on the loop the bus runs on; a listener's exception is not the bus's (it is dropped from the
  listeners and recorded in `problems`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from nats.aio.client import Client
from nats.js import JetStreamContext

from agent_tui.bus.attach_presence import HostPresence, PresenceWatch
from agent_tui.bus.attach_target import BusTarget, BusUnreachable, connect
from agent_tui.bus.consumer import StartAt, StreamFeed
from agent_tui.bus.consumer_holes import HOLE_GRACE_S
from agent_tui.bus.consumer_order import DEFAULT_HOLD_LIMIT
from agent_tui.bus.control_rights import ControlRights
from agent_tui.bus.presence import BusPresence, NameTaken, machine, now, own_claim
from agent_tui.bus.protocol import (
    DEFAULT_CONTROL_TIMEOUT_S,
    DEFAULT_HEARTBEAT_S,
    DEFAULT_PRESENCE_TTL_S,
    DUPLICATE_WINDOW_S,
    Caller,
    name_from,
)
from agent_tui.bus.remote import BusCommands
from agent_tui.bus.snapshots import load_snapshot
from agent_tui.events import Event
from agent_tui.reducer import DashboardState, apply_event
from agent_tui.runtime.commands import Republish

Fold = Callable[[DashboardState, Event], object]
Listener = Callable[[Event | None], None]
MAX_PROBLEMS = 100
FIRST_READ_S = 30.0
"""How long `open` waits, at most, for the hosts on the bus when it must decide them one by one
(the client's own timeouts end a read the server refuses well before)."""
NAME_DRAWS = 3
"""How many default names a dashboard tries before it says the last one is taken."""


@dataclass(frozen=True)
class HostView:
    """A host as the dashboard lists it."""

    name: str
    reachable: bool
    unreachable_since: datetime | None
    presence: HostPresence | None
    left_at: datetime | None = None


def dashboard_name() -> str:
    """This dashboard's name on the bus: the machine's, `-dash-`, and a short random suffix."""
    return f"{name_from(machine())[:48]}-dash-{secrets.token_hex(3)}"


class AttachedBus:
    """Every host on the bus, seen and controlled from one dashboard (see the module docstring).

    Args:
        target: the bus.
        start: where the read of the stream begins (default: its start).
        fold: the reducer step (tests wrap `apply_event` to watch what reaches it).
        presence_ttl: seconds without a heartbeat that make a host unreachable (default: the
            presence bucket's TTL).
        control_timeout: seconds a control request waits for its host's reply.
        name: this dashboard's name on the bus (default: `dashboard_name()`).
        hold_limit: events held per session while a hole in its sequence waits (`SessionOrder`).
        hole_grace: seconds a hole may stay open before it is read again from the stream.
        snapshots: whether to begin from a host's state snapshot (else the stream's start).
    """

    def __init__(
        self,
        target: BusTarget,
        *,
        start: StartAt | None = None,
        fold: Fold = apply_event,
        presence_ttl: float | None = None,
        control_timeout: float = DEFAULT_CONTROL_TIMEOUT_S,
        name: str | None = None,
        hold_limit: int = DEFAULT_HOLD_LIMIT,
        hole_grace: float = HOLE_GRACE_S,
        snapshots: bool = True,
    ) -> None:
        self.target = target
        self._snapshots = snapshots
        self._holes = (hold_limit, hole_grace)
        self.name = name or dashboard_name()
        self._name_given = name is not None
        self._name: BusPresence | None = None
        self._name_beat: asyncio.Task[None] | None = None
        self.rights: ControlRights | None = None
        self.state = DashboardState()
        self.snapshot_seq = 0
        """The stream sequence of the state snapshot the dashboard started from (0: none)."""
        self._fold = fold
        self._start = start
        self._presence_ttl = presence_ttl
        self._control_timeout = control_timeout
        self._listeners: tuple[Listener, ...] = ()
        self._event_hosts: dict[str, None] = {}  # hosts seen through their events, in order
        self.problems: list[str] = []
        self.connected = False
        self.disconnected_since: datetime | None = None
        self._connection: Client | None = None
        self._feed: StreamFeed | None = None
        self._presence: PresenceWatch | None = None
        self._control: BusCommands | None = None
        self._closed = False

    # -- opening and closing -----------------------------------------------------------------
    async def open(self) -> None:
        """Connect, then read the stream and follow presence in the background.

        Raises:
            BusUnreachable: no server at the target (or it refused the credentials), or the
                dashboard's name is held by another process.
        """
        connection = await connect(
            self.target,
            name=self.name,
            disconnected=self._disconnected,
            reconnected=self._reconnected,
            error=self._server_error,
        )
        self._connection = connection
        self.connected = True
        js = connection.jetstream()
        try:
            await self._hold_name(js)
        except NameTaken as taken:
            self._closed = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(connection.close(), 5)
            raise BusUnreachable(str(taken)) from None
        self.rights = rights = ControlRights(self.name, self.target.bus_user, self._changed)
        await rights.probe(connection)
        self._control = BusCommands(
            connection,
            Caller(dashboard=self.name, user=self.target.bus_user, host=machine()),
            timeout=self._control_timeout,
        )
        await self._follow(js, rights)

    async def _follow(self, js: JetStreamContext, rights: ControlRights) -> None:
        """Follow presence and read the stream; a dashboard with rights on some hosts only
        decides the hosts already present before the first event is read."""
        hold_limit, hole_grace = self._holes
        loaded = None
        if self._start is None and self._snapshots:  # the newest state snapshot a host keeps that checks out
            try:
                loaded = await load_snapshot(js, self._problem)
            except Exception as error:  # a failure to read them is one more snapshot not used
                self._problem(
                    f"state snapshots could not be read ({_failure_kind(error)}): the stream is read from its start"
                )
        self._feed = StreamFeed(
            js,
            self._deliver,
            self._problem,
            start=self._start,
            became_live=self._changed,
            hold_limit=hold_limit,
            hole_grace=hole_grace,
            ask_host=self._ask_republish,
        )
        if loaded is not None:
            self.state = loaded.state
            self.snapshot_seq = loaded.last_seq
            self._event_hosts[loaded.host] = None
            rights.see(loaded.host)
            self._feed.start_after(loaded.host, loaded.last_seq, loaded.first_seq, loaded.expected())
            self._tell(None)
        self._presence = PresenceWatch(js, self._changed, self._problem, ttl=self._presence_ttl)
        await self._presence.start()
        if not rights.everywhere:  # some hosts at most: decide the known ones before going on
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._presence.first_read(), FIRST_READ_S)
            await rights.decide(self._presence.hosts)
        await self._feed.start()

    async def _ask_republish(self, host: str, session_id: str, first: int, last: int) -> str | None:
        """Ask `host` to publish what the stream lost of a session again (`HoleFiller`): None
        once it did, else why not, as a clause."""
        if self.control_refusal(host) is not None:
            return f"this dashboard is read-only for host {host} and cannot ask it to publish them again"
        outcome = await self.control.send(host, Republish(sessionId=session_id, first=first, last=last))
        if not outcome.answered:
            return f"host {host} did not answer when asked to publish them again"
        if not outcome.ok:
            return f"host {host} cannot publish them again ({outcome.message})"
        if outcome.detail.get("stored") == 0:
            return (
                f"host {host} published them again but the stream dropped them as duplicates "
                f"(it remembers a message id for {DUPLICATE_WINDOW_S / 60:.0f} minutes)"
            )
        return None

    def _server_error(self, error: Exception) -> None:
        if self.rights is not None:
            self.rights.heard(error)

    async def _hold_name(self, js: JetStreamContext) -> None:
        """Claim this dashboard's name and keep renewing it (see the module docstring).

        Raises:
            NameTaken: another process holds the name (after `NAME_DRAWS` default names).
        """
        for draw in range(NAME_DRAWS):
            claim = own_claim(self.name, "dashboard", now())
            holder = BusPresence(
                js,
                claim,
                self._presence_ttl or DEFAULT_PRESENCE_TTL_S,
                hint="give this dashboard another name",
            )
            try:
                await holder.claim_name()
                break
            except NameTaken:
                if self._name_given or draw == NAME_DRAWS - 1:
                    raise
                self.name = dashboard_name()
            except Exception as error:  # not allowed to write the bucket: watch without a name
                self._problem(
                    f"this dashboard's name {self.name} is not held on the bus ({_failure_kind(error)})"
                )
                return
        ttl = DEFAULT_PRESENCE_TTL_S
        if holder.names is not None:
            with contextlib.suppress(Exception):
                ttl = (await holder.names.status()).ttl or ttl
        self._name = holder
        self._name_beat = asyncio.create_task(holder.heartbeat(None, min(DEFAULT_HEARTBEAT_S, ttl / 3)))

    async def close(self) -> None:
        """Stop reading, let go of the name and close the connection; nothing on any host is
        stopped."""
        self._closed = True
        if self.rights is not None:
            await self.rights.close()
        if self._feed is not None:
            await self._feed.close()
        if self._presence is not None:
            await self._presence.close()
        if self._name_beat is not None:
            self._name_beat.cancel()
            await asyncio.wait({self._name_beat}, timeout=2.0)
        if self._name is not None and self.connected:
            await self._name.release()
        if self._connection is not None:
            closing = asyncio.ensure_future(self._connection.close())
            await asyncio.wait({closing}, timeout=5)  # bounded, whatever the client waits for

    async def _disconnected(self) -> None:
        if self._closed or not self.connected:
            return
        self.connected = False
        self.disconnected_since = datetime.now(UTC)
        if self._presence is not None:
            self._presence.pause()
        self._changed()

    async def _reconnected(self) -> None:
        if self._closed:
            return
        self.connected = True
        self.disconnected_since = None
        self._changed()
        if self._feed is not None:
            await self._feed.resume()
        if self._presence is not None:
            await self._presence.resume()

    # -- what it knows -----------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        """Whether `open` connected (and `close` did not run yet)."""
        return self._connection is not None and not self._closed

    @property
    def control(self) -> BusCommands:
        assert self._control is not None, "open the bus first"
        return self._control

    @property
    def feed(self) -> StreamFeed:
        assert self._feed is not None, "open the bus first"
        return self._feed

    @property
    def live(self) -> bool:
        """Whether the state has caught up with what the stream held at attach time."""
        return self._feed is not None and self._feed.live.is_set()

    def host_of(self, session_id: str) -> str | None:
        return self._feed.host_of(session_id) if self._feed is not None else None

    def host(self, name: str) -> HostView:
        presence = self._presence.hosts.get(name) if self._presence is not None else None
        if presence is None:
            return HostView(name, reachable=False, unreachable_since=None, presence=None)
        return HostView(name, presence.reachable, presence.unreachable_since, presence, presence.left_at)

    def hosts(self) -> list[HostView]:
        """Every host known, by name."""
        names = set(self._event_hosts)
        if self._presence is not None:
            names |= set(self._presence.hosts)
        return [self.host(name) for name in sorted(names)]

    @property
    def read_only(self) -> bool:
        """Whether its credentials may publish on no known host's control subject."""
        return self.rights is not None and self.rights.read_only

    def control_refusal(self, host: str | None = None) -> str | None:
        """Why this dashboard's credentials may not ask `host` (or any host) for an action, in
        one sentence; None: they may."""
        return self.rights.refusal(host) if self.rights is not None else None

    def reachable(self, host: str | None) -> bool:
        return host is not None and self.connected and self.host(host).reachable

    # -- listening ---------------------------------------------------------------------------
    def listen(self, listener: Listener) -> Callable[[], None]:
        """Hear every folded event (and None for any other change); returns the unsubscribe."""
        self._listeners += (listener,)
        return lambda: self._drop(listener)

    def _drop(self, listener: Listener) -> None:
        self._listeners = tuple(other for other in self._listeners if other is not listener)

    def _deliver(self, host: str, event: Event) -> None:
        if host not in self._event_hosts:
            self._event_hosts[host] = None
            if self.rights is not None:
                self.rights.see(host)
        self._fold(self.state, event)
        self._tell(event)

    def _changed(self) -> None:
        if self.rights is not None and self._presence is not None:
            for host in self._presence.hosts:
                self.rights.see(host)  # a host first seen is decided (once)
        self._tell(None)

    def _problem(self, sentence: str) -> None:
        self._note(sentence)
        self._tell(None)

    def _note(self, sentence: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:  # a flood of bad messages is said, not held
            self.problems.append(sentence)

    def _tell(self, event: Event | None) -> None:
        for listener in self._listeners:  # a tuple: a listener may unsubscribe as it hears
            try:
                listener(event)
            except Exception as error:
                self._drop(listener)
                self._note(f"a listener failed: {type(error).__name__}: {error}")


def _failure_kind(error: BaseException) -> str:
    """A failure's kind, without the server's words (they may quote a subject or a name)."""
    return "not permitted" if "ermission" in f"{type(error).__name__} {error}" else type(error).__name__
