"""Where an attached dashboard finds the bus, and its connection to it.

`agent-tui attach --bus URL` names a server (else `$AGENT_TUI_BUS`, else `[bus] url`, the host's
`config.bus_settings`); `--bus local`, or none of them, means the private server `agent-tui
serve` started on this machine, which records how to reach it in the user's runtime directory
(`local_server.local_server_file()`).

Invariants:
- a `BusTarget` shows itself (`shown`, `str`, `repr`) without a password or a token: the URL's
  user info is dropped, a token is never printed; errors name the URL that way only;
- `connect` first makes one attempt that does not retry (so a server that is not there, a
  wrong URL or refused credentials is one `BusUnreachable` at once), then the connection the
  dashboard keeps, which reconnects for ever and says so through its callbacks;
- a missing or unreadable local record is a `BusUnreachable` that says to start `agent-tui
  serve`; a wrong setting is one too, in the config's own words (`PATH:LINE: bus.KEY: …`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import nats
from nats.aio.client import Client

from agent_tui.bus.protocol import inbox_prefix, name_from, valid_user
from agent_tui.providers.config import Config, ConfigError, load_config

CONNECT_TIMEOUT_S = 3.0
RECONNECT_WAIT_S = 0.25
"""Between two reconnect attempts: a restarted server is caught up with soon after it is back."""


class BusUnreachable(Exception):
    """No bus at the target: the message is one sentence naming the URL (never a secret)."""


def _login_user() -> str:
    from agent_tui.bus.presence import user

    return name_from(user())


@dataclass(frozen=True)
class BusTarget:
    url: str
    options: dict[str, Any] = field(default_factory=dict, repr=False)
    """The client's credentials (`credentials.connect_options`: a token, a user and password,
    an nkey seed or creds file): never shown."""
    source: str = "--bus"
    """Where the URL came from (`--bus`, `$AGENT_TUI_BUS`, `[bus] url`, the local record)."""
    user: str | None = None
    """The dashboard's user on the bus (`credentials.bus_user`; None: the user of the
    credentials, else the login name): see `bus_user`."""

    @property
    def bus_user(self) -> str:
        """The suffix of the control subjects this dashboard publishes on and of its reply
        inboxes (`_INBOX_<user>`)."""
        if self.user is not None:
            return self.user
        given = self.options.get("user")
        return given if isinstance(given, str) and valid_user(given) else _login_user()

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


def resolve_target(bus: str | None, config: Config | None = None) -> BusTarget:
    """`--bus URL|local`, else `$AGENT_TUI_BUS`, else `[bus] url` of the config file, else the
    private server `agent-tui serve` recorded (`local_server_file()`); the credentials as the
    config file names them (`[bus] credentials_env`, `creds_file`), or the private server's nkey seed file.
    `config`: the config file as the command loaded it (None: read it here).

    Raises:
        BusUnreachable: a setting is wrong, or no private server is recorded.
    """
    from agent_tui.bus.config import ENV_BUS, LOCAL, BusConfigError, bus_settings
    from agent_tui.bus.credentials import bus_user, connect_options
    from agent_tui.bus.local_server import LocalServerError, local_server_file, read_local_server

    try:
        settings = bus_settings(config or load_config(), flag_url=bus)
    except (ConfigError, BusConfigError) as error:
        raise BusUnreachable(str(error)) from None
    source = "--bus" if bus else (f"${ENV_BUS}" if os.environ.get(ENV_BUS, "").strip() else "[bus] url")
    if settings.url in (None, LOCAL):
        path = local_server_file()
        try:
            info = read_local_server(path)
        except LocalServerError as error:
            raise BusUnreachable(str(error)) from None
        if info is None:
            raise BusUnreachable(
                f"no local bus: {path} records none (start one with `agent-tui serve`, or give --bus URL)"
            )
        settings = info.settings(settings, follow=False)
        source = str(path)
    try:
        options = connect_options(settings)
        who = bus_user(settings)
    except BusConfigError as error:
        raise BusUnreachable(str(error)) from None
    assert settings.url is not None
    return BusTarget(settings.url, options, source=source, user=who)


Callback = Callable[[], Awaitable[None]]
ErrorCallback = Callable[[Exception], None]


async def connect(
    target: BusTarget,
    *,
    name: str,
    disconnected: Callback | None = None,
    reconnected: Callback | None = None,
    error: ErrorCallback | None = None,
) -> Client:
    """The dashboard's connection (see the module docstring); `error` hears what the server
    reports on the kept connection (a refused publish), never the probe's refusal.

    Raises:
        BusUnreachable: no server answers at the URL, or it refused the credentials.
    """
    probe = await _open(
        target, allow_reconnect=False, max_reconnect_attempts=1, reconnect_time_wait=0.05, error_cb=quiet
    )
    await probe.close()

    async def on_error(reported: Exception) -> None:
        if error is not None:
            error(reported)

    return await _open(
        target,
        name=name,
        max_reconnect_attempts=-1,
        reconnect_time_wait=RECONNECT_WAIT_S,
        error_cb=on_error,
        disconnected_cb=disconnected,
        reconnected_cb=reconnected,
    )


async def quiet(_error: Exception) -> None:
    """A connection's error callback that hears nothing (a probe's refusal is said once, raised)."""


async def _open(target: BusTarget, **options: Any) -> Client:
    """One connection to the target with its credentials, or BusUnreachable saying why not."""
    credentials = {**target.options, "inbox_prefix": inbox_prefix(target.bus_user)}
    try:
        return await asyncio.wait_for(
            nats.connect(target.url, connect_timeout=int(CONNECT_TIMEOUT_S), **credentials, **options),
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
