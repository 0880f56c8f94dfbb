"""Confining the paths a model names to the session's working directory.

Invariants this module guarantees:
- `resolve_under` accepts a path only if its fully resolved form (every symlink followed, `..`
  applied) lies inside the real path of the session cwd; otherwise it raises
  `ToolError("path_unsafe")` before anything on disk is opened, created or changed;
- `open_resolved` opens what `resolve_under` approved without ever following a symlink, so a
  path that was swapped for a symlink after the check (time-of-check/time-of-use) fails with
  `path_unsafe` instead of reaching outside;
- `NUL` bytes in a path are refused outright.

How the time-of-use guard works. `resolve_under` returns the *real* path, which by construction
contains no symlinks below the cwd. `open_resolved` then walks that path one component at a time
from a directory descriptor of the cwd: each parent directory is opened with
`O_DIRECTORY | O_NOFOLLOW` relative to the previous one (`openat`), and the final component with
the caller's flags plus `O_NOFOLLOW`. If any component became a symlink after the check, the
kernel refuses to follow it (`ELOOP`/`ENOTDIR`) and we report `path_unsafe`. As a second,
independent check, the real path of the opened descriptor is read back (`/proc/self/fd/N` on
Linux, `F_GETPATH` on macOS) and must still lie inside the cwd; otherwise the descriptor is
closed and `path_unsafe` raised. Files are never opened with `O_TRUNC`; writers truncate through
the verified descriptor, so nothing outside the cwd is truncated even for a moment.

Absolute paths are accepted when they resolve inside the cwd (models often repeat what `pwd`
printed); any other absolute path is `path_unsafe`.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from agent_tui.engine.tools.base import ToolError

__all__ = [
    "display_path",
    "is_inside",
    "open_resolved",
    "open_under",
    "os_error_to_tool_error",
    "resolve_under",
]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def is_inside(path: str, root: str) -> bool:
    """Whether the absolute, normalized `path` is `root` or lies below it."""
    if root == os.sep:
        return True
    return path == root or path.startswith(root + os.sep)


def resolve_under(cwd: Path, user_path: str, *, must_exist: bool) -> Path:
    """Resolve a path named by the model under the session cwd.

    Args:
        cwd: the session's working directory.
        user_path: the path as the model gave it; relative paths are taken from `cwd`, an empty
            path means `cwd` itself.
        must_exist: raise `ToolError("not_found")` when the resolved path does not exist.

    Returns:
        The real path (symlinks resolved), inside the real path of `cwd`.

    Raises:
        ToolError: `path_unsafe` for a NUL byte, a `..` that climbs out, an absolute path
            elsewhere, or a symlink (the file itself or any parent) leading outside;
            `not_found` when `must_exist` and nothing is there. Nothing is touched.
    """
    if "\x00" in user_path:
        raise ToolError("path_unsafe", "path contains a NUL byte")
    root = os.path.realpath(cwd)
    real = os.path.realpath(os.path.join(root, user_path or "."))
    if not is_inside(real, root):
        raise ToolError(
            "path_unsafe",
            f"path {user_path!r} leads outside the session directory; "
            "use a path inside the working directory",
        )
    if must_exist and not os.path.lexists(real):
        raise ToolError("not_found", f"{user_path or '.'}: no such file or directory")
    return Path(real)


def _fd_real_path(fd: int) -> str | None:
    """The path the kernel has for an open descriptor, or None where it cannot tell."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
    try:
        import fcntl

        getpath = getattr(fcntl, "F_GETPATH", None)
        if getpath is not None:
            raw = fcntl.fcntl(fd, getpath, b"\0" * 1024)
            return os.fsdecode(raw.rstrip(b"\0"))
    except OSError:
        pass
    return None


def _unsafe_component(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _swapped(display: str) -> ToolError:
    return ToolError(
        "path_unsafe", f"path {display!r} changed into a symlink while it was being opened; refused"
    )


def open_resolved(
    cwd: Path,
    resolved: Path,
    flags: int,
    *,
    mode: int = 0o666,
    make_parents: bool = False,
    display: str | None = None,
) -> int:
    """Open a path approved by `resolve_under` without following any symlink on the way.

    Args:
        cwd: the session's working directory (the same one given to `resolve_under`).
        resolved: the path `resolve_under` returned.
        flags: `os.open` flags for the final component; `O_NOFOLLOW` and `O_CLOEXEC` are added.
            Do not pass `O_TRUNC`: truncate through the returned descriptor instead.
        mode: permissions for a file created with `O_CREAT`.
        make_parents: create missing parent directories (inside the cwd) on the way.
        display: the path as the user gave it, for messages.

    Returns:
        An open file descriptor; the caller closes it.

    Raises:
        ToolError: `path_unsafe` if a component is (now) a symlink or the opened file lies
            outside the cwd. OSError for everything else (missing file, permissions, ...).
    """
    root = os.path.realpath(cwd)
    shown = display if display is not None else str(resolved)
    real = os.path.normpath(str(resolved))
    if not is_inside(real, root):
        raise ToolError("path_unsafe", f"path {shown!r} leads outside the session directory")
    parts = Path(os.path.relpath(real, root)).parts if real != root else ()
    dir_fd = os.open(root, _DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        for part in parts[:-1]:
            parent, dir_fd = dir_fd, _enter(dir_fd, part, make_parents=make_parents, shown=shown)
            os.close(parent)
        if parts:
            try:
                fd = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
            except OSError as error:
                if error.errno == errno.ELOOP or _unsafe_component(parts[-1], dir_fd):
                    raise _swapped(shown) from None
                raise
        else:
            fd = os.open(".", flags | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    opened = _fd_real_path(fd)
    if opened is not None and not is_inside(opened.removesuffix(" (deleted)"), root):
        os.close(fd)
        raise _swapped(shown)
    return fd


def _enter(dir_fd: int, part: str, *, make_parents: bool, shown: str) -> int:
    """Open the directory `part` below `dir_fd` without following a symlink (creating it if
    asked). `dir_fd` stays open: the caller owns it."""
    try:
        try:
            return os.open(part, _DIR_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            if not make_parents:
                raise
            try:
                os.mkdir(part, 0o777, dir_fd=dir_fd)
            except FileExistsError:
                pass
            return os.open(part, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as error:
        if error.errno == errno.ELOOP or _unsafe_component(part, dir_fd):
            raise _swapped(shown) from None
        raise


def open_under(
    cwd: Path, user_path: str, flags: int, *, must_exist: bool, mode: int = 0o666, make_parents: bool = False
) -> tuple[int, Path]:
    """`resolve_under` then `open_resolved`: the one call tools use.

    Returns:
        (descriptor, resolved path).
    """
    resolved = resolve_under(cwd, user_path, must_exist=must_exist)
    fd = open_resolved(cwd, resolved, flags, mode=mode, make_parents=make_parents, display=user_path or ".")
    return fd, resolved


def display_path(cwd: Path, resolved: Path) -> str:
    """`resolved` relative to the cwd, as tools print it (`.` for the cwd itself)."""
    return os.path.relpath(resolved, os.path.realpath(cwd))


def os_error_to_tool_error(error: OSError, user_path: str) -> ToolError:
    """Map an OS error on `user_path` to the log's error codes with a readable message."""
    reason = error.strerror or str(error)
    shown = user_path or "."
    if isinstance(error, FileNotFoundError):
        return ToolError("not_found", f"{shown}: no such file or directory")
    if isinstance(error, IsADirectoryError):
        return ToolError("io_error", f"{shown}: is a directory")
    if isinstance(error, NotADirectoryError):
        return ToolError("io_error", f"{shown}: not a directory")
    if isinstance(error, PermissionError):
        return ToolError("io_error", f"{shown}: permission denied")
    return ToolError("io_error", f"{shown}: {reason}")
