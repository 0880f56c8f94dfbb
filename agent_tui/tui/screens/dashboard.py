"""The live dashboard: the shared panels, plus new agents, the composer, stopping, closing,
reviewing and reopening sessions, and answering approvals.

Everything that acts on the run goes through the app's `Run`: a `LiveRun` (this process's engine)
or an `AttachedRun` (hosts on a bus); without one (a dashboard built from recorded events) the
same keys explain that nothing is running.

A terminal agent's session (Claude Code or Codex in the user's own terminal) is shown and
answered here but driven from its terminal: the composer, `D` and `B` say so in one sentence
(`driven_from_its_terminal`) rather than send anything; the palette shows or hides every other
project's terminal sessions (`agent-tui --all-projects`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import TypeVar

from pydantic import TypeAdapter
from textual import on
from textual.binding import Binding
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.timer import Timer
from textual.widget import Widget

from agent_tui.events import counted, driven_from_its_terminal
from agent_tui.ports import (
    AcceptProjectRules,
    AcpPermissionAnswer,
    Adapters,
    AgentSpec,
    Answer,
    ChangePreview,
    Close,
    Closed,
    Command,
    CommandClient,
    FinishRefused,
    FollowUp,
    PermissionAnswer,
    ProjectRulesState,
    ReadReview,
    Reopen,
    Reply,
    SetBudget,
    StopAll,
    StopSubtree,
    read_result,
)
from agent_tui.reducer import DashboardState, PermissionView
from agent_tui.tui.commands import PaletteCommand
from agent_tui.tui.formatting import (
    call_of,
    session_path,
    session_spend_line,
    short_path,
    terminal_of,
)
from agent_tui.tui.messages import SessionSelected
from agent_tui.tui.run_surface import Run, start_agent
from agent_tui.tui.screens.approval import change_preview
from agent_tui.tui.screens.budget import BudgetAnswer, BudgetScreen
from agent_tui.tui.screens.close_session import CloseSessionScreen, worktree_to_ask
from agent_tui.tui.screens.confirm import ConfirmScreen
from agent_tui.tui.screens.new_agent import NewAgentScreen
from agent_tui.tui.screens.project_rules import ProjectRulesScreen
from agent_tui.tui.screens.reopen import ReopenScreen
from agent_tui.tui.screens.review import ReviewScreen
from agent_tui.tui.screens.search import SearchScreen
from agent_tui.tui.screens.sessions import SessionsScreen, palette
from agent_tui.tui.spend_text import budget_text
from agent_tui.tui.text_entry import focus_now
from agent_tui.tui.widgets.composer import Composer
from agent_tui.tui.widgets.session_detail import SessionDetail

T = TypeVar("T")
_READ_ONLY = "This view shows recorded events: nothing is running here."
NO_AGENT_TO_START = (
    "No model is configured for agent-tui's own agents (README, 'Real models'): the Claude Code "
    "and Codex sessions here are driven from their own terminals."
)
CHOSEN_AFTER_S = 0.25
"""How long the cursor rests on a session before it counts as chosen (a stored one is then read
whole): holding a key down through the tree reads none of the sessions it passes."""


class DashboardScreen(SessionsScreen):
    """The live view of a run (or a static one of recorded events, when `live` is None).

    Args:
        live: the run, or None for a read-only view.
        mode: shown in the summary bar.
        group_by_day: list root sessions newest first under a line per day (a project run).
        location: where the logs are (shown in the summary bar).
    """

    CHART_FROM_HEIGHT = 30  # the chart is there from the first paint on a tall enough screen

    BINDINGS = [
        Binding("n", "new_agent", "New agent", priority=True),  # opens a text box: TEXT_BOX_OPENERS
        Binding("i", "compose", "Talk", priority=True),  # opens a text box: see TEXT_BOX_OPENERS
        Binding("x", "on_selected('stop')", "Stop"),
        Binding("X", "stop_all", "Stop all", show=False),
        Binding("delete", "on_selected('close')", "Close", show=False),
        Binding("R", "project_rules", "Project rules", show=False),
        Binding("F", "search", "Search", show=False, priority=True),  # opens a text box: TEXT_BOX_OPENERS
        Binding("D", "on_selected('review')", "Review", show=False),
        Binding("O", "reopen", "Reopen", show=False),
        Binding("B", "on_selected('budget')", "Budget", show=False),
    ]

    def __init__(
        self, live: Run | None, mode: str, *, group_by_day: bool = False, location: str = ""
    ) -> None:
        super().__init__(mode, group_by_day=group_by_day, location=location)
        self._live: Run | None = None
        self.live = live
        self.draft: AgentSpec | None = None
        """A new agent that failed to start: the form reopens with it."""
        self._choosing: Timer | None = None

    @property
    def live(self) -> Run | None:
        """The run this screen controls (None: a read-only view of recorded events)."""
        return self._live

    @live.setter
    def live(self, live: Run | None) -> None:
        self._live = live
        if live is not None:
            self.unanswerable_note = "The engine is not waiting for this answer (any more)."
        if self._ready:
            self._show_composer()

    def make_detail(self) -> SessionDetail:
        return SessionDetail(id="detail", empty_text="No sessions yet. Press n to start an agent.")

    def compose_detail_bottom(self) -> Iterable[Widget]:
        yield Composer(id="composer", request_waits=lambda: bool(self.state.pending_permissions()))

    def log_of(self, session_id: str) -> Path | None:
        return self.live.log_of(session_id) if self.live is not None else None

    def now_ms(self) -> int | None:
        clock = getattr(self.app, "clock_ms", None)
        return clock() if clock is not None else None

    def show_state(self, state: DashboardState) -> None:
        super().show_state(state)
        if self._ready:
            self._show_composer()

    @on(SessionSelected)
    def _composer_follows_selection(self, event: SessionSelected) -> None:
        if self.live is not None:
            if self._choosing is not None:
                self._choosing.stop()
            self._choosing = self.set_timer(CHOSEN_AFTER_S, partial(self._chosen, event.session_id))
        self._show_composer()

    def _chosen(self, session_id: str) -> None:
        if self.live is not None and self.session_tree.selected_id == session_id:
            self.live.session_chosen(session_id)

    def _show_composer(self) -> None:
        composer = self.query_one("#composer", Composer)
        composer.display = self.live is not None
        if self.live is None:
            return
        session = self.state.sessions.get(self.session_tree.selected_id or "")
        if session is None:
            composer.show_target(None, "", False, 0)
            return
        path = session_path(self.state, session.session_id)
        steerable = not self.live.is_external(session.client)
        composer.show_target(
            session.session_id,
            path,
            session.running,
            len(session.turns),
            steerable=steerable,
            refused=self._terminal_refusal(session.session_id),
        )

    def _terminal_refusal(self, session_id: str) -> str | None:
        """The one sentence for a terminal agent's session (driven from its own terminal)."""
        if terminal_of(self.state.sessions.get(session_id)) is None:
            return None
        return driven_from_its_terminal(session_path(self.state, session_id))

    def _run(self) -> Run | None:
        """The run, or None after saying that this view runs nothing."""
        if self.live is None:
            self.notify(_READ_ONLY, severity="warning")
        return self.live

    def _run_for(self, session_id: str | None, verb: str, refuse: str | None = None) -> Run | None:
        """The run to `verb` the session `session_id` with, or None after saying why not (nothing
        runs here, no session selected, or, when `refuse` titles it, a terminal agent's)."""
        live = self._run()
        if live is None:
            return None
        if session_id is None or session_id not in self.state.sessions:
            self.notify(f"Select a session to {verb}.", severity="warning")
            return None
        refused = self._terminal_refusal(session_id)
        if refuse is not None and refused is not None:
            self.notify(refused, title=refuse, severity="warning")
            return None
        return live

    async def _sent(
        self,
        live: Run,
        command: Command,
        title: str,
        *,
        severity: SeverityLevel = "warning",
        timeout: float = 5,
    ) -> Reply | None:
        """The reply to `command` when it was done, or None after saying why not."""
        reply = await live.commands.send(command)
        if not reply.ok:
            self.notify(reply.message or "", title=title, severity=severity, timeout=timeout)
            return None
        return reply

    async def _result(
        self,
        commands: CommandClient,
        command: Command,
        adapter: TypeAdapter[T],
        key: str,
        title: str,
        severity: SeverityLevel = "warning",
    ) -> T | None:
        """What `command` gives back (read as `key`), or None after a notice saying why not."""
        try:
            return read_result(await commands.send(command), adapter, key)
        except FinishRefused as error:
            self.notify(str(error), title=title, severity=severity, timeout=10)
            return None

    # -- approvals -----------------------------------------------------------------------------
    def can_answer(self, view: PermissionView) -> bool:
        return self.live is not None and self.live.is_waiting(view.session_id, view.request_id)

    def change_preview(self, view: PermissionView) -> ChangePreview | None:
        session = self.state.sessions.get(view.session_id)
        call = call_of(self.state, view)
        if self.live is None or session is None or call is None:
            return None
        here = None if self.live.remote or not session.cwd else Path(session.cwd)  # a host's files are its
        return change_preview(here, call, terminal=terminal_of(session) is not None)

    def answer(self, view: PermissionView, answer: PermissionAnswer) -> None:
        self.run_worker(self._answer(view, answer), group="answer", exit_on_error=False)

    async def _answer(self, view: PermissionView, answer: PermissionAnswer) -> None:
        path = session_path(self.state, view.session_id)
        option_id = answer.option_id if isinstance(answer, AcpPermissionAnswer) else None
        options = self.agent_options(view)  # looked up while the request still waits
        picked = next((o.name for o in options if option_id is not None and o.option_id == option_id), None)
        command = Answer(
            sessionId=view.session_id,
            requestId=view.request_id,
            decision=answer.decision,
            remember=answer.remember,
            reason=answer.reason,
            optionId=option_id,
        )
        reply = await self.live.commands.send(command) if self.live is not None else None
        if reply is None or not reply.ok:
            said = reply.message if reply is not None else None
            self.notify(f"{path}: {said or 'that request is no longer waiting.'}", severity="warning")
            return
        if picked is not None:  # the agent's own option: it says how far it reaches
            self.notify(f"Chose “{picked}”: {path} · {view.tool}", timeout=2)
            return
        if answer.decision == "deny":
            self.notify(f"Denied: {path} · {view.tool}", timeout=2)
            return
        reach = {"once": "once", "session": "for this session", "always": "always"}[answer.remember]
        self.notify(f"Allowed {reach}: {path} · {view.tool}", timeout=2)

    # -- new agents ----------------------------------------------------------------------------
    async def action_new_agent(self) -> None:
        live = self._run()
        if live is None:
            return
        if live.project is None:
            self.notify("The engine is still starting; try again in a moment.", severity="warning")
            return
        if not live.models and not live.remote and not live.external_agents():
            self.notify(NO_AGENT_TO_START, severity="warning", timeout=10)  # (terminal agents only)
            return

        hosts, first_host = live.agent_hosts()

        def chosen(spec: AgentSpec | None) -> None:
            if spec is not None:
                self.draft = spec
                started = start_agent(live, self.app.post_message, spec, form.host)
                self.run_worker(started, group="new-agent", exit_on_error=False)

        form = NewAgentScreen(
            live.project,
            live.models,
            self.draft,
            agents=live.external_agents(),
            hosts=hosts if live.remote else None,
            host=first_host,
        )
        # Waited for (the app reads no key meanwhile): the keys typed right after `n` go to the
        # form's prompt, which has the focus once the form is mounted.
        await self.app.push_screen(form, chosen)

    def agent_started(self, session_id: str) -> None:
        """The new agent runs: forget the draft, show it."""
        self.draft = None
        self.select_session(session_id)

    # -- the composer --------------------------------------------------------------------------
    def action_compose(self) -> None:
        if self._run() is None:
            return
        focus_now(self.query_one("#composer", Composer).input)

    def text_box_to_leave(self) -> Widget | None:
        composer = self.query_one("#composer", Composer).input  # escape keeps its text
        return composer if composer.has_focus else super().text_box_to_leave()

    @on(Composer.Submitted)
    def _composer_submitted(self, message: Composer.Submitted) -> None:
        message.stop()
        composer = message.composer
        if self.live is None:
            composer.failed(_READ_ONLY)
            return
        if message.session_id is None or message.session_id not in self.state.sessions:
            composer.failed("Select a session in the tree first.")
            return
        refused = self._terminal_refusal(message.session_id)
        if refused is not None:
            composer.failed(refused)
            return
        if not message.text.strip():
            composer.failed("Type something first.")
            return
        command = FollowUp(sessionId=message.session_id, text=message.text)
        self.run_worker(self._send(self.live, command, composer), group="send", exit_on_error=False)

    async def _send(self, live: Run, command: FollowUp, composer: Composer) -> None:
        path = session_path(self.state, command.session_id)
        reply = await live.commands.send(command)
        if not reply.ok:
            composer.failed(reply.message or "Not sent.", command.session_id)
            return
        composer.sent(command.session_id, command.text)
        if reply.detail.get("how") == "steered":
            self.notify(f"Sent to {path}; it reads it at its next step.", timeout=3)
        else:
            self.notify(f"{path}: next turn started.", timeout=3)

    # -- stopping ------------------------------------------------------------------------------
    def action_on_selected(self, verb: str) -> None:
        """`x`, `delete`, `D`, `B`: stop, close, review or budget the selected session."""
        getattr(self, f"{verb}_session")(self.session_tree.selected_id)

    def stop_session(self, session_id: str | None) -> None:
        """Stop a session's turn and its whole subtree; say how many turns were stopped."""
        live = self._run_for(session_id, "stop")
        if live is not None and session_id is not None:
            self.run_worker(self._stop(live, session_id), group="stop", exit_on_error=False)

    async def _stop(self, live: Run, session_id: str) -> None:
        path = session_path(self.state, session_id)
        session = self.state.sessions.get(session_id)
        was_running = session is not None and session.running
        reply = await live.commands.send(StopSubtree(sessionId=session_id))
        terminal = terminal_of(session) is not None
        if not reply.ok and terminal and was_running:
            self.notify(
                f"{path} is not followed by this dashboard: stop it in its own terminal.", title="Stop"
            )
            return
        if not reply.ok and reply.message and not terminal:
            self.notify(reply.message, title="Stop", severity="warning")
            return
        # A terminal agent's session that is not running stopped nothing (history, not followed here).
        stopped = int(reply.detail.get("stopped", 0)) if reply.ok or not terminal else 0
        if stopped:
            self.notify(stopped_sentence(path, stopped, was_running), title="Stop")
        else:
            self.notify(f"Nothing is running under {path}.", timeout=3)

    def budget_session(self, session_id: str | None) -> None:
        """`B`: set, raise or remove the budget of a session's tree (through the run: an
        attached dashboard asks the session's host)."""
        live = self._run_for(session_id, "give a budget", "Budget")
        if live is None or session_id is None:
            return
        session = self.state.sessions[session_id]
        path = session_path(self.state, session_id)
        summary = session_spend_line(self.state, session) or Content.styled(
            "Nothing spent yet · no budget", "$text-muted"
        )
        dialog = BudgetScreen(path, summary, session.budget_usd, session.budget_tokens)

        def chosen(answer: BudgetAnswer | None) -> None:
            if answer is not None:
                self.run_worker(self._set_budget(live, session_id, path, answer), group="budget")
            self.session_tree.focus()

        self.app.push_screen(dialog, chosen)

    async def _set_budget(self, live: Run, session_id: str, path: str, answer: BudgetAnswer) -> None:
        command = SetBudget(sessionId=session_id, usd=answer.usd, tokens=answer.tokens)
        if await self._sent(live, command, "Budget not changed", severity="error", timeout=10) is None:
            return
        what = budget_text(answer.usd, answer.tokens)
        self.notify(f"{path} may spend {what}." if what else f"{path} has no budget now.", title="Budget")

    # -- the project's own rules file ----------------------------------------------------------
    def action_project_rules(self) -> None:
        """Open the project-rules question, if the project's rules file waits for an answer."""
        live = self._run()
        if live is None:
            return
        state = live.project_rules()
        if state is None or not state.needs_acceptance:
            if state is not None and state.accepted:
                self.notify("The project's rules file is accepted.", timeout=3)
            else:
                self.notify("No project rules wait for an answer.", timeout=3)
            return
        self.app.push_screen(ProjectRulesScreen(state), partial(self._project_rules_answered, state))

    def _project_rules_answered(self, state: ProjectRulesState, accept: bool | None) -> None:
        if not accept or self.live is None:
            if accept is False:
                self.notify(f"{short_path(state.path)} stays ignored.", timeout=3)
            return
        self.run_worker(self._accept_rules(self.live, state), group="project-rules", exit_on_error=False)

    async def _accept_rules(self, live: Run, state: ProjectRulesState) -> None:
        command = AcceptProjectRules(digest=state.digest or "")
        reply = await self._sent(live, command, "Not accepted", severity="error", timeout=15)
        if reply is None:
            return
        if reply.detail.get("accepted"):
            self.notify(f"{short_path(state.path)} is accepted: its rules apply now.", title="Project rules")
        else:
            self.notify(
                f"{short_path(state.path)} changed since it was shown; it stays ignored (R shows it again).",
                severity="warning",
                timeout=10,
            )

    def action_stop_all(self) -> None:
        if self._run() is None:
            return
        running = self.state.running_count()
        if not running:
            self.notify("Nothing is running.", timeout=3)
            return
        sessions = "session is" if running == 1 else "sessions are"
        question = f"{running} {sessions} running. Stop every turn, sub-agents included?"

        async def stop_all(live: Run) -> None:
            reply = await self._sent(live, StopAll(), "Stop all")
            if reply is None:
                return
            stopped = int(reply.detail.get("stopped", 0))
            self.notify(f"Stopped {stopped} {'turn' if stopped == 1 else 'turns'}.", title="Stop all")

        def confirmed(yes: bool | None) -> None:
            if yes and self.live is not None:
                self.run_worker(stop_all(self.live), group="stop", exit_on_error=False)
            self.session_tree.focus()

        self.app.push_screen(ConfirmScreen("Stop all sessions", question, "Stop all"), confirmed)

    # -- closing a session ---------------------------------------------------------------------
    def close_session(self, session_id: str | None) -> None:
        """Ask, then stop the session's subtree, forget it, and maybe remove its worktree (the
        host does it, for an attached dashboard)."""
        live = self._run_for(session_id, "close")
        if live is None or session_id is None:
            return
        session = self.state.sessions[session_id]
        path = session_path(self.state, session_id)
        if terminal_of(session) is not None:
            self.notify(
                f"{path} is a terminal agent: it is listed while its CLI keeps its transcript.", title="Close"
            )
            return
        worktree = Path(session.worktree_path) if session.worktree_path else None
        changes = None
        if not live.remote:  # a host's worktree is on its own disk
            worktree, changes = worktree_to_ask(worktree)
        family = [session_id, *self.state.descendants(session_id)]
        running = sum(1 for sid in family if self.state.sessions[sid].running)
        dialog = CloseSessionScreen(
            path, running=running, worktree=worktree, branch=session.worktree_branch, changes=changes
        )

        def chosen(choice: str | None) -> None:
            if choice is not None:
                close = self._close(live, session_id, choice == "remove")
                self.run_worker(close, group="close-session", exit_on_error=False)

        self.app.push_screen(dialog, chosen)

    async def _close(self, live: Run, session_id: str, remove: bool) -> None:
        path = session_path(self.state, session_id)
        family = [session_id, *self.state.descendants(session_id)]
        command = Close(sessionId=session_id, worktree="remove" if remove else "keep")
        reply = await self._sent(live, command, "Close", timeout=10)
        if reply is None:
            return
        self.hidden.update(family)
        self.show_state(self.state)
        problem = reply.detail.get("problem")
        where, there = (" on its host", " there") if live.remote else ("", "")
        if problem:
            self.notify(f"{path} closed{where}; the worktree stays: {problem}", severity="error", timeout=10)
        else:
            removed = " and its worktree removed" if remove else ""
            self.notify(f"{path} closed{where}{removed}; its log stays{there}.", title="Close")
        self.session_tree.focus()

    # -- reviewing and reopening ---------------------------------------------------------------
    def review_session(self, session_id: str | None) -> None:
        """`D`: the session's whole change, to commit, merge, discard or rewind (on its host, for
        an attached dashboard)."""
        live = self._run_for(session_id, "review", "Review")
        if live is not None and session_id is not None:
            review = self._open_review(live.commands, session_id)
            self.run_worker(review, group="review", exclusive=True, exit_on_error=False)

    async def _open_review(self, commands: CommandClient, session_id: str) -> None:
        path = session_path(self.state, session_id)
        command = ReadReview(sessionId=session_id)
        review = await self._result(commands, command, Adapters.review, "review", f"No review of {path}")
        if review is None:
            return
        screen = ReviewScreen(commands, review, path)

        def closed(_: None) -> None:
            if "discarded" in screen.finished:
                self.hidden.update([session_id, *self.state.descendants(session_id)])
            self.show_state(self.state)
            self.session_tree.focus()

        self.app.push_screen(screen, closed)

    def action_reopen(self) -> None:
        """`O`: pick a closed session and bring it back into the tree."""
        live = self._run()
        if live is not None:
            self.run_worker(
                self._pick_closed(live.commands), group="reopen", exclusive=True, exit_on_error=False
            )

    async def _pick_closed(self, commands: CommandClient) -> None:
        closed = await self._result(commands, Closed(), Adapters.closed, "closed", "No closed sessions")
        if closed is None:
            return
        if not closed:
            self.notify("No session of this project is closed.", timeout=3)
            return

        def picked(session_id: str | None) -> None:
            if session_id is not None:
                self.run_worker(self._reopen(commands, session_id), group="reopen", exit_on_error=False)

        self.app.push_screen(ReopenScreen(closed), picked)

    async def _reopen(self, commands: CommandClient, session_id: str) -> None:
        """Reopen it (its stored events reach the state by the run: folded here, streamed there)."""
        command = Reopen(sessionId=session_id)
        problems = await self._result(
            commands, command, Adapters.problems, "problems", "Not reopened", "error"
        )
        if problems is None:
            return
        self.hidden.difference_update([session_id, *self.state.descendants(session_id)])
        self.show_state(self.state)
        self.select_session(session_id)
        path = session_path(self.state, session_id)
        if problems:
            self.notify(
                "; ".join(problems), title=f"{path} reopened, in part", severity="warning", timeout=15
            )
        else:
            self.notify(f"{path} is back in the tree.", title="Reopen")

    # -- palette -------------------------------------------------------------------------------
    def action_search(self) -> None:
        """`F`: search what was said in every session of the sessions directory."""
        directory = self.live.sessions_dir if self.live is not None else getattr(self.app, "search_dir", None)
        if self.live is not None and self.live.remote:
            directory = None  # the logs are on the hosts
        if directory is None:
            self.notify("These sessions have no directory of logs to search.", timeout=4)
            return
        more = getattr(self.live, "terminal_logs", None)  # the terminal sessions read so far
        self.app.push_screen(SearchScreen(directory, getattr(self.app, "search_index", None), more))

    def palette_commands(self) -> list[PaletteCommand]:
        commands = super().palette_commands()
        commands[1:1] = palette(
            ("Search sessions…", "Find what was said in any session (F)", self.action_search)
        )
        chart = "What the selected tree spent over time, per agent ($)"
        commands += palette(("Toggle the spend chart", chart, self.action_toggle_spend_chart))
        if self.live is None:
            return commands
        budget = partial(self.action_on_selected, "budget")
        commands[2:2] = palette(
            ("New agent…", "Start an agent with your own prompt (n)", self.action_new_agent),
            ("Stop all sessions", "Stop every running turn", self.action_stop_all),
            ("Budget of the selected session…", "Set, raise or remove what its tree may spend (B)", budget),
            ("Reopen a closed session…", "Bring a closed session back into the tree (O)", self.action_reopen),
        )
        every = getattr(self.live, "all_projects", None)
        if every is not None:
            shown = "only this project's" if every else "every project's"
            terminals = "Claude Code and Codex sessions run in your terminals (agent-tui --all-projects)"
            commands += palette(
                (f"Show {shown} terminal sessions", terminals, self.action_toggle_all_projects)
            )
        rules = self.live.project_rules()
        if rules is not None and rules.needs_acceptance:
            ignored = f"{short_path(rules.path)} is ignored until you accept it (R)"
            commands[1:1] = palette(("Review the project's rules file…", ignored, self.action_project_rules))
        return commands + list(self._session_commands())

    def action_toggle_all_projects(self) -> None:
        """Show every project's terminal sessions (listed once, when first shown), or hide the
        other projects' again."""
        live = self.live
        show = getattr(live, "show_all_projects", None)
        if live is None or show is None:
            return
        on = not live.all_projects  # type: ignore[attr-defined]
        self.run_worker(self._all_projects(live, on), group="all-projects", exclusive=True)

    async def _all_projects(self, live: Run, on: bool) -> None:
        await live.show_all_projects(on)  # type: ignore[attr-defined]
        others = {sid for sid in self.state.sessions if not live.in_project(sid)}  # type: ignore[attr-defined]
        if on:
            self.hidden.difference_update(others)
        else:
            self.hidden.update(others)
        self.notify(f"{'Every' if on else 'Only this'} project's terminal sessions are shown.", timeout=3)
        self.show_state(self.state)

    def _session_commands(self) -> Iterator[PaletteCommand]:
        """Stop (a running session), review and close (a root one): found by typing, not listed."""
        for session_id, path in self._session_paths():
            session = self.state.sessions[session_id]
            root = session.parent_session_id is None
            change = f"{path}'s whole change: commit, merge, discard, rewind a turn (D)"
            offers: tuple[tuple[bool, str, str, Callable[[str], object]], ...] = (
                (session.running, "Stop", f"Stop {path} and every sub-agent it spawned", self.stop_session),
                (root, "Review", change, self.review_session),
                (root, "Close", f"Take {path} out of the tree (its log stays)", self.close_session),
            )
            for offered, verb, help_text, act in offers:
                if offered:
                    yield PaletteCommand(
                        f"{verb} {path}", help_text, partial(act, session_id), discover=False
                    )


def stopped_sentence(path: str, stopped: int, was_running: bool) -> str:
    """What a stop did: `Stopped lead.`, `Stopped lead and 2 agents it spawned.`, or (the agent
    itself had finished) `Stopped 2 agents lead spawned.`"""
    spawned = stopped - 1 if was_running else stopped
    agents = counted(spawned, "agent")
    if not was_running:
        return f"Stopped {agents} {path} spawned."
    return f"Stopped {path} and {agents} it spawned." if spawned else f"Stopped {path}."
