"""What the live dashboard and the replay share: session tree, detail and approval queue.

A `SessionsScreen` shows one `DashboardState` (`show_state`); subclasses decide where states come
from and which actions make sense (stopping and answering only in the live dashboard).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.reducer import DashboardState, PermissionView
from agent_tui.tui.commands import PaletteCommand
from agent_tui.tui.formatting import agent_path_text
from agent_tui.tui.messages import ApprovalChosen, SessionSelected
from agent_tui.tui.screens.approval import RECORDED_NOTE, ApprovalScreen
from agent_tui.tui.widgets.approval_queue import ApprovalQueue
from agent_tui.tui.widgets.session_detail import SessionDetail
from agent_tui.tui.widgets.session_tree import SessionTree
from agent_tui.tui.widgets.summary_bar import SummaryBar


class SessionsScreen(Screen[None]):
    """Tree on the left, the selected session's detail, the approval queue.

    Args:
        mode: shown in the summary bar ("live demo", "replay", …).
    """

    BINDINGS = [
        Binding("a", "focus_approvals", "Approvals"),
        Binding("f", "toggle_follow", "Follow"),
    ]

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode
        self.state = DashboardState()
        self.summary_note = ""
        self.summary_error = ""
        self._ready = False
        self.withdrawn_note = "its turn was stopped"
        self.unanswerable_note = RECORDED_NOTE

    def compose(self) -> ComposeResult:
        yield SummaryBar(self.mode, id="summary")
        with Container(id="main"):
            yield SessionTree(id="tree")
            yield SessionDetail(id="detail")
            yield ApprovalQueue(id="queue")
        yield from self.compose_bottom()
        yield Footer()

    def compose_bottom(self) -> Iterable[Widget]:
        """Widgets between the panels and the footer (the replay's scrubber)."""
        return ()

    def on_mount(self) -> None:
        self._ready = True
        self.session_tree.border_title = "Sessions"
        self.detail.border_title = "Detail"
        self.queue.border_title = "Approvals"
        self.session_tree.focus()
        self.show_state(self.state)

    # -- the widgets ---------------------------------------------------------------------------
    @property
    def session_tree(self) -> SessionTree:
        return self.query_one("#tree", SessionTree)

    @property
    def detail(self) -> SessionDetail:
        return self.query_one("#detail", SessionDetail)

    @property
    def queue(self) -> ApprovalQueue:
        return self.query_one("#queue", ApprovalQueue)

    # -- state → screen ------------------------------------------------------------------------
    def show_state(self, state: DashboardState) -> None:
        """Show `state` everywhere; widgets re-render only what changed."""
        self.state = state
        if not self._ready:
            return
        tree = self.session_tree
        tree.show_state(state)
        self._show_detail()
        self.queue.show_state(state)
        self.query_one("#summary", SummaryBar).show_state(
            state, note=self.summary_note, error=self.summary_error
        )
        self._close_withdrawn_approval()

    def _show_detail(self) -> None:
        detail = self.detail
        session_id = self.session_tree.selected_id
        detail.show(self.state, session_id)
        session = self.state.sessions.get(session_id or "")
        detail.border_title = (
            "Detail · " + agent_path_text(self.state.agent_path(session.session_id))
            if session is not None
            else "Detail"
        )

    @on(SessionSelected)
    def _session_selected(self, event: SessionSelected) -> None:
        self._show_detail()

    # -- approvals -----------------------------------------------------------------------------
    def can_answer(self, view: PermissionView) -> bool:
        """Whether someone is waiting for this answer (only a live run)."""
        return False

    def answer(self, view: PermissionView, answer: PermissionAnswer) -> None:
        """Deliver the user's answer (the live dashboard overrides this)."""
        self.notify("A recorded request cannot be answered.", severity="warning")

    def action_focus_approvals(self) -> None:
        """`a`: go to the queue (oldest first); pressed again there, open the highlighted one."""
        queue = self.queue
        if queue.count == 0:
            queue.focus()
            self.notify("No approvals are waiting.", timeout=3)
            return
        view = queue.current() if queue.has_focus else None  # never None while entries wait
        if view is None:
            queue.focus_first()
        else:
            self.open_approval(view.session_id, view.request_id)

    def action_open_next_approval(self) -> None:
        view = self.queue.first()
        if view is None:
            self.notify("No approvals are waiting.", timeout=3)
            return
        self.open_approval(view.session_id, view.request_id)

    @on(ApprovalChosen)
    def _approval_chosen(self, event: ApprovalChosen) -> None:
        self.open_approval(event.session_id, event.request_id)

    def open_approval(self, session_id: str, request_id: str) -> None:
        pending = self.state.pending_permissions()
        index = next(
            (i for i, v in enumerate(pending) if (v.session_id, v.request_id) == (session_id, request_id)),
            None,
        )
        if index is None:
            self.notify("That request is no longer waiting.", severity="warning")
            return
        view = pending[index]
        modal = ApprovalScreen(
            self.state,
            view,
            answerable=self.can_answer(view),
            position=(index + 1, len(pending)),
            note=self.unanswerable_note,
        )

        def answered(answer: PermissionAnswer | None) -> None:
            if answer is not None:
                self.answer(view, answer)

        self.app.push_screen(modal, answered)

    def _close_withdrawn_approval(self) -> None:
        top = self.app.screen_stack[-1] if self.app.screen_stack else None
        if not isinstance(top, ApprovalScreen) or self.app.screen_stack[-2:-1] != [self]:
            return
        pending = {(v.session_id, v.request_id) for v in self.state.pending_permissions()}
        if top.key not in pending:
            top.withdraw()
            path = agent_path_text(self.state.agent_path(top.view.session_id))
            self.notify(
                f"{path}: the {top.view.tool} request was withdrawn ({self.withdrawn_note}).",
                title="Request withdrawn",
                severity="warning",
            )

    # -- follow, palette -----------------------------------------------------------------------
    def action_toggle_follow(self) -> None:
        detail = self.detail
        detail.follow = not detail.follow
        self.notify(f"Follow {'on' if detail.follow else 'off'}.", timeout=2)

    def select_session(self, session_id: str) -> None:
        if self.session_tree.select_session(session_id):
            self.session_tree.focus()

    def palette_commands(self) -> list[PaletteCommand]:
        """What the command palette offers on this screen."""
        commands = [
            PaletteCommand(
                "Open next approval", "Open the oldest pending request", self.action_open_next_approval
            ),
            PaletteCommand(
                "Toggle follow", "Keep the newest output in view (or stop)", self.action_toggle_follow
            ),
            PaletteCommand("Help", "Keys, phases, statuses and risks", self.app.action_help),  # type: ignore[attr-defined]
        ]
        for session_id, path in self._session_paths():
            commands.append(
                PaletteCommand(
                    f"Jump to {path}",
                    f"Show {session_id} in the detail panel",
                    partial(self.select_session, session_id),
                )
            )
        return commands

    def _session_paths(self) -> list[tuple[str, str]]:
        state = self.state
        paths = [(sid, agent_path_text(state.agent_path(sid))) for sid in state.sessions]
        paths.sort(key=lambda item: item[1])
        return paths
