"""`LiveRun`: the engine the dashboard drives, and the one state its events feed.

Two kinds of run: the built-in demo (a scenario played in a scratch copy of its workspace) and a
project (the user's own directory, a real model, the sessions stored for it before). Both end
up as a `Workbench`, so new agents, follow-ups, stopping and leaving work the same way in both.
External (ACP) agents of the config file run beside our own in either, as sessions of the same
engine; a project run needs a model or at least one of them.

Invariants:
- every event the engine stores goes through `apply_event` into `state` (the same reducer the
  replay uses), in store order, and every phase frame of the engine's sink through
  `apply_frame` (the phases of the turns run here are the live frames); stored sessions are
  folded in from their logs before the engine reopens them. The listener tells the run's `redraws` (a `RedrawThrottle`); the screen redraws
  from `state` at most once a period, never once per event, under any load;
- the engine lives on the app's event loop (a Textual worker), so listener, questions and UI
  share one thread and need no locks; it stays open after the demo's turns end, so finished
  sessions can be continued, until `shutdown`;
- `shutdown` stops every running turn (each writes its `turn.completed{cancelled}`), waits for
  them, then lets the engine close (and every external agent's process end); the demo's scratch
  workspace is removed then, unless the caller chose where it goes;
- what exists once the run is up is kept out of the garbage collector's passes until the run
  ends (`RunCollector.keep_out`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TypedDict, Unpack

import anyio
from textual.message import Message

from agent_tui.events import OUR_CLIENT, Event, Frame, counted, is_ours
from agent_tui.ports import (
    AgentSpec,
    Command,
    CommandClient,
    CommandExecutor,
    ExternalAgents,
    McpServerConfig,
    ModelChoice,
    PriceTable,
    ProjectRulesState,
    Questions,
    Reply,
    RunResult,
    ScenarioRun,
    TerminalAgents,
    TerminalFinder,
    Workbench,
    hook_socket,
    load_scenario,
)
from agent_tui.reducer import (
    DashboardState,
    EarlierSpend,
    add_earlier_spend,
    apply_event,
    apply_frame,
    usage_events,
)
from agent_tui.tui.messages import (
    LiveRunFinished,
    NoticePosted,
    ProjectRulesWaiting,
    StoredSessionsListed,
    WorkbenchReady,
)
from agent_tui.tui.redraw_throttle import RedrawThrottle
from agent_tui.tui.run_collector import RunCollector
from agent_tui.tui.run_surface import start_agent

NOT_OPEN = "Nothing is running here: the engine is not open."


class RunOptions(TypedDict, total=False):
    """What a live run runs beside its scenario or project (see `LiveRun`'s arguments); the
    app takes them too and hands them over as they are."""

    project: Path | None
    models: list[ModelChoice] | None
    prompt: str | None
    external: ExternalAgents | None
    agent: str | None
    prices: PriceTable | None
    mcp_servers: Mapping[str, McpServerConfig] | None
    find_terminal: TerminalFinder | None
    all_projects: bool


class LiveRun:
    """A run the dashboard shows and controls (in this process: `remote` is False).

    Args:
        scenario_path: the demo scenario; None for a project run.
        sessions_dir: where the session logs go (a project's earlier logs are reopened).
        post: delivers messages to the UI (the app's `post_message`).
        workspace_root: where the demo's directories are copied (a temp dir, removed on exit, if
            None).
        project: a project run's directory (the new-agent form's default).
        models: a project run's models, the default first.
        prompt: start an agent with this prompt once the run is up (`agent-tui --prompt`).
        external: the external (ACP) agents the form offers besides the models.
        agent: start this external agent once the run is up (`agent-tui --agent`), with
            `prompt` if given (else it waits for its first prompt from the composer).
        prices, mcp_servers: a project run's prices and MCP servers, from the config file the
            command read (`Workbench.for_project`).
        find_terminal: finds the Claude Code and Codex sessions run in the user's own terminals, listed
            beside ours (a project run may have only these: no model, no external agent).
        all_projects: list every project's terminal sessions, not only this project's.
    """

    def __init__(
        self,
        scenario_path: Path | None,
        sessions_dir: Path,
        post: Callable[[Message], object],
        workspace_root: Path | None = None,
        **options: Unpack[RunOptions],
    ) -> None:
        project, external = options.get("project"), options.get("external")
        find_terminal = options.get("find_terminal")
        runs_something = options.get("models") or (external and external.names()) or find_terminal is not None
        if scenario_path is None and (project is None or not runs_something):
            raise ValueError(
                "a project run needs a project directory and a model, an external agent or terminal agents"
            )
        self.find_terminal = find_terminal
        self.all_projects = options.get("all_projects", False)
        self._tasks: anyio.abc.TaskGroup | None = None  # the run's own background reads
        self.scenario_path = scenario_path
        self.sessions_dir = sessions_dir
        self.workspace_root = workspace_root
        self.project = project
        self.models = list(options.get("models") or ())
        self.prompt = options.get("prompt")
        self.external = external
        self.agent = options.get("agent")
        self.prices, self.mcp_servers = options.get("prices"), options.get("mcp_servers")
        self._post = post
        self.questions = Questions(None)
        """The engine's questions: the user answers them from the approval queue."""
        self.state = DashboardState()
        self.observers: list[Callable[[Event], None]] = []
        """Told every stored event after `state` (the dashboard's attention); while the stored
        sessions are folded in, also a listed session's earlier spend told as `model.usage` and
        `session.budget` events, after its last turn's (see `_on_earlier`)."""
        self.hydrated = False
        """Whether the stored sessions are folded in (what comes after is new)."""
        self.on_hydrated: list[Callable[[], None]] = []
        """Called once the stored sessions are folded in."""
        self.redraws = RedrawThrottle()
        self.run: ScenarioRun | None = None
        self.workbench: Workbench | None = None
        self._executor: CommandExecutor | None = None
        self.finished = False
        self._close_requested = False
        # Made in `play`, on the loop that runs it (an anyio event needs a running loop).
        self._closing: anyio.Event | None = None
        self._closed: anyio.Event | None = None
        self._rules_told: str | None = None  # the digest of the project rules last announced
        self.terminal_hand_back: float | None = None
        """Follow the project's Claude Code and Codex sessions and answer their hooks, handing a
        Codex question back after this many seconds (None: a project run follows none; the
        `agent-tui` command sets it from `[hooks] hand_back_after`)."""
        self.terminal: TerminalAgents | None = None

    remote = False

    @property
    def commands(self) -> CommandClient:
        """The executor over the workbench; before the engine is up and after it closed, every
        command is refused (`NOT_OPEN`)."""
        if self._executor is None or self.finished:
            return _NotOpen()
        return self._executor

    # -- running -------------------------------------------------------------------------------
    def _build(self) -> Workbench:
        if self.scenario_path is None:
            assert self.project is not None
            return Workbench.for_project(
                project=self.project,
                sessions_dir=self.sessions_dir,
                models=self.models,
                questions=self.questions,
                external=self.external,
                prices=self.prices,
                mcp_servers=self.mcp_servers,
                notice=lambda text: self._post(NoticePosted(text, "An MCP server did not start", timeout=15)),
                find_terminal=self.find_terminal,
                all_projects=self.all_projects,
            )
        scenario = load_scenario(self.scenario_path)
        run = ScenarioRun(
            scenario,
            base_dir=self.scenario_path.resolve().parent,
            sessions_dir=self.sessions_dir,
            questions=self.questions,
            workspace_root=self.workspace_root,
        )
        self.run = run
        engine = run.engine
        demo = ModelChoice("demo", "the demo's scripted model", build=lambda: engine.provider)
        self.models = [demo]
        self.project = run.cwds[0] if run.cwds else run.workspace.root
        return Workbench(
            engine,
            project=self.project,
            sessions_dir=self.sessions_dir,
            models=[demo],
            external=self.external,
        )

    async def _follow_terminal_agents(self, stack: AsyncExitStack, workbench: Workbench) -> None:
        """A project run follows the project's terminal sessions once the stored ones are folded
        in (what it writes after is new), and the executor stops them."""
        if self.terminal_hand_back is None or self.run is not None or self.project is None:
            return
        self.terminal = await stack.enter_async_context(
            TerminalAgents(
                workbench.engine,
                watched=lambda: True,  # this dashboard is watching
                hand_back_after=self.terminal_hand_back,
                on_warning=self._terminal_notice,
                on_dropped=self._terminal_dropped,
                transcript_wait=TerminalAgents.TRANSCRIPT_WAIT,
            ).serving(project=self.project, socket=hook_socket())
        )
        if self._executor is not None:
            self._executor.terminal = self.terminal

    async def play(self) -> RunResult | None:
        """Open the engine, reopen stored sessions, play the demo, and serve until `shutdown`.

        Raises what building the run raises (a bad scenario, an unusable sessions directory).
        """
        self._closing, self._closed = anyio.Event(), anyio.Event()
        if self._close_requested:
            self._closing.set()
        try:
            workbench = self._build()
        except BaseException:
            self._closed.set()
            self.finished = True
            raise
        self.workbench = workbench
        self._executor = CommandExecutor(
            workbench.engine, workbench=workbench, project=self.project, reopened=self._fold_reopened
        )
        unsubscribe = workbench.engine.subscribe(self._on_event)
        unwatch = workbench.engine.watch_frames(self._on_frame)  # the phases: live frames
        collector = RunCollector()
        try:
            return await self._serve(workbench, collector)
        finally:
            self._tasks = None
            collector.restore()
            unsubscribe()
            unwatch()
            if self.run is not None:
                self.run.close()
                if self.workspace_root is None:
                    shutil.rmtree(self.run.workspace.root, ignore_errors=True)
            else:
                with anyio.CancelScope(shield=True):
                    await workbench.close_models()
                workbench.close_store()
            self.finished = True
            self._closed.set()

    async def _serve(self, workbench: Workbench, collector: RunCollector) -> RunResult | None:
        """Reopen the stored sessions, start what was asked at launch, play the demo, then
        serve until `shutdown`; the demo's result (None for a project run)."""
        assert self._closing is not None
        result: RunResult | None = None
        async with (  # the terminal agents' task group nests inside the run's tasks: left first
            workbench.serving(),
            anyio.create_task_group() as self._tasks,
            AsyncExitStack() as terminal,
        ):
            problems = await workbench.hydrate(
                self._on_event, self._on_earlier, lazy=True, listed=self._listed
            )
            for line in workbench.skipped:
                self._terminal_notice(line)
            self.hydrated = True
            await self._follow_terminal_agents(terminal, workbench)
            for hook in self.on_hydrated:
                hook()
            collector.keep_out()  # what exists now lives as long as the run
            self._post(WorkbenchReady(problems))
            self.check_project_rules()
            if self.prompt or self.agent:
                spec = AgentSpec(self.prompt or "", self.project or Path.cwd(), acp=self.agent)
                await start_agent(self, self._post, spec)
            if self.run is not None and not self._closing.is_set():
                result = await self.run.play()
                self._post(LiveRunFinished(_summary(result)))
            await self._closing.wait()
            self._tasks.cancel_scope.cancel()  # (a transcript being read: nothing to keep)
        return result

    def _on_event(self, event: Event) -> None:
        apply_event(self.state, event)
        for observer in self.observers:
            observer(event)
        # A question for the user is shown at once (bell, title, queue).
        self.redraws.changed(
            ask=event.type == "permission.resolved" and event.payload.get("decision") == "ask"
        )

    def _on_frame(self, frame: Frame) -> None:
        apply_frame(self.state, frame)
        self.redraws.changed()

    def _fold_reopened(self, event: Event) -> None:
        """A reopened session's stored event, into `state` unless it holds it already (closed
        in this run, its events were folded then)."""
        session = self.state.sessions.get(event.session_id)
        if session is None or event.sequence > session.last_sequence:
            apply_event(self.state, event)

    async def _listed(self) -> None:
        """Every stored session is folded in from its first line: the whole list is drawn
        before any log's last turn is read (a second at most: the screen may be going away)."""
        painted = anyio.Event()
        self._post(StoredSessionsListed(painted))
        with anyio.move_on_after(1.0):
            await painted.wait()

    def session_chosen(self, session_id: str) -> None:
        """The user chose the session in the tree: a finished stored one is read in the engine
        now (a follow-up starts at once), and it is the last to be let go; a terminal agent's
        listed one is read whole from its transcript (in the background: its events come in)."""
        workbench = self.workbench
        if workbench is None or self.finished:
            return
        if workbench.is_terminal(session_id):
            if self._tasks is not None:
                self._tasks.start_soon(self._read_terminal, session_id)
            return
        workbench.open_listed(session_id)

    async def _read_terminal(self, session_id: str) -> None:
        assert self.workbench is not None
        problem = await self.workbench.read_terminal(session_id, self._fold_terminal)
        if problem is not None:
            self._terminal_notice(problem)

    def _fold_terminal(self, event: Event) -> None:
        """A terminal session's event read from its transcript: history, so the attention
        (bells, notifications) is not told of it."""
        apply_event(self.state, event)
        self.redraws.changed()

    async def show_all_projects(self, on: bool) -> None:
        """List every project's terminal sessions too (`on`), once; the screen hides the other
        projects' again when it is off (`in_project`)."""
        self.all_projects = on
        workbench = self.workbench
        if on and workbench is not None and not self.finished:
            for line in await workbench.list_terminal(self._fold_terminal, all_projects=True):
                self._terminal_notice(line)

    def _terminal_dropped(self, session_ids: list[str]) -> None:
        """A transcript followed before it was known as one of this run's ACP sessions' is let go:
        its sessions leave the tree (the ACP session shows that run)."""
        self.state.forget(session_ids)
        self.redraws.changed()

    def _terminal_notice(self, text: str) -> None:
        self._post(NoticePosted(text, "Terminal agents"))

    def terminal_logs(self) -> list[Path]:
        """The logs of the terminal sessions read so far (converted), for search."""
        return self.workbench.terminal_logs() if self.workbench is not None else []

    def in_project(self, session_id: str) -> bool:
        """Whether a session belongs to this run's project (a terminal session of another
        project, listed with `show_all_projects`, does not)."""
        return self.workbench is None or self.workbench.in_project(session_id)

    def _on_earlier(self, session_id: str, found: EarlierSpend) -> None:
        """What a listed session's turns before its folded last one spent (asked of the search
        index): into its totals, and to the observers as usage events (attention counts a tree's
        spend from the calls: those before the folded part are new to it)."""
        add_earlier_spend(self.state, session_id, found)
        for event in usage_events(session_id, found):
            for observer in self.observers:
                observer(event)

    def is_external(self, client: str | None) -> bool:
        """Whether a session whose log names `client` is run by an external (ACP) agent (which
        cannot be steered mid-turn): another program than our engine."""
        ours = self.workbench.engine.client if self.workbench is not None else OUR_CLIENT
        return not is_ours(client, ours)

    def external_agents(self) -> list[tuple[str, str]]:
        """`(name, command line)` of each external agent the new-agent form offers."""
        return self.workbench.external_agents() if self.workbench is not None else []

    # -- controls ------------------------------------------------------------------------------
    # -- the project's own rules file ----------------------------------------------------------
    def project_rules(self) -> ProjectRulesState | None:
        """The project's rules file as it is now (None: no run yet, or it reads none)."""
        return self.workbench.project_rules() if self.workbench is not None else None

    def check_project_rules(self) -> None:
        """Post `ProjectRulesWaiting` when the project's rules file waits for the user's answer
        and this content was not announced yet (so a changed file is announced again)."""
        state = self.project_rules()
        if state is not None and state.needs_acceptance and state.digest != self._rules_told:
            self._rules_told = state.digest
            self._post(ProjectRulesWaiting(state))

    def is_waiting(self, session_id: str, request_id: str) -> bool:
        return self.questions.request(session_id, request_id) is not None

    def log_of(self, session_id: str) -> Path | None:
        if self.workbench is not None:
            return self.workbench.log_of(session_id)  # (a terminal session's: its converted log)
        return self.sessions_dir / f"{session_id}.jsonl"

    def running_turns(self) -> int:
        return self.workbench.running_turns() if self.workbench is not None and not self.finished else 0

    def agent_hosts(self) -> tuple[dict[str, str | None], str | None]:
        return {}, None  # agents start in this process

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Stop every turn, wait (up to `timeout` s) until each has logged its end, close the engine."""
        self._close_requested = True
        if self.workbench is not None and not self.finished:
            await self.workbench.close(timeout)
        if self._closing is not None:
            self._closing.set()
        if self._closed is not None:
            with anyio.move_on_after(timeout):
                await self._closed.wait()


class _NotOpen:
    """The commands of a run whose engine is not open."""

    async def send(self, command: Command, host: str | None = None) -> Reply:
        return Reply(ok=False, message=NOT_OPEN)


def _summary(result: RunResult) -> str:
    reasons = [reason for reason in result.stop_reasons.values() if reason is not None]
    summary = f"Demo finished: {counted(len(reasons), 'turn')} ended"
    counts = {reason: reasons.count(reason) for reason in sorted(set(reasons))}
    if counts:
        summary += " (" + ", ".join(f"{n} {reason}" for reason, n in counts.items()) + ")"
    return summary + "."
