"""What a rewind needs, recorded as each turn runs: before-contents of file-tool writes, and git
snapshots of the working tree at each turn's start and end.

A `TurnRecorder` listens to an engine's stored events (it is called right after each is stored,
before the turn goes on), so what it records is taken before the write or the command it is for.

Invariants:
- before a `write_file`/`edit_file` runs (at its `tool.started`), the file's bytes as they are
  then (or "it did not exist") are kept, once per path and turn: the first capture of a turn is
  what the turn found. Contents go beside the log, never into it (they may be large, and the log
  is the shared record): `<sessions dir>/<session id>.undo/blobs/<sha256>`, named by their hash,
  with one JSON line per capture in `<session id>.undo/records.jsonl`; blobs and records are 0600
  in folders made 0700 (`private_files`): they hold what the files held;
- in a git working copy, a snapshot of the whole tree (every file git does not ignore, tracked or
  not) is written as a git tree object at `turn.started` and at `turn.completed`, through a
  temporary index (`GIT_INDEX_FILE`; `add -A`, `write-tree`): the user's index, stash, refs and
  files are never touched. The tree ids go into `records.jsonl`. git may prune such objects
  after its prune expiry (two weeks by default); a rewind then says the snapshot is gone;
- recording never breaks a turn: a failure is kept in `problems` (and the turn goes on);
- outside git it costs a dictionary lookup per event (whether a directory is in a repository is
  read from the files once per session, no git is run); in git, two snapshots per turn, each a
  `git add -A` from a copy of the index (its stat cache spares reading unchanged files), taken
  on the event loop so that it is complete before the turn's first tool runs;
- files over `MAX_CAPTURE_BYTES` are not captured (a rewind names them as not undone).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from agent_tui.engine.protected_paths import find_repository
from agent_tui.engine.tools.paths import resolve_under
from agent_tui.events import Event
from agent_tui.private_files import make_private_dirs, open_private, write_private
from agent_tui.runtime.worktrees import WorktreeError, git

MAX_CAPTURE_BYTES = 8 * 1024 * 1024
FILE_TOOLS = frozenset({"write_file", "edit_file"})
RECORDS = "records.jsonl"
MAX_PROBLEMS = 100
"""Recording failures kept (the first ones; a full disk would repeat the same)."""


def undo_dir(sessions_dir: Path, session_id: str) -> Path:
    """Where a session's rewind records live (beside its log)."""
    return sessions_dir / f"{session_id}.undo"


@dataclass(frozen=True)
class Snapshot:
    """A git tree of the working copy at `root`, at a turn's start or end."""

    turn_id: str
    at: Literal["start", "end"]
    root: Path
    tree: str


@dataclass(frozen=True)
class Capture:
    """A file as a write found it: `blob` is its content's sha256 (None: it did not exist,
    `too_big`: it was not kept)."""

    turn_id: str
    path: Path
    blob: str | None
    mode: int | None
    too_big: bool = False


def snapshot_tree(root: Path) -> str:
    """A git tree object of the working copy at `root` as it is now (see the module contract).

    Raises:
        WorktreeError: git failed.
    """
    index = Path(git(root, "rev-parse", "--path-format=absolute", "--git-path", "index"))
    with tempfile.TemporaryDirectory(prefix="agent-tui-snapshot-") as scratch:
        temporary = Path(scratch) / "index"
        if index.is_file():
            # its stat cache (`add` need not read every file), with its time: git takes a file
            # changed in the index's own second as "racily clean" and reads it only then
            shutil.copy2(index, temporary)
        env = {"GIT_INDEX_FILE": str(temporary)}
        git(root, "add", "-A", "--", ".", env=env)
        return git(root, "write-tree", env=env)


class TurnRecorder:
    """Records what each turn of an engine's sessions found (see the module contract).

    An event listener, not a turn-end hook: each snapshot is the tree as it was when the event
    was stored, before the next write or turn can change it.

    Args:
        sessions_dir: where the logs are; records go beside them.
        cwd_of: the session's working directory.
    """

    def __init__(self, sessions_dir: Path, cwd_of: Any) -> None:
        self.sessions_dir = sessions_dir
        self._cwd_of = cwd_of
        self._roots: dict[str, Path | None] = {}
        self._asked: dict[tuple[str, str], str] = {}  # (session, call) -> path, of file tools
        self._captured: set[tuple[str, str, Path]] = set()
        self.problems: list[str] = []

    def __call__(self, event: Event) -> None:
        kind = event.type
        if kind == "model.tool_call_requested":
            payload = event.payload
            path = payload["args"].get("path") if isinstance(payload.get("args"), dict) else None
            if payload["tool"] in FILE_TOOLS and isinstance(path, str):
                self._asked[(event.session_id, payload["toolCallId"])] = path
        elif kind == "tool.started":
            path = self._asked.pop((event.session_id, event.payload["toolCallId"]), None)
            if path is not None and event.turn_id is not None:
                self._guard(self._capture, event.session_id, event.turn_id, path)
        elif kind in ("turn.started", "turn.completed") and event.turn_id is not None:
            at: Literal["start", "end"] = "start" if kind == "turn.started" else "end"
            self._guard(self._snapshot, event.session_id, event.turn_id, at)
            if at == "end":  # what was kept for the turn's calls is not needed any more
                session_id = event.session_id
                self._asked = {key: path for key, path in self._asked.items() if key[0] != session_id}
                self._captured = {key for key in self._captured if key[:2] != (session_id, event.turn_id)}

    def _guard(self, action: Any, *args: Any) -> None:
        try:
            action(*args)
        except (OSError, WorktreeError, ValueError) as error:
            if len(self.problems) < MAX_PROBLEMS:
                self.problems.append(f"{args[0]}: not recorded for rewinding: {error}")

    def _cwd(self, session_id: str) -> Path | None:
        try:
            return Path(self._cwd_of(session_id))
        except Exception:
            return None

    def _root(self, session_id: str) -> Path | None:
        if session_id not in self._roots:
            cwd = self._cwd(session_id)
            found = find_repository(cwd) if cwd is not None else None  # read from the files: no git run
            self._roots[session_id] = found.root if found is not None else None
        return self._roots[session_id]

    def _snapshot(self, session_id: str, turn_id: str, at: str) -> None:
        root = self._root(session_id)
        if root is None:
            return
        tree = snapshot_tree(root)
        self._append(
            session_id, {"turnId": turn_id, "kind": "snapshot", "at": at, "root": str(root), "tree": tree}
        )

    def _capture(self, session_id: str, turn_id: str, user_path: str) -> None:
        cwd = self._cwd(session_id)
        if cwd is None:
            return
        try:
            resolved = resolve_under(cwd, user_path, must_exist=False)
        except Exception:  # a path the tool refuses: it writes nothing
            return
        key = (session_id, turn_id, resolved)
        if key in self._captured:
            return
        self._captured.add(key)
        record: dict[str, Any] = {"turnId": turn_id, "kind": "file", "path": str(resolved)}
        try:
            info = os.lstat(resolved)
        except FileNotFoundError:
            record["blob"] = None
        else:
            if info.st_size > MAX_CAPTURE_BYTES or not os.path.isfile(resolved) or os.path.islink(resolved):
                record["tooBig"] = True
                record["blob"] = None
            else:
                data = resolved.read_bytes()
                digest = hashlib.sha256(data).hexdigest()
                blob = undo_dir(self.sessions_dir, session_id) / "blobs" / digest
                if not blob.exists():
                    write_private(blob, data)
                record["blob"] = digest
                record["mode"] = info.st_mode & 0o777
        self._append(session_id, record)

    def _append(self, session_id: str, record: dict[str, Any]) -> None:
        directory = make_private_dirs(undo_dir(self.sessions_dir, session_id))
        with os.fdopen(
            open_private(directory / RECORDS, os.O_WRONLY | os.O_CREAT | os.O_APPEND), "ab"
        ) as handle:
            handle.write(orjson.dumps(record) + b"\n")


def read_records(sessions_dir: Path, session_id: str) -> Iterator[Snapshot | Capture]:
    """The records of a session, in the order they were made (unreadable lines are skipped:
    the worst they cost is a rewind that says it cannot undo something)."""
    try:
        raw = (undo_dir(sessions_dir, session_id) / RECORDS).read_bytes()
    except OSError:
        return
    for line in raw.splitlines():
        try:
            data = orjson.loads(line)
            if data["kind"] == "snapshot":
                yield Snapshot(data["turnId"], data["at"], Path(data["root"]), data["tree"])
            elif data["kind"] == "file":
                yield Capture(
                    data["turnId"],
                    Path(data["path"]),
                    data["blob"],
                    data.get("mode"),
                    bool(data.get("tooBig")),
                )
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue


def captured_bytes(sessions_dir: Path, session_id: str, blob: str) -> bytes:
    """A captured content by its hash.

    Raises:
        OSError: it is gone.
    """
    return (undo_dir(sessions_dir, session_id) / "blobs" / blob).read_bytes()


def first_contents(sessions_dir: Path, session_id: str) -> dict[Path, bytes | None]:
    """Each file the session's file tools wrote, as its first capture found it (None: it did
    not exist); files whose content was not kept are left out."""
    found: dict[Path, bytes | None] = {}
    for record in read_records(sessions_dir, session_id):
        if not isinstance(record, Capture) or record.path in found or record.too_big:
            continue
        if record.blob is None:
            found[record.path] = None
            continue
        try:
            found[record.path] = captured_bytes(sessions_dir, session_id, record.blob)
        except OSError:
            continue
    return found
