"""Scratch workspaces: a scenario's directories are copied before a run, never changed in place.

A workspace that made its own root (a fresh temporary directory, since none was given) owns it:
`remove()` deletes it, and nobody else has to remember whether it was made or given. A root that
was given is the caller's and is never removed.

Invariants of a copy (a scenario is the repository's, so its `cwd` may be hostile or a mistake):
- a directory is measured before anything is copied: walking it stops as soon as it holds more
  than the limit (`CopyLimit`, `AGENT_TUI_SCRATCH_LIMIT_MB` / `AGENT_TUI_SCRATCH_LIMIT_FILES`),
  and the refusal (`ScratchCopyError`) says how much and where, so `/` or a home directory is
  refused at once, not after gigabytes;
- the filesystem's root and the kernel's directories (`/proc`, `/sys`, `/dev`) are refused
  before anything is walked;
- only directories, regular files and symbolic links are copied; a socket, fifo or device is
  skipped (and said: `skipped`), and never opened, so a fifo cannot block the copy; a file is
  opened without following a link and without blocking;
- a symbolic link is copied as a link, never followed; one that points outside the copied
  directory is skipped (and said), so the copy gives nobody a way out to the real files; a `cwd`
  written inside the scenario's directory that a link takes out of it is refused (a `cwd`
  written as `../x` or `/x` is taken as written);
- the workspace's own root and the directories given as `leave_out` (the run's sessions
  directory) are not copied when they lie inside a copied directory (said in `skipped`): a copy
  never holds itself, nor the logs the run is writing;
- the copy is interruptible: `stop` (a `threading.Event`, set from a signal handler while the
  copy runs in a worker thread) is looked at between files and between blocks; then the partial
  copy is removed and `CopyStopped` raised.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

LIMIT_MB_VARIABLE = "AGENT_TUI_SCRATCH_LIMIT_MB"
LIMIT_FILES_VARIABLE = "AGENT_TUI_SCRATCH_LIMIT_FILES"
SYSTEM_DIRS = (Path("/proc"), Path("/sys"), Path("/dev"))
"""The kernel's directories: files there are not files (reading `/proc/kmsg` blocks for ever)."""
BLOCK = 1024 * 1024


@dataclass(frozen=True)
class CopyLimit:
    """How big a directory a scratch copy takes: bytes of file content and entries (any kind)."""

    bytes: int = 1024 * 1024 * 1024
    entries: int = 100_000

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> CopyLimit:
        """The default, or what `AGENT_TUI_SCRATCH_LIMIT_MB` / `_FILES` say (a bad value: the
        default, since a limit is never turned off by a typo)."""
        default = cls()
        return cls(
            bytes=_positive(env.get(LIMIT_MB_VARIABLE), 1024 * 1024) or default.bytes,
            entries=_positive(env.get(LIMIT_FILES_VARIABLE), 1) or default.entries,
        )

    def describe(self) -> str:
        return f"{_megabytes(self.bytes)} or {self.entries:,} files"


def _positive(text: str | None, unit: int) -> int | None:
    try:
        value = int(text) if text is not None else 0
    except ValueError:
        return None
    return value * unit if value > 0 else None


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):,.0f} MB"


class ScratchCopyError(OSError):
    """A directory that is not copied: too big, the root, a kernel directory (`strerror` says why)."""


class CopyStopped(Exception):
    """The copy was stopped (a signal); the partial copy is gone."""


@dataclass
class _Plan:
    """What the walk found to copy, in order (directories before what they hold)."""

    dirs: list[Path] = field(default_factory=list)
    files: list[tuple[Path, int]] = field(default_factory=list)
    links: list[tuple[Path, str]] = field(default_factory=list)
    size: int = 0
    entries: int = 0


class Workspace:
    """Copies of the scenario's `cwd` directories under one scratch root.

    Args:
        base_dir: the directory relative paths in the scenario are taken from (the scenario file's).
        root: where the copies go (a fresh temporary directory if not given).
        limit: the biggest directory copied (`CopyLimit.from_env()` if not given).
        stop: set to stop a copy under way (from another thread).
        leave_out: directories never copied (the sessions directory), besides `root`.
    """

    def __init__(
        self,
        base_dir: Path,
        root: Path | None = None,
        *,
        limit: CopyLimit | None = None,
        stop: threading.Event | None = None,
        leave_out: Collection[Path] = (),
    ) -> None:
        self.base_dir = base_dir
        self.owned = root is None  # a temporary directory made here: `remove()` deletes it
        self.root = root if root is not None else Path(tempfile.mkdtemp(prefix="agent-tui-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self.limit = limit if limit is not None else CopyLimit.from_env()
        self.stop = stop if stop is not None else threading.Event()
        self.skipped: list[str] = []
        """What was left out of the copies, one line each (`PATH: why`)."""
        self._copies: dict[Path, Path] = {}
        self._left_out = frozenset(path.resolve() for path in (self.root, *leave_out))

    def remove(self) -> None:
        """Delete the root and its copies if this workspace made it; a given root stays."""
        if self.owned:
            shutil.rmtree(self.root, ignore_errors=True)

    def prepare(self, cwd: str) -> Path:
        """The scratch copy of `cwd` (copied once; sessions with the same cwd share it).

        Raises:
            FileNotFoundError, NotADirectoryError: `cwd` is not a directory.
            ScratchCopyError: it is too big, the filesystem's root or a kernel directory.
            OSError: reading or writing failed (nothing of this copy is left).
            CopyStopped: `stop` was set (nothing of this copy is left).
        """
        written = Path(os.path.normpath(self.base_dir / cwd))
        source = written.resolve()
        copy = self._copies.get(source)
        if copy is not None:
            return copy
        base = self.base_dir.resolve()
        if _under(written, base) and not _under(source, base):
            raise ScratchCopyError(
                errno.EPERM, f"a link out of {base} (to {source}), not a directory in it", str(written)
            )
        if not source.exists():
            raise FileNotFoundError(errno.ENOENT, "no such directory", str(source))
        if not source.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(source))
        _refuse_system(source)
        plan = self._measure(source)
        name = source.name or "workspace"
        copy = self.root / name
        suffix = 1
        while copy.exists():
            suffix += 1
            copy = self.root / f"{name}-{suffix}"
        try:
            self._copy(source, copy, plan)
        except BaseException:
            shutil.rmtree(copy, ignore_errors=True)
            raise
        self._copies[source] = copy
        return copy

    # -- measuring -----------------------------------------------------------------------------
    def _measure(self, source: Path) -> _Plan:
        """Walk `source` without following links, stopping at the limit."""
        plan = _Plan()
        pending = [source]
        while pending:
            directory = pending.pop()
            plan.dirs.append(directory)
            with os.scandir(directory) as entries:
                for entry in entries:
                    self._check_stop()
                    plan.entries += 1
                    path = Path(entry.path)
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:  # removed since the directory was listed
                        continue
                    if stat.S_ISDIR(info.st_mode) and path.resolve() not in self._left_out:
                        pending.append(path)
                    elif stat.S_ISDIR(info.st_mode):
                        self.skipped.append(f"{path}: where this run writes (its logs or copies), not copied")
                    elif stat.S_ISREG(info.st_mode):
                        plan.files.append((path, info.st_size))
                        plan.size += info.st_size
                    elif stat.S_ISLNK(info.st_mode):
                        target = os.readlink(path)
                        if _inside(path.parent / target, source):
                            plan.links.append((path, target))
                        else:
                            self.skipped.append(f"{path}: a link out of {source} ({target}), not copied")
                    else:
                        self.skipped.append(f"{path}: {_kind(info.st_mode)}, not copied")
                    if plan.size > self.limit.bytes or plan.entries > self.limit.entries:
                        raise ScratchCopyError(
                            errno.EFBIG,
                            f"more than {self.limit.describe()} to copy (a scenario's directory is "
                            f"copied whole; {LIMIT_MB_VARIABLE} and {LIMIT_FILES_VARIABLE} raise the "
                            "limit)",
                            str(source),
                        )
        return plan

    # -- copying -------------------------------------------------------------------------------
    def _copy(self, source: Path, copy: Path, plan: _Plan) -> None:
        budget = self.limit.bytes
        for directory in plan.dirs:
            (copy / directory.relative_to(source)).mkdir(mode=0o755, exist_ok=True)
        for path, target in plan.links:
            self._check_stop()
            os.symlink(target, copy / path.relative_to(source))
        for path, _size in plan.files:
            self._check_stop()
            budget -= self._copy_file(path, copy / path.relative_to(source), budget)
        for directory in plan.dirs:  # their modes last: a read-only directory is filled first
            try:
                mode = directory.stat(follow_symlinks=False).st_mode
                os.chmod(copy / directory.relative_to(source), stat.S_IMODE(mode) | stat.S_IWUSR)
            except OSError:
                pass

    def _copy_file(self, path: Path, target: Path, budget: int) -> int:
        """Copy one regular file (opened without following a link, without blocking); its size."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENXIO):  # became a link or a socket since the walk
                self.skipped.append(f"{path}: changed while copied, not copied")
                return 0
            if error.errno == errno.ENOENT:  # removed since the walk (another run's scratch file)
                self.skipped.append(f"{path}: removed while copied, not copied")
                return 0
            raise
        with os.fdopen(fd, "rb", buffering=0) as reader:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):  # swapped for a fifo or device since the walk
                self.skipped.append(f"{path}: {_kind(info.st_mode)}, not copied")
                return 0
            copied = 0
            with open(target, "wb") as writer:
                while chunk := reader.read(BLOCK):
                    copied += len(chunk)
                    if copied > budget:
                        raise ScratchCopyError(
                            errno.EFBIG, f"grew past {_megabytes(self.limit.bytes)} while copied", str(path)
                        )
                    writer.write(chunk)
                    self._check_stop()
            os.chmod(target, stat.S_IMODE(info.st_mode))
            os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
        return copied

    def _check_stop(self) -> None:
        if self.stop.is_set():
            raise CopyStopped()


def _refuse_system(source: Path) -> None:
    if source == Path(source.anchor):
        raise ScratchCopyError(errno.EPERM, "the filesystem's root is not a project directory", str(source))
    for system in SYSTEM_DIRS:
        if source == system or system in source.parents:
            raise ScratchCopyError(
                errno.EPERM, f"{system} is the kernel's, not a project directory", str(source)
            )


def _under(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def _inside(path: Path, directory: Path) -> bool:
    """Whether `path` (where a link points) stays under `directory`, read both as written and
    through the links on the way (`a/../b` where `a` is a link to `.` is not `b`)."""
    return all(_under(seen, directory) for seen in (Path(os.path.normpath(path)), path.resolve()))


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a fifo"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"
