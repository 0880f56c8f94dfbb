"""Real paths that remember what they were read from, so a caller can keep them while a few
`stat`s say nothing they depend on has changed.

`os.path.realpath` costs an `lstat` per component of every path, and every `lstat` hands the GIL
to another thread and waits to get it back: a check that resolves the same few dozen places on
every tool call pays that on every call. A `Resolution` resolves them once and records every
directory a name was looked up in (and any file whose content the caller read to decide); a
directory's entries cannot change (a link made, swapped, removed, renamed over) without its
modification and change times moving, so comparing those few directories' `stat` is enough to
know the real paths still hold.

Invariants:
- `realpaths` are what `os.path.realpath` (not strict) returns for each path, in order;
- `valid()` is True only if every recorded directory and file has the same device, inode, type,
  size and modification and change times as when it was resolved (a missing one is still
  missing), and none had changed within `RACY_SECONDS` before the resolution (`FINE_RACY_SECONDS`
  for a time with a fraction of a second, which only a file system that keeps sub-second
  times writes; Linux's clock for them ticks at least every 10 ms): a change in the same clock
  tick as the resolution could leave the times equal, so such a resolution is never trusted
  again (git's "racily clean" rule);
- `valid(since)` may answer from a check that began at or after `since` (a monotonic time): a
  change made before a call began is seen by every check that began after it;
- `cached_resolution` hands back a resolution of exactly these paths and files that is valid at
  the time of the call, else a fresh one; a path that cannot be resolved (a NUL, a lone
  surrogate) resolves to itself, and such a resolution is never kept.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Sequence

__all__ = ["FINE_RACY_SECONDS", "RACY_SECONDS", "Resolution", "cached_resolution", "clock"]

RACY_SECONDS = 2.0
"""A directory changed this recently when resolved is not trusted to show a later change."""
FINE_RACY_SECONDS = 0.1
"""The same, for a directory whose times have a fraction of a second (a clock of 10 ms ticks)."""
_KEPT = 256
"""Resolutions `cached_resolution` keeps (the oldest goes first)."""

_clock = time.time_ns
"""The wall clock a resolution's racy window is read from (a test moves it)."""


def clock() -> int:
    """The wall clock's nanoseconds, as a resolution reads them (`since`)."""
    return _clock()


_Signature = tuple[int, int, int, int, int, int] | None


def _signature(path: str) -> _Signature:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _racy(signature: _Signature, began: int) -> bool:
    if signature is None:
        return False
    changed = max(signature[4], signature[5])
    window = FINE_RACY_SECONDS if changed % 1_000_000_000 else RACY_SECONDS
    return changed >= began - int(window * 1e9)


class Resolution:
    """The real paths of `paths`, and what they were read from (see the module contract)."""

    def __init__(self, paths: Sequence[str], files: Sequence[str] = (), *, since: int | None = None) -> None:
        """Args:
        paths: the paths to resolve.
        files: more files whose content the caller read.
        since: `clock()` when the caller began reading what this resolution vouches for (a
            change after it is racy too); default: now.
        """
        self._checked_from = time.monotonic_ns()  # a check that began then found it as it is
        began = clock() if since is None else since  # a change while reading is racy too
        looked_in: dict[str, None] = {}
        self.resolvable = True
        self.realpaths = tuple(self._resolve(path, looked_in) for path in paths)
        watched = [*looked_in, *files]
        self._signatures = tuple((path, _signature(path)) for path in watched)
        self.racy = any(_racy(sig, began) for _, sig in self._signatures)

    def valid(self, since: int | None = None) -> bool:
        """Whether the real paths still hold (see the module contract).

        Args:
            since: `time.monotonic_ns()` when the caller's own call began: a check of these
                signatures that began after it (another thread's, for its call) answers for
                this one too, since it saw the disk as it was at or after that moment.
        """
        if self.racy or not self.resolvable:
            return False
        if since is not None and self._checked_from >= since:
            return True
        began = time.monotonic_ns()
        if not all(_signature(path) == sig for path, sig in self._signatures):
            return False
        if began > self._checked_from:
            self._checked_from = began
        return True

    def _resolve(self, path: str, looked_in: dict[str, None]) -> str:
        try:
            start = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)  # `..` kept
            resolved, _ = _join_real("", start, {}, looked_in)
        except (OSError, ValueError):  # not a name a file can have, or a link gone mid-read
            self.resolvable = False
            return path
        return os.path.abspath(resolved)


def _climb(path: str) -> str:
    """`path`'s parent, as `posixpath._joinrealpath` takes a `..` (`path` has no links)."""
    if not path:
        return os.pardir
    parent, name = os.path.split(path)
    return os.path.join(parent, os.pardir, os.pardir) if name == os.pardir else parent


def _join_real(
    path: str, rest: str, seen: dict[str, str | None], looked_in: dict[str, None]
) -> tuple[str, bool]:
    """`posixpath._joinrealpath` (not strict), noting each directory a name is looked up in."""
    if rest.startswith(os.sep):
        rest = rest[1:]
        path = os.sep
    found = True  # whether `path` was there when looked up (a `..` climbs to one that may be)
    while rest:
        name, _, rest = rest.partition(os.sep)
        if not name or name == os.curdir:
            continue
        if name == os.pardir:
            path, found = _climb(path), True
            continue
        new_path = os.path.join(path, name)
        if found:  # a name looked up in a directory that is not there changes with its parent
            looked_in[path or os.curdir] = None
        try:
            is_link = stat.S_ISLNK(os.lstat(new_path).st_mode)
        except OSError:
            found = is_link = False
        else:
            found = True
        if not is_link:
            path = new_path
            continue
        if new_path in seen:
            known = seen[new_path]
            if known is not None:
                path = known
                continue
            return os.path.join(new_path, rest), False  # a loop: as realpath, left as it is
        seen[new_path] = None
        path, ok = _join_real(path, os.readlink(new_path), seen, looked_in)
        found = True
        if not ok:
            return os.path.join(path, rest), False
        seen[new_path] = path
    return path, True


_cache: dict[tuple[tuple[str, ...], tuple[str, ...]], Resolution] = {}
_lock = threading.Lock()


def cached_resolution(
    paths: Sequence[str], files: Sequence[str] = (), *, since: int | None = None
) -> Resolution:
    """A resolution of `paths` (watching `files` too) valid now: a kept one, else a new one.
    `since`: as for `Resolution.valid`."""
    key = (tuple(paths), tuple(files))
    with _lock:
        kept = _cache.get(key)
    if kept is not None and kept.valid(since):
        return kept
    fresh = Resolution(key[0], key[1])
    if fresh.resolvable:
        with _lock:
            _cache.pop(key, None)
            _cache[key] = fresh
            while len(_cache) > _KEPT:
                del _cache[next(iter(_cache))]
    return fresh
