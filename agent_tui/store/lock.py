"""One writer per session: the exclusive lock a process takes on a session log before writing it.

Invariants:
- the lock is `flock(LOCK_EX | LOCK_NB)` on a lock file beside the log (`<sessionId>.lock` next to
  `<sessionId>.jsonl`), never on the log itself, so cutting a torn tail off the log (`repair`) or
  undoing a failed append cannot lose it, and readers, who never lock, never wait for it;
- the kernel releases it when the holder's descriptor closes, the holder's death by SIGKILL
  included; a stale lock file left behind by a dead holder is taken over by the next writer;
- the holder writes who it is (program, pid, host, since when) into the lock file right after
  taking it; a process that cannot take it raises `SessionLockedError` naming that holder;
- the lock file is removed by its holder while it still holds the lock, and a process that took
  a lock checks that the file it locked is still the one at the path (else it tries again), so a
  removed file never lets two processes hold "the" lock at once;
- the descriptor is not inherited by programs the process starts (`O_CLOEXEC`), so a shell
  command of a tool cannot keep a session locked after agent-tui exits;
- the lock file is 0600 (`private_files`), opened without following a symbolic link
  (`O_NOFOLLOW`) and written only when
  it is a regular file with one name, so a link planted at its path cannot make agent-tui
  overwrite the file it points to.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
import time
import weakref
from datetime import UTC, datetime
from pathlib import Path
from stat import S_ISREG

import orjson

from agent_tui.private_files import make_private_dirs, open_private
from agent_tui.store.errors import EventLogWriteError, SessionLockedError
from agent_tui.store.lock_holder import PROGRAM, LockHolder

_READ_TRIES = 200  # a holder writes its name microseconds after taking the lock: wait at most ~0.2 s


def lock_path(log_path: Path) -> Path:
    """The lock file of the log at `log_path` (`<stem>.lock` beside it)."""
    return log_path.with_name(log_path.stem + ".lock")


def _parse_holder(data: bytes) -> LockHolder | None:
    try:
        fields = orjson.loads(data)
        return LockHolder(
            pid=int(fields["pid"]),
            host=str(fields.get("host") or ""),
            since=str(fields.get("since") or ""),
            program=str(fields.get("program") or PROGRAM),
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


def process_alive(pid: int) -> bool:
    """Whether a process `pid` of this machine exists (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _alive(holder: LockHolder) -> bool:
    """False only when the holder is a process of this machine that no longer exists."""
    return holder.host not in ("", socket.gethostname()) or process_alive(holder.pid)


def _read_holder(fd: int) -> LockHolder | None:
    """The holder named in the locked file `fd`: retried briefly while it is still empty or names
    a dead process (a new holder that took the lock a moment ago and has not written yet)."""
    for _ in range(_READ_TRIES):
        try:
            holder = _parse_holder(os.pread(fd, 4096, 0))
        except OSError:
            return None
        if holder is not None and _alive(holder):
            return holder
        time.sleep(0.001)
    return None


def _release(path: Path, fd: int) -> None:
    """Remove the lock file (still holding it, so nobody can have taken it meanwhile), then let go."""
    try:
        stat = os.stat(path)
        if (stat.st_dev, stat.st_ino) == _identity(fd):
            os.unlink(path)
    except OSError:
        pass
    os.close(fd)


def _plain(fd: int) -> bool:
    """A regular file with no other name: writing who holds it can never clobber another file
    (a hard link to it planted at the lock's path; a symbolic one is refused by `O_NOFOLLOW`)."""
    stat = os.fstat(fd)
    return S_ISREG(stat.st_mode) and stat.st_nlink == 1


def _identity(fd: int) -> tuple[int, int]:
    stat = os.fstat(fd)
    return stat.st_dev, stat.st_ino


class SessionLock:
    """The writer's lock of one session log.

    Args:
        log_path: the session's log (`<sessionId>.jsonl`); the lock file goes beside it.
    """

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.path = lock_path(log_path)
        self._fd: int | None = None
        self._finalizer: weakref.finalize[..., SessionLock] | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock (a no-op when this object holds it already).

        Raises:
            SessionLockedError: another process (or another log object of this one) holds it.
            EventLogWriteError: the lock file cannot be made (`DIR: Permission denied`, …).
        """
        if self._fd is not None:
            return
        try:
            make_private_dirs(self.path.parent)
        except OSError as error:
            raise EventLogWriteError(self.path.parent, error.errno or errno.EIO) from None
        while True:
            try:
                fd = open_private(self.path, os.O_RDWR | os.O_CREAT)
            except OSError as error:
                raise EventLogWriteError(self.path, error.errno or errno.EIO) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise SessionLockedError(self.log_path, holder) from None
            except OSError as error:
                os.close(fd)
                raise EventLogWriteError(self.path, error.errno or errno.EIO) from None
            try:
                same = os.stat(self.path)
            except FileNotFoundError:
                same = None
            if same is not None and (same.st_dev, same.st_ino) == _identity(fd):
                if not _plain(fd):
                    os.close(fd)
                    raise EventLogWriteError(self.path, errno.EPERM, "not a plain file of its own (a link?)")
                break
            os.close(fd)  # its holder removed it while letting go: lock the file now at the path
        holder = LockHolder(pid=os.getpid(), host=socket.gethostname(), since=datetime.now(UTC).isoformat())
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, holder.to_json(), 0)
        except OSError:
            pass  # the lock holds all the same; a refused writer then says "another process"
        self._fd = fd
        self._finalizer = weakref.finalize(self, _release, self.path, fd)

    def release(self) -> None:
        """Let go of the lock (and remove the lock file); a no-op when not held."""
        finalizer, self._finalizer, self._fd = self._finalizer, None, None
        if finalizer is not None:
            finalizer()
