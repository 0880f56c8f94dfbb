"""Rewinding a turn: the files it changed put back as they were before it.

Invariants:
- what a turn changed is, in a git working copy, every path whose content differs between the
  snapshots of its start and its end (`turn_records`), shell commands' changes included, plus the
  files its `write_file`/`edit_file` calls wrote that git ignores; outside git, only the files
  those tools wrote. A turn that ran no shell command and started no sub-agent changed only what
  its file tools wrote: other changes between its snapshots (the user's, another session's) are
  not its own and are left alone. Before-contents come from the start snapshot, else from the capture the
  write made;
- `plan_rewind` only reads; `apply_rewind` writes exactly the plan's files, each through the
  tools' own path checks (no symlink followed out of the working copy): a file that did not
  exist before the turn is removed, every other one gets its old bytes and permission bits back;
- a protected path (under `.git/` or `.agent-tui/`) is written only when the caller says the
  user allowed it (`allow_protected`); otherwise it is `skipped`. So are symlinks and submodules
  in a snapshot, and files too big to have been captured;
- what cannot be undone is said in words (`incomplete`): shell commands of a turn outside git,
  files skipped, a snapshot git has pruned; never silently left out.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agent_tui.engine.protected_paths import protected_change
from agent_tui.engine.tools.base import ToolError
from agent_tui.engine.tools.paths import open_resolved, resolve_under
from agent_tui.events import counted
from agent_tui.runtime.turn_records import (
    Capture,
    Snapshot,
    captured_bytes,
    read_records,
    snapshot_tree,
)
from agent_tui.runtime.worktrees import WorktreeError, git_bytes

Action = Literal["restored", "removed", "skipped"]


class RewindError(Exception):
    """A rewind that cannot be made at all; the message says why."""


@dataclass(frozen=True)
class PlannedFile:
    """One file of a rewind: where, and what it gets back."""

    path: Path
    shown: str
    before: bytes | None
    """Its bytes before the turn, where this process holds them (None: it did not exist, it is
    skipped, or the plan was read from a host over the bus: the bytes stay with the host)."""
    mode: int | None
    skip: str | None = None
    """Why it is not written (a symlink, a submodule, not captured), or None."""
    protected: bool = False
    changed_since: bool = False
    """Its content now is not what the turn left (a later turn, or the user, changed it too)."""
    existed: bool = True
    """Whether it existed before the turn (no: the rewind removes it)."""

    @property
    def action(self) -> Action:
        if self.skip is not None:
            return "skipped"
        return "restored" if self.existed else "removed"


@dataclass(frozen=True)
class RewindPlan:
    """What rewinding `turn_id` of `session_id` would do."""

    session_id: str
    turn_id: str
    root: Path
    files: tuple[PlannedFile, ...]
    notes: tuple[str, ...] = ()
    """What it cannot undo, one sentence each."""

    @property
    def protected(self) -> tuple[PlannedFile, ...]:
        return tuple(item for item in self.files if item.protected and item.skip is None)


@dataclass(frozen=True)
class RewoundFile:
    path: str
    action: Action


@dataclass(frozen=True)
class RewindResult:
    """What a rewind did (the `turn.rewound` payload's content)."""

    session_id: str
    turn_id: str
    files: tuple[RewoundFile, ...]
    incomplete: str | None = None


@dataclass
class _Found:
    start: Snapshot | None = None
    end: Snapshot | None = None
    captures: list[Capture] = field(default_factory=list)


def plan_rewind(
    sessions_dir: Path,
    session_id: str,
    turn_id: str,
    cwd: Path,
    shell_commands: Sequence[str] = (),
    *,
    spawned: bool = False,
) -> RewindPlan:
    """What rewinding the turn would write (nothing is written).

    Args:
        shell_commands: the commands the turn's `shell` calls ran (from its log).
        spawned: the turn started sub-agents. With neither, only its file tools changed files: a
            file the snapshots show changed that those did not write was changed by someone else
            meanwhile (the user, another session) and is left alone.

    Raises:
        RewindError: nothing was recorded for that turn (and it ran no file tool).
    """
    found = _records_of(sessions_dir, session_id, turn_id)
    notes: list[str] = []
    root = found.start.root if found.start is not None else cwd
    planned = _from_start(found, only_file_tools=not shell_commands and not spawned, notes=notes)
    if found.start is None and shell_commands:
        shown = ", ".join(f"`{command[:60]}`" for command in shell_commands[:3])
        more = " …" if len(shell_commands) > 3 else ""
        notes.append(
            f"{counted(len(shell_commands), 'shell command')} ran in this turn ({shown}{more}); "
            "outside git what they changed was not recorded, so it stays as it is"
        )
    for capture in found.captures:
        if capture.path not in planned:  # else the start snapshot says what was there before the turn
            planned[capture.path] = _captured(capture, _shown(capture.path, root), sessions_dir, session_id)
    if found.start is None and not found.captures and not notes:
        raise RewindError("nothing was recorded for that turn: it changed no file through agent-tui's tools")
    files = tuple(_judged(item, root) for item in sorted(planned.values(), key=lambda f: f.shown))
    skipped = [item for item in files if item.skip is not None]
    if skipped:
        notes.append(
            f"{counted(len(skipped), 'file')} cannot be put back: "
            + ", ".join(f"{item.shown} ({item.skip})" for item in skipped[:3])
        )
    return RewindPlan(session_id, turn_id, root, files, tuple(notes))


def _from_start(found: _Found, *, only_file_tools: bool, notes: list[str]) -> dict[Path, PlannedFile]:
    """The files the git snapshots show changed (with only file tools at work, those they wrote);
    none, and a note, when the start's snapshot cannot be read (`found.start` is then dropped)."""
    if found.start is None:
        return {}
    try:
        changed = _from_snapshots(found.start, found.end)
    except WorktreeError as error:
        notes.append(f"the git snapshot of the turn's start cannot be read ({error})")
        found.start = None
        return {}
    if only_file_tools:  # keep what they wrote
        written = {capture.path for capture in found.captures}
        changed = {path: item for path, item in changed.items() if path in written}
    return dict(changed)


def _records_of(sessions_dir: Path, session_id: str, turn_id: str) -> _Found:
    """The turn's snapshots (the first at its start, the last at its end) and file captures."""
    found = _Found()
    for record in read_records(sessions_dir, session_id):
        if record.turn_id != turn_id:
            continue
        if isinstance(record, Snapshot):
            if record.at == "start" and found.start is None:
                found.start = record
            elif record.at == "end":
                found.end = record
        else:
            found.captures.append(record)
    return found


def _captured(capture: Capture, shown: str, sessions_dir: Path, session_id: str) -> PlannedFile:
    """A file as a file tool's capture kept it before the turn changed it."""
    if capture.too_big:
        return PlannedFile(capture.path, shown, None, None, skip="too big to have been kept")
    before = None
    if capture.blob is not None:
        try:
            before = captured_bytes(sessions_dir, session_id, capture.blob)
        except OSError:
            return PlannedFile(capture.path, shown, None, None, skip="its record is gone")
    return PlannedFile(capture.path, shown, before, capture.mode, existed=capture.blob is not None)


def apply_rewind(plan: RewindPlan, *, allow_protected: bool = False) -> RewindResult:
    """Write the plan's files back (protected ones only with `allow_protected`)."""
    done: list[RewoundFile] = []
    notes = list(plan.notes)
    refused: list[str] = []
    for item in plan.files:
        if item.skip is not None or (item.protected and not allow_protected):
            if item.skip is None:
                refused.append(item.shown)
            done.append(RewoundFile(item.shown, "skipped"))
            continue
        try:
            _put_back(plan.root, item)
        except (OSError, ToolError) as error:
            reason = error.message if isinstance(error, ToolError) else (error.strerror or str(error))
            notes.append(f"{item.shown} could not be written ({reason})")
            done.append(RewoundFile(item.shown, "skipped"))
            continue
        done.append(RewoundFile(item.shown, item.action))
    if refused:
        notes.append(f"protected paths were left as they are: {', '.join(refused[:3])}")
    return RewindResult(plan.session_id, plan.turn_id, tuple(done), "; ".join(notes) or None)


# -- the parts ---------------------------------------------------------------------------------


def _from_snapshots(start: Snapshot, end: Snapshot | None) -> dict[Path, PlannedFile]:
    root = start.root
    end_tree = end.tree if end is not None else snapshot_tree(root)  # a turn whose end was not seen
    changed = git_bytes(root, "diff-tree", "-r", "-z", "--no-renames", "--name-only", start.tree, end_tree)
    names = [name for name in changed.stdout.split(b"\0") if name]
    before = _entries(root, start.tree, names)
    after = _entries(root, end_tree, names)
    planned: dict[Path, PlannedFile] = {}
    for raw in names:
        rel = os.fsdecode(raw)
        path = root / rel
        entry = before.get(raw)
        skip: str | None = None
        content: bytes | None = None
        mode: int | None = None
        if entry is not None:
            kind, sha = entry
            if kind == "120000":
                skip = "a symlink"
            elif kind == "160000":
                skip = "a submodule"
            else:
                content = git_bytes(root, "cat-file", "blob", sha).stdout
                mode = 0o755 if kind == "100755" else 0o644
        planned[path] = PlannedFile(
            path,
            rel,
            content,
            mode,
            skip=skip,
            changed_since=_changed_since(path, after.get(raw)),
            existed=entry is not None,
        )
    return planned


def _entries(root: Path, tree: str, names: Iterable[bytes]) -> dict[bytes, tuple[str, str]]:
    """`{path: (mode, object id)}` of `names` in `tree` (absent ones are left out)."""
    wanted = list(names)
    if not wanted:
        return {}
    listing = git_bytes(
        root, "ls-tree", "-r", "-z", "--full-tree", tree, "--", *map(os.fsdecode, wanted)
    ).stdout
    entries: dict[bytes, tuple[str, str]] = {}
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, _kind, sha = meta.decode().split()
        entries[name] = (mode, sha)
    return entries


def _changed_since(path: Path, after: tuple[str, str] | None) -> bool:
    try:
        now: bytes | None = path.read_bytes() if not path.is_symlink() else None
    except OSError:
        now = None
    if after is None:
        return now is not None
    if now is None:
        return True
    algorithm = "sha256" if len(after[1]) == 64 else "sha1"  # the repository's object format
    return hashlib.new(algorithm, f"blob {len(now)}\0".encode() + now).hexdigest() != after[1]


def _judged(item: PlannedFile, root: Path) -> PlannedFile:
    change = protected_change("write_file", {"path": str(item.path)}, "write", root)
    if change is None:
        return item
    return dataclasses.replace(item, protected=True)


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _put_back(root: Path, item: PlannedFile) -> None:
    relative = os.path.relpath(item.path, root)
    if not item.existed:
        resolved = resolve_under(root, relative, must_exist=False)
        if os.path.lexists(resolved):
            if os.path.isdir(resolved) and not os.path.islink(resolved):
                raise OSError(0, "a directory is there now")
            os.unlink(resolved)
        return
    if item.before is None:
        raise OSError(0, "its old content is not in this process")
    resolved = resolve_under(root, relative, must_exist=False)
    fd = open_resolved(
        root, resolved, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK, make_parents=True, display=relative
    )
    try:
        view = memoryview(item.before)
        while view:
            view = view[os.write(fd, view) :]
        os.ftruncate(fd, len(item.before))
        if item.mode is not None:
            os.fchmod(fd, item.mode)
    finally:
        os.close(fd)
