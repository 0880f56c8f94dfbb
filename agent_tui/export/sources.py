"""Which logs an export reads: one session's log, named by its path or its id, and the logs of
every sub-agent below it in the same directory.

Invariants:
- a session id is looked up as `<dir>/<id>.jsonl`, or as the one log whose name starts with it (a
  short id); two that match, or none, is an `ExportSourceError` saying which;
- the tree is found from each log's first line (`session.created`'s `parentSessionId`), so a
  directory of thousands of logs costs one short read per log; a log whose first line is not a
  session's start is not part of any tree.
"""

from __future__ import annotations

from pathlib import Path

import orjson

__all__ = ["ExportSourceError", "find_log", "tree_logs"]

_FIRST_LINE_LIMIT = 1 << 16


class ExportSourceError(Exception):
    """What to export cannot be found: the sentence says what was looked for, and where."""


def find_log(target: str, sessions_dir: Path) -> Path:
    """The log `target` names: a path to a `.jsonl` file, or a session id (or the start of one)."""
    as_path = Path(target).expanduser()
    if as_path.suffix == ".jsonl" or as_path.is_file():
        if not as_path.is_file():
            raise ExportSourceError(f"{as_path}: no such log")
        return as_path
    if not sessions_dir.is_dir():
        raise ExportSourceError(f"{sessions_dir}: no such directory (no session {target} there)")
    exact = sessions_dir / f"{target}.jsonl"
    if exact.is_file():
        return exact
    matches = sorted(sessions_dir.glob(f"{target}*.jsonl")) if "/" not in target else []
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ExportSourceError(f"no session {target} in {sessions_dir}")
    names = ", ".join(path.stem for path in matches[:5])
    raise ExportSourceError(f"{target} could be any of {len(matches)} sessions in {sessions_dir}: {names}")


def _parent_of(path: Path) -> tuple[str, str | None] | None:
    """(session id, parent session id) from a log's first line, or None if it is not a start."""
    try:
        with path.open("rb") as handle:
            line = handle.readline(_FIRST_LINE_LIMIT)
        record = orjson.loads(line)
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(record, dict) or record.get("type") != "session.created":
        return None
    payload = record.get("payload")
    parent = payload.get("parentSessionId") if isinstance(payload, dict) else None
    session_id = record.get("sessionId")
    if not isinstance(session_id, str):
        return None
    return session_id, parent if isinstance(parent, str) else None


def tree_logs(root: Path) -> list[Path]:
    """`root` and the logs of every session below it in `root`'s directory, root first."""
    children: dict[str, list[tuple[str, Path]]] = {}
    root_id = root.stem
    for path in sorted(root.parent.glob("*.jsonl")):
        if path == root:
            continue
        found = _parent_of(path)
        if found is not None and found[1] is not None:
            children.setdefault(found[1], []).append((found[0], path))
    logs = [root]
    stack = [root_id]
    seen = {root_id}
    while stack:
        for child_id, path in children.get(stack.pop(), []):
            if child_id not in seen:
                seen.add(child_id)
                logs.append(path)
                stack.append(child_id)
    return logs
