"""Git worktrees: an agent that works in its own checkout, on its own branch.

Invariants:
- a worktree is made only inside a git repository, at
  `<repository root>/.agent-tui/worktrees/<slug>`, on a new branch `agent-tui/<slug>` started
  from the repository's current `HEAD`. The repository's own working copy is not touched, except
  for `.agent-tui/worktrees/.gitignore` (`*`), which keeps the worktrees out of `git status`;
- an agent asked to work in a subdirectory of the repository works in the same subdirectory of
  its worktree;
- every git failure is a `WorktreeError` whose message is git's own words (never a traceback);
  a failed `git worktree add` leaves nothing behind;
- removal (`git worktree remove --force`) deletes the checkout and keeps the branch, so anything
  committed there survives; what was not committed is gone, which is why callers ask first;
- a worktree knows where it came from: the branch the repository had checked out when it was
  made (`base_branch`, None on a detached `HEAD`) and that commit (`base_commit`), which the
  review diffs against and merges back into;
- `.agent-tui` and `.agent-tui/worktrees` are real folders inside the repository (made when
  missing): when the repository has either as a symlink (wherever it points, dangling too) or
  as a file, nothing is made and the `WorktreeError` says so;
- every git command is agent-tui's own hardened git (`own_git`: no hook, no program the
  repository's config names, no terminal); its failures are `WorktreeError`s (`GitError`) in
  git's words.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from agent_tui.runtime.own_git import GitError, git, git_bytes

__all__ = [
    "BRANCH_PREFIX",
    "WORKTREES_DIR",
    "Worktree",
    "WorktreeError",
    "create_worktree",
    "current_branch",
    "git",
    "git_bytes",
    "main_repo_of",
    "remove_worktree",
    "repo_root",
    "slug_for",
    "uncommitted_changes",
]

WORKTREES_DIR = Path(".agent-tui") / "worktrees"
BRANCH_PREFIX = "agent-tui/"


WorktreeError = GitError
"""git could not do it (or the worktree may not be made there); the message says why."""


@dataclass(frozen=True)
class Worktree:
    """A checkout of `repo` at `path` on `branch`; `cwd` is where the agent works inside it."""

    repo: Path
    path: Path
    branch: str
    cwd: Path
    base_branch: str | None = None
    base_commit: str | None = None


def current_branch(directory: Path) -> str | None:
    """The branch checked out at `directory` (None: a detached `HEAD`, or no repository)."""
    try:
        return git(directory, "symbolic-ref", "--quiet", "--short", "HEAD") or None
    except WorktreeError:
        return None


def repo_root(directory: Path) -> Path | None:
    """The root of the git working copy `directory` is in, or None (not a repo, no git)."""
    if not directory.is_dir():
        return None
    try:
        return Path(git(directory, "rev-parse", "--show-toplevel")).resolve()
    except WorktreeError:
        return None


def slug_for(name: str) -> str:
    """A branch- and path-safe name for an agent: lower case, `a-z0-9-`, a short random tail."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:32] or "agent"
    return f"{base}-{secrets.token_hex(3)}"


def create_worktree(directory: Path, name: str) -> Worktree:
    """A new worktree of the repository `directory` is in, on a new branch.

    Args:
        directory: where the agent should work (the repository root or a directory inside it).
        name: the agent's name (part of the branch and directory names).

    Raises:
        WorktreeError: `directory` is not in a git repository, the repository has no commit yet,
            `.agent-tui` or `.agent-tui/worktrees` is not a real folder, or git refused.
    """
    directory = directory.resolve()
    root = repo_root(directory)
    if root is None:
        raise WorktreeError(f"{directory}: not inside a git repository")
    slug = slug_for(name)
    parent = _own_folder(root)
    path = parent / slug
    branch = BRANCH_PREFIX + slug
    base_branch = current_branch(root)
    base_commit = git(root, "rev-parse", "--verify", "HEAD^{commit}")
    git(root, "worktree", "add", "--quiet", "-b", branch, str(path), base_commit)
    if os.path.realpath(path) != str(path):  # a folder on the way was made a symlink meanwhile
        git_bytes(root, "worktree", "remove", "--force", str(path), check=False)
        git_bytes(root, "branch", "-D", "--quiet", branch, check=False)
        raise WorktreeError(
            f"{parent} became a symbolic link while the worktree was made: it was removed again; "
            "agent-tui makes its worktrees only in a real folder inside the repository"
        )
    return Worktree(
        repo=root,
        path=path,
        branch=branch,
        cwd=path / directory.relative_to(root),
        base_branch=base_branch,
        base_commit=base_commit,
    )


def _own_folder(root: Path) -> Path:
    """`<root>/.agent-tui/worktrees`, made of real folders (created when missing), with its
    `.gitignore`; refused when the repository ships either folder as anything else.

    Raises:
        WorktreeError: `.agent-tui` or `.agent-tui/worktrees` is a symlink or not a folder, or
            the `.gitignore` there is not a plain file.
    """
    folder = root
    for part in WORKTREES_DIR.parts:
        folder = folder / part
        try:
            os.mkdir(folder, 0o755)
        except FileExistsError:
            pass
        except OSError as error:
            raise WorktreeError(
                f"{folder}: cannot make the folder for worktrees ({error.strerror})"
            ) from None
        mode = os.lstat(folder).st_mode
        if not stat.S_ISDIR(mode):  # (lstat: a symbolic link is not a folder here)
            what, fix = (
                ("a symbolic link", "remove the link")
                if stat.S_ISLNK(mode)
                else ("not a folder", "move it away")
            )
            raise WorktreeError(
                f"{folder} is {what}: agent-tui makes its worktrees only in a real folder "
                f"inside the repository; {fix} and try again"
            )
    ignore = folder / ".gitignore"
    try:
        handle = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        if not stat.S_ISREG(os.lstat(ignore).st_mode):
            raise WorktreeError(f"{ignore} is not a plain file: remove it and try again") from None
    except OSError as error:
        raise WorktreeError(f"{ignore}: cannot be written ({error.strerror})") from None
    else:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write("*\n")
    return folder


def uncommitted_changes(path: Path) -> int:
    """How many files `git status` lists as changed or new in the worktree at `path`."""
    output = git(path, "status", "--porcelain", "--untracked-files=all")
    return len([line for line in output.splitlines() if line.strip()])


def main_repo_of(path: Path) -> Path:
    """The main working copy a linked worktree belongs to."""
    common = Path(git(path, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    return common.parent


def remove_worktree(path: Path) -> None:
    """Delete the worktree at `path` (uncommitted changes included); its branch is kept.

    Raises:
        WorktreeError: git refused (the message says why).
    """
    if not path.exists():
        raise WorktreeError(f"{path}: the worktree is not there any more")
    repo = main_repo_of(path)
    git(repo, "worktree", "remove", "--force", str(path))
