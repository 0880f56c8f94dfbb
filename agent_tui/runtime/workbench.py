"""The dashboard's engine on a project: reopened sessions, new agents, follow-ups, and leaving.

Invariants:
- one `SessionEngine` serves a whole dashboard run; the caller holds it open
  (`async with workbench.engine`) and `close()` is what ends it;
- `hydrate` reopens every stored log of the sessions directory (parents before their
  sub-agents) through `SessionEngine.open_session`, so a session from an earlier run continues
  with its whole transcript; a log that cannot be reopened is named in the result with its
  reason and left out, never dropped silently;
- with `lazy` (the dashboard's, on a history of thousands), only a session that needs it is
  reopened at start (its last turn unfinished: it is closed as today; a problem near its log's
  end: a torn line is cut; an external agent's); a finished one of ours is listed from its log's
  ends and read whole only when used (`open_listed`: chosen, continued, budgeted, rewound),
  its ancestors first, and is then what reopening it at start would have made it. At most
  `opened.bound` of those stay read, the least recently used let go first, never one with a
  turn unfinished in it or below it (nor a child's result waiting for it); a log written by
  another process since it was listed is refused, not read. What a listed session's earlier
  turns spent is asked of the search index (`search.logs_spend`, which folds each log's spend
  as it reads it) for the list's totals (`earlier`) and the engine's budgets, and counted once
  whether or when it is read whole;
- `send` never loses text: it steers the running turn, or starts the session's next turn, or
  returns a `SendRefused` saying why it could do neither (the caller keeps the text);
- one writer per session: `send` first makes this process the session's writer (the store's
  lock); a session another agent-tui process holds is refused with who holds it and since when,
  one that another process wrote after this dashboard read it is refused too (it would need
  reading again), and a session that was being written elsewhere when `hydrate` ran is shown but
  not reopened in this engine (nothing is written for it). `dispose` and `close_store` let go;
- `start_agent` leaves nothing behind on failure: a worktree made for a session that could not
  be created is removed again;
- `close` cancels every running turn, sub-agents included, and returns once each has stored
  its `turn.completed` (or the timeout passed);
- a session run by an external agent (`AgentSpec.acp`, see `ExternalAgents`) is a session of the
  same engine: the tree, the approval queue, stop and close treat it like our own; `send` gives
  it the next prompt (it cannot be steered mid-turn), and a stored one is reopened by its agent
  when that agent is still configured (else it is shown but not continued);
- a Claude Code or Codex session run in the user's own terminal (`find_terminal`: the transcripts
  the caller found, `terminal.discovery`) is listed beside ours as history from its transcript's
  head (a `session.created` made of it, as the importer makes it), and read whole only when used
  (`read_terminal`: converted by the importers through their cache, its events folded, its
  sub-agents with it), but not a transcript of a session run here through ACP (`acp_sessions`:
  its log records the CLI's session id); a terminal session stored here already (followed, its companion log) is
  listed from that log instead. Our engine never continues one: a follow-up, a budget and every
  finishing action are refused with `driven_from_its_terminal`;
- the project's own rules file is applied only once the user accepted its content
  (`accept_project_rules`, the dashboard's question); until then `project_rules` says it waits;
- finishing the work is a handful of plain actions, the same for the dashboard and any other
  front end (an attached dashboard calls them by request): `review`, `commit`, `merge`,
  `discard`, `rewind_plan`/`rewind`, `closed`/`reopen` (`finishing_actions.py`, a base of the
  workbench). Their arguments are plain values, their results frozen dataclasses; a refusal is a
  `FinishRefused` whose message says why, and nothing was changed;
- every turn is recorded for rewinding as it runs (`TurnRecorder`, a listener of the engine);
  a rewind is stored as `turn.rewound` between turns (turnId null), by this process as the
  session's one writer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import anyio

from agent_tui.costs.budgets import BudgetLimit
from agent_tui.costs.prices import PriceTable
from agent_tui.engine.budgets import BudgetExceeded
from agent_tui.engine.clock import new_id
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.errors import TurnConflict, UnknownSession
from agent_tui.engine.permissions import DEFAULT_POLICY
from agent_tui.engine.project_rules import ProjectRulesState
from agent_tui.engine.provider import ModelProvider, ProviderFailure
from agent_tui.engine.questions import Questions
from agent_tui.engine.session_info import SessionInfo
from agent_tui.events import Event, driven_from_its_terminal, is_ours, terminal_cli, terminal_name
from agent_tui.events.clients import TRANSCRIPT_CLIENTS
from agent_tui.events.session_tree import session_label
from agent_tui.importers import ImportInputError, replay_inputs
from agent_tui.importers.ids import EPOCH_TS, event_id_prefix
from agent_tui.mcp.config import McpServerConfig
from agent_tui.mcp.servers import McpServers
from agent_tui.providers.prompt import system_prompt
from agent_tui.reducer.collector import collector_paused
from agent_tui.reducer.earlier_spend import EarlierSpend, usage_events
from agent_tui.replay.catalog import CatalogEntry, created_event, read_entry
from agent_tui.runtime.acp_sessions import our_ids, recorded_acp_session, recorded_acp_sessions
from agent_tui.runtime.agent_requests import (
    AgentSpec,
    AgentStartError,
    BudgetRefused,
    SendRefused,
    Sent,
    name_from_prompt,
)
from agent_tui.runtime.external_agents import ExternalAgentGone, ExternalAgents
from agent_tui.runtime.finishing import FinishRefused, SessionFacts
from agent_tui.runtime.finishing_actions import FinishingActions
from agent_tui.runtime.model_router import ModelChoice, ProviderRouter
from agent_tui.runtime.opened_sessions import OpenedSessions
from agent_tui.runtime.permission_files import permission_engine
from agent_tui.runtime.runner import until_ended
from agent_tui.runtime.session_dirs import (
    StoredSession,
    closed_sessions,
    list_stored_sessions,
    mark_closed,
)
from agent_tui.runtime.subagents import SubAgents
from agent_tui.runtime.turn_records import TurnRecorder
from agent_tui.runtime.worktrees import Worktree, WorktreeError, create_worktree, remove_worktree
from agent_tui.search import SearchError, logs_spend
from agent_tui.store import (
    EventLogDecodeError,
    EventLogError,
    JsonlEventLog,
    JsonlFileEventStore,
    SessionLockedError,
)
from agent_tui.turns.registry import Attached

__all__ = [
    "AgentSpec",
    "AgentStartError",
    "BudgetRefused",
    "FinishRefused",
    "SendRefused",
    "Sent",
    "Workbench",
    "name_from_prompt",
]

TAILS_BATCH = 50
"""The stored sessions' last turns are read this many logs at a time, in a thread (the
dashboard draws meanwhile), and folded between two batches."""


def _last_turns(paths: list[Path]) -> list[tuple[CatalogEntry, list[Event]]]:
    """Each log's entry and last turn (`read_entry`'s events after its head)."""
    return [(entry, events[1:]) for entry, events in map(read_entry, paths)]


def _ends_inside_turn(tail: list[Event]) -> bool:
    """Whether a log's last turn (`tail`, from its start) has no `turn.completed`."""
    ends = [event.type for event in tail if event.type in ("turn.started", "turn.completed")]
    return bool(ends) and ends[-1] == "turn.started"


class TerminalListing(Protocol):
    """A terminal CLI's session as its transcript's head tells (`terminal.discovery`'s
    `TerminalTranscript`: the workbench only reads these)."""

    @property
    def cli(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def session_id(self) -> str: ...
    @property
    def cwd(self) -> str: ...
    @property
    def title(self) -> str | None: ...
    @property
    def started(self) -> str | None: ...
    @property
    def parent_session_id(self) -> str | None: ...
    @property
    def agent_name(self) -> str | None: ...


class TerminalFinder(Protocol):
    """`find(all_projects, warn)`: the terminal sessions of the project (every project's), newest
    first; `warn` is told one line per file skipped (`terminal.discovery.discover`)."""

    def __call__(self, all_projects: bool, warn: Callable[[str], object], /) -> Sequence[TerminalListing]: ...


def listing_event(listing: TerminalListing) -> Event:
    """The `session.created` a terminal session is listed by (sequence 1, as its import begins)."""
    payload: dict[str, Any] = {"cwd": listing.cwd, "client": listing.cli}
    if listing.parent_session_id is not None:
        payload["parentSessionId"] = listing.parent_session_id
    if listing.agent_name:
        payload["agentName"] = listing.agent_name
    if listing.title:
        payload["title"] = listing.title
    return Event(
        id=event_id_prefix(listing.session_id) + "1",
        session_id=listing.session_id,
        turn_id=None,
        sequence=1,
        ts=listing.started or EPOCH_TS,
        type="session.created",
        payload=payload,
    )


def _read_transcript(path: Path) -> tuple[list[tuple[Path, list[Event]]], list[str]]:
    """A transcript converted by the importers (through their cache): each of its sessions' log
    (its sub-agents' too) with its events, and the importers' warnings.

    Raises:
        ImportInputError: it cannot be read as a transcript.
        EventLogError: a converted log cannot be read.
    """
    with replay_inputs([path]) as inputs:
        read = []
        for file in inputs.files:
            with JsonlEventLog(file) as log:
                read.append((file, list(log.replay())))
        return read, inputs.warnings


@dataclass(eq=False)
class SessionRecord:
    """What the workbench keeps of one session beside the engine's state."""

    not_continued: str | None = None  # why it is shown but not reopened (its agent is not configured)
    held_elsewhere: str | None = None  # who wrote it in another process when it was reopened, since when
    reopening: bool = False  # listed, not reopened yet (`hydrate` reopens them one by one)
    stored: StoredSession | None = None  # its log, if listed for opening on demand (read now or not)
    listed: int | None = None  # its last sequence as listed, while finished and not read in the engine
    read_whole: bool = False  # listed, then read (and counted) whole by the engine
    in_use: int = 0  # how many actions read and write it now (it is kept read meanwhile)
    terminal: str | None = None  # a terminal CLI's session: its name as shown (`claude · fix-tests`)
    parent: str | None = None  # a terminal session's parent session, if a sub-agent
    transcript: TerminalListing | None = None  # listed from a transcript's head, to read on demand
    log: Path | None = None  # a terminal session's log once read (converted, in the import cache)
    reading: bool = False  # a terminal session's transcript is being read now


class Workbench(FinishingActions):
    """Sessions of one project on one engine (and the actions that finish their work).

    Args:
        engine: the engine (not yet entered).
        project: the project directory (the new-agent form's default directory).
        sessions_dir: where the logs are.
        models: what agents can be started with, the default first (may be empty when
            `external` offers agents).
        router: routes sessions to their model (None: every session uses `engine.provider`).
        external: agents run by programs of their own (ACP agents), or None.
        data_dir: the user data directory the search index of `sessions_dir` is kept under (None:
            the platform's).
        find_terminal: finds the terminal CLIs' sessions to show beside ours (`terminal.discovery`,
            called in a thread by `hydrate` and `list_terminal`), or None.
        all_projects: `hydrate` lists every project's terminal sessions, not only this one's.
    """

    def __init__(
        self,
        engine: SessionEngine,
        *,
        project: Path,
        sessions_dir: Path,
        models: list[ModelChoice],
        router: ProviderRouter | None = None,
        external: ExternalAgents | None = None,
        data_dir: Path | None = None,
        find_terminal: TerminalFinder | None = None,
        all_projects: bool = False,
    ) -> None:
        self.engine = engine
        self.find_terminal = find_terminal
        self.all_projects = all_projects
        """Whether `hydrate` lists every project's terminal sessions (else this project's)."""
        self.skipped: list[str] = []
        """The transcripts `hydrate` skipped (unreadable, or not a session): one line each."""
        self.data_dir = data_dir
        self.project = project
        self.sessions_dir = sessions_dir
        self.models = list(models)
        self.router = router
        self.external = external
        self.records: dict[str, SessionRecord] = {}
        """What this workbench keeps of each session beside the engine's state."""
        self.opened = OpenedSessions()
        """The finished sessions read on demand, least recently used first (the bound)."""
        engine.subscribe(TurnRecorder(sessions_dir, lambda session_id: engine.session(session_id).cwd))

    def _record(self, session_id: str) -> SessionRecord:
        return self.records.setdefault(session_id, SessionRecord())

    @property
    def listed(self) -> dict[str, int]:
        """Finished stored sessions listed but not read in the engine, with their last sequence."""
        return {sid: r.listed for sid, r in self.records.items() if r.listed is not None}

    @classmethod
    def for_project(
        cls,
        *,
        project: Path,
        sessions_dir: Path,
        models: list[ModelChoice],
        questions: Questions | None,
        max_steps: int = 250,
        external: ExternalAgents | None = None,
        data_dir: Path | None = None,
        prices: PriceTable | None = None,
        mcp_servers: Mapping[str, McpServerConfig] | None = None,
        notice: Callable[[str], object] | None = None,
        find_terminal: TerminalFinder | None = None,
        all_projects: bool = False,
    ) -> Workbench:
        """A workbench with its own engine: logs in `sessions_dir`, the user's rules for the
        project (kept under `data_dir`, the platform's user data directory by default), the
        project's own rules file once accepted, and the coding-agent prompt for the project
        (its tools, rules and `AGENTS.md`). Model calls are priced by `prices` (the loaded config's
        `price_table()`; by default the shipped prices); a root agent's MCP servers are those of
        `mcp_servers` (the loaded config's `[mcp.NAME]`; by default none) for its model's
        profile; `notice` is told of each that does not start. The config file is not read here.

        With no `models` (only external agents configured), our own agents cannot be started,
        and a stored one that is continued ends its turn saying no model is configured."""
        store = JsonlFileEventStore(sessions_dir)
        router = ProviderRouter(models or [_no_model()], lambda session_id: None)  # (the family: below)
        permissions = permission_engine(DEFAULT_POLICY, project=project, data_dir=data_dir)
        # A root agent's MCP servers are those of its model's profile (picked in the form).
        servers = McpServers(
            mcp_servers or {},
            lambda session_id: router.choice_for(session_id).name,
            notice=notice or (lambda text: None),
        )

        engine = SessionEngine(
            store,
            router,
            permissions=permissions,
            questions=questions,
            max_steps=max_steps,
            instructions=system_prompt,  # per session: its directory (or worktree), tools, AGENTS.md
            prices=prices,
            session_tools=servers,
        )
        SubAgents(engine)
        router.parent_of = engine.budgets.index.parent_of
        return cls(
            engine,
            project=project,
            sessions_dir=sessions_dir,
            models=models,
            router=router,
            external=external,
            data_dir=data_dir,
            find_terminal=find_terminal,
            all_projects=all_projects,
        )

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[Workbench]:
        """The engine open (and the external agents served on it) while inside; leaving stops
        every turn and ends every external agent's process."""
        async with self.engine:
            if self.external is None:
                yield self
                return
            async with self.external.serve(self.engine):
                yield self

    def external_agents(self) -> list[tuple[str, str]]:
        """`(name, command line)` of each external agent the form offers."""
        external = self.external
        return [(name, external.describe(name)) for name in external.names()] if external else []

    # -- the project's own rules file ----------------------------------------------------------
    def project_rules(self) -> ProjectRulesState | None:
        """The project's own rules file as it is now (None: this engine reads none)."""
        project_rules = self.engine.permissions.project_rules
        return project_rules.state() if project_rules is not None else None

    def accept_project_rules(self, digest: str) -> bool:
        """Accept the project's rules file if it still has the content the user was shown
        (`digest`); False if it changed since (then it stays ignored).

        Raises:
            PermissionRulesError: the acceptance cannot be written.
        """
        project_rules = self.engine.permissions.project_rules
        return project_rules is not None and project_rules.accept(digest)

    # -- reopening stored sessions -------------------------------------------------------------
    async def hydrate(
        self,
        fold: Callable[[Event], None],
        earlier: Callable[[str, EarlierSpend], None] | None = None,
        *,
        lazy: bool = False,
        listed: Callable[[], Awaitable[None]] | None = None,
    ) -> list[str]:
        """Reopen the stored sessions; `fold` sees every stored session's first line (then
        `listed` is awaited: the dashboard draws the whole list), then each one's last turn (its
        head, then its tail, `read_entry`: the whole list is drawn before any tail is read, and
        before any log is read whole), then the engine reopens them one by one, letting the
        dashboard run in between. Then `earlier(session id, spend)` is told what each one's
        turns before its folded tail spent, asked of the search index (`reducer.earlier_spend`:
        in all, per day, and a budget set meanwhile when the tail sets none), so the totals are
        the whole log's.

        With `lazy`, only the sessions that need it now are reopened: one whose last turn is
        not finished (it is closed, as a crash left it), one whose log has a problem near its
        end (a torn final line is cut), one run by an external agent. A finished one is listed
        for opening on demand (`open_listed`); the engine's budgets learn its earlier spend
        from the index too.

        Returns:
            One `FILE: reason` line per log that could not be reopened (and one if the index
            could not be asked).
        """
        problems: list[str] = []
        stored, shown = self._list_heads(fold, problems)
        self.skipped = await self.list_terminal(fold, all_projects=self.all_projects)
        terminal = any(record.transcript is not None for record in self.records.values())
        if listed is not None and (shown or terminal):  # (an empty history has no list to wait for)
            await listed()
        entries = await self._fold_last_turns(shown, fold, lazy=lazy)
        for session in shown:
            await anyio.sleep(0)  # thousands of logs: the dashboard stays responsive meanwhile
            record = self._record(session.session_id)
            record.reopening = False
            if record.listed is not None:
                continue
            if self._is_terminal_log(session):
                self._list_terminal_log(session)
                continue
            if self._is_external(session):
                problem = await self._reopen_external(session)
            else:
                problem = await self._open_in_engine(session)
            if problem is not None:
                problems.append(problem)
        problems.extend(await self._tell_earlier(stored, entries, earlier))
        return problems

    def _list_heads(
        self, fold: Callable[[Event], None], problems: list[str]
    ) -> tuple[list[StoredSession], list[StoredSession]]:
        """Every stored log from its head, parents before their sub-agents, and those shown: each
        one's `session.created` folded, marked `reopening` (a log that cannot be listed goes to
        `problems`; a closed session and its sub-agents are not shown, nor a follower's log of an
        ACP session's transcript)."""
        # Thousands of heads read and folded hold no cycles: the collector's passes as they pile
        # up would cost more than reading them (nothing is awaited meanwhile).
        with collector_paused():
            stored = list_stored_sessions(self.sessions_dir, ends=False)  # (each head read once)
            stored.sort(key=lambda s: (s.created_ts, s.session_id))  # parents before sub-agents
            closed = closed_sessions(self.sessions_dir)
            closed |= self._acp_copies(stored)
            shown: list[StoredSession] = []
            for session in stored:
                record = self._record(session.session_id)  # (known: a transcript of it is not listed)
                if session.session_id in closed or session.parent_session_id in closed:
                    closed.add(session.session_id)  # a closed session's sub-agents stay closed too
                elif session.problem is not None:
                    problems.append(f"{session.path}: {session.problem}")
                else:
                    shown.append(session)
                    record.reopening = True
                    created = created_event(session.head, session.session_id)
                    if created is not None:
                        fold(created)
        return stored, shown

    def _acp_copies(self, stored: list[StoredSession]) -> set[str]:
        """Our ids of the transcripts of the ACP sessions stored here (as their logs' heads
        record them): a log a follower made of one is not that session a second time."""
        acp = [
            s.path
            for s in stored
            if s.parent_session_id is None and not is_ours(s.client, self.engine.client)
        ]
        return set(our_ids(filter(None, map(recorded_acp_session, acp))))

    async def _fold_last_turns(
        self, shown: list[StoredSession], fold: Callable[[Event], None], *, lazy: bool
    ) -> dict[str, CatalogEntry]:
        """Fold each shown log's last turn, read in a thread `TAILS_BATCH` logs at a time (with
        `lazy`, a finished one is listed for opening on demand); each one's catalog entry."""
        entries: dict[str, CatalogEntry] = {}
        for start in range(0, len(shown), TAILS_BATCH):
            batch = shown[start : start + TAILS_BATCH]
            last_turns = await anyio.to_thread.run_sync(_last_turns, [session.path for session in batch])
            for session, (entry, events) in zip(batch, last_turns, strict=True):
                entries[session.session_id] = entry
                for event in events:
                    fold(event)
                if lazy and self._can_wait(session, entry, events):
                    self._list_finished(session, events)
                await anyio.sleep(0)  # one tail at a time: the list stays responsive meanwhile
        return entries

    # -- terminal agents' sessions (Claude Code, Codex) ----------------------------------------------
    async def list_terminal(self, fold: Callable[[Event], None], *, all_projects: bool = False) -> list[str]:
        """List the terminal sessions `find_terminal` finds (this project's, or every project's), but
        not those listed or stored here already, nor closed ones; a parent before its sub-agents.
        Returns the lines of the files skipped (one each)."""
        if self.find_terminal is None:
            return []
        skipped: list[str] = []
        find = self.find_terminal
        try:
            found = await anyio.to_thread.run_sync(lambda: find(all_projects, skipped.append))
        except Exception as error:  # (the CLIs' folders are read as they are: never the dashboard's end)
            return [*skipped, f"the terminal agents' sessions could not be listed: {error}"]
        closed = closed_sessions(self.sessions_dir)
        # A transcript of a session run here through ACP (its log records the CLI's id) is that session.
        closed |= our_ids(await anyio.to_thread.run_sync(recorded_acp_sessions, self.sessions_dir))
        listed = [
            t
            for t in found
            if t.session_id not in closed
            and t.parent_session_id not in closed
            and (record := self.records.get(t.session_id)) is None  # (ours, or listed before)
        ]
        listed.sort(key=lambda t: t.parent_session_id is not None)
        for listing in listed:
            record = self._record(listing.session_id)
            record.transcript = listing
            name = session_label(listing.agent_name, listing.title, listing.session_id)
            self._name_terminal(listing.session_id, listing.cli, name, listing.parent_session_id)
            fold(listing_event(listing))
        return skipped

    def in_project(self, session_id: str) -> bool:
        """Whether a session runs in this workbench's project (its directory or one under it), as
        its transcript's head told (a sub-agent's: its root's); a session of ours always does."""
        for record in self._lineage(session_id):
            listing = record.transcript
            if listing is not None:
                project = str(self.project)
                return listing.cwd == project or listing.cwd.startswith(project.rstrip("/") + "/")
        return True

    def _lineage(self, session_id: str) -> Iterator[SessionRecord]:
        """The records of the session and its parents as a terminal session's head names them,
        up to the first one not kept here (at most 64: a parent loop in hostile heads ends)."""
        sid: str | None = session_id
        for _ in range(64):
            record = self.records.get(sid) if sid is not None else None
            if record is None:
                return
            yield record
            sid = record.parent

    def _name_terminal(self, session_id: str, client: str, name: str, parent: str | None) -> None:
        record = self._record(session_id)
        record.parent = parent
        record.terminal = name if parent is not None else terminal_name(client, name)

    def is_terminal(self, session_id: str) -> bool:
        """Whether the session is a terminal CLI's (listed from its transcript, or stored here)."""
        record = self.records.get(session_id)
        return record is not None and record.terminal is not None

    def terminal_path(self, session_id: str) -> str | None:
        """A terminal session's agent path (`claude · my-proj › Explore`), or None for ours."""
        names: list[str] = []
        for record in self._lineage(session_id):
            if record.terminal is None:
                break
            names.append(record.terminal)
        return " › ".join(reversed(names)) if names else None

    def _terminal_refusal(self, session_id: str) -> str | None:
        path = self.terminal_path(session_id)
        return driven_from_its_terminal(path) if path is not None else None

    def terminal_logs(self) -> list[Path]:
        """The logs of the terminal sessions read whole so far (converted, in the import cache)."""
        return sorted(
            {r.log for r in self.records.values() if r.log is not None and r.log.parent != self.sessions_dir}
        )

    def log_of(self, session_id: str) -> Path:
        """The session's log: a terminal session's as converted once read, else ours."""
        record = self.records.get(session_id)
        if record is not None and record.log is not None:
            return record.log
        return self.sessions_dir / f"{session_id}.jsonl"

    async def read_terminal(self, session_id: str, fold: Callable[[Event], None]) -> str | None:
        """Read a listed terminal session whole (once): its transcript converted by the
        importers, through their cache, in a thread; `fold` sees every event of it and of its
        sub-agents. One followed live since it was listed (its log in the sessions directory) is
        not read again. None, or why it could not be read (`FILE: reason`)."""
        record = self.records.get(session_id)
        listing = record.transcript if record is not None else None
        if record is None or listing is None or record.log is not None or record.reading:
            return None
        if self._is_open(session_id) or (self.sessions_dir / f"{session_id}.jsonl").exists():
            return None  # followed live since it was listed: its events come from its own log
        record.reading = True
        try:
            read, _warnings = await anyio.to_thread.run_sync(_read_transcript, listing.path)
        except (ImportInputError, EventLogError, OSError) as error:
            return f"{listing.path}: could not be read: {error}"
        except Exception as error:  # a transcript is untrusted input: it never ends the dashboard
            return f"{listing.path}: could not be read: {type(error).__name__}: {error}"
        finally:
            record.reading = False
        for file, events in read:
            if not events:
                continue
            sid = events[0].session_id
            child = self._record(sid)
            child.log = file
            created = events[0].payload if events[0].type == "session.created" else {}
            if sid != session_id and child.terminal is None:
                name = session_label(created.get("agentName"), created.get("title"), sid)
                self._name_terminal(sid, listing.cli, name, created.get("parentSessionId"))
            for event in events:
                fold(event)
        if record.log is None:  # (the transcript held no session of that id: nothing more to read)
            record.log = self.sessions_dir / f"{session_id}.jsonl"
        return None

    async def _open_in_engine(self, session: StoredSession) -> str | None:
        """Open a stored session of ours in the engine; None, or why not (`FILE: reason`). One another process writes now is shown, not continued here
        (`held_elsewhere`)."""
        try:
            hydration = await self.engine.open_session(session.session_id)
        except EventLogDecodeError as error:  # a corrupt line: the decoder names FILE:LINE
            return str(error)
        except Exception as error:
            locked = _lock_refusal(error)
            if locked is not None:
                self._record(session.session_id).held_elsewhere = locked.where
                return None
            return f"{session.path}: could not be reopened: {error}"
        self._remember_model(session)
        if hydration.answers_note is not None:
            return f"{session.session_id}: {hydration.answers_note}"
        return None

    # -- finished sessions, opened on demand ---------------------------------------------------
    def _can_wait(self, session: StoredSession, entry: CatalogEntry, tail: list[Event]) -> bool:
        """Whether a listed session may wait to be opened until it is used: ours, its log's end
        clean, and its last turn finished (nothing to close or repair)."""
        return (
            entry.problem is None
            and not self._is_external(session)
            and not self._is_terminal_log(session)
            and not _ends_inside_turn(tail)
        )

    def _list_finished(self, session: StoredSession, tail: list[Event]) -> None:
        """List a finished session for opening on demand; the engine's budgets learn its head and
        last turn now (its earlier spend once the index is asked)."""
        created = created_event(session.head, session.session_id)
        assert created is not None  # (listed: its first line is its session.created)
        for event in (created, *tail):
            self.engine.budgets.track(event)
        record = self._record(session.session_id)
        record.stored = session
        record.listed = tail[-1].sequence if tail else created.sequence

    async def _tell_earlier(
        self,
        stored: list[StoredSession],
        entries: dict[str, CatalogEntry],
        earlier: Callable[[str, EarlierSpend], None] | None,
    ) -> list[str]:
        """Tell `earlier` what the turns before each folded tail spent (of the sessions open
        in the engine or listed for opening on demand), and the engine's budgets of a listed one
        not read whole meanwhile; asked of the search index of the sessions directory, brought
        up to date in a thread. A problem with the index, as a sentence."""
        wanted = {  # (each one listed by `hydrate` has its record)
            sid: entry
            for sid, entry in entries.items()
            if entry.tail_from is not None
            and (self._record(sid).stored is not None or (earlier is not None and self._is_open(sid)))
        }
        if not wanted:
            return []
        try:
            spent = await anyio.to_thread.run_sync(logs_spend, [s.path for s in stored], self.data_dir)
        except SearchError as error:
            return [f"{error} (what the sessions spent before their last turns is left out)"]
        for sid, entry in wanted.items():
            whole = spent.get(sid)
            if whole is None:
                continue
            found = whole.minus(entry.tail_spend)
            if earlier is not None:
                earlier(sid, found)
            record = self._record(sid)
            if record.stored is not None and not record.read_whole:  # (the engine counted one read whole)
                for event in usage_events(sid, found):
                    self.engine.budgets.track(event)
        return []

    def open_listed(self, session_id: str) -> str | None:
        """Make the session (and its ancestors) open in the engine if it was listed for opening
        on demand: its log is read whole now, and the least recently used finished sessions
        beyond the bound are let go (`OpenedSessions`); None, or why it cannot be opened (the
        log was written by another process since it was listed, or cannot be read).

        The session counts as used now either way (the one the user looks at is let go last).
        """
        chain = self.engine.budgets.index.chain(session_id)  # (it knows the listed ones' heads)
        for sid in chain:  # the root first: a sub-agent's depth and deliveries need it
            refused = self._open_one(sid)
            if refused is not None:
                return refused
        self._let_go(set(chain))
        return None

    @contextmanager
    def using(self, session_id: str) -> Iterator[None]:
        """While inside, the session is never let go (an action that opened it with
        `open_listed` awaits before it writes: a choice made meanwhile must not release it)."""
        record = self._record(session_id)
        record.in_use += 1
        try:
            yield
        finally:
            record.in_use -= 1

    def _is_open(self, session_id: str) -> bool:
        try:
            self.engine.session(session_id)
        except UnknownSession:
            return False
        return True

    def _open_one(self, session_id: str) -> str | None:
        record = self._record(session_id)
        last_sequence, session = record.listed, record.stored
        if last_sequence is None or session is None:
            if session_id in self.opened:
                self.opened.use(session_id)
            return None
        store = self.engine.store
        try:
            if store.last_sequence(session_id) != last_sequence:
                return (
                    "Another agent-tui process wrote to this session after this dashboard listed it; "
                    "open the dashboard again to continue it with what was written."
                )
            self.engine.load_session(session_id)
        except EventLogDecodeError as error:  # a corrupt line: the decoder names FILE:LINE
            return f"It cannot be read: {error}."
        except Exception as error:
            locked = _lock_refusal(error)
            if locked is not None:
                return _held_sentence(locked.where)
            return f"It could not be reopened: {session.path}: {error}."
        record.listed, record.read_whole = None, True
        self._remember_model(session)
        self.opened.use(session_id)
        return None

    def _let_go(self, used: set[str]) -> None:
        """Let go of the least recently used finished sessions beyond the bound, but never one
        of `used` (just read, for what is about to be done with it), one with a turn unfinished
        or a child's result waiting, one an action is `using`, nor one with a sub-agent read (a
        turn looks up its ancestors): a parent goes once its sub-agents have."""
        engine = self.engine
        while gone := self.opened.over(self._kept(used)):
            for sid in gone:
                last_sequence = engine.session(sid).last_sequence
                engine.forget_session(sid)
                if isinstance(engine.store, JsonlFileEventStore):
                    engine.store.release(sid)  # (read again, and checked, when it is used next)
                self._record(sid).listed = last_sequence

    def _kept(self, used: set[str]) -> set[str]:
        """What `_let_go` keeps now (see there)."""
        kept = used | {sid for sid, record in self.records.items() if record.in_use}
        index = self.engine.budgets.index
        for info in self.engine.sessions():
            if info.unfinished_turn is not None or info.open_turn is not None or info.mailbox:
                kept.add(info.id)
            kept.update(index.chain(info.id)[:-1])
        return kept

    async def _reopen_stored(self, session: StoredSession, fold: Callable[[Event], None]) -> str | None:
        """Fold a stored session's events and open it in the engine; or why not (`FILE: reason`)."""
        if session.problem is not None:
            return f"{session.path}: {session.problem}"
        try:
            with JsonlEventLog(session.path) as log:
                events = list(log.replay())
        except Exception as error:  # a corrupt line: the decoder names FILE:LINE
            return str(error)
        for event in events:
            fold(event)
        if self._is_external(session):
            return await self._reopen_external(session)
        return await self._open_in_engine(session)

    def _is_external(self, session: StoredSession) -> bool:
        """Whether the session was run by an external agent (its `client` is not our engine),
        or is made of a CLI's transcript (a sub-agent's too: no engine continues it)."""
        if is_ours(session.client, self.engine.client):
            return False
        return session.parent_session_id is None or session.client in TRANSCRIPT_CLIENTS

    def _is_terminal_log(self, session: StoredSession) -> bool:
        """Whether a stored log is a terminal CLI's session (a followed one's companion log): its
        client is Claude Code's or Codex's, and no ACP agent of the config file has that name."""
        client = session.client
        external = self.external
        return terminal_cli(client) is not None and (external is None or client not in external.names())

    def _list_terminal_log(self, session: StoredSession) -> None:
        """Show a terminal session stored here as it is (its log is read, never opened in the
        engine: our engine does not continue it)."""
        label = session_label(session.agent_name, session.title, session.session_id)
        self._name_terminal(session.session_id, session.client or "", label, session.parent_session_id)
        self._record(session.session_id).not_continued = self._terminal_refusal(session.session_id)

    async def _reopen_external(self, session: StoredSession) -> str | None:
        name = session.client or ""
        external = self.external
        if name in TRANSCRIPT_CLIENTS:  # a terminal agent's: its CLI continues it, in its terminal
            label = session_label(session.agent_name, session.title, session.session_id)
            self._record(session.session_id).not_continued = driven_from_its_terminal(label)
            return None
        if external is None or name not in external.names():
            reason = f"it was run by {name}, which is not an ACP agent of the config file"
            self._record(session.session_id).not_continued = reason
            return None
        try:
            read_only = await external.reopen(name, session.session_id)
        except Exception as error:
            return f"{session.path}: could not be reopened: {error}"
        if read_only is not None:
            self._record(session.session_id).not_continued = read_only
        return None

    def _remember_model(self, session: StoredSession) -> None:
        if self.router is None or session.model is None:
            return
        for choice in self.models:
            if choice.model == session.model:
                self.router.assign(session.session_id, choice)
                return

    # -- new agents ----------------------------------------------------------------------------
    def facts(self, session_id: str) -> SessionFacts:
        """What the session's log says (see `FinishingActions.facts`); every finishing action
        asks it first, so a terminal agent's session is refused here, once for all of them.

        Raises:
            FinishRefused: a terminal agent's session, or its log cannot be read.
        """
        terminal = self._terminal_refusal(session_id)
        if terminal is not None:
            raise FinishRefused(terminal)
        return super().facts(session_id)

    def choice(self, name: str | None) -> ModelChoice:
        for choice in self.models:
            if choice.name == name:
                return choice
        if not self.models:
            raise AgentStartError("no model is configured: choose an ACP agent, or configure a model")
        return self.models[0]

    async def start_agent(self, spec: AgentSpec) -> str:
        """Create the session (and its worktree), start its first turn; returns its id.

        Raises:
            AgentStartError: the directory is missing, the worktree could not be made, or the
                session could not be stored.
        """
        prompt = spec.prompt.strip()
        if not prompt and spec.acp is None:  # an external agent may start idle, for the composer
            raise AgentStartError("the prompt is empty")
        cwd = spec.cwd.expanduser().resolve()
        if not cwd.is_dir():
            raise AgentStartError(f"{cwd}: no such directory")
        if spec.acp is not None:
            self._check_external(spec.acp)
            choice = None
            name = spec.name.strip() or spec.acp
        else:
            choice = self.choice(spec.model)
            name = spec.name.strip() or name_from_prompt(prompt)
        worktree: Worktree | None = None
        if spec.own_worktree:
            try:
                worktree = await anyio.to_thread.run_sync(create_worktree, cwd, name)
            except WorktreeError as error:
                raise AgentStartError(f"no worktree: {error}") from None
            cwd = worktree.cwd
        try:
            if choice is None:
                assert spec.acp is not None
                session_id = await self._start_external(spec.acp, prompt, cwd, name, worktree)
            else:
                session_id = await self._create(choice, spec, prompt, cwd, name, worktree)
        except AgentStartError:
            if worktree is not None:
                await anyio.to_thread.run_sync(_remove_quietly, worktree.path)
            raise
        if choice is not None:
            self.engine.start_turn(session_id, prompt)
        return session_id

    async def _create(
        self,
        choice: ModelChoice,
        spec: AgentSpec,
        prompt: str,
        cwd: Path,
        name: str,
        worktree: Worktree | None,
    ) -> str:
        extra: dict[str, Any] = {}
        if choice.provider is not None:
            extra["provider"] = choice.provider
        if choice.model is not None:
            extra["model"] = choice.model
        if worktree is not None:
            extra["worktree"] = _worktree_fields(worktree)
        budget = spec.budget.merged_over(choice.budget) if spec.budget is not None else choice.budget
        if budget is not None:
            extra["budget"] = budget.payload()
        session_id = new_id("sess")
        if self.router is not None:  # before the session exists: its MCP servers follow its model
            self.router.assign(session_id, choice)
        try:
            await self.engine.create_session(
                cwd, agent_name=name, title=prompt[:60], session_id=session_id, **extra
            )
        except Exception as error:
            raise AgentStartError(f"could not create the session: {error}") from None
        return session_id

    def _check_external(self, agent: str) -> None:
        names = self.external.names() if self.external is not None else []
        if agent not in names:
            configured = f" (configured: {', '.join(names)})" if names else " (none is configured)"
            raise AgentStartError(f"no ACP agent named {agent!r}{configured}")

    async def _start_external(
        self, agent: str, prompt: str, cwd: Path, name: str, worktree: Worktree | None
    ) -> str:
        assert self.external is not None
        created = {"worktree": _worktree_fields(worktree)} if worktree is not None else {}
        try:
            return await self.external.start(
                agent, cwd, prompt=prompt or None, agent_name=name, title=prompt[:60] or None, created=created
            )
        except Exception as error:
            raise AgentStartError(f"could not start {agent}: {error}") from None

    # -- talking to sessions -------------------------------------------------------------------
    def is_running(self, session_id: str) -> bool:
        """Whether the session's turn is not finished: running (its state machine), or ended and
        still writing what follows its end (a delivery to its parent, the engine's extensions),
        so a finishing action or a wait never comes between a turn and what it writes last."""
        try:
            return self.engine.session(session_id).unfinished_turn is not None
        except UnknownSession:
            return False

    def send(self, session_id: str, text: str) -> Sent | SendRefused:
        """Steer the running turn with `text`, or start the session's next turn with it."""
        text = text.strip()
        if not text:
            return SendRefused("There is nothing to send.")
        info = self._writable(session_id, continuing=True)
        if isinstance(info, str):
            return SendRefused(info)
        if self.external is not None and self.external.owns(session_id):
            return self._send_external(session_id, info, text)
        if info.live_turn is not None and isinstance(self.engine.submit(session_id, text), Attached):
            return Sent("steered")
        try:
            self.engine.start_turn(session_id, text)
        except TurnConflict:
            return SendRefused("Its turn is just ending; send again in a moment.")
        except BudgetExceeded as spent:
            return SendRefused(_budget_refusal(spent))
        except RuntimeError as error:  # the engine is closed (the dashboard is leaving)
            return SendRefused(f"The engine is not running: {error}.")
        return Sent("started")

    def _writable(self, session_id: str, *, continuing: bool = False) -> SessionInfo | str:
        """The session, open here (read whole now if it was listed) with this process made its
        one writer; or why not, in a sentence: a terminal agent's, not continued here (when
        `continuing`: a follow-up), its log unreadable, not open, or another process holds it
        (named) or wrote to it after this dashboard read it."""
        terminal = self._terminal_refusal(session_id)
        if terminal is not None:
            return terminal
        record = self._record(session_id)
        if continuing and record.not_continued is not None:
            return f"This session cannot be continued: {record.not_continued}."
        unread = self.open_listed(session_id)
        if unread is not None:
            return unread
        try:
            info = self.engine.session(session_id)
        except UnknownSession:
            if record.held_elsewhere is not None:
                return self._held_refusal(session_id, record.held_elsewhere)
            if record.reopening:
                return "This session is still being reopened from its log; send again in a moment."
            return "This session is not open here."
        store = self.engine.store
        if not isinstance(store, JsonlFileEventStore):
            return info
        try:
            store.claim(session_id)
        except SessionLockedError as error:
            return _held_sentence(error.where)
        except EventLogError as error:
            return f"Its log cannot be written: {error}."
        if store.last_sequence(session_id) != info.last_sequence:
            store.release(session_id)  # not ours to continue: let the other process have it
            return (
                "Another agent-tui process wrote to this session after this dashboard opened it; "
                "open the dashboard again to continue it with what was written."
            )
        return info

    def _held_refusal(self, session_id: str, where: str) -> str:
        """For a session left closed at start because another process was writing it."""
        store = self.engine.store
        if isinstance(store, JsonlFileEventStore):
            try:
                store.claim(session_id)  # only to see whether it is still held: let go at once
            except SessionLockedError as error:
                return _held_sentence(error.where)
            except EventLogError:
                pass
            store.release(session_id)
        return (
            f"This session was {where} when this dashboard opened it; "
            "open the dashboard again to continue it here."
        )

    def _send_external(self, session_id: str, info: SessionInfo, text: str) -> Sent | SendRefused:
        assert self.external is not None
        name = info.agent_name or info.client
        if info.live_turn is not None:
            return SendRefused(f"{name} is working on its turn; send this when it ends, or stop it (x).")
        try:
            self.external.prompt(session_id, text)
        except TurnConflict:
            return SendRefused("Its turn is just ending; send again in a moment.")
        except ExternalAgentGone as gone:
            return SendRefused(f"{name} is not running any more: {gone}. Start it again with n.")
        return Sent("started")

    # -- budgets -------------------------------------------------------------------------------
    async def set_budget(self, session_id: str, budget: BudgetLimit | None, *, by: str | None = None) -> None:
        """Set the whole budget of the session's tree (None: none): raising it lets a tree that
        spent its budget go on; lowering it below what was spent stops the tree's turns.

        Raises:
            BudgetRefused: the session is not open here, or another process writes it.
        """
        if self.external is not None and self.external.owns(session_id):
            raise BudgetRefused("An external agent's spend is not known to agent-tui: it has no budget here.")
        with self.using(session_id):
            info = self._writable(session_id)
            if isinstance(info, str):
                raise BudgetRefused(info)
            await self.engine.set_budget(session_id, budget, by=by)

    # -- stopping ------------------------------------------------------------------------------
    def running_turns(self) -> int:
        return len(self.engine.unfinished_turns())

    def close_store(self) -> None:
        """Close the store's open log files (after the engine has closed)."""
        self.engine.store.close()

    async def close_models(self) -> None:
        """Close the HTTP clients of the models that were built."""
        for choice in self.models:
            await choice.aclose()

    async def close(self, timeout: float = 5.0) -> bool:
        """Stop every turn and wait until each has stored its end. False if time ran out."""
        with anyio.move_on_after(timeout):
            await until_ended(self.engine.unfinished_turns, self.engine.stop_all)
            return True
        return False

    # -- leaving a session ---------------------------------------------------------------------
    async def dispose(
        self, session_id: str, *, remove: Path | None = None, timeout: float = 5.0
    ) -> str | None:
        """Stop the session and its sub-agents, wait for their ends, forget them (the logs stay);
        then remove the worktree at `remove`, if given.

        Returns:
            None, or why the worktree could not be removed, or why `closed.txt` could not be
            written (the session is closed now, and listed again at the next start).
        """
        engine = self.engine
        family = set(engine.budgets.index.subtree(session_id))  # (listed ones too)
        with anyio.move_on_after(timeout):
            await until_ended(
                lambda: [turn for turn in engine.unfinished_turns() if turn.session.id in family],
                lambda: engine.stop_subtree(session_id),
            )
        if self.external is not None and self.external.owns(session_id):
            with anyio.CancelScope(shield=True):
                await self.external.close(session_id)  # its process ends; its log stays
        engine.dispose_session(session_id)
        for sid in family:  # closed: nothing of it is listed, read or scanned here any more
            record = self._record(sid)
            record.listed, record.stored, record.read_whole = None, None, False
            self.opened.drop(sid)
        if isinstance(engine.store, JsonlFileEventStore):
            for sid in family:
                engine.store.release(sid)  # another process may write them now
        unlisted = None
        try:
            mark_closed(self.sessions_dir, sorted(family))
        except OSError as error:  # closed now, but opened again at the next start: said
            unlisted = (
                f"{error.filename or self.sessions_dir}: {error.strerror or error} (not kept as closed)"
            )
        if remove is None:
            return unlisted
        try:
            await anyio.to_thread.run_sync(remove_worktree, remove)
        except WorktreeError as error:
            return str(error)
        return unlisted


def _worktree_fields(worktree: Worktree) -> dict[str, str | None]:
    """`session.created.worktree`: where, on which branch, and where the branch started."""
    return {
        "path": str(worktree.path),
        "branch": worktree.branch,
        "baseBranch": worktree.base_branch,
        "baseCommit": worktree.base_commit,
    }


def _budget_refusal(refused: BudgetExceeded) -> str:
    """The refusal of a turn whose tree spent its budget, and how to go on (the dashboards say
    it was not sent: `✗ not sent: Budget exceeded: spent $0.05 of a $0.04 budget. Raise …`)."""
    message = refused.message
    return f"{message[:1].upper()}{message[1:]}. Raise the budget to go on."


def _held_sentence(where: str) -> str:
    """The refusal of a follow-up on a session another process writes (`where`: who, since when)."""
    return f"This session is {where}; one process writes a session at a time: continue it there, or quit that agent-tui first."


def _lock_refusal(error: BaseException) -> SessionLockedError | None:
    """The `SessionLockedError` behind `error` (itself, or a cause of it), if any."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, SessionLockedError):
            return seen
        seen = seen.__cause__
    return None


def _no_model() -> ModelChoice:
    """What our own agents run on when no model is configured: every call says so."""

    def refuse() -> ModelProvider:
        raise ProviderFailure("no model is configured for agent-tui's own agents (README, 'Real models')")

    return ModelChoice("none", "no model configured", build=refuse)


def _remove_quietly(path: Path) -> None:
    try:
        remove_worktree(path)
    except WorktreeError:
        pass
