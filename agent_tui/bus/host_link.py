"""`BusLink`: one process's connection to the bus, kept up in the background, and said when it
goes away and comes back.

Invariants:
- `open()` connects once and raises `BusUnreachable` (one sentence, naming the URL without its
  secret) when that fails; `open_in_background()` never raises: it keeps trying, with a growing
  pause up to `MAX_RETRY_S`, so an agent never waits for the bus;
- once connected, the client reconnects by itself for ever; `connected` is set while the link is
  up, `lost` while it is down; every change is said once through `say` (a line on stderr) and
  to the `watchers` (the publisher, the presence);
- no secret reaches `say`, an exception's message or a log: every reason goes through
  `credentials.scrub`;
- on the private server of this machine (`settings.local_record`), each reconnect attempt reads
  its record again and follows it to a new address (a server restarted by the next `serve` on
  another port); it signs in with the record's nkey seed file, read again at each attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import nats
from nats.aio.client import Client, Server
from nats.js import JetStreamContext

from agent_tui.bus.attach_target import BusUnreachable, quiet
from agent_tui.bus.config import BusSettings
from agent_tui.bus.credentials import bus_user, connect_options, describe_failure, scrub
from agent_tui.bus.presence import now
from agent_tui.bus.protocol import inbox_prefix

MAX_RETRY_S = 5.0
CONNECT_TIMEOUT_S = 3.0
RECONNECT_WAIT_S = 0.5
PUBLISH_WINDOW = 1024
"""At most this many events published and not yet acknowledged (`js.publish_async`)."""


Watcher = Callable[[bool], Awaitable[None] | None]


class BusLink:
    def __init__(self, settings: BusSettings, say: Callable[[str], None]) -> None:
        self.settings = settings
        self.say = say
        self.client: Client | None = None
        self.stream: JetStreamContext | None = None
        self.connected = asyncio.Event()
        self.lost = asyncio.Event()
        self.lost.set()
        self.away_since: str | None = None
        self.watchers: list[Watcher] = []
        self._retry: asyncio.Task[None] | None = None
        self._closing = False
        self.first_try = asyncio.Event()
        """Set once the background connect's first attempt has come out either way."""

    @property
    def url(self) -> str:
        return self.settings.shown_url()

    async def open(self) -> None:
        """Connect now. Raises BusUnreachable."""
        _hush_resets_said_elsewhere(asyncio.get_running_loop())
        try:
            options = connect_options(self.settings)
            options["inbox_prefix"] = inbox_prefix(bus_user(self.settings))
        except ValueError as error:  # BusConfigError: a missing variable, an unreadable file
            raise BusUnreachable(f"cannot reach the bus at {self.url}: {error}") from None
        servers = [part.strip() for part in (self.settings.url or "").split(",") if part.strip()]
        try:
            # One attempt that does not retry first: the kept client retries its first connect
            # for ever, and a server that is not there must be one sentence now.
            probe = await asyncio.wait_for(
                nats.connect(
                    servers=servers,
                    connect_timeout=CONNECT_TIMEOUT_S,
                    allow_reconnect=False,
                    max_reconnect_attempts=1,
                    error_cb=quiet,
                    **options,
                ),
                CONNECT_TIMEOUT_S * 3,
            )
            await probe.close()
            client = await nats.connect(
                servers=servers,
                connect_timeout=CONNECT_TIMEOUT_S,
                reconnect_time_wait=RECONNECT_WAIT_S,
                max_reconnect_attempts=-1,
                allow_reconnect=True,
                disconnected_cb=self._down,
                reconnected_cb=self._up,
                error_cb=self._error,
                closed_cb=self._down,
                reconnect_to_server_handler=self._follow_record if self.settings.local_record else None,
                **options,
            )
        except Exception as error:
            raise BusUnreachable(describe_failure(self.settings, error)) from None
        self.client = client
        self.stream = client.jetstream(publish_async_max_pending=PUBLISH_WINDOW * 2)
        await self._up()

    def open_in_background(self) -> None:
        """Connect when the bus can be reached, trying again until then (never raises)."""
        if self._retry is None:
            self._retry = asyncio.get_running_loop().create_task(self._keep_trying())

    async def _keep_trying(self) -> None:
        pause = 0.2
        told = False
        while not self._closing:
            try:
                await self.open()
                if not told:
                    self.say(f"connected to the bus at {self.url}")
                self.first_try.set()
                return
            except BusUnreachable as error:
                if not told:
                    self.away_since = now()
                    self.say(f"{error}; agents go on and log; trying again in the background")
                    told = True
                self.first_try.set()
            await asyncio.sleep(pause)  # a retry's pause, not a test's wait
            pause = min(pause * 2, MAX_RETRY_S)

    async def _up(self) -> None:
        was_away = self.away_since
        self.lost.clear()
        self.connected.set()
        if was_away is not None:
            self.say(
                f"bus at {self.url} is back (away since {was_away}); publishing what was logged meanwhile"
            )
        await self._tell(True)

    async def _down(self) -> None:
        if self.connected.is_set():
            self.connected.clear()
            self.lost.set()
            self.away_since = now()
            if not self._closing:
                self.say(f"bus at {self.url} is away; agents go on and log; trying again in the background")
            await self._tell(False)

    async def _tell(self, up: bool) -> None:
        for watcher in list(self.watchers):
            result = watcher(up)
            if result is not None:
                await result

    def _follow_record(self, _servers: list[Server], _info: dict[str, Any]) -> tuple[Server | None, float]:
        """Before each reconnect attempt: the private server's record, followed if it moved."""
        from agent_tui.bus.local_server import read_local_server

        record = read_local_server()
        client = self.client
        if record is None or client is None:
            return None, RECONNECT_WAIT_S
        with contextlib.suppress(Exception):
            if record.url != self.settings.url:
                client.set_server_pool([record.url])
            self.settings = record.settings(self.settings, follow=True)
            # The client signs each nonce with the seed file read again, but took the public key
            # it names once: a server started afresh (a new key, maybe on the same port) needs
            # it taken again.
            client._nkeys_seed = str(self.settings.creds_file)
            client._setup_nkeys_connect()
        return None, RECONNECT_WAIT_S

    async def _error(self, error: Exception) -> None:
        if isinstance(error, (nats.errors.StaleConnectionError, ConnectionError, OSError)):
            return  # a drop: the disconnected callback says it
        text = scrub(str(error) or type(error).__name__, self.settings)
        if "Authorization" in text or "authorization" in text:
            self.say(f"the bus at {self.url} refused the credentials")

    async def settle(self) -> None:
        """Wait for a background connect's first attempt to come out (it is bounded by its own
        timeouts): a run that ends at once still publishes to a bus that was there all along."""
        if self._retry is not None and not self.first_try.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.first_try.wait(), CONNECT_TIMEOUT_S * 4)

    async def close(self) -> None:
        self._closing = True
        if self._retry is not None:
            self._retry.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._retry
        if self.client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.drain(), timeout=2.0)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.close(), timeout=CLOSE_TIMEOUT_S)


CLOSE_TIMEOUT_S = 5.0
"""How long closing the connection may take: a client stuck in a reconnect never holds up the
host's exit."""


def _hush_resets_said_elsewhere(loop: asyncio.AbstractEventLoop) -> None:
    """Keep a refused connection's reset off stderr: when the server refuses a login it closes
    the socket, and the stream's `closed` future nats-py never awaits can be collected holding
    that `ConnectionResetError` ("Future exception was never retrieved", a traceback), after the
    refusal was already said in one sentence. Every other unhandled error still reaches the
    handler that was there before (the default one when none was)."""
    before = loop.get_exception_handler()
    if getattr(before, "hushes_resets", False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if isinstance(error, ConnectionError) and "never retrieved" in str(context.get("message", "")):
            return
        if before is not None:
            before(loop, context)
        else:
            loop.default_exception_handler(context)

    handler.hushes_resets = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)
