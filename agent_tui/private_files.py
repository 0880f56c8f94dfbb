"""agent-tui's own files and folders: made private, and trusted only when they are this user's.

Everything agent-tui keeps of a session (logs, undo blobs, the search index, the import cache,
exports, lists such as `closed.txt`) and its own state (the runtime dir, the private bus's
file, its config and log) goes through here, so one place decides who may read and write them.

Invariants:
- a folder agent-tui makes is made 0700, each missing level of its path (never by the umask);
  `make_private_dirs` never chmods a folder that is already there: the user may have made it
  (`--sessions-dir`);
- a file agent-tui makes is made 0600 (`os.open` with 0o600, then `fchmod` when the umask or an
  earlier version left it looser), opened without following a link at its name and without
  waiting (a FIFO planted there blocks nothing); a file of this user's that agent-tui opens to
  write is tightened to 0600 the same way (it is agent-tui's), and another user's file or FIFO
  is not written (`PermissionError`);
- state is trusted only when `lstat` (no link followed; `fstat` of what was opened, for a file)
  says it is a folder (`trusted_dir`) or a plain file owned by this user that neither group nor
  others can write (`untrusted_reason` says what is wrong otherwise); anything else is an
  `UntrustedStateError`, one sentence naming the path and what is wrong, and nothing of it is
  used;
- agent-tui's own top folders (`agent-tui` in the user's data and cache dirs) are made 0700 at
  each command's start when they are this user's (`tighten_own_folder`): what versions before
  this rule left there (0644 logs in 0755 folders) is then out of others' reach too;
- `own_folder` makes agent-tui's own folder in a place others can write too (the temporary
  directory when `$XDG_RUNTIME_DIR` is unset): in a parent that is sticky and root's (or this
  user's), or this user's alone,
  `mkdir` 0700, then the `lstat` check above, then 0700 again if an earlier run left it
  readable by others; a folder someone else made first (or a link), or one in another user's
  folder, is refused, never used;
- a file read from a folder others may write (a shared sessions dir) is opened with `open_plain`
  (`plain_descriptor`):
  without waiting (a FIFO planted there with no writer would hang the reader), and only when it
  is a plain file;
- this module imports only the standard library, so every floor can use it.
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook imports this module once per tool call: `typing` and `pathlib` cost its start-up
    from pathlib import Path
    from typing import BinaryIO

__all__ = [
    "FILE_MODE",
    "FOLDER_MODE",
    "UntrustedStateError",
    "make_private_dirs",
    "open_plain",
    "open_private",
    "own_folder",
    "plain_descriptor",
    "private_sqlite_file",
    "read_trusted",
    "runtime_dir",
    "runtime_dir_name",
    "tighten_own_folder",
    "trusted_dir",
    "untrusted_reason",
    "write_private",
]

FILE_MODE = 0o600
FOLDER_MODE = 0o700
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


class UntrustedStateError(Exception):
    """A state file or folder that is not this user's own; the message is one sentence."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(
            f"{path} {reason}: agent-tui does not use it (remove it, or set XDG_RUNTIME_DIR to a folder of your own)"
        )
        self.path = path
        self.reason = reason


def _user() -> int:
    return os.geteuid()


def untrusted_reason(info: os.stat_result, *, folder: bool) -> str | None:
    """What makes `info` (from `lstat`) untrustworthy, in words; None when it is fine."""
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link"
    if folder and not stat.S_ISDIR(info.st_mode):
        return "is not a folder"
    if not folder and not stat.S_ISREG(info.st_mode):
        return "is not a plain file"
    if info.st_uid != _user():
        return f"belongs to another user (uid {info.st_uid})"
    if info.st_mode & _OTHERS_WRITE:
        return f"can be written by others (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def trusted_dir(path: Path) -> None:
    """Raise `UntrustedStateError` unless `path` is a folder of this user's that only this user
    can write (checked with `lstat`: a link is refused, not followed).

    Raises:
        FileNotFoundError: there is nothing at `path`.
    """
    problem = untrusted_reason(os.lstat(path), folder=True)
    if problem is not None:
        raise UntrustedStateError(path, problem)


def read_trusted(path: Path) -> bytes:
    """The bytes of the state file `path`, read only when the file opened (a link is not followed)
    is a plain file of this user's that nobody else can write.

    Raises:
        UntrustedStateError: it is a link, not a plain file, another user's, or writable by others.
        OSError: it cannot be read (`FileNotFoundError` when there is none).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UntrustedStateError(path, "is a symbolic link") from None
        raise
    try:
        problem = untrusted_reason(os.fstat(fd), folder=False)
        if problem is not None:
            raise UntrustedStateError(path, problem)
        with os.fdopen(fd, "rb", closefd=False) as file:
            return file.read()
    finally:
        os.close(fd)


def open_plain(path: Path) -> BinaryIO:
    """`path` opened to read, buffered, when it is a plain file (a link at it is followed). A FIFO,
    socket or device is refused without waiting for a writer.

    Raises:
        OSError: it cannot be opened, it is a directory (`EISDIR`, as `open` says), or it is
            not a plain file (`EINVAL`, "not a plain file").
    """
    return os.fdopen(plain_descriptor(path), "rb")


def plain_descriptor(path: Path) -> int:
    """`open_plain`, as a descriptor (`O_RDONLY`, blocking once known to be a plain file).

    Raises:
        OSError: as `open_plain`.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a plain file", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def tighten_own_folder(path: Path) -> None:
    """Make `path` 0700 if it is a folder of this user's (not a link) that others may enter: for
    agent-tui's own top folders, which versions before this rule made by the umask. Nothing
    happens when it is missing, not this user's, or cannot be changed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        info = os.fstat(fd)
        if info.st_uid == _user() and stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(fd, FOLDER_MODE)
    except OSError:
        pass
    finally:
        os.close(fd)


def make_private_dirs(path: Path) -> Path:
    """Make `path` and every missing folder above it, each 0700; folders already there are left
    exactly as they are (one the user made keeps its mode). Returns `path`.

    Raises:
        OSError: a level cannot be made (`FileExistsError` when a file is in the way).
    """
    missing: list[Path] = []
    level = path
    while not os.path.lexists(level):
        missing.append(level)
        if level.parent == level:
            break
        level = level.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue  # made meanwhile by another process: not ours to chmod
        _tighten_made(folder)
    return path


def _tighten_made(folder: Path) -> None:
    """Make the folder just made at `folder` 0700 (a umask cannot add bits, but an ACL default
    can), through a descriptor: whoever may write its parent could have put a link there since
    (a chmod by name would follow it), or a folder of theirs (left alone)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if info.st_uid == _user() and stat.S_IMODE(info.st_mode) != FOLDER_MODE:
            os.fchmod(fd, FOLDER_MODE)
    finally:
        os.close(fd)


def own_folder(path: Path) -> Path:
    """Make agent-tui's own folder `path` (0700) where others may have been first, or refuse it.

    The parent must exist (the temporary directory, `$XDG_RUNTIME_DIR`) and be either sticky and
    root's or this user's (as /tmp is: nobody but its owner can rename another's entry) or this
    user's and writable by nobody else (else its owner could swap the folder for their own
    between a check and a use: `su` keeps the first user's `$XDG_RUNTIME_DIR`). A folder that is there already is used only when `lstat` says it is
    this user's and nobody else can write it; its mode is then brought to 0700 (an earlier run may
    have left it readable).

    Raises:
        UntrustedStateError: the parent is another's, or the folder is a link, not a folder,
            another user's, or writable by others.
        OSError: it cannot be made.
    """
    parent = os.stat(path.parent)
    sticky = parent.st_mode & stat.S_ISVTX and parent.st_uid in (0, _user())  # its owner renames any entry
    if not sticky:
        problem = untrusted_reason(parent, folder=True)
        if problem is not None:
            raise UntrustedStateError(path.parent, problem)
    try:
        os.mkdir(path, FOLDER_MODE)
    except FileExistsError:
        pass
    trusted_dir(path)  # a link or a file is named as such before opening it
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)  # the folder opened, not whatever the name means a moment later
        problem = untrusted_reason(info, folder=True)
        if problem is not None:
            raise UntrustedStateError(path, problem)
        if stat.S_IMODE(info.st_mode) != FOLDER_MODE:
            os.fchmod(fd, FOLDER_MODE)
    finally:
        os.close(fd)
    return path


def open_private(path: Path, flags: int) -> int:
    """`os.open(path, flags)` for a file of agent-tui's: made 0600 when new (whatever the umask),
    a link at the name refused (`ELOOP`), and tightened to 0600 when it is looser (made by an
    earlier version, or under a looser umask). Returns the descriptor.

    Raises:
        PermissionError: opened to write, it is another user's file or FIFO or socket (planted in a
            folder others can write: what agent-tui writes would be theirs to read); only a device
            (made by root: `/dev/null`) of another user's is written.
        OSError: it cannot be opened (`ENXIO`: a FIFO nobody reads; opening never waits for one).
    """
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, FILE_MODE)  # a FIFO: no wait
    try:
        info = os.fstat(fd)
        writing = flags & (os.O_WRONLY | os.O_RDWR)
        if writing and info.st_uid != _user() and not stat.S_ISCHR(info.st_mode):
            raise PermissionError(errno.EPERM, f"it belongs to another user (uid {info.st_uid})", str(path))
        if not flags & os.O_NONBLOCK:
            os.set_blocking(fd, True)
        if writing and stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) & 0o077:
            os.fchmod(fd, stat.S_IMODE(info.st_mode) & 0o700)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, data: bytes) -> None:
    """Replace `path` with `data` whole (a 0600 temporary file beside it, renamed over it), so
    readers see the old content or the new; missing folders are made 0700.

    Raises:
        OSError: nothing was changed.
    """
    from pathlib import Path

    directory = path.parent if str(path.parent) else Path(".")
    make_private_dirs(directory)
    import tempfile

    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")  # 0600
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def private_sqlite_file(path: Path) -> None:
    """Make the SQLite file `path` (0600, folders 0700) before SQLite opens it, or tighten the one
    there: SQLite gives its `-wal`, `-shm` and `-journal` files the mode of the database file.

    Raises:
        OSError: it cannot be made (or a link is in its place: `ELOOP`).
    """
    make_private_dirs(path.parent)
    os.close(open_private(path, os.O_RDWR | os.O_CREAT))


def runtime_dir() -> Path:
    """agent-tui's folder for sockets and records of running processes: `$XDG_RUNTIME_DIR/agent-tui`,
    else `agent-tui-<uid>` in the temporary directory. Not made here: `own_folder` makes it."""
    from pathlib import Path

    return Path(runtime_dir_name())


def runtime_dir_name() -> str:
    """`runtime_dir` as a string: the rule itself, for the hook (`pathlib` costs its start-up)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "agent-tui")
    # The temporary directory as `tempfile` names it on Unix (its first variable set, else /tmp),
    # without importing `tempfile`: with `shutil` and `re` it costs the hook ~10 ms per call.
    environ = os.environ
    temporary = environ.get("TMPDIR") or environ.get("TEMP") or environ.get("TMP") or "/tmp"
    return os.path.join(temporary, f"agent-tui-{os.getuid()}")
