"""How a process proves itself to the bus: a token or `USER:PASSWORD` in a named variable, an
nkey seed file or a NATS creds file, TLS by URL; and how a failure is said without the secret.

Invariants:
- a secret is read only here, only when connecting (the variable through the vault, where
  agent-tui keeps what looks like a key), and goes only into the client's connect arguments;
- `describe_failure` names the URL as `config.redacted` shows it and the reason, and scrubs
  every secret it knows of (the token, the password, a URL's user part, the nkey seed and the
  user JWT an nkey seed file or a creds file holds) out of the reason, so a message, a log line
  or an event never carries one; a file that cannot be read adds nothing to scrub (connecting
  says what is wrong with it);
- a missing variable or an unreadable creds file is a `BusConfigError` naming the variable or
  the path, never the value.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agent_tui.bus.config import BusConfigError, BusSettings, redacted
from agent_tui.bus.protocol import name_from, valid_user
from agent_tui.engine.vault import ENVIRONMENT

_FILE_SECRET = re.compile(r"\bSU[A-Z2-7]{20,}|\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
"""What a creds or nkey seed file holds that must never be said: a user's nkey seed (`SU…`,
base32) and its JWT (three base64url parts, the header always starting `eyJ`)."""


def secrets_of(settings: BusSettings, env: Any = ENVIRONMENT) -> list[str]:
    """Every secret these settings use (to scrub them out of anything said)."""
    found: list[str] = []
    if settings.credentials_env:
        value = env.get(settings.credentials_env, "")
        if value:
            found.append(value)
            if ":" in value:
                found.extend(part for part in value.split(":", 1) if len(part) >= 4)
    for userinfo in _userinfos(settings.url):
        found.append(userinfo)
        found.extend(piece for piece in userinfo.split(":") if len(piece) >= 4)
    if settings.creds_file is not None:
        found.extend(_file_secrets(settings.creds_file))
    return sorted(set(found), key=len, reverse=True)


def _userinfos(url: str | None) -> list[str]:
    """The user parts (`USER:PASSWORD`, a token) of the URLs that have one."""
    parts = [part.strip().partition("://") for part in (url or "").split(",")]
    return [rest.rpartition("@")[0] for _, sep, rest in parts if sep and "@" in rest]


def _file_secrets(path: Path) -> list[str]:
    """The seed and the JWT a creds or nkey seed file holds (none when it cannot be read)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    return _FILE_SECRET.findall(text)


def connect_options(settings: BusSettings, env: Any = ENVIRONMENT) -> dict[str, Any]:
    """The `nats.connect` keyword arguments for the credentials (not the URL, callbacks or timings).

    Raises:
        BusConfigError: the variable is not set, or the creds/seed file cannot be read.
    """
    options: dict[str, Any] = {}
    if settings.credentials_env:
        value = env.get(settings.credentials_env, "")
        if not value:
            raise BusConfigError(f"${settings.credentials_env} (bus credentials_env) is not set")
        user, sep, password = value.partition(":")
        if sep and user and password:
            options["user"], options["password"] = user, password
        else:
            options["token"] = value
    if settings.creds_file is not None:
        path = settings.creds_file
        try:
            text = path.read_text()
        except OSError as error:
            raise BusConfigError(
                f"{path}: cannot read the bus creds file ({error.strerror or error})"
            ) from None
        if "BEGIN NATS USER JWT" in text:
            options["user_credentials"] = str(path)
        elif text.strip().startswith("SU"):
            options["nkeys_seed"] = str(path)
        else:
            raise BusConfigError(f"{path}: neither a NATS creds file nor an nkey seed (a line starting SU)")
        if not _signs_nkeys():
            raise BusConfigError(
                f"{path}: signing with an nkey needs the nkeys package, which is not installed "
                "(pip install 'agent-tui-dashboard[bus]', or pip install nkeys in agent-tui's environment)"
            )
    return options


def bus_user(settings: BusSettings, env: Any = ENVIRONMENT) -> str:
    """This process's user on the bus: `[bus] user`, else the USER of `USER:PASSWORD` credentials
    (in the variable or the URL), else the local login name. It names the control subjects
    (`protocol.control_subject`) and reply inboxes (`protocol.inbox_prefix`) the connection uses,
    which the server's permissions allow for that user only.

    Raises:
        BusConfigError: the name cannot be a subject token (say `[bus] user`).
    """
    name = settings.user
    if name is None and settings.credentials_env:
        user, sep, password = env.get(settings.credentials_env, "").partition(":")
        if sep and user and password:
            name = user
    if name is None:
        name = next((info.partition(":")[0] for info in _userinfos(settings.url) if ":" in info), None)
    if name is None:
        from agent_tui.bus.presence import user

        name = name_from(user())
    if not valid_user(name):
        raise BusConfigError(
            f"the bus user {name!r} cannot name a control subject (letters, digits, - and _, "
            "at most 64, not `events`): set [bus] user to the name your server's permissions use"
        )
    return name


def _signs_nkeys() -> bool:
    """Whether the NATS client can sign with an nkey (its optional `nkeys` package is there)."""
    import importlib.util

    return importlib.util.find_spec("nkeys") is not None


def scrub(text: str, settings: BusSettings, env: Any = ENVIRONMENT) -> str:
    """`text` with every secret of `settings` replaced by `***`."""
    for secret in secrets_of(settings, env):
        text = text.replace(secret, "***")
    return text


def describe_failure(settings: BusSettings, error: BaseException, env: Any = ENVIRONMENT) -> str:
    """One sentence: which bus could not be reached, and why, with no secret in it."""
    reason = str(error) or type(error).__name__
    if type(error).__name__ in ("NoServersError", "TimeoutError") and not str(error).strip(" ."):
        reason = "no server answered"
    name = type(error).__name__
    if "Authorization" in reason or name == "AuthorizationError":
        reason = "the server refused the credentials (authorization violation)"
    return f"cannot reach the bus at {redacted(settings.url or 'local')}: {scrub(reason, settings, env)}"
