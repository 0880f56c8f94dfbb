"""Running a scenario: workspace copies, the scripted provider, the engine, sub-agents.

Both the headless `agent-tui run` and the dashboard's demo start runs through `ScenarioRun`, so
what the dashboard shows is exactly what the headless runner writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from agent_tui.costs.prices import PriceTable
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.errors import EventStoreFailure
from agent_tui.engine.permissions import DEFAULT_POLICY, PermissionEngine, PermissionRulesError
from agent_tui.engine.questions import Questions
from agent_tui.engine.scenario import Scenario, ScenarioError, ScenarioSession
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.engine.session_info import TurnHandle
from agent_tui.events import Event
from agent_tui.runtime.permission_files import permission_engine, project_rules_file, project_rules_notice
from agent_tui.runtime.subagents import SubAgents
from agent_tui.runtime.workspace import Workspace
from agent_tui.store import JsonlFileEventStore
from agent_tui.turns import EventSink


@dataclass
class RunResult:
    """How each session's turns ended (`None`: the turn never ended, e.g. the store failed)."""

    stop_reasons: dict[str, str | None] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def all_ended(self) -> bool:
        return not self.errors and all(reason is not None for reason in self.stop_reasons.values())


async def until_ended(turns: Callable[[], Sequence[TurnHandle]], stop: Callable[[], object]) -> None:
    """Call `stop`, then await the end of every turn `turns` lists; again while one is listed (a
    turn may start while others end: a child while a stop goes down the tree)."""
    while True:
        stop()
        unfinished = turns()
        if not unfinished:
            return
        for turn in unfinished:
            await turn.wait()


def copy_directories(scenario: Scenario, workspace: Workspace) -> list[Path]:
    """The scratch copy of each session's `cwd` (copies made once, so a second call is free).

    Raises:
        ScenarioError: a `cwd` cannot be copied (the session named; the workspace removed).
        CopyStopped: the workspace's `stop` was set (the workspace removed).
    """
    cwds: list[Path] = []
    for index, session in enumerate(scenario.sessions):
        try:
            cwds.append(workspace.prepare(session.cwd))
        except OSError as error:
            workspace.remove()  # nobody gets this run to remove it later
            raise ScenarioError(
                str(workspace.base_dir),
                f"sessions[{index}].cwd",
                f"{session.cwd!r}: {error.strerror or error} ({error.filename or session.cwd})",
            ) from None
        except BaseException:
            workspace.remove()
            raise
    return cwds


class ScenarioRun:
    """Everything one scenario run needs, built but not started.

    Args:
        scenario: the parsed scenario.
        base_dir: where the scenario file lives (its `cwd`s are relative to it).
        sessions_dir: where the logs go.
        questions: the engine's questions (headless: a fixed answer; the dashboard: the user).
        workspace_root: where scratch copies go (a temporary directory if not given).
        trust_project_rules: accept the project's own rules file as it is now
            (`--trust-project-rules`); otherwise it is used only if accepted before.
        data_dir: the user data directory the rules are kept in (the platform's by default).
        workspace: the scratch copies, made already (`copy_directories`, e.g. in a worker
            thread the run's signals can stop); else they are made here.
        prices: what model calls cost (the shipped table if not given; the scripted model is
            priced only when the table names it).
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        base_dir: Path,
        sessions_dir: Path,
        questions: Questions | None,
        workspace_root: Path | None = None,
        sink: EventSink | None = None,
        trust_project_rules: bool = False,
        data_dir: Path | None = None,
        workspace: Workspace | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        self.scenario = scenario
        self.workspace = workspace or Workspace(base_dir, workspace_root, leave_out=[sessions_dir])
        self.cwds = copy_directories(scenario, self.workspace)
        self.store = JsonlFileEventStore(sessions_dir)
        self.provider = ScriptedProvider(max_context_tokens=scenario.maxContextTokens, agents=scenario.agents)
        self.project = (base_dir / scenario.sessions[0].cwd).resolve() if scenario.sessions else base_dir
        self.permissions = self._permissions(data_dir, trust_project_rules)
        self.engine = SessionEngine(
            self.store,
            self.provider,
            permissions=self.permissions,
            questions=questions,
            sink=sink,
            max_steps=scenario.maxSteps,
            prices=prices,
        )
        self.subagents = SubAgents(
            self.engine,
            max_background=scenario.maxBackground,
            max_depth=scenario.maxDepth,
            policies={name: agent.policy for name, agent in scenario.agents.items() if agent.policy},
        )
        self.provider.on_cancel = self._cancel_for_script
        self.provider.on_steer = self._steer_for_script
        self.stopped = False
        self._waiting: set[anyio.CancelScope] = set()  # sessions still in their start delay

    def _permissions(self, data_dir: Path | None, trust_project_rules: bool) -> PermissionEngine:
        """The run's rules: a run on scratch copies keeps its "always" answers for the run; the
        scenario directory's rules file is read from the copy, and used once the user accepted it.

        Raises:
            ScenarioError: the rules file is not valid, named in the scenario's directory (the
                scratch copies removed: nobody gets this run to remove them later).
        """
        copy = self.cwds[0] if self.cwds else None
        try:
            return permission_engine(
                self.scenario.policy or DEFAULT_POLICY,
                project=self.project,
                read_from=copy,
                data_dir=data_dir,
                keep_rules=False,
                trust_project_rules=trust_project_rules,
            )
        except PermissionRulesError as error:
            self.workspace.remove()
            # Named where the user can fix it: the scenario's directory, not the scratch copy.
            copy = copy or self.project
            shown = (
                self.project / error.path.relative_to(copy) if error.path.is_relative_to(copy) else error.path
            )
            raise ScenarioError(str(shown), "", error.reason) from None

    def project_rules_notice(self) -> str | None:
        """What to tell the user about the scenario directory's own rules file, if not used."""
        shown = project_rules_file(self.project)
        return project_rules_notice(self.permissions, shown_as=shown)

    def _cancel_for_script(self, session_id: str, turn_id: str) -> None:
        """A step's `cancelAfterChunks`: the runner cancels the turn, as a user would."""
        self.engine.cancel_turn(session_id, turn_id)

    def _steer_for_script(self, session_id: str, text: str) -> None:
        """A step's `steer`: the runner sends the running turn input, as a user would."""
        self.engine.submit(session_id, text)

    def stop(self) -> None:
        """Stop the run (a signal): every running turn and sub-agent is cancelled (each writes its
        `turn.completed{cancelled}`), and no session that has not started yet starts."""
        self.stopped = True
        for waiting in self._waiting:
            waiting.cancel()
        for info in self.engine.sessions():
            self.engine.stop_subtree(info.id)

    def _stop_again(self) -> None:
        if self.stopped:  # a child that started while the stop went down the tree
            self.stop()

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        return self.engine.subscribe(listener)

    async def play(self) -> RunResult:
        """Create every scenario session, run its turn, and wait for every turn (children too).

        Must run inside `async with run.engine`.
        """
        result = RunResult()
        async with anyio.create_task_group() as group:
            for session, cwd in zip(self.scenario.sessions, self.cwds, strict=True):
                group.start_soon(self._run_scenario_session, session, cwd, result)
        await self.wait_idle(result)
        return result

    async def _run_scenario_session(self, session: ScenarioSession, cwd: Path, result: RunResult) -> None:
        """Create one session of the scenario (after its start delay), hand the scripted provider
        its steps, and run its turn to the end; a store failure is noted in `result`."""
        if session.startDelayMs:
            with anyio.CancelScope() as waiting:
                self._waiting.add(waiting)
                try:
                    await anyio.sleep(session.startDelayMs / 1000)
                finally:
                    self._waiting.discard(waiting)
        if self.stopped:
            return
        try:
            session_id = await self.engine.create_session(
                cwd, title=session.title, agent_name=session.agentName
            )
        except EventStoreFailure as failure:
            result.errors.append(f"{failure} ({failure.__cause__})")
            return
        self.provider.assign(session_id, session.steps)
        handle = self.engine.start_turn(session_id, session.prompt)
        if self.stopped:  # stopped while the session was being created
            handle.cancel()
        await handle.wait()

    async def wait_idle(self, result: RunResult | None = None) -> None:
        """Wait until no turn of any session is running (children included); then note in
        `result` how each session's last turn ended (the engine's `TurnEnd`; None: it never
        settled) and every one that failed outside the model (the store, a bug)."""
        await until_ended(self.engine.unfinished_turns, self._stop_again)
        if result is None:
            return
        for info in self.engine.sessions():
            if (last := info.turn) is None:
                continue
            result.stop_reasons[info.id] = last.end.stop_reason if last.end is not None else None
            if (error := last.error) is not None:
                cause = error.__cause__
                detail = f" ({cause})" if cause is not None else ""
                result.errors.append(f"{error}{detail}")

    def close(self) -> None:
        self.store.close()
