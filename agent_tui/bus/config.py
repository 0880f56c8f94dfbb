"""Where the bus is and how to reach it: `[bus]` of config.toml, `AGENT_TUI_BUS`, `--bus`.

Precedence: the command line's `--bus` > `$AGENT_TUI_BUS` > `[bus] url`; `--host` > `[bus] host`.

Invariants:
- the file never holds a secret: `credentials_env` is the NAME of the variable holding a token
  (or `USER:PASSWORD`), `creds_file` the path of a NATS creds file or an nkey seed file; a value
  that looks like a secret where a name belongs is refused, without repeating it;
- a problem in `[bus]` is a `ConfigError` reading `PATH:LINE: bus.KEY: reason`;
- `url` is `local` (the private server `agent-tui serve` starts, found through
  `local_server.read_local_server`), or one or more `nats://`, `tls://`, `ws://` or `wss://`
  URLs separated by commas; `redacted` gives the form that may be shown (no user, no password,
  no token).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent_tui.bus.protocol import (
    DEFAULT_HEARTBEAT_S,
    DEFAULT_PRESENCE_TTL_S,
    DEFAULT_STREAM_MAX_AGE_S,
    DEFAULT_STREAM_MAX_BYTES,
    name_from,
    valid_name,
    valid_user,
)
from agent_tui.engine.vault import ENVIRONMENT
from agent_tui.providers.config import Config, ConfigError

ENV_BUS = "AGENT_TUI_BUS"
LOCAL = "local"
SCHEMES = ("nats", "tls", "ws", "wss")
KEYS = (
    "url",
    "host",
    "user",
    "credentials_env",
    "creds_file",
    "max_age",
    "max_bytes",
    "presence_ttl",
    "heartbeat",
)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


class BusConfigError(ValueError):
    """A bus setting is wrong; the message is one sentence naming where."""


@dataclass(frozen=True)
class BusSettings:
    """How to reach the bus. `url` None: no bus was named (serve starts its private server)."""

    url: str | None
    host: str | None = None
    user: str | None = None
    """This process's user on the bus, as the server's permissions name it (the suffix of the
    control subjects it may publish on); None: `credentials.bus_user` works it out."""
    credentials_env: str | None = None
    creds_file: Path | None = None
    max_age_s: float = DEFAULT_STREAM_MAX_AGE_S
    max_bytes: int = DEFAULT_STREAM_MAX_BYTES
    presence_ttl_s: float = DEFAULT_PRESENCE_TTL_S
    heartbeat_s: float = DEFAULT_HEARTBEAT_S
    local_record: bool = False
    """The bus is the private server of this machine: while the link is down its record
    (`local_server.read_local_server`) is read again, for a server restarted on another port."""

    def shown_url(self) -> str:
        return redacted(self.url or LOCAL)


def parse_duration(text: str, what: str) -> float:
    """`500ms`, `30s`, `5m`, `2h`, `1d`, `1w`, or a bare number of seconds."""
    match = _DURATION.match(text)
    if match is None:
        raise BusConfigError(f"{what} {text!r}: expected a number and a unit, like 30s, 5m, 2h or 1d")
    return float(match.group(1)) * _UNITS[match.group(2) or "s"]


def redacted(url: str) -> str:
    """The URLs with any user, password or token taken out (`nats://***@host:4222`)."""
    shown = []
    for part in url.split(","):
        part = part.strip()
        if "@" in part:
            scheme, sep, rest = part.partition("://")
            if sep:
                part = f"{scheme}://***@{rest.rpartition('@')[2]}"
            else:
                part = f"***@{part.rpartition('@')[2]}"
        shown.append(part)
    return ",".join(shown)


def check_url(url: str) -> str:
    if url == LOCAL:
        return url
    for part in url.split(","):
        part = part.strip()
        try:
            split = urlsplit(part)
            port = split.port
        except ValueError:
            raise BusConfigError(f"bus URL {redacted(part)!r} is not a URL") from None
        if split.scheme not in SCHEMES or not split.hostname:
            raise BusConfigError(
                f"bus URL {redacted(part)!r}: expected nats://HOST:PORT (or tls://, ws://, wss://), or `local`"
            )
        del port
    return url


def bus_settings(
    config: Config,
    *,
    flag_url: str | None = None,
    flag_host: str | None = None,
    env: Any = ENVIRONMENT,
) -> BusSettings:
    """The bus settings of the config file, the environment and the flags.

    Raises:
        ConfigError: `[bus]` is wrong (`PATH:LINE: bus.KEY: reason`).
        BusConfigError: `--bus`, `--host` or `$AGENT_TUI_BUS` is wrong.
    """
    values = _table_values(config)
    from_env = env.get(ENV_BUS, "").strip() or None
    url = flag_url or from_env
    if url is not None:
        where = "--bus" if flag_url else f"${ENV_BUS}"
        try:
            values["url"] = check_url(url)
        except BusConfigError as error:
            raise BusConfigError(f"{where}: {error}") from None
    if flag_host is not None:
        if not valid_name(flag_host):
            raise BusConfigError(f"--host {flag_host!r}: a name of letters, digits, - and _ (at most 64)")
        values["host"] = flag_host
    values.setdefault("url", None)
    return BusSettings(**values)


def _table_values(config: Config) -> dict[str, Any]:
    """The settings `[bus]` gives, checked (`PATH:LINE: bus.KEY: reason`)."""
    table = dict(config.bus)

    def fail(key: str, reason: str) -> ConfigError:
        return ConfigError(f"{config.where_set('bus', key)}: bus.{key}: {reason}")

    for key in table:
        if key not in KEYS:
            raise fail(key, f"unknown setting (known: {', '.join(KEYS)})")
    values: dict[str, Any] = {}
    for key in KEYS:
        if key != "max_bytes" and key in table and not isinstance(table[key], str | int | float):
            raise fail(key, "expected a string")
    if "url" in table:
        try:
            values["url"] = check_url(str(table["url"]))
        except BusConfigError as error:
            raise fail("url", str(error)) from None
    if "host" in table:
        if not valid_name(str(table["host"])):
            raise fail("host", "a name of letters, digits, - and _ (at most 64)")
        values["host"] = str(table["host"])
    if "user" in table:
        if not valid_user(str(table["user"])):
            raise fail("user", "a name of letters, digits, - and _ (at most 64), not `events`")
        values["user"] = str(table["user"])
    values.update(_credentials(table, fail))
    values.update(_stream_limits(table, fail))
    return values


def _credentials(table: dict[str, Any], fail: Callable[[str, str], ConfigError]) -> dict[str, Any]:
    """`credentials_env` (a variable's name) or `creds_file`, checked."""
    values: dict[str, Any] = {}
    if "credentials_env" in table:
        name = str(table["credentials_env"])
        if not _ENV_NAME.match(name):
            raise fail(
                "credentials_env", "expected the NAME of an environment variable (never the secret itself)"
            )
        values["credentials_env"] = name
    if "creds_file" in table:
        values["creds_file"] = Path(str(table["creds_file"])).expanduser()
    if "credentials_env" in values and "creds_file" in values:
        raise fail("creds_file", "give credentials_env or creds_file, not both")
    return values


def _stream_limits(table: dict[str, Any], fail: Callable[[str, str], ConfigError]) -> dict[str, Any]:
    """`max_age`, `presence_ttl`, `heartbeat` (durations) and `max_bytes`, checked."""
    values: dict[str, Any] = {}
    for key, field in (
        ("max_age", "max_age_s"),
        ("presence_ttl", "presence_ttl_s"),
        ("heartbeat", "heartbeat_s"),
    ):
        if key in table:
            try:
                values[field] = parse_duration(str(table[key]), key)
            except BusConfigError as error:
                raise fail(key, str(error)) from None
            if values[field] <= 0:
                raise fail(key, "must be more than zero")
    if "max_bytes" in table:
        if (
            not isinstance(table["max_bytes"], int)
            or isinstance(table["max_bytes"], bool)
            or table["max_bytes"] <= 0
        ):
            raise fail("max_bytes", "expected a number of bytes (an integer above zero)")
        values["max_bytes"] = table["max_bytes"]
    if "presence_ttl_s" in values and "heartbeat_s" not in values:
        values["heartbeat_s"] = min(DEFAULT_HEARTBEAT_S, values["presence_ttl_s"] / 3)
    return values


def default_name() -> str:
    """This machine's name as a bus name."""
    import socket

    return name_from(socket.gethostname())
