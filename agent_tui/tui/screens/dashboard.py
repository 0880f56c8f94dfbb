"""The live dashboard: the shared panels, plus stopping, steering and answering approvals.

Everything that acts on the run goes through the app's `LiveRun`; without one (a dashboard built
from recorded events) the same keys explain that nothing is running.
"""

from __future__ import annotations

from functools import partial

from textual.binding import Binding

from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.reducer import PermissionView
from agent_tui.tui.commands import PaletteCommand
from agent_tui.tui.formatting import agent_path_text
from agent_tui.tui.live import LiveRun
from agent_tui.tui.screens.confirm import ConfirmScreen
from agent_tui.tui.screens.sessions import SessionsScreen
from agent_tui.tui.screens.steer import SteerScreen

_READ_ONLY = "This view shows recorded events: nothing is running here."


class DashboardScreen(SessionsScreen):
    """The live view of a run (or a static one of recorded events, when `live` is None).

    Args:
        live: the running scenario, or None for a read-only view.
        mode: shown in the summary bar.
    """

    BINDINGS = [
        Binding("x", "stop_selected", "Stop"),
        Binding("X", "stop_all", "Stop all"),
        Binding("i", "steer", "Steer", show=False),
    ]

    def __init__(self, live: LiveRun | None, mode: str) -> None:
        super().__init__(mode)
        self.live = live
        if live is not None:
            self.unanswerable_note = "The engine is not waiting for this answer (any more)."

    # -- approvals -----------------------------------------------------------------------------
    def can_answer(self, view: PermissionView) -> bool:
        return self.live is not None and self.live.is_waiting(view.session_id, view.request_id)

    def answer(self, view: PermissionView, answer: PermissionAnswer) -> None:
        path = agent_path_text(self.state.agent_path(view.session_id))
        if self.live is None or not self.live.answer(view.session_id, view.request_id, answer):
            self.notify(f"{path}: that request is no longer waiting.", severity="warning")
            return
        if answer.decision == "deny":
            self.notify(f"Denied: {path} · {view.tool}", timeout=2)
            return
        reach = {"once": "once", "session": "for this session", "always": "always"}[answer.remember]
        self.notify(f"Allowed {reach}: {path} · {view.tool}", timeout=2)

    # -- stopping ------------------------------------------------------------------------------
    def action_stop_selected(self) -> None:
        self.stop_session(self.session_tree.selected_id)

    def stop_session(self, session_id: str | None) -> None:
        """Stop a session's turn and its whole subtree; say how many turns were stopped."""
        if self.live is None:
            self.notify(_READ_ONLY, severity="warning")
            return
        if session_id is None:
            self.notify("Select a session to stop.", severity="warning")
            return
        path = agent_path_text(self.state.agent_path(session_id))
        stopped = self.live.stop_subtree(session_id)
        if stopped:
            turns = "turn" if stopped == 1 else "turns"
            self.notify(f"Stopped {stopped} {turns}: {path} and what it spawned.", title="Stop")
        else:
            self.notify(f"Nothing is running under {path}.", timeout=3)

    def action_stop_all(self) -> None:
        if self.live is None:
            self.notify(_READ_ONLY, severity="warning")
            return
        running = self.state.running_count()
        if not running:
            self.notify("Nothing is running.", timeout=3)
            return
        sessions = "session is" if running == 1 else "sessions are"
        question = f"{running} {sessions} running. Stop every turn, sub-agents included?"

        def confirmed(yes: bool | None) -> None:
            if yes and self.live is not None:
                stopped = self.live.stop_all()
                turns = "turn" if stopped == 1 else "turns"
                self.notify(f"Stopped {stopped} {turns}.", title="Stop all")

        self.app.push_screen(ConfirmScreen("Stop all sessions", question, "Stop all"), confirmed)

    # -- steering ------------------------------------------------------------------------------
    def action_steer(self) -> None:
        session_id = self.session_tree.selected_id
        if self.live is None:
            self.notify(_READ_ONLY, severity="warning")
            return
        if session_id is None:
            return
        path = agent_path_text(self.state.agent_path(session_id))

        def send(text: str | None) -> None:
            if text and self.live is not None:
                if self.live.steer(session_id, text):
                    self.notify(f"Sent to {path}; it reads it at its next step.", timeout=3)
                else:
                    self.notify(f"{path} has no running turn to steer.", severity="warning")

        self.app.push_screen(SteerScreen(path), send)

    # -- palette -------------------------------------------------------------------------------
    def palette_commands(self) -> list[PaletteCommand]:
        commands = super().palette_commands()
        if self.live is None:
            return commands
        commands.insert(
            1, PaletteCommand("Stop all sessions", "Stop every running turn", self.action_stop_all)
        )
        for session_id, path in self._session_paths():
            commands.append(
                PaletteCommand(
                    f"Stop {path}",
                    f"Stop {path} and every sub-agent it spawned",
                    partial(self.stop_session, session_id),
                    discover=False,
                )
            )
        return commands
