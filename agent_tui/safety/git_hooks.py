"""The git files agent-tui reads itself: every hook event of githooks(5), which of them run only
when git writes, and where a `.git` file points.

Invariants:
- `HOOK_EVENTS` is every hook event git runs (githooks(5), the p4 ones included); agent-tui's own
  git turns each off and the repository check judges each, so a name added here reaches both;
- `WRITE_ONLY_HOOKS` are those git runs only for commands that are never `read` (commits,
  merges, checkouts, pushes, rebases, receiving); `fsmonitor-watchman` runs only when
  `core.fsmonitor` names it. The others (`post-index-change` whenever `git status` or `git diff`
  refreshes the index, `reference-transaction` on ref updates) can run for a `read`;
- `gitdir_of` is the one reader of a `.git` file's `gitdir:` line, and reads it as git does
  (setup.c's `read_gitfile_gently`): every caller sees the directory git would use, or None.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agent_tui.safety.shell_words import names

__all__ = ["HOOK_EVENTS", "WRITE_ONLY_HOOKS", "gitdir_of"]

_MAX_GIT_FILE = 1 << 20
"""git refuses a `.git` file larger than this."""

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
    folder. None when it is not a regular file (a FIFO is never waited on), cannot be read, or
    git would refuse it. The path is not resolved."""
    try:
        with open(os.open(dot_git, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return None
            raw = file.read(_MAX_GIT_FILE + 1)
    except OSError:
        return None
    if len(raw) > _MAX_GIT_FILE or not raw.startswith(b"gitdir: "):
        return None
    said = raw.removeprefix(b"gitdir: ").rstrip(b"\r\n").split(b"\0")[0]
    return dot_git.parent / os.fsdecode(said) if said else None
