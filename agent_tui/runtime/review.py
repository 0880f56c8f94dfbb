"""Reviewing an agent's work, and finishing it: the diff against its base, commit, merge, discard.

Invariants:
- the diff is computed, never applied: a worktree session's whole change (what it committed on
  its branch and what it has not committed yet, new files included) against the commit its branch
  started from (the merge base with the branch it came from), or a directory session's change
  since its first turn started (that turn's snapshot; `HEAD` when none was recorded). The
  current tree is read through a temporary index, so the user's index is never touched. Outside
  git, the files its file tools wrote, against what they held before the session's first write;
- no git command here runs a program of the repository's (`own_git`: no hook, filter, merge
  driver or signing program its config names); diffs also pass `--no-ext-diff --no-textconv`,
  and commit and merge `--no-verify`;
- `commit_worktree` commits everything in the agent's own worktree, and only there;
- `merge_worktree` merges the agent's branch into the branch it came from, or refuses and says
  why before anything changes: the agent's worktree has uncommitted changes; the checkout of that
  branch has uncommitted changes (never stashed, never touched) or untracked files the merge would
  overwrite; the merge conflicts (found first with `git merge-tree`, which writes no file). A
  merge that fails anyway is aborted, so no half-merge (`MERGE_HEAD`) is ever left. When no
  checkout has that branch, the branch is moved with a compare-and-swap `update-ref`;
- `discard_worktree` removes the agent's worktree and deletes its branch (the caller asks first).
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent_tui.runtime.change_preview import MAX_PREVIEW_BYTES, ChangeKind, ChangePreview
from agent_tui.runtime.turn_records import snapshot_tree
from agent_tui.runtime.worktrees import (
    WorktreeError,
    current_branch,
    git,
    git_bytes,
    main_repo_of,
    remove_worktree,
    uncommitted_changes,
)

MAX_FILES = 500
"""Files a review shows; the rest are counted."""
MAX_DIFF_CHARS = 400_000
"""Characters of one file's diff a review keeps (a generated file would fill the screen)."""
SYMLINK_MODE = "120000"

FileStatus = Literal["added", "modified", "deleted", "type changed"]
_STATUS: dict[str, FileStatus] = {"A": "added", "M": "modified", "D": "deleted", "T": "type changed"}


class ReviewRefused(Exception):
    """A commit, merge or discard that was not made; the message says why (nothing changed)."""


@dataclass(frozen=True)
class ReviewFile:
    """One changed file: its path (from the working copy's root), how, and its unified diff."""

    path: str
    status: FileStatus
    diff: str
    added: int
    removed: int
    binary: bool = False
    old_text: str | None = None
    """The file at the base and now (None: too big or not text: then `diff` is what is shown)."""
    new_text: str | None = None
    symlink: bool = False
    """It is (or was) a symbolic link: its text is where it points."""

    def preview(self) -> ChangePreview | None:
        """The change as the approval dialog's diff shows one (None: show `diff` instead)."""
        if self.old_text is None or self.new_text is None:
            return None
        kind: ChangeKind = "create" if self.status == "added" else "edit"
        return ChangePreview(self.path, kind, self.old_text, self.new_text)


@dataclass(frozen=True)
class Review:
    """A session's whole change, file by file."""

    session_id: str
    kind: Literal["worktree", "directory"]
    root: Path
    base: str
    """The commit or tree the change is against."""
    base_label: str
    """The base in words (`main at 1a2b3c4`, `the start of its first turn`)."""
    files: tuple[ReviewFile, ...]
    more_files: int = 0
    branch: str | None = None
    base_branch: str | None = None
    uncommitted: int = 0
    """Files changed in the worktree and not committed yet."""
    message: str = ""
    """A commit message, from the session's prompt."""
    cut: str | None = None
    """What of the change is not here, in words (a review sent over the bus is bounded), or None."""

    @property
    def can_finish(self) -> bool:
        """Whether commit, merge and discard apply (a worktree's; a directory session's work is
        finished in the user's own checkout)."""
        return self.kind == "worktree"


@dataclass(frozen=True)
class CommitResult:
    commit: str
    files: int


@dataclass(frozen=True)
class MergeResult:
    into: str
    commit: str
    fast_forward: bool
    checkout: Path | None


def commit_message(prompt: str) -> str:
    """A commit message from a prompt: its first line (cut to 72) as the subject, and the whole
    prompt as the body when there is more."""
    text = prompt.strip()
    if not text:
        return "Work of an agent"
    first = text.splitlines()[0].strip()
    subject = first if len(first) <= 72 else first[:71].rstrip() + "…"
    return subject if text == subject else f"{subject}\n\n{text}"


def review_worktree(
    session_id: str, path: Path, branch: str, base_branch: str | None, base_commit: str | None, prompt: str
) -> Review:
    """The worktree's whole change against where its branch started.

    Raises:
        WorktreeError: git failed, or the worktree is gone.
    """
    if not path.is_dir():
        raise WorktreeError(f"{path}: the worktree is not there any more")
    base_branch = base_branch or current_branch(main_repo_of(path))
    base = base_commit
    if base_branch is not None:
        try:
            base = git(path, "merge-base", f"refs/heads/{base_branch}", "HEAD")
        except WorktreeError:
            base = base_commit
    if base is None:
        base = git(path, "rev-parse", "HEAD")
    files, more = _diff(path, base, snapshot_tree(path))
    uncommitted = uncommitted_changes(path)
    label = f"{base_branch} at {base[:7]}" if base_branch else f"{base[:7]}"
    return Review(
        session_id,
        "worktree",
        path,
        base,
        label,
        files,
        more,
        branch=branch,
        base_branch=base_branch,
        uncommitted=uncommitted,
        message=commit_message(prompt),
    )


def review_directory(session_id: str, root: Path, since_tree: str | None, prompt: str) -> Review:
    """A directory session's change since its first turn started (`since_tree`), or since `HEAD`."""
    base = since_tree or git(root, "rev-parse", "HEAD")
    label = "the start of its first turn" if since_tree else f"HEAD at {base[:7]}"
    files, more = _diff(root, base, snapshot_tree(root))
    return Review(session_id, "directory", root, base, label, files, more, message=commit_message(prompt))


def review_written(session_id: str, cwd: Path, before: dict[Path, bytes | None], prompt: str) -> Review:
    """A session outside git: what its file tools wrote, each file as it was before the first
    write of the session (`before`: None, it did not exist) against the file now. What shell
    commands changed is not known there, and the base label says so."""
    files: list[ReviewFile] = []
    for path in sorted(before):
        old_bytes = before[path]
        try:
            new_bytes: bytes | None = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        except OSError:
            new_bytes = None
        if old_bytes == new_bytes:
            continue
        status: FileStatus = "added" if old_bytes is None else "deleted" if new_bytes is None else "modified"
        old, new = _as_text(old_bytes), _as_text(new_bytes)
        shown = os.path.relpath(path, cwd) if path.is_relative_to(cwd) else str(path)
        added = removed = 0
        diff = ""
        if old is not None and new is not None:
            lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), shown, shown, lineterm=""))
            added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
            removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
            diff = "\n".join(lines)
        files.append(ReviewFile(shown, status, diff, added, removed, old is None or new is None, old, new))
    label = "the session's first writes (file tools only: outside git, shell changes are not seen)"
    return Review(session_id, "directory", cwd, "", label, tuple(files), message=commit_message(prompt))


def _as_text(data: bytes | None) -> str | None:
    return "" if data is None else _decoded(data)


_DIFF_OPTIONS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")


def _diff(root: Path, base: str, tree: str) -> tuple[tuple[ReviewFile, ...], int]:
    changed, links = _changed(root, base, tree)
    numbers = _line_counts(root, base, tree)
    shown = changed[:MAX_FILES]
    texts = _texts(root, [(rev, name) for _, name in shown for rev in (base, tree)])
    files: list[ReviewFile] = []
    for status, name in shown:
        added, removed, binary = numbers.get(name, (0, 0, False))
        old = None if binary else texts.get((base, name))
        new = None if binary else texts.get((tree, name))
        if old is not None and new is not None:
            patch = "\n".join(
                difflib.unified_diff(
                    old.splitlines(), new.splitlines(), f"a/{name}", f"b/{name}", lineterm=""
                )
            )
        elif binary:
            patch = ""
        else:  # too big to keep whole: git's own patch, cut
            patch = git_bytes(root, "diff", *_DIFF_OPTIONS, base, tree, "--", name).stdout.decode(
                "utf-8", "replace"
            )
        if len(patch) > MAX_DIFF_CHARS:
            patch = patch[:MAX_DIFF_CHARS] + f"\n[diff cut at {MAX_DIFF_CHARS:,} characters]\n"
        status_word = _STATUS.get(status, "modified")
        files.append(ReviewFile(name, status_word, patch, added, removed, binary, old, new, name in links))
    return tuple(files), max(len(changed) - MAX_FILES, 0)


def _changed(root: Path, base: str, tree: str) -> tuple[list[tuple[str, str]], set[str]]:
    """The changed paths with their status letter, in git's order, and which are symbolic links."""
    listing = git_bytes(root, "diff", *_DIFF_OPTIONS, "--raw", "-z", base, tree).stdout.split(b"\0")
    changed: list[tuple[str, str]] = []
    links: set[str] = set()
    for i in range(0, len(listing) - 1, 2):
        fields = listing[i].decode().split()  # `:old-mode new-mode old-id new-id status`
        if len(fields) != 5:
            continue
        path = os.fsdecode(listing[i + 1])
        changed.append((fields[4][:1], path))
        if SYMLINK_MODE in (fields[0].lstrip(":"), fields[1]):
            links.add(path)
    return changed, links


def _line_counts(root: Path, base: str, tree: str) -> dict[str, tuple[int, int, bool]]:
    """Lines added and removed by path, and whether git takes the file for binary."""
    counts = git_bytes(root, "diff", *_DIFF_OPTIONS, "--numstat", "-z", base, tree).stdout
    numbers: dict[str, tuple[int, int, bool]] = {}
    for record in counts.split(b"\0"):
        parts = record.split(b"\t", 2)
        if len(parts) == 3:
            binary = parts[0] == b"-"
            numbers[os.fsdecode(parts[2])] = (
                0 if binary else int(parts[0]),
                0 if binary else int(parts[1]),
                binary,
            )
    return numbers


def _texts(root: Path, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
    """The text of each `(tree, path)`: "" when absent, None when too big or not UTF-8. One
    `git cat-file --batch` for them all (a path with a newline, which the batch cannot name, is
    read on its own)."""
    found: dict[tuple[str, str], str | None] = {}
    batch = [(rev, name) for rev, name in wanted if "\n" not in name]
    for rev, name in wanted:
        if "\n" in name:
            found[(rev, name)] = _text_at(root, rev, name)
    if not batch:
        return found
    request = b"".join(f"{rev}:{name}\n".encode("utf-8", "surrogateescape") for rev, name in batch)
    output = git_bytes(root, "cat-file", "--batch", input=request).stdout
    at = 0
    for key in batch:
        end = output.index(b"\n", at)
        header = output[at:end].split()
        at = end + 1
        if len(header) != 3 or header[1] != b"blob":  # `missing`, or not a file (a submodule)
            found[key] = ""
            continue
        size = int(header[2])
        data = output[at : at + size]
        at += size + 1
        found[key] = _decoded(data)
    return found


def _decoded(data: bytes) -> str | None:
    if len(data) > MAX_PREVIEW_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _text_at(root: Path, tree: str, name: str) -> str | None:
    """The file `name` of `tree` as text ("" when absent; None when too big or not UTF-8)."""
    done = git_bytes(root, "cat-file", "blob", f"{tree}:{name}", check=False)
    return _decoded(done.stdout) if done.returncode == 0 else ""


def commit_worktree(path: Path, message: str) -> CommitResult:
    """Commit every change of the worktree at `path` (new files included) with `message`.

    Raises:
        ReviewRefused: nothing to commit, an empty message, or git refused (its words).
    """
    if not message.strip():
        raise ReviewRefused("the commit message is empty")
    try:
        git(path, "add", "-A", "--", ".")
        staged = git(path, "diff", "--cached", "--name-only", "-z")
        if not staged:
            raise ReviewRefused("there is nothing to commit: the worktree has no uncommitted change")
        with _message_file(message) as name:
            git(path, "commit", "--quiet", "--no-verify", "-F", name)
        commit = git(path, "rev-parse", "HEAD")
    except WorktreeError as error:
        raise ReviewRefused(f"git did not commit: {error}") from None
    return CommitResult(commit, len([name for name in staged.split("\0") if name]))


def merge_worktree(path: Path, branch: str, base_branch: str | None, message: str) -> MergeResult:
    """Merge the worktree's branch into the branch it came from (see the module contract).

    Raises:
        ReviewRefused: why it was not merged; nothing was changed.
    """
    if base_branch is None:
        raise ReviewRefused("its worktree was made from a detached HEAD: there is no branch to merge into")
    try:
        repo = main_repo_of(path)
        if git(path, "status", "--porcelain", "--untracked-files=all"):
            raise ReviewRefused("the agent's worktree has uncommitted changes: commit them first (c)")
        ours = git(repo, "rev-parse", "--verify", f"refs/heads/{base_branch}^{{commit}}")
        theirs = git(repo, "rev-parse", "--verify", f"refs/heads/{branch}^{{commit}}")
    except WorktreeError as error:
        raise ReviewRefused(str(error)) from None
    if _is_ancestor(repo, theirs, ours):
        raise ReviewRefused(f"{branch} has nothing that {base_branch} does not have already")
    checkout = _clean_checkout_of(repo, base_branch)
    merged = git_bytes(
        repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs, check=False
    )
    lines = merged.stdout.decode("utf-8", "replace").splitlines()
    if merged.returncode == 1:
        conflicted = [line for line in lines[1:] if line]
        shown = ", ".join(conflicted[:5]) + (" …" if len(conflicted) > 5 else "")
        raise ReviewRefused(
            f"merging {branch} into {base_branch} conflicts in {shown}: nothing was merged; "
            f"resolve it in the worktree (merge {base_branch} there) and try again"
        )
    if merged.returncode != 0 or not lines:
        said = " ".join(merged.stderr.decode("utf-8", "replace").split())
        raise ReviewRefused(f"git merge-tree failed: {said or merged.returncode}")
    fast_forward = _is_ancestor(repo, ours, theirs)
    if checkout is not None:
        _merge_in(checkout, ours, theirs, branch, base_branch, message)
    else:
        _move_branch(repo, ours, theirs, lines[0], base_branch, message, fast_forward)
    commit = git(repo, "rev-parse", f"refs/heads/{base_branch}")
    return MergeResult(base_branch, commit, fast_forward, checkout)


def _clean_checkout_of(repo: Path, base_branch: str) -> Path | None:
    """Where `base_branch` is checked out (None: nowhere), refused when its tracked files have
    changes the merge would have to go around."""
    checkout = _checkout_of(repo, base_branch)
    if checkout is not None:
        listing = git_bytes(checkout, "status", "--porcelain", "-z", "--untracked-files=no").stdout
        dirty = [os.fsdecode(entry[3:]) for entry in listing.split(b"\0") if entry[2:3] == b" "]
        if dirty:
            shown = ", ".join(dirty[:3]) + (" …" if len(dirty) > 3 else "")
            raise ReviewRefused(
                f"your checkout of {base_branch} ({checkout}) has uncommitted changes ({shown}): "
                "commit them or put them away yourself, then merge again; agent-tui never stashes "
                "or touches them"
            )
    return checkout


def _is_ancestor(repo: Path, older: str, newer: str) -> bool:
    return git_bytes(repo, "merge-base", "--is-ancestor", older, newer, check=False).returncode == 0


def _checkout_of(repo: Path, branch: str) -> Path | None:
    """The working copy (main or linked) that has `branch` checked out, if any."""
    current: Path | None = None
    for line in git(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            current = Path(line[len("worktree ") :])
        elif line == f"branch refs/heads/{branch}" and current is not None:
            return current
    return None


def _merge_in(checkout: Path, ours: str, theirs: str, branch: str, base_branch: str, message: str) -> None:
    # Collisions with untracked files: git would refuse too, but say it in our words, first.
    incoming = git_bytes(checkout, "diff", "--name-only", "-z", "--no-renames", ours, theirs).stdout
    untracked = set(
        git_bytes(checkout, "ls-files", "--others", "--exclude-standard", "-z").stdout.split(b"\0")
    ) - {b""}
    clash = [os.fsdecode(name) for name in incoming.split(b"\0") if name and name in untracked]
    if clash:
        raise ReviewRefused(
            f"the merge would overwrite untracked files of your checkout ({', '.join(clash[:3])}): "
            "move them away yourself, then merge again"
        )
    head = git(checkout, "rev-parse", "HEAD")
    if head != ours:
        raise ReviewRefused(f"{base_branch} moved while merging; try again")
    done = git_bytes(
        checkout,
        "merge",
        "--quiet",
        "--no-verify",
        "--no-edit",
        "-m",
        message,
        theirs,
        check=False,
    )
    if done.returncode != 0:
        if git_bytes(checkout, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False).returncode == 0:
            git_bytes(checkout, "merge", "--abort", check=False)
        said = " ".join((done.stderr or done.stdout).decode("utf-8", "replace").split())
        raise ReviewRefused(f"git did not merge {branch}: {said}; nothing was merged")


def _move_branch(
    repo: Path, ours: str, theirs: str, tree: str, base_branch: str, message: str, fast_forward: bool
) -> None:
    if fast_forward:
        new = theirs
    else:
        with _message_file(message) as name:
            new = git(repo, "commit-tree", tree, "-p", ours, "-p", theirs, "-F", name)
    try:
        git(repo, "update-ref", "-m", "agent-tui: merge", f"refs/heads/{base_branch}", new, ours)
    except WorktreeError as error:
        raise ReviewRefused(f"{base_branch} was not moved: {error}") from None


@contextmanager
def _message_file(message: str) -> Iterator[str]:
    """A temporary file holding a commit message, for git's `-F` (removed afterwards)."""
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as handle:
        handle.write(message.rstrip() + "\n")
    try:
        yield handle.name
    finally:
        os.unlink(handle.name)


def discard_worktree(path: Path, branch: str | None) -> None:
    """Remove the worktree at `path` and delete its branch (everything the agent did there).

    Raises:
        ReviewRefused: git refused (its words).
    """
    try:
        repo = main_repo_of(path) if path.exists() else None
        if path.exists():
            remove_worktree(path)
        if branch and repo is not None:
            git(repo, "branch", "-D", "--quiet", branch)
    except WorktreeError as error:
        raise ReviewRefused(str(error)) from None
