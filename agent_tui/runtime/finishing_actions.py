"""The workbench's actions that finish a session's work: review its change, commit, merge,
discard, rewind a turn, reopen a closed session.

`Workbench` takes them in (`FinishingActions` is one of its bases); every front end reaches them
by commands (`ReadReview`, `Commit`, ...) that the host's `CommandExecutor` carries out here:
the dashboard's review screen and reopen list, local or attached. Invariants:
- arguments are plain values, results frozen dataclasses (`finishing`, `review`, `rewind`); a refusal is
  a `FinishRefused` whose message says why, and then nothing was changed (a discard says when
  the session was closed but its worktree stays);
- git runs in a worker thread, never on the event loop, except the turn snapshots the recorder
  takes (`turn_records`);
- a rewind is made only by this process as the session's one writer, with no turn running, and
  is stored as `turn.rewound` between turns (turnId null) after its files were written;
- commit, merge and discard act only on a session's own worktree, never on the user's checkout
  (a merge writes there only into a clean checkout of the branch the worktree came from).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import anyio

from agent_tui.events import Event
from agent_tui.runtime.finishing import FinishRefused, SessionFacts, TurnFacts, read_facts
from agent_tui.runtime.review import (
    CommitResult,
    MergeResult,
    Review,
    ReviewRefused,
    commit_worktree,
    discard_worktree,
    merge_worktree,
    review_directory,
    review_worktree,
    review_written,
)
from agent_tui.runtime.rewind import RewindError, RewindPlan, RewindResult, apply_rewind, plan_rewind
from agent_tui.runtime.session_dirs import StoredSession, closed_sessions, list_stored_sessions, reopen_closed
from agent_tui.runtime.turn_records import Snapshot, first_contents, read_records
from agent_tui.runtime.worktrees import WorktreeError, repo_root

if TYPE_CHECKING:
    from agent_tui.engine.engine import SessionEngine
    from agent_tui.engine.session_info import SessionInfo

T = TypeVar("T")


class FinishingActions:
    """The finishing actions of a `Workbench` (see the module contract)."""

    engine: SessionEngine
    sessions_dir: Path

    if TYPE_CHECKING:  # what they use of the workbench

        def is_running(self, session_id: str) -> bool: ...

        def using(self, session_id: str) -> AbstractContextManager[None]: ...

        def _writable(self, session_id: str) -> SessionInfo | str: ...

        async def dispose(
            self, session_id: str, *, remove: Path | None = None, timeout: float = 5.0
        ) -> str | None: ...

        async def _reopen_stored(
            self, session: StoredSession, fold: Callable[[Event], None]
        ) -> str | None: ...

    def facts(self, session_id: str) -> SessionFacts:
        """What the session's log says about its place and its turns.

        Raises:
            FinishRefused: its log cannot be read.
        """
        return read_facts(self.engine.store, session_id)

    async def turns(self, session_id: str) -> tuple[TurnFacts, ...]:
        """The session's turns (`facts`), read in a worker thread."""
        return (await anyio.to_thread.run_sync(self.facts, session_id)).turns

    async def review(self, session_id: str) -> Review:
        """The session's whole change, file by file (see `review`).

        Raises:
            FinishRefused: not in a git working copy, or git failed.
        """
        facts = self.facts(session_id)
        try:
            return await anyio.to_thread.run_sync(self._review, facts)
        except WorktreeError as error:
            raise FinishRefused(str(error)) from None

    def _review(self, facts: SessionFacts) -> Review:
        """`review`'s work, in a worker thread: the worktree's change, else the directory's
        since its first turn's snapshot (git), else what its file tools wrote (no git)."""
        session_id, path, branch = facts.session_id, facts.worktree_path, facts.worktree_branch
        if path is not None and branch is not None:
            return review_worktree(
                session_id, path, branch, facts.base_branch, facts.base_commit, facts.prompt
            )
        root = repo_root(facts.cwd)
        if root is None:
            return review_written(
                session_id, facts.cwd, first_contents(self.sessions_dir, session_id), facts.prompt
            )
        since = next(
            (
                record.tree
                for record in read_records(self.sessions_dir, session_id)
                if isinstance(record, Snapshot) and record.at == "start" and record.root == root
            ),
            None,
        )
        return review_directory(session_id, root, since, facts.prompt)

    async def commit(self, session_id: str, message: str) -> CommitResult:
        """Commit everything in the session's worktree with `message`.

        Raises:
            FinishRefused: no worktree, its turn is running, nothing to commit, or git refused.
        """
        path, _ = self._worktree_to_finish(session_id)
        return await _git(commit_worktree, path, message)

    async def merge(self, session_id: str, message: str | None = None) -> MergeResult:
        """Merge the session's branch into the branch it came from (only into a clean checkout;
        a conflict merges nothing), with `message` (None: one naming the branch and the prompt).

        Raises:
            FinishRefused: why nothing was merged.
        """
        path, facts = self._worktree_to_finish(session_id)
        assert facts.worktree_branch is not None
        message = (
            message
            or f"Merge {facts.worktree_branch}: {facts.prompt.splitlines()[0][:60] if facts.prompt else ''}"
        )
        return await _git(merge_worktree, path, facts.worktree_branch, facts.base_branch, message.strip())

    async def discard(self, session_id: str) -> None:
        """Close the session (its log stays), remove its worktree and delete its branch.

        Raises:
            FinishRefused: no worktree, or git refused (the session is closed by then).
        """
        path, facts = self._worktree_to_finish(session_id, running_ok=True)
        await self.dispose(session_id)
        await _git(discard_worktree, path, facts.worktree_branch, said="closed, but the worktree stays: ")

    def _worktree_to_finish(self, session_id: str, *, running_ok: bool = False) -> tuple[Path, SessionFacts]:
        facts = self.facts(session_id)
        if facts.worktree_path is None or facts.worktree_branch is None:
            raise FinishRefused(
                "this session works in your own directory, not in a worktree of its own: "
                "commit or undo its changes there yourself (or rewind its turns)"
            )
        if not running_ok and self.is_running(session_id):
            raise FinishRefused("its turn is running: stop it (x) or wait for it to end")
        if not facts.worktree_path.is_dir():
            raise FinishRefused(f"{facts.worktree_path}: the worktree is not there any more")
        return facts.worktree_path, facts

    async def rewind_plan(self, session_id: str, turn_id: str) -> RewindPlan:
        """What rewinding the turn would write back (nothing is written).

        Raises:
            FinishRefused: the turn is unknown, or nothing was recorded for it.
        """
        facts = self.facts(session_id)
        turn = next((turn for turn in facts.turns if turn.turn_id == turn_id), None)
        if turn is None:
            raise FinishRefused(f"the session has no turn {turn_id}")
        try:
            return await anyio.to_thread.run_sync(
                lambda: plan_rewind(
                    self.sessions_dir,
                    session_id,
                    turn_id,
                    facts.cwd,
                    turn.shell_commands,
                    spawned=turn.spawned,
                )
            )
        except (RewindError, WorktreeError) as error:
            raise FinishRefused(str(error)) from None

    async def rewind(self, session_id: str, turn_id: str, *, allow_protected: bool = False) -> RewindResult:
        """Put back the files the turn changed, then store `turn.rewound` (between turns).

        Protected paths are written only with `allow_protected` (the user said yes).

        Raises:
            FinishRefused: a turn is running, the session is not open here or is another
                process's, or nothing was recorded for the turn.
        """
        if self.is_running(session_id):
            raise FinishRefused("a turn of this session is running: stop it (x) or wait for it to end")
        with self.using(session_id):  # read, claimed, then written after awaits: kept read
            info = self._writable(session_id)
            if isinstance(info, str):
                raise FinishRefused(info)
            plan = await self.rewind_plan(session_id, turn_id)
            result = await anyio.to_thread.run_sync(
                lambda: apply_rewind(plan, allow_protected=allow_protected)
            )
            await self.engine.commit(
                info,
                None,
                "turn.rewound",
                rewoundTurnId=turn_id,
                files=[{"path": item.path, "action": item.action} for item in result.files],
                incomplete=result.incomplete,
            )
        return result

    async def closed(self) -> list[StoredSession]:
        """The sessions closed in the dashboard (roots only; their sub-agents come with them),
        newest first. The logs' heads and tails are read in a worker thread."""

        def listed() -> list[StoredSession]:
            shut = closed_sessions(self.sessions_dir)
            return [
                session
                for session in list_stored_sessions(self.sessions_dir)
                if session.session_id in shut and session.parent_session_id not in shut
            ]

        return await anyio.to_thread.run_sync(listed)

    async def reopen(self, session_id: str, fold: Callable[[Event], None]) -> list[str]:
        """Take a closed session (and its sub-agents) off the closed list and open it again;
        `fold` sees each of its stored events first.

        Returns:
            One `FILE: reason` line per log that could not be reopened.

        Raises:
            FinishRefused: it is not closed.
        """
        shut = closed_sessions(self.sessions_dir)
        if session_id not in shut:
            raise FinishRefused("that session is not closed")
        stored = {session.session_id: session for session in list_stored_sessions(self.sessions_dir)}
        family = [session_id]
        for candidate in sorted(stored.values(), key=lambda s: (s.created_ts, s.session_id)):
            if candidate.parent_session_id in family and candidate.session_id not in family:
                family.append(candidate.session_id)
        try:
            reopen_closed(self.sessions_dir, family)
        except OSError as error:
            raise FinishRefused(f"{self.sessions_dir}: the closed list cannot be written: {error}") from None
        problems: list[str] = []
        for sid in family:
            if sid not in stored:
                continue
            problem = await self._reopen_stored(stored[sid], fold)
            if problem is not None:
                problems.append(problem)
        return problems


async def _git(work: Callable[..., T], *args: object, said: str = "") -> T:
    """`work(*args)` in a worker thread; git's refusal is a `FinishRefused` (after `said`)."""
    try:
        return await anyio.to_thread.run_sync(work, *args)
    except ReviewRefused as refused:
        raise FinishRefused(f"{said}{refused}") from None
