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
- `git` runs every command with the shell's hardened environment (no keys, no pager, no
  fsmonitor), never reads a terminal, and its failures are `WorktreeError`s in git's words.
"""

from __future__ import annotations

import re
import secrets
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agent_tui.engine.tools.shell_setup import ShellSetup
from agent_tui.engine.tools.tool_env import shell_environment

WORKTREES_DIR = Path(".agent-tui") / "worktrees"
BRANCH_PREFIX = "agent-tui/"
GIT_TIMEOUT = 60.0


class WorktreeError(Exception):
    """git could not do it; the message says what git said."""


@dataclass(frozen=True)
class Worktree:
    """A checkout of `repo` at `path` on `branch`; `cwd` is where the agent works inside it."""

    repo: Path
    path: Path
    branch: str
    cwd: Path
    base_branch: str | None = None
    base_commit: str | None = None


def git_bytes(
    directory: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git -C directory ARGS` (hardened environment, plus `env`, `input` on its stdin); raw
    bytes out.

    Raises:
        WorktreeError: git is missing, took too long, or (with `check`) failed.
    """
    environment = shell_environment(ShellSetup())  # the shell's hardened git, and no keys
    if env:
        environment.update(env)
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            env=environment,
        )
    except FileNotFoundError:
        raise WorktreeError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise WorktreeError(f"git {args[0]} took longer than {GIT_TIMEOUT:.0f} s") from None
    if check and done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace") or done.stdout.decode("utf-8", "replace")
        raise WorktreeError(" ".join(said.split()) or f"git {args[0]} failed ({done.returncode})")
    return done


def git(directory: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """`git -C directory ARGS`'s output as text, stripped (see `git_bytes`)."""
    return git_bytes(directory, *args, env=env).stdout.decode("utf-8", "replace").strip()


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
            or git refused.
    """
    directory = directory.resolve()
    root = repo_root(directory)
    if root is None:
        raise WorktreeError(f"{directory}: not inside a git repository")
    slug = slug_for(name)
    parent = root / WORKTREES_DIR
    parent.mkdir(parents=True, exist_ok=True)
    ignore = parent / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n", encoding="utf-8")
    path = parent / slug
    branch = BRANCH_PREFIX + slug
    base_branch = current_branch(root)
    base_commit = git(root, "rev-parse", "--verify", "HEAD^{commit}")
    git(root, "worktree", "add", "--quiet", "-b", branch, str(path), base_commit)
    return Worktree(
        repo=root,
        path=path,
        branch=branch,
        cwd=path / directory.relative_to(root),
        base_branch=base_branch,
        base_commit=base_commit,
    )


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
