"""The live dashboard's app (`agent-tui`); the replay scrubber's is `replay_app.ReplayApp`.

Both show the same panels over a `DashboardState` folded by the one reducer. The dashboard runs
its engine in a worker on the app's own event loop and redraws on a short timer when events came
in (never once per event), and once a second for the clocks. For tests and screenshots either
app can be built in a fixed state: `AgentTuiApp(events=[...], live=False)` (its "now" is then
the newest event's time), or `ReplayApp([fixture.jsonl])`. What both share (theme, help,
notices, `A` for the next request) is `AgentTuiBase`.

Attention: when a request arrives while the user looks elsewhere (another session, a dialog,
another window), the terminal bell rings and the summary bar says so; the terminal's title
always counts what waits (`(2) agent-tui`, see `terminal.py`). While the terminal has lost focus
(focus reporting), what needs the user (an approval waiting, a root agent's turn failed or
finished) is also told as a desktop notification and to the config's `notify_command`, gathered
and spaced out (`attention.py`). SIGTERM and SIGHUP (a closed
terminal) leave the way `q` does: every running turn is stopped and logged, then the terminal
is restored, and the run exits 128 + the signal's number (143, 129).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Unpack

from textual import events, on, work
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from agent_tui.events import Event, counted, visible
from agent_tui.ports import (
    ModelChoice,
    NotifyCommand,
    demo_scenario_path,
    exit_status,
    listen_for_leave_signals,
)
from agent_tui.reducer import AttentionPolicy, DashboardState, epoch_ms, project_state
from agent_tui.tui.app_base import TITLE, AgentTuiBase
from agent_tui.tui.attention import Attention
from agent_tui.tui.formatting import agent_path_text, short_path
from agent_tui.tui.live import LiveRun, RunOptions
from agent_tui.tui.messages import (
    AgentStarted,
    AgentStartFailed,
    LiveRunFinished,
    ProjectRulesWaiting,
    StoredSessionsListed,
    WorkbenchReady,
)
from agent_tui.tui.screens.confirm import ConfirmScreen
from agent_tui.tui.screens.dashboard import DashboardScreen
from agent_tui.tui.terminal import TerminalTitle, terminal_gone
from agent_tui.tui.timing import now_epoch_ms

REFRESH_SECONDS = 1 / 12
"""How often the live dashboard redraws when events came in."""
TICK_SECONDS = 1.0
"""How often running turns' durations and waiting requests' waits are redrawn."""


class AgentTuiApp(AgentTuiBase):
    """The dashboard: a live run (the demo, or a project), or (live=False) recorded events.

    Args:
        events: events to show (folded once; for tests and screenshots).
        live: run something: the demo scenario `scenario_path`, or (no scenario) `project`.
        scenario_path: the demo scenario.
        sessions_dir: where the live run's logs go (a project's earlier logs are reopened).
        workspace_root: where the demo's directories are copied (a temp dir if None).
        theme: a Textual theme name (default: $AGENT_TUI_THEME, else tokyo-night).
        project: a project run's directory.
        models: a project run's model choices, the default first.
        prompt: start an agent with this prompt at launch.
        external: external (ACP) agents the new-agent form offers besides the models.
        agent: start this external agent at launch (with `prompt`, if given).
        prices, mcp_servers: a project run's prices and MCP servers (from the loaded config).
        notice: a sentence shown once the dashboard is up (e.g. how to configure a model).
        warning: a sentence shown once in the top line when the dashboard is up (e.g. that shell
            commands run without a sandbox).
        clock: "now" in epoch milliseconds (default: the wall clock; for recorded events, the
            newest event's time).
        group_by_day: list root sessions newest first under a line per day (default: for a
            project run).
        search_dir: the logs `F` searches when there is no live run (a live run's are its own);
            `search_index` the index file (default: its usual place in the data directory).
        notify_command: the config's `notify_command`, told each notification while the user is
            away; `attention` the policy deciding them (default: the usual gathering and gaps).
        find_terminal: finds the Claude Code and Codex sessions of the project (a project run), shown
            beside ours; `all_projects` lists every project's from the start.
    """

    def __init__(
        self,
        *,
        events: Iterable[Event] | None = None,
        live: bool = True,
        scenario_path: Path | None = None,
        sessions_dir: Path | None = None,
        workspace_root: Path | None = None,
        theme: str | None = None,
        notice: str | None = None,
        warning: str | None = None,
        clock: Callable[[], int] | None = None,
        group_by_day: bool | None = None,
        search_dir: Path | None = None,
        search_index: Path | None = None,
        notify_command: NotifyCommand | None = None,
        attention: AttentionPolicy | None = None,
        **options: Unpack[RunOptions],
    ) -> None:
        super().__init__(theme=theme)
        self.search_dir, self.search_index = search_dir, search_index
        self.live: LiveRun | None = None
        self._events = list(events or ())
        self._mode = "recorded"
        project = options.get("project")
        if live:
            if sessions_dir is None or (scenario_path is None and project is None):
                raise ValueError("a live dashboard needs sessions_dir and a scenario_path or a project")
            self.live = LiveRun(scenario_path, sessions_dir, self.post_message, workspace_root, **options)
            if scenario_path is not None:
                self._mode = f"live · {scenario_path.stem}"
            elif project is not None:
                self._mode = project_mode(project, options.get("models") or [])
        newest = max((epoch_ms(e.ts) or 0 for e in self._events), default=0)
        self.clock_ms = clock or (now_epoch_ms if live else lambda: newest)
        if notice:
            self._mode += " · no model configured"
        self._project_run = group_by_day if group_by_day is not None else live and scenario_path is None
        self._notice = notice
        self._warning = warning
        self.window_title = TerminalTitle(TITLE, self._write_terminal)
        self.bells = 0
        self.attention = self._attend(attention, notify_command)
        self._leaving = False
        self._left_on: int | None = None  # the signal the run is leaving on (SIGTERM, SIGHUP)

    def _attend(self, policy: AttentionPolicy | None, command: NotifyCommand | None) -> Attention:
        """What tells the user away from the dashboard (bell, title, notifications), told the
        live run's events once its stored sessions are folded in."""
        attention = Attention(
            policy or AttentionPolicy(lambda: time.monotonic_ns() // 1_000_000),
            self._write_terminal,
            command=command,
            run=partial(self.run_worker, group="notify-command", exit_on_error=False),
            report=partial(self.notify, title="The notify command failed", severity="warning", timeout=15),
        )
        if self.live is not None:
            self.live.observers.append(attention.policy.observe)
            self.live.observers.append(self._heard)
            self.live.on_hydrated.append(attention.policy.arm)  # what comes after is news
        return attention

    def get_default_screen(self) -> Screen[None]:
        sessions_dir = self.live.sessions_dir if self.live is not None else None
        location = short_path(sessions_dir) if sessions_dir is not None else ""
        screen = DashboardScreen(self.live, self._mode, group_by_day=self._project_run, location=location)
        if self.live is None:
            screen.state = project_state(self._events)
        return screen

    @property
    def dashboard(self) -> DashboardScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, DashboardScreen)
        return screen

    def on_mount(self) -> None:
        super().on_mount()
        if self.live is not None:
            self.set_interval(REFRESH_SECONDS, self._refresh_live)
            self.live.redraws.every(REFRESH_SECONDS, self._refresh_live)
            self._run_live()
        self.set_interval(TICK_SECONDS, self._tick)
        self.window_title.save()
        self._show_title()
        if self._notice:
            self.notify(self._notice, title="No model configured", severity="warning", timeout=20)
        if self._warning:
            # After the first refresh: the summary bar that shows it is up by then.
            self.call_after_refresh(
                self.notify, self._warning, title="No sandbox", severity="warning", timeout=20
            )
        self.watch(self, "app_focus", self.attention.policy.present, init=False)
        if not self.is_headless:
            listen_for_leave_signals(self._signalled)

    # -- the live run --------------------------------------------------------------------------
    @work(exclusive=True, group="live-run", exit_on_error=False)
    async def _run_live(self) -> None:
        assert self.live is not None
        try:
            await self.live.play()
        except Exception as error:  # a bad scenario or a store failure: say so, keep the UI up
            self.post_message(LiveRunFinished("The run stopped.", error=f"{type(error).__name__}: {error}"))

    def _refresh_live(self) -> None:
        live = self.live
        if not self.is_running:
            return  # closing: the screens are being taken down (their widgets may be gone)
        if live is not None and live.redraws.dirty:
            live.redraws.dirty = False
            self.dashboard.show_state(live.state)
            self._show_title()

    def _tick(self) -> None:
        # The app's timers stop only after its screens are taken down, so a tick can fall while
        # the close has removed the tree but not yet the screen.
        if self.is_running:
            if self.live is None or not self.live.redraws.slowed:  # slowed: its redraws show the time
                self.sessions_screen.tick()
            self.attention.tick()

    # -- attention while the user is away ------------------------------------------------------
    def _heard(self, event: Event) -> None:
        """A new question for the user (the policy's `ask`): the bell when they look elsewhere."""
        live = self.live
        if live is None or not live.hydrated or event.type != "permission.resolved":
            return
        if event.payload.get("decision") != "ask":
            return
        session = live.state.sessions.get(event.session_id)
        request = session.pending.get(event.payload["requestId"]) if session is not None else None
        if request is None:
            return
        live.check_project_rules()  # a rules file changed during the run asks again
        if self._elsewhere(request.session_id):
            self.bells += 1
            self.bell()
            self.notify(
                f"{agent_path_text(live.state.agent_path(request.session_id))}: {request.tool} ({request.risk})",
                title="Approval needed · A opens it",
                severity="warning" if request.risk == "destructive" else "information",
                timeout=4,
            )

    def _elsewhere(self, session_id: str) -> bool:
        """Whether the user is not looking at `session_id` on the dashboard right now."""
        dashboard = self.screen_stack[0] if self.screen_stack else None
        if not isinstance(dashboard, DashboardScreen) or not dashboard.is_mounted:
            return True
        selected = dashboard.session_tree.selected_id
        return self.screen is not dashboard or not self.app_focus or selected != session_id

    def _show_title(self) -> None:
        self.window_title.show(len(self.sessions_screen.state.pending_permissions()))

    def _write_terminal(self, sequence: str) -> None:
        if not self.is_headless and self._driver is not None:
            self._driver.write(sequence)

    @on(StoredSessionsListed)
    def _stored_sessions_listed(self, message: StoredSessionsListed) -> None:
        if self.live is not None:
            self.live.redraws.now()
        self.call_after_refresh(message.painted.set)

    @on(WorkbenchReady)
    def _workbench_ready(self, message: WorkbenchReady) -> None:
        self._refresh_live()
        for problem in message.problems:
            self.notify(problem, title="A stored session was not reopened", severity="error", timeout=15)

    @on(ProjectRulesWaiting)
    def _project_rules_waiting(self, message: ProjectRulesWaiting) -> None:
        # After the next refresh: at start-up the summary bar may not be drawn yet.
        self.call_after_refresh(
            self.notify,
            f"{short_path(message.state.path)} is ignored until you accept it.",
            title="This project ships permission rules · R reviews them",
            severity="warning",
            timeout=20,
        )

    @on(AgentStarted)
    def _agent_started(self, message: AgentStarted) -> None:
        self._refresh_live()
        self.dashboard.agent_started(message.session_id)

    @on(AgentStartFailed)
    def _agent_start_failed(self, message: AgentStartFailed) -> None:
        self.dashboard.draft = message.spec
        self.notify(
            f"{message.reason} (n reopens the form with your prompt)",
            title="The agent did not start",
            severity="error",
            timeout=15,
        )

    @on(LiveRunFinished)
    def _finished(self, message: LiveRunFinished) -> None:
        self._refresh_live()
        if message.error:
            self.notify(message.error, title=message.summary, severity="error", timeout=30)
        else:
            self.notify(message.summary, title="Done", timeout=8)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        if event.worker.group == "live-run":
            self.notify(str(event.worker.error), title="The run failed", severity="error", timeout=30)
        elif event.worker.group in ("new-agent", "close-session"):
            self.notify(str(event.worker.error), title="That did not work", severity="error", timeout=15)

    # -- leaving -------------------------------------------------------------------------------
    async def request_quit(self) -> None:
        """`q` with agents running or requests waiting asks first, as `X` does: quitting stops
        them. A signal, and the answer `y`, quit at once."""
        dashboard = self.dashboard
        question = quit_question(dashboard.state) if dashboard.live is not None else None
        if question is None or self._leaving:
            await self.run_action("quit")
            return
        if isinstance(self.screen, ConfirmScreen):
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.call_later(self.action_quit)

        self.push_screen(ConfirmScreen("Quit", question, "Quit"), confirmed)

    def _signalled(self, number: int) -> None:
        if self._left_on is None:
            self._left_on = number
        self.call_later(self.action_quit)

    async def on_event(self, event: events.Event) -> None:
        if self._leaving and isinstance(event, events.Key | events.Paste):
            # Keys that came in the same burst as the quit are for no one: a screen they opened
            # (`n` after `q`) would be built while the app is being taken down.
            return
        await super().on_event(event)

    async def action_quit(self) -> None:
        """Stop every running turn (each logs its end), close the engine, restore the terminal."""
        if self._leaving:
            return
        self._leaving = True
        live = self.live
        if live is not None:
            if live.running_turns():
                self.notify("Stopping running turns…", timeout=2)
            await live.shutdown()
        self.workers.cancel_group(self, "live-run")
        if terminal_gone():
            # The terminal was closed (SIGHUP): the logs are closed now, and there is nothing to
            # restore; Textual would block for ever trying to write its goodbye to it.
            os._exit(self._exit_status())
        self.window_title.restore()
        self.exit(return_code=self._exit_status())

    def _exit_status(self) -> int:
        """0 after `q`; 128 + the signal's number after SIGTERM or SIGHUP."""
        return exit_status(self._left_on) if self._left_on is not None else 0


# -- entry points (agent_tui.cli) --------------------------------------------------------------


def run_dashboard(
    sessions_dir: Path,
    *,
    notice: str | None = None,
    warning: str | None = None,
    notify_command: NotifyCommand | None = None,
    terminal_hand_back: float | None = None,
    **options: Unpack[RunOptions],
) -> int:
    """`agent-tui`: the dashboard on `project` with `models`, the `external` agents and the
    `terminal` agents' sessions, or (none of these) the built-in demo; `agent` starts that
    external agent at launch (`find_terminal` finds the terminal agents' sessions). `prices` and
    `mcp_servers` are the loaded config file's (the dashboard reads no file of its own). With
    `terminal_hand_back` (`[hooks] hand_back_after`), a project run follows the project's
    terminal agents and answers their hooks.

    Returns the exit status; says where the logs are once the terminal is back.
    """
    external = options.get("external")
    has_agents = options.get("models") or (external is not None and external.names())
    demo = not has_agents and options.get("find_terminal") is None
    if demo:  # the demo scenario runs none of the project's own agents
        options.update(RunOptions(project=None, models=None, external=None, agent=None, find_terminal=None))
    app = AgentTuiApp(
        scenario_path=demo_scenario_path() if demo else None,
        sessions_dir=sessions_dir,
        notice=notice if demo else None,
        warning=warning,
        notify_command=notify_command,
        **options,
    )
    if app.live is not None and not demo:
        app.live.terminal_hand_back = terminal_hand_back
    app.run()
    try:
        print(visible(f"agent-tui: session logs in {sessions_dir} (agent-tui replay {sessions_dir})"))
    except OSError:  # the terminal is gone (closed window): nothing to tell
        pass
    return app.return_code or 0


def project_mode(project: Path, models: list[ModelChoice]) -> str:
    """What the top line says a project run is: its directory and the model new agents use."""
    mode = f"project · {short_path(project)}"
    if models:
        mode += f" · {models[0].model or models[0].name}"
    return mode


def quit_question(state: DashboardState) -> str | None:
    """What quitting would stop, as a question (None: nothing runs, nothing waits)."""
    counts = (
        (state.running_count(), "agent", "running"),
        (len(state.pending_permissions()), "request", "waiting"),
    )
    parts = [f"{counted(n, noun)} {'is' if n == 1 else 'are'} {doing}" for n, noun, doing in counts if n]
    if not parts:
        return None
    return (
        f"{' and '.join(parts).capitalize()}. Quitting stops every turn (each log ends with the "
        "turn cancelled). Quit?"
    )
