"""The import cache's bound: foreign logs converted for replay, kept under a size, the least
recently used dropped first, never one in use.

The cache (`materialize.py` fills it) is a folder of entries `<root>/<key>/`, each a converted
log's sessions and its `warnings.txt`, written whole (a temporary `<key>.*` folder renamed into
place). Invariants:

- an entry's modification time is its last use: a replay that reads an entry touches it
  (`use`), so the oldest is the one least recently used;
- `prune` drops entries, oldest first, until the entries hold at most the bound in bytes; it
  runs once per replay that converted something (a cache that only serves reads never grows),
  after its conversions;
- an entry in use is never dropped: every `CacheUse` (one per replay, from its first entry to
  its `close()`) names the entries it reads in a file under `<root>/.users/` that it holds
  locked (`flock`) while it lives; a prune skips the entries named by every file still locked,
  and removes a file nobody holds (its replay ended without closing: killed). When the entries
  in use alone pass the bound, the cache stays over it until they are let go;
- `<root>/.lock` orders a use and a prune: a use names its entry and checks that it is there
  under the shared lock, a prune decides and renames its entries away under the exclusive one,
  so an entry is either seen in use, or gone before its use looks (and is converted again);
  dropped entries are renamed to `.dropping-*` first, then deleted outside the lock;
- the bound is `AGENT_TUI_IMPORT_CACHE_MB` megabytes (`DEFAULT_BOUND_MB` when unset; a value
  that is not a positive number is the default: a typo never turns the bound off);
- its files are the user's alone (0700 folders, 0600 files: `private_files`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from agent_tui.private_files import make_private_dirs, open_private

BOUND_VARIABLE = "AGENT_TUI_IMPORT_CACHE_MB"
DEFAULT_BOUND_MB = 1024
"""1 GiB: a few hundred long sessions converted (our logs are about their source's size)."""
STALE_BUILD_SECONDS = 24 * 3600
"""A `<key>.*` folder older than this is a conversion that crashed: dropped by the next prune."""
USERS = ".users"
LOCK = ".lock"
DROPPING = ".dropping-"


def bound_bytes(env: Mapping[str, str] = os.environ) -> int:
    """The cache's bound in bytes (see the module docstring)."""
    raw = env.get(BOUND_VARIABLE, "")
    try:
        megabytes = float(raw)
    except ValueError:
        megabytes = 0.0
    if not 0 < megabytes < float("inf"):  # NaN fails both
        megabytes = DEFAULT_BOUND_MB
    return int(megabytes * 1024 * 1024)


@contextmanager
def cache_lock(root: Path, *, exclusive: bool) -> Iterator[None]:
    """The lock that orders uses (shared) and prunes (exclusive) of the cache at `root`."""
    make_private_dirs(root)
    fd = open_private(root / LOCK, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # releases the lock


class CacheUse:
    """The entries one replay reads, held in use until `close()` (see the module docstring).

    Args:
        root: the cache's folder.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.keys: set[str] = set()
        self._fd: int | None = None
        self._path: Path | None = None

    def add(self, key: str) -> None:
        """Name `key` as in use (call it under the shared `cache_lock`, before looking for it)."""
        if key in self.keys:
            return
        if self._fd is None:
            users = make_private_dirs(self.root / USERS)
            self._path = users / f"{os.getpid()}-{secrets.token_hex(6)}"
            self._fd = open_private(self._path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        os.write(self._fd, key.encode("ascii") + b"\n")
        self.keys.add(key)

    def close(self) -> None:
        """The replay is over: its entries may be dropped."""
        fd, path = self._fd, self._path
        self._fd = self._path = None
        if path is not None:
            path.unlink(missing_ok=True)
        if fd is not None:
            os.close(fd)


def use(folder: Path) -> None:
    """Mark the entry at `folder` as just used (its modification time is its last use)."""
    with contextlib.suppress(OSError):  # gone meanwhile: its reader finds that out
        os.utime(folder)


def in_use(root: Path) -> set[str]:
    """The keys named by the `CacheUse` files still held; files nobody holds are removed."""
    keys: set[str] = set()
    users = root / USERS
    try:
        names = sorted(os.listdir(users))
    except FileNotFoundError:
        return keys
    for name in names:
        path = users / name
        try:
            fd = open_private(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # its replay still runs
                with os.fdopen(os.dup(fd), "rb") as reading:
                    keys.update(line.decode("ascii", "replace") for line in reading.read().split())
            else:
                path.unlink(missing_ok=True)  # its replay is gone
        finally:
            os.close(fd)
    return keys


def _size(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # (gone meanwhile)
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def prune(root: Path, bound: int) -> list[str]:
    """Drop the least recently used entries beyond `bound` bytes, never one in use (see the
    module docstring). Returns the keys dropped, oldest first."""
    doomed: list[Path] = []
    dropped: list[str] = []
    now = time.time()
    with cache_lock(root, exclusive=True):
        busy = in_use(root)
        entries: list[tuple[float, str, int]] = []
        for entry in os.scandir(root):
            name = entry.name
            if name.startswith(".") or not entry.is_dir(follow_symlinks=False):
                if name.startswith(DROPPING):
                    doomed.append(Path(entry.path))  # left by a prune that did not finish
                continue
            modified = entry.stat(follow_symlinks=False).st_mtime
            if "." in name:  # a conversion being written, or one that crashed long ago
                if now - modified > STALE_BUILD_SECONDS:
                    doomed.append(Path(entry.path))
                continue
            entries.append((modified, name, _size(Path(entry.path))))
        total = sum(size for _, _, size in entries)
        for _modified, name, size in sorted(entries):
            if total <= bound:
                break
            if name in busy:
                continue
            away = root / f"{DROPPING}{name}.{secrets.token_hex(4)}"
            try:
                os.rename(root / name, away)
            except OSError:
                continue
            doomed.append(away)
            dropped.append(name)
            total -= size
    for folder in doomed:
        shutil.rmtree(folder, ignore_errors=True)
    return dropped
