"""The git files agent-tui reads itself: every hook event of githooks(5), which of them run only
when git writes, and where a `.git` file points.

Invariants:
- `HOOK_EVENTS` is every hook event git runs (githooks(5), the p4 ones included); agent-tui's own
  git turns each off and the repository check judges each, so a name added here reaches both;
- `WRITE_ONLY_HOOKS` are those git runs only for commands that are never `read` (commits,
  merges, checkouts, pushes, rebases, receiving); `fsmonitor-watchman` runs only when
  `core.fsmonitor` names it. The others (`post-index-change` whenever `git status` or `git diff`
  refreshes the index, `reference-transaction` on ref updates) can run for a `read`;
- `gitdir_of` is the one reader of a `.git` file's `gitdir:` line and `common_dir_of` of a git
  directory's `commondir` file; each reads it as git does (setup.c): every caller sees the
  directory git would use, or None. Neither waits on a FIFO or reads past `_MAX_GIT_FILE`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agent_tui.safety.shell_words import names

__all__ = ["HOOK_EVENTS", "WRITE_ONLY_HOOKS", "common_dir_of", "gitdir_of"]

_MAX_GIT_FILE = 1 << 20
"""git refuses a `.git` file larger than this; neither file is read past it here."""

WRITE_ONLY_HOOKS = names(
    "applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit prepare-commit-msg "
    "commit-msg post-commit pre-rebase post-checkout post-merge pre-push pre-receive update proc-receive "
    "post-receive post-update push-to-checkout pre-auto-gc post-rewrite sendemail-validate "
    "fsmonitor-watchman p4-changelist p4-prepare-changelist p4-post-changelist p4-pre-submit"
)
"""Hooks git runs only for commands that are never `read`."""

HOOK_EVENTS: tuple[str, ...] = (*sorted(WRITE_ONLY_HOOKS), "post-index-change", "reference-transaction")
"""Every hook event of githooks(5)."""


def gitdir_of(dot_git: Path) -> Path | None:
    """Where the `.git` file `dot_git` points, as git reads it: the file starts with `gitdir: `,
    the rest without its trailing line breaks (up to a NUL) is the path, relative to the file's
    folder. None when it is not a regular file, cannot be read, or git would refuse it. The
    path is not resolved."""
    raw = _git_file(dot_git)
    if raw is None or not raw.startswith(b"gitdir: "):
        return None
    return _named(dot_git.parent, raw.removeprefix(b"gitdir: "))


def common_dir_of(git_dir: Path) -> Path | None:
    """The repository's common directory that the `commondir` file of the git directory
    `git_dir` names (a linked worktree's), as git reads it: without its trailing line breaks,
    relative to `git_dir`. None when there is no such file (`git_dir` is its own), or it cannot
    be read or is empty (git stops there). The path is not resolved."""
    raw = _git_file(git_dir / "commondir")
    return None if raw is None else _named(git_dir, raw)


def _git_file(path: Path) -> bytes | None:
    """The bytes of a regular file of git's (a FIFO is never waited on); None if not one, not
    readable or larger than `_MAX_GIT_FILE`."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return None
            raw = file.read(_MAX_GIT_FILE + 1)
    except OSError:
        return None
    return raw if len(raw) <= _MAX_GIT_FILE else None


def _named(folder: Path, said: bytes) -> Path | None:
    """The path a git file says, trailing line breaks removed, up to a NUL, from `folder`."""
    said = said.rstrip(b"\r\n").split(b"\0")[0]
    return folder / os.fsdecode(said) if said else None
