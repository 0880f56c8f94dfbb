"""The web dashboard's access token, kept in the user's data dir so a bookmark survives a restart.

Invariants:
- the token is `TOKEN_BYTES` random bytes, URL-safe base64 (`secrets.token_urlsafe`), stored
  alone in `<user data dir>/web-token`, a regular file of this user's, mode 0600, written whole
  (a temporary file renamed over it) so a reader never sees half of one;
- a stored token is used only if the file is this user's own, not readable or writable by
  anyone else, and holds a well-formed token; otherwise a new one replaces it and the caller is
  told why (`TokenStore.load` returns the reason), because a token others could read may
  already be theirs;
- `matches` compares in constant time (`hmac.compare_digest`), over bytes;
- what the browser keeps and sends is derived from the token, never the token: `path_secret`
  (the path the dashboard is served under) and `session` (what its websocket shows) are each an
  HMAC-SHA256 of the token with a fixed label of its own, so neither gives back the token or
  the other, and both stay the same while the token does (a bookmark survives a restart);
- the token itself is never part of an exception's message or of `repr`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from agent_tui.private_files import write_private

APP_NAME = "agent-tui"
TOKEN_BYTES = 32
TOKEN_FILE = "web-token"
_WELL_FORMED = re.compile(r"[A-Za-z0-9_-]{40,128}")
PATH_LABEL = b"agent-tui web: the path the dashboard is served under"
SESSION_LABEL = b"agent-tui web: what the dashboard's websocket shows"
PATH_SECRET_CHARS = 22
"""132 bits: past guessing, short enough for an address bar."""


class TokenStoreError(Exception):
    """The token file cannot be read or written: one sentence naming the path."""


@dataclass(frozen=True)
class AccessToken:
    """The token a browser must show (`value` is never in `repr`)."""

    value: str = field(repr=False)

    def matches(self, offered: str | None) -> bool:
        return same_text(self.value, offered)

    @property
    def path_secret(self) -> str:
        """The one path segment the dashboard is served under (`/<path_secret>/`)."""
        return self._derived(PATH_LABEL)[:PATH_SECRET_CHARS]

    @property
    def session(self) -> str:
        """What the page keeps in its origin's storage and shows to open a websocket."""
        return self._derived(SESSION_LABEL)

    def session_matches(self, offered: str | None) -> bool:
        return same_text(self.session, offered)

    def path_matches(self, offered: str | None) -> bool:
        return same_text(self.path_secret, offered)

    def _derived(self, label: bytes) -> str:
        digest = hmac.new(self.value.encode("utf-8"), label, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def same_text(expected: str, offered: str | None) -> bool:
    """Whether `offered` is `expected`, compared in constant time (over bytes)."""
    if not offered:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), offered.encode("utf-8", "replace"))


def default_token_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME)) / TOKEN_FILE


@dataclass(frozen=True)
class LoadedToken:
    token: AccessToken
    made_because: str | None
    """Why a new token was made (None: the stored one is used)."""


class TokenStore:
    """The token file at `path` (default: `default_token_path()`)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_token_path()

    def load(self, *, new: bool = False) -> LoadedToken:
        """The stored token, or a new one (stored) when `new`, when there is none, or when the
        stored one cannot be trusted. Raises TokenStoreError."""
        if new:
            return LoadedToken(self._make(), "--new-token")
        problem = self._problem()
        if problem is None:
            return LoadedToken(AccessToken(self._read()), None)
        return LoadedToken(self._make(), None if problem == "none yet" else problem)

    def _problem(self) -> str | None:
        """Why the stored token cannot be used, or None."""
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            return "none yet"
        except OSError as error:
            raise TokenStoreError(f"{self.path}: {error.strerror or error}") from None
        if not stat.S_ISREG(info.st_mode):
            return f"{self.path} was not a regular file"
        if info.st_uid != os.getuid():
            return f"{self.path} belonged to another user"
        if info.st_mode & 0o077:
            return f"{self.path} could be read by others (mode {stat.S_IMODE(info.st_mode):o})"
        if not _WELL_FORMED.fullmatch(self._read()):
            return f"{self.path} did not hold a token"
        return None

    def _read(self) -> str:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError as error:
            raise TokenStoreError(f"{self.path}: {error.strerror or error}") from None
        try:
            return os.read(fd, 4096).decode("ascii", "replace").strip()
        finally:
            os.close(fd)

    def _make(self) -> AccessToken:
        token = AccessToken(secrets.token_urlsafe(TOKEN_BYTES))
        try:
            write_private(self.path, (token.value + "\n").encode("ascii"))
        except OSError as error:
            raise TokenStoreError(f"{error.filename or self.path}: {error.strerror or error}") from None
        return token
