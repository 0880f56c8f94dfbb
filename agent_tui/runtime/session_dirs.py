"""Where a project's session logs live, and what is in them, read cheaply.

Invariants:
- a project's sessions directory is a pure function of the project's resolved path:
  `<user data dir>/projects/<directory name>-<12 hex digits of its path's SHA-256>`, so the same
  project always finds its earlier sessions, and two projects with the same name never share;
- a sessions directory agent-tui makes is 0700 (each missing level); one that is there already
  (`--sessions-dir`) is never chmod-ed; what agent-tui writes in it (logs, undo records,
  `closed.txt`) is 0600 (`private_files`);
- `ensure_writable` either leaves a directory we can create files in, or raises
  `SessionsDirError` whose message is `DIR: reason` (nothing half-made is left behind);
- listing never parses a whole log: it reads the first two lines (who, and the first prompt) and
  the last complete line (when, and how it ended), so a directory of long logs lists at once. A
  log that cannot be read is listed with the reason instead of being skipped silently, and so is
  one whose first line is of another session than its name says (a copy, or a stray line).
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from agent_tui.costs.wording import cost_text
from agent_tui.events.session_tree import session_label
from agent_tui.events.turn_vocabulary import ENDINGS
from agent_tui.events.wording import counted
from agent_tui.private_files import make_private_dirs, open_plain, open_private, write_private
from agent_tui.reducer import NO_SPEND, Spend
from agent_tui.store import foreign_session

APP_NAME = "agent-tui"
TAIL_BYTES = 65_536
"""How far from a log's end the last complete line is looked for."""


class SessionsDirError(Exception):
    """A sessions directory that cannot be used; the message is `DIR: reason`."""


def user_data_dir(data_dir: Path | None = None) -> Path:
    """`data_dir`, or agent-tui's data directory on this platform (`platformdirs`) when None."""
    if data_dir is not None:
        return data_dir
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME))


def exports_dir(data_dir: Path | None = None) -> Path:
    """Where the dashboard writes the sessions it exports: `exports/` in agent-tui's data dir."""
    return user_data_dir(data_dir) / "exports"


def default_sessions_dir(project: Path, data_dir: Path | None = None) -> Path:
    """The sessions directory of `project` under the platform's data directory.

    Args:
        project: the project directory (resolved here).
        data_dir: the base (default: `platformdirs.user_data_dir("agent-tui")`).
    """
    resolved = project.resolve()
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:12]
    name = resolved.name or "root"
    return user_data_dir(data_dir) / "projects" / f"{name}-{digest}"


def ensure_writable(directory: Path) -> None:
    """Create `directory` if needed and prove a file can be made in it.

    Raises:
        SessionsDirError: `DIR: Permission denied` (or the OS's reason) when it cannot be used.
    """
    try:
        make_private_dirs(directory)
        probe = directory / f".agent-tui-probe-{os.getpid()}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        probe.unlink()
    except OSError as error:
        reason = error.strerror or str(error)
        raise SessionsDirError(f"{directory}: {reason}") from None


@dataclass(frozen=True)
class StoredSession:
    """One log of a sessions directory, as far as its first and last lines tell.

    `status` is `idle` (no turn yet), `completed`/`cancelled`/`failed` (how its last turn
    ended), `interrupted` (the log stops inside a turn: the process died or is still writing)
    or `unreadable` (then `problem` says why).
    """

    session_id: str
    path: Path
    created_ts: str
    last_ts: str
    agent_name: str | None
    title: str | None
    cwd: str | None
    parent_session_id: str | None
    first_prompt: str | None
    status: str
    worktree_branch: str | None = None
    model: str | None = None
    problem: str | None = None
    client: str | None = None
    head: bytes = field(default=b"", repr=False)  # the first line, when listed without `ends`

    @property
    def name(self) -> str:
        return session_label(self.agent_name, self.title, self.session_id)


def read_stored_session(path: Path, *, ends: bool = True) -> StoredSession:
    """What the first two and the last complete line of one log say; without `ends`, the first
    two alone (`last_ts` and `status` are then the first line's) and the first line, if whole, is
    kept (`head`: who reopens the session folds it, without reading it again)."""
    session_id = path.stem
    try:
        first, second, last_line, ending_line = _read_lines(path, ends=ends)
    except OSError as error:
        return _unreadable(path, error.strerror or str(error))
    try:
        header = orjson.loads(first)
        created = header["payload"] if header.get("type") == "session.created" else {}
        last = orjson.loads(last_line or first)
        ending = orjson.loads(ending_line) if ending_line is not None else last
        following = orjson.loads(second) if second.endswith(b"\n") else None
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return _unreadable(path, "not a session log (its first or last line is not an event)")
    found = header.get("sessionId")
    if found != session_id:
        return _unreadable(path, _not_its_session(path, found))
    prompt = None
    if following is not None and following.get("type") == "turn.started":
        prompt = following.get("payload", {}).get("promptPreview")
    worktree = created.get("worktree") or {}
    return StoredSession(
        session_id=header.get("sessionId", session_id),
        path=path,
        created_ts=header.get("ts", ""),
        last_ts=last.get("ts", ""),
        agent_name=created.get("agentName"),
        title=created.get("title"),
        cwd=created.get("cwd"),
        parent_session_id=created.get("parentSessionId"),
        first_prompt=prompt,
        status=_status_of_last(ending),
        worktree_branch=worktree.get("branch"),
        model=created.get("model"),
        client=created.get("client"),
        head=first[:-1] if not ends and first.endswith(b"\n") else b"",
    )


def _read_lines(path: Path, *, ends: bool) -> tuple[bytes, bytes, bytes | None, bytes | None]:
    """A log's first two lines, and with `ends` its last complete line and its last turn's
    (`_last_turn_line`; None: not read, or not found)."""
    with open_plain(path) as handle:  # a FIFO planted in a shared dir: not waited on
        first = handle.readline()
        second = handle.readline()
        if not ends:
            return first, second, None, None
        size = os.fstat(handle.fileno()).st_size
        last_line = _last_complete_line(handle, size)
        return first, second, last_line, _last_turn_line(handle, size, last_line)


def _not_its_session(path: Path, found: object) -> str:
    """Why a log whose first line is of another session is left out: a copy, or a stray line."""
    if isinstance(found, str) and found and "/" not in found and path.with_name(f"{found}.jsonl").is_file():
        return (
            f"a copy of session {found}, which is in {path.with_name(f'{found}.jsonl')} (this copy left out)"
        )
    return f"line 1: {foreign_session(str(found), path.stem)}"


def _unreadable(path: Path, problem: str) -> StoredSession:
    return StoredSession(path.stem, path, "", "", None, None, None, None, None, "unreadable", problem=problem)


def _last_complete_line(handle: BinaryIO, size: int) -> bytes | None:
    """The last line that ends in a newline (a torn tail after it is ignored), read from the end."""
    span = TAIL_BYTES
    while True:
        start = max(0, size - span)
        handle.seek(start)
        tail = handle.read(size - start)
        end = tail.rfind(b"\n")
        if end < 0:
            return None
        line_start = tail.rfind(b"\n", 0, end) + 1
        if line_start > 0 or start == 0:
            return tail[line_start:end]
        span *= 4  # a line longer than what was read: read further back


_BETWEEN_TURNS = (b'"type":"turn.rewound"',)
"""Events written between turns: the status is the last turn's, before them."""


def _last_turn_line(handle: BinaryIO, size: int, last: bytes | None) -> bytes | None:
    """The last complete line that is not written between turns (None: `last` is that line, or
    none is found in the tail)."""
    if last is None or not any(mark in last for mark in _BETWEEN_TURNS):
        return None
    start = max(0, size - TAIL_BYTES)
    handle.seek(start)
    lines = handle.read(size - start).split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first may be cut
    for line in reversed(lines[:-1]):  # the part after the last newline is torn or empty
        if line and not any(mark in line for mark in _BETWEEN_TURNS):
            return line
    return None


def _status_of_last(last: dict[str, Any]) -> str:
    kind = last.get("type")
    if kind == "session.created":
        return "idle"
    if kind == "turn.completed":
        ending = ENDINGS.get(last.get("payload", {}).get("stopReason"))
        return ending.run_state if ending is not None else "failed"
    return "interrupted"


CLOSED_FILE = "closed.txt"
"""In a sessions directory: the ids of sessions closed in the dashboard, one a line."""


def closed_sessions(directory: Path) -> set[str]:
    """Sessions closed in the dashboard (they are not reopened; their logs stay)."""
    try:
        with open_plain(directory / CLOSED_FILE) as handle:  # a FIFO planted there: not waited on
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return set()
    return {line.strip() for line in text.splitlines() if line.strip()}


def mark_closed(directory: Path, session_ids: Iterable[str]) -> None:
    """Add `session_ids` to the directory's closed list (appending: earlier entries stay)."""
    fd = open_private(directory / CLOSED_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        for session_id in session_ids:
            handle.write(session_id + "\n")


def reopen_closed(directory: Path, session_ids: Iterable[str]) -> None:
    """Take `session_ids` off the directory's closed list (the file is rewritten whole).

    Raises:
        OSError: the list cannot be written.
    """
    gone = set(session_ids)
    try:
        with open_plain(directory / CLOSED_FILE) as handle:
            lines = handle.read().decode("utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return
    kept = [line for line in lines if line.strip() and line.strip() not in gone]
    write_private(directory / CLOSED_FILE, "".join(line + "\n" for line in kept).encode("utf-8"))


def list_stored_sessions(directory: Path, *, ends: bool = True) -> list[StoredSession]:
    """Every log of `directory`, newest activity first (ties: session id); without `ends`, from
    their first lines alone (see `read_stored_session`)."""
    if not directory.is_dir():
        return []
    found = [read_stored_session(path, ends=ends) for path in directory.glob("*.jsonl")]
    found.sort(key=lambda s: s.session_id)
    found.sort(key=lambda s: s.last_ts, reverse=True)
    return found


def local_day(ts: str) -> str:
    """The local calendar day of an event `ts`, `YYYY-MM-DD` (empty if unreadable)."""
    try:
        return datetime.fromisoformat(ts).astimezone().strftime("%Y-%m-%d")
    except ValueError:
        return ""


def group_by_day(sessions: Iterable[StoredSession]) -> list[tuple[str, list[StoredSession]]]:
    """Consecutive sessions of the same local day of last activity, in the order given."""
    days = itertools.groupby(sessions, key=lambda session: local_day(session.last_ts))
    return [(day, list(group)) for day, group in days]


def format_listing(
    directory: Path,
    sessions: list[StoredSession],
    closed: Collection[str] = (),
    spend: Mapping[str, Spend] | None = None,
) -> str:
    """`agent-tui sessions`: one line per session under a line per day, newest first.

    Args:
        closed: the ids of sessions closed in the dashboard (`closed_sessions`): their lines say
            `closed` in a column of their own (there only when some listed session is closed).
        spend: what each session spent (`search.logs_spend`): each line says its cost
            and each day line the total of that day's sessions (a session with no reported
            usage shows none).
    """
    if not sessions:
        return f"no sessions in {directory}\n"
    shut = {session.session_id for session in sessions if session.session_id in closed}
    header = f"{counted(len(sessions), 'session')} in {directory}"
    if shut:
        header += f" ({len(shut)} closed: the dashboard does not reopen them)"
    lines = [header]
    for day, group in group_by_day(sessions):
        lines.append("")
        day_line = day or "(no date)"
        if spend is not None:
            total = NO_SPEND
            for session in group:
                total = total.plus(spend.get(session.session_id, NO_SPEND))
            if total.tokens:
                day_line += f"  · {_spend_words(total)}"
        lines.append(day_line)
        for session in group:
            mark = None if not shut else "closed" if session.session_id in shut else ""
            cost = None if spend is None else _spend_words(spend.get(session.session_id, NO_SPEND))
            lines.append("  " + _listing_line(session, mark, cost))
    return "\n".join(lines) + "\n"


def _spend_words(spend: Spend) -> str:
    """A listing's cost column: the cost (or `price unknown`), blank when nothing was used."""
    if not spend.tokens:
        return ""
    return cost_text(spend.known_cost_usd, spend.unpriced_tokens)


def _listing_line(session: StoredSession, closed_mark: str | None = None, cost: str | None = None) -> str:
    """One session's line; `closed_mark` (`closed` or blank) is a column of its own when given,
    `cost` (when not blank) ends the line."""
    mark = "" if closed_mark is None else f"{closed_mark:<7}"
    if session.problem is not None:
        return f"{session.session_id}  {mark}unreadable: {session.problem}"
    try:
        when = datetime.fromisoformat(session.last_ts).astimezone().strftime("%H:%M")
    except ValueError:
        when = "--:--"
    name = session.name
    if session.parent_session_id:
        name += f" (sub-agent of {session.parent_session_id})"
    if session.worktree_branch:
        name += f" [{session.worktree_branch}]"
    prompt = f"  {session.first_prompt!r}" if session.first_prompt else ""
    spent = f"  · {cost}" if cost else ""
    return f"{when}  {session.session_id}  {session.status:<11} {mark}{name}{prompt}{spent}"
