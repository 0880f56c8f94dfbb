"""The dashboard's engine on a project: reopened sessions, new agents, follow-ups, and leaving.

Invariants:
- one `SessionEngine` serves a whole dashboard run; the caller holds it open
  (`async with workbench.engine`) and `close()` is what ends it;
- `hydrate` reopens every stored log of the sessions directory (parents before their
  sub-agents) through `SessionEngine.open_session`, so a session from an earlier run continues
  with its whole transcript; a log that cannot be reopened is named in the result with its
  reason and left out, never dropped silently;
- `send` never loses text: it steers the running turn, or starts the session's next turn, or
  returns a `SendRefused` saying why it could do neither (the caller keeps the text);
- `start_agent` leaves nothing behind on failure: a worktree made for a session that could not
  be created is removed again;
- `close` cancels every running turn, sub-agents included, and returns once each has stored
  its `turn.completed` (or the timeout passed).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.errors import TurnConflict, UnknownSession
from agent_tui.engine.permissions import DEFAULT_POLICY, PermissionEngine, Prompter
from agent_tui.engine.session_info import SessionInfo
from agent_tui.events import Event
from agent_tui.providers.prompt import system_prompt
from agent_tui.runtime.model_router import ModelChoice, ProviderRouter
from agent_tui.runtime.session_dirs import (
    StoredSession,
    closed_sessions,
    list_stored_sessions,
    mark_closed,
)
from agent_tui.runtime.subagents import SubAgents
from agent_tui.runtime.worktrees import Worktree, WorktreeError, create_worktree, remove_worktree
from agent_tui.store import JsonlEventLog, JsonlFileEventStore
from agent_tui.turns.registry import Attached

RULES_FILE = Path(".agent-tui") / "permissions.json"
NAME_WORDS = 3


@dataclass(frozen=True)
class AgentSpec:
    """What the new-agent form asks for.

    Args:
        prompt: the first turn's text.
        cwd: where the agent works (default in the form: the project).
        name: its name in the tree (empty: made from the prompt's first words).
        model: a `ModelChoice` name (None: the default).
        own_worktree: work in a new git worktree of `cwd`'s repository, on a new branch.
    """

    prompt: str
    cwd: Path
    name: str = ""
    model: str | None = None
    own_worktree: bool = False


class AgentStartError(Exception):
    """The agent could not be started; the message says why in one sentence."""


@dataclass(frozen=True)
class Sent:
    """`send` handed the text over: `steered` into the running turn, or `started` a new turn."""

    how: str  # steered | started


@dataclass(frozen=True)
class SendRefused:
    """`send` could not hand the text over; `reason` is one sentence for the user."""

    reason: str


def name_from_prompt(prompt: str) -> str:
    """`Fix the login bug in auth.py` → `fix-the-login`."""
    words = re.findall(r"[A-Za-z0-9]+", prompt.lower())[:NAME_WORDS]
    return "-".join(words)[:24] or "agent"


class Workbench:
    """Sessions of one project on one engine.

    Args:
        engine: the engine (not yet entered).
        project: the project directory (the new-agent form's default directory).
        sessions_dir: where the logs are.
        models: what agents can be started with, the default first.
        router: routes sessions to their model (None: every session uses `engine.provider`).
    """

    def __init__(
        self,
        engine: SessionEngine,
        *,
        project: Path,
        sessions_dir: Path,
        models: list[ModelChoice],
        router: ProviderRouter | None = None,
    ) -> None:
        self.engine = engine
        self.project = project
        self.sessions_dir = sessions_dir
        self.models = list(models)
        self.router = router
        self.worktrees: dict[str, Worktree] = {}

    @classmethod
    def for_project(
        cls,
        *,
        project: Path,
        sessions_dir: Path,
        models: list[ModelChoice],
        prompter: Prompter | None,
        max_steps: int = 250,
    ) -> Workbench:
        """A workbench with its own engine: logs in `sessions_dir`, the project's rules file, and
        the coding-agent prompt for the project (its tools, rules and `AGENTS.md`)."""
        store = JsonlFileEventStore(sessions_dir)
        engine_box: list[SessionEngine] = []

        def parent_of(session_id: str) -> str | None:
            return engine_box[0].session(session_id).parent_id if engine_box else None

        router = ProviderRouter(models, parent_of)
        permissions = PermissionEngine(DEFAULT_POLICY, rules_path=project / RULES_FILE)

        engine = SessionEngine(
            store,
            router,
            permissions=permissions,
            prompter=prompter,
            max_steps=max_steps,
            instructions=system_prompt,  # per session: its directory (or worktree), tools, AGENTS.md
        )
        SubAgents(engine)
        engine_box.append(engine)
        return cls(engine, project=project, sessions_dir=sessions_dir, models=models, router=router)

    # -- reopening stored sessions -------------------------------------------------------------
    async def hydrate(self, fold: Callable[[Event], None]) -> list[str]:
        """Reopen every stored session; `fold` sees each stored event first (to draw them).

        Returns:
            One `FILE: reason` line per log that could not be reopened.
        """
        problems: list[str] = []
        stored = list_stored_sessions(self.sessions_dir)
        stored.sort(key=lambda s: (s.created_ts, s.session_id))  # parents before sub-agents
        closed = closed_sessions(self.sessions_dir)
        for session in stored:
            if session.session_id in closed or session.parent_session_id in closed:
                closed.add(session.session_id)  # a closed session's sub-agents stay closed too
                continue
            if session.problem is not None:
                problems.append(f"{session.path}: {session.problem}")
                continue
            try:
                with JsonlEventLog(session.path) as log:
                    events = list(log.replay())
            except Exception as error:  # a corrupt line: the decoder names FILE:LINE
                problems.append(str(error))
                continue
            for event in events:
                fold(event)
            try:
                await self.engine.open_session(session.session_id)
            except Exception as error:
                problems.append(f"{session.path}: could not be reopened: {error}")
                continue
            self._remember_model(session)
        return problems

    def _remember_model(self, session: StoredSession) -> None:
        if self.router is None or session.model is None:
            return
        for choice in self.models:
            if choice.model == session.model:
                self.router.assign(session.session_id, choice)
                return

    # -- new agents ----------------------------------------------------------------------------
    def choice(self, name: str | None) -> ModelChoice:
        for choice in self.models:
            if choice.name == name:
                return choice
        return self.models[0]

    async def start_agent(self, spec: AgentSpec) -> str:
        """Create the session (and its worktree), start its first turn; returns its id.

        Raises:
            AgentStartError: the directory is missing, the worktree could not be made, or the
                session could not be stored.
        """
        prompt = spec.prompt.strip()
        if not prompt:
            raise AgentStartError("the prompt is empty")
        cwd = spec.cwd.expanduser().resolve()
        if not cwd.is_dir():
            raise AgentStartError(f"{cwd}: no such directory")
        name = spec.name.strip() or name_from_prompt(prompt)
        worktree: Worktree | None = None
        if spec.own_worktree:
            try:
                worktree = await anyio.to_thread.run_sync(create_worktree, cwd, name)
            except WorktreeError as error:
                raise AgentStartError(f"no worktree: {error}") from None
            cwd = worktree.cwd
        choice = self.choice(spec.model)
        extra: dict[str, Any] = {}
        if choice.provider is not None:
            extra["provider"] = choice.provider
        if choice.model is not None:
            extra["model"] = choice.model
        if worktree is not None:
            extra["worktree"] = {"path": str(worktree.path), "branch": worktree.branch}
        try:
            session_id = await self.engine.create_session(cwd, agent_name=name, title=prompt[:60], **extra)
        except Exception as error:
            if worktree is not None:
                await anyio.to_thread.run_sync(_remove_quietly, worktree.path)
            raise AgentStartError(f"could not create the session: {error}") from None
        if worktree is not None:
            self.worktrees[session_id] = worktree
        if self.router is not None:
            self.router.assign(session_id, choice)
        self.engine.start_turn(session_id, prompt)
        return session_id

    # -- talking to sessions -------------------------------------------------------------------
    def is_running(self, session_id: str) -> bool:
        try:
            return _unfinished(self.engine.session(session_id))
        except UnknownSession:
            return False

    def send(self, session_id: str, text: str) -> Sent | SendRefused:
        """Steer the running turn with `text`, or start the session's next turn with it."""
        text = text.strip()
        if not text:
            return SendRefused("There is nothing to send.")
        try:
            info = self.engine.session(session_id)
        except UnknownSession:
            return SendRefused("This session is not open in this dashboard (it could not be reopened).")
        if info.live_turn is not None and isinstance(self.engine.submit(session_id, text), Attached):
            return Sent("steered")
        try:
            self.engine.start_turn(session_id, text)
        except TurnConflict:
            return SendRefused("Its turn is just ending; send again in a moment.")
        except RuntimeError as error:  # the engine is closed (the dashboard is leaving)
            return SendRefused(f"The engine is not running: {error}.")
        return Sent("started")

    # -- stopping ------------------------------------------------------------------------------
    def stop_subtree(self, session_id: str) -> int:
        return self.engine.stop_subtree(session_id)

    def stop_all(self) -> int:
        engine = self.engine
        return sum(1 for info in engine.sessions() if engine.cancel_turn(info.id))

    def running_turns(self) -> int:
        return sum(1 for info in self.engine.sessions() if _unfinished(info))

    def close_store(self) -> None:
        """Close the store's open log files (after the engine has closed)."""
        close = getattr(self.engine.store, "close", None)
        if close is not None:
            close()

    async def close_models(self) -> None:
        """Close the HTTP clients of the models that were built."""
        for choice in self.models:
            await choice.aclose()

    async def close(self, timeout: float = 5.0) -> bool:
        """Stop every turn and wait until each has stored its end. False if time ran out."""
        with anyio.move_on_after(timeout):
            while self.running_turns():
                self.stop_all()
                await anyio.sleep(0.02)
            return True
        return False

    # -- leaving a session ---------------------------------------------------------------------
    def _descendants(self, session_id: str) -> list[tuple[str, str | None]]:
        found: list[tuple[str, str | None]] = []
        frontier = {session_id}
        while frontier:
            children = [(i.id, i.parent_id) for i in self.engine.sessions() if i.parent_id in frontier]
            children = [child for child in children if child not in found]
            found += children
            frontier = {sid for sid, _ in children}
        return found

    def worktree_path(self, session_id: str, recorded: str | None = None) -> Path | None:
        """The session's worktree: made in this run, or `recorded` in its `session.created`."""
        made = self.worktrees.get(session_id)
        if made is not None:
            return made.path
        return Path(recorded) if recorded else None

    async def dispose(
        self, session_id: str, *, remove: Path | None = None, timeout: float = 5.0
    ) -> str | None:
        """Stop the session and its sub-agents, wait for their ends, forget them (the logs stay);
        then remove the worktree at `remove`, if given.

        Returns:
            None, or why the worktree could not be removed.
        """
        engine = self.engine
        family = {session_id} | {sid for sid, _ in self._descendants(session_id)}
        with anyio.move_on_after(timeout):
            while any(self.is_running(sid) for sid in family):
                engine.stop_subtree(session_id)
                await anyio.sleep(0.02)
        engine.dispose_session(session_id)
        self.worktrees.pop(session_id, None)
        mark_closed(self.sessions_dir, sorted(family))
        if remove is None:
            return None
        try:
            await anyio.to_thread.run_sync(remove_worktree, remove)
        except WorktreeError as error:
            return str(error)
        return None


def _unfinished(info: SessionInfo) -> bool:
    """Whether the session's turn has not finished every write yet (running, or closing)."""
    turn = info.turn
    return turn is not None and not turn.done.is_set()


def _remove_quietly(path: Path) -> None:
    try:
        remove_worktree(path)
    except WorktreeError:
        pass
