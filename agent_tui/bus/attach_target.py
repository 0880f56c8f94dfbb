"""Where an attached dashboard finds the bus, and its connection to it.

`agent-tui attach --bus URL` names a server; `--bus local`, or nothing (and no `AGENT_TUI_BUS`),
means the private server `agent-tui serve` started on this machine, which records how to reach
it in the user's runtime directory (`local_record_path`).

Invariants:
- a `BusTarget` shows itself (`shown`, `str`, `repr`) without a password or a token: the URL's
  user info is dropped, a token is never printed; errors name the URL that way only;
- `connect` first makes one attempt that does not retry (so a server that is not there, a
  wrong URL or refused credentials is one `BusUnreachable` at once), then the connection the
  dashboard keeps, which reconnects for ever and says so through its callbacks;
- the local record is a JSON object with at least `url` (and maybe `token`); a missing or
  unreadable one is a `BusUnreachable` that says to start `agent-tui serve`.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import nats
from nats.aio.client import Client

BUS_ENV = "AGENT_TUI_BUS"
LOCAL = "local"
RECORD_NAME = "bus.json"
CONNECT_TIMEOUT_S = 3.0
RECONNECT_WAIT_S = 0.25
"""Between two reconnect attempts: a restarted server is caught up with soon after it is back."""


class BusUnreachable(Exception):
    """No bus at the target: the message is one sentence naming the URL (never a secret)."""


@dataclass(frozen=True)
class BusTarget:
    url: str
    token: str | None = field(default=None, repr=False)
    source: str = "--bus"
    """Where the URL came from (`--bus`, `$AGENT_TUI_BUS`, the local record's path)."""

    @property
    def shown(self) -> str:
        """The URL without its user info (a password, a token)."""
        return shown_url(self.url)

    def __str__(self) -> str:
        return self.shown

    def __repr__(self) -> str:
        return f"BusTarget({self.shown!r}, source={self.source!r})"


def shown_url(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an unreadable URL>"
    if parts.hostname is None:
        return url if "@" not in url else "<an unreadable URL>"
    if "@" not in parts.netloc:
        return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def local_record_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where `agent-tui serve` records its private server: `$XDG_RUNTIME_DIR/agent-tui/bus.json`,
    else a folder of this user's in the temporary directory."""
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime else Path(tempfile.gettempdir()) / f"agent-tui-{os.getuid()}"
    return base / "agent-tui" / RECORD_NAME if runtime else base / RECORD_NAME


def resolve_target(bus: str | None, environ: Mapping[str, str] | None = None) -> BusTarget:
    """`--bus URL|local` (None: `$AGENT_TUI_BUS`, else the local server's record)."""
    env = os.environ if environ is None else environ
    if bus is None and env.get(BUS_ENV):
        bus = env[BUS_ENV]
        source = f"${BUS_ENV}"
    else:
        source = "--bus"
    if bus is not None and bus != LOCAL:
        return BusTarget(bus, source=source)
    return read_local_record(local_record_path(env))


def read_local_record(path: Path) -> BusTarget:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BusUnreachable(
            f"no local bus: {path} does not exist (start one with `agent-tui serve`, or give --bus URL)"
        ) from None
    except (OSError, ValueError) as error:
        raise BusUnreachable(
            f"the local bus record {path} is not readable ({type(error).__name__})"
        ) from None
    url = record.get("url") if isinstance(record, dict) else None
    if not isinstance(url, str) or not url:
        raise BusUnreachable(f"the local bus record {path} names no url")
    token = record.get("token")
    return BusTarget(url, token if isinstance(token, str) and token else None, source=str(path))


Callback = Callable[[], Awaitable[None]]


async def connect(
    target: BusTarget,
    *,
    name: str,
    disconnected: Callback | None = None,
    reconnected: Callback | None = None,
) -> Client:
    """The dashboard's connection (see the module docstring).

    Raises:
        BusUnreachable: no server answers at the URL, or it refused the credentials.
    """

    async def quiet(_error: Exception) -> None:
        return None

    credentials = {"token": target.token} if target.token else {}
    try:
        probe = await asyncio.wait_for(
            nats.connect(
                target.url,
                allow_reconnect=False,
                max_reconnect_attempts=1,
                reconnect_time_wait=0.05,
                connect_timeout=int(CONNECT_TIMEOUT_S),
                error_cb=quiet,
                **credentials,
            ),
            CONNECT_TIMEOUT_S * 3,
        )
    except Exception as error:
        raise BusUnreachable(f"no bus at {target.shown}: {_why(error)}") from None
    await probe.close()

    async def on_disconnect() -> None:
        if disconnected is not None:
            await disconnected()

    async def on_reconnect() -> None:
        if reconnected is not None:
            await reconnected()

    try:
        return await asyncio.wait_for(
            nats.connect(
                target.url,
                name=name,
                max_reconnect_attempts=-1,
                reconnect_time_wait=RECONNECT_WAIT_S,
                connect_timeout=int(CONNECT_TIMEOUT_S),
                error_cb=quiet,
                disconnected_cb=on_disconnect,
                reconnected_cb=on_reconnect,
                **credentials,
            ),
            CONNECT_TIMEOUT_S * 3,
        )
    except Exception as error:
        raise BusUnreachable(f"no bus at {target.shown}: {_why(error)}") from None


def _why(error: BaseException) -> str:
    """What went wrong, in words that carry no secret (never the server's own text)."""
    text = type(error).__name__
    if "Authorization" in text or "authorization" in str(error).lower():
        return "the server refused the credentials"
    if isinstance(error, ConnectionRefusedError) or "NoServers" in text:
        return "nothing answers there"
    if isinstance(error, TimeoutError | asyncio.TimeoutError):
        return "it did not answer in time"
    if isinstance(error, OSError):
        return error.strerror or "the connection failed"
    return "the connection failed"
