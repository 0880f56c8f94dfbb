"""What the live dashboard and the replay share: session tree, detail and approval queue.

A `SessionsScreen` shows one `DashboardState` (`show_state`); subclasses decide where states come
from, what "now" is (`now_ms`: running turns and waiting requests are measured to it) and which
actions make sense (stopping and answering only in the live dashboard). `/` filters the tree by
text and `S` cycles a state filter (needs me, running, failed, all); `$` shows or hides the
chart of what the selected tree spent over time (shown at once on screens of
`CHART_FROM_HEIGHT` rows where a screen sets one); `tick` redraws what the passing time changes.

The footer shows the most used keys, in its compact form below `COMPACT_FOOTER_BELOW` columns,
so that quit and help fit at 80; the others (`f`, `S`, …) are in the help and the palette.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input

from agent_tui.reducer import DashboardState, PermissionView
from agent_tui.tui.commands import PaletteCommand
from agent_tui.tui.formatting import agent_path_text, call_of, session_path, terminal_of
from agent_tui.tui.marked import marked
from agent_tui.tui.messages import ApprovalChosen, SessionSelected
from agent_tui.tui.session_filter import next_state_filter, visible_sessions
from agent_tui.tui.text_entry import focus_now, types
from agent_tui.tui.widgets.approval_queue import ApprovalQueue
from agent_tui.tui.widgets.session_detail import SessionDetail
from agent_tui.tui.widgets.session_tree import SessionTree
from agent_tui.tui.widgets.spend_chart import SpendChart
from agent_tui.tui.widgets.summary_bar import SummaryBar

if TYPE_CHECKING:  # the engine's and the runtime's: loaded when a request is first opened
    from agent_tui.ports import AgentOption, ChangePreview, PermissionAnswer
    from agent_tui.tui.screens.approval import ApprovalScreen

STATE_FILTER_LABEL = {"needs-me": "needs me", "running": "running", "failed": "failed"}
TEXT_BOX_OPENERS = {"compose", "filter", "prompt", "new_agent", "search"}
"""Actions of printable keys (`i`, `/`, `g`, `n`, `F`) that open a text box. Their bindings are
priority ones, run as the app reads the key, so the keys after them in one burst already find the
box focused and are typed there, not run as commands; in a text box they are not commands at all."""
COMPACT_FOOTER_BELOW = 100
"""Narrower than this many columns, the footer leaves out the spaces around its keys."""


class SessionsScreen(Screen[None]):
    """Tree on the left, the selected session's detail, the approval queue.

    Args:
        mode: shown in the summary bar ("live demo", "replay", …).
        group_by_day: list root sessions newest first under a line per day.
        location: where the logs are, shown in the summary bar.
    """

    BINDINGS = [
        Binding("a", "focus_approvals", "Approvals"),
        Binding("f", "toggle_follow", "Follow", show=False),
        Binding("slash", "filter", "Filter", key_display="/", priority=True),
        Binding("S", "cycle_state_filter", "State filter", show=False),
        # Priority, like the keys that open a text box: the keys after `escape` in one burst
        # already find the focus back on the tree (and run as commands), none is typed in the box.
        Binding("escape", "leave_text_box", "Back", show=False, priority=True),
        Binding("dollar_sign", "toggle_spend_chart", "Spend chart", key_display="$", show=False),
        Binding("W", "toggle_whole_lines", "Whole lines", show=False),
    ]
    CHART_FROM_HEIGHT: int | None = None
    """The spend chart shows on screens this many rows tall or taller (below, it would squeeze
    the transcript); None: only when `$` asks for it."""

    def __init__(self, mode: str, *, group_by_day: bool = False, location: str = "") -> None:
        super().__init__()
        self.mode = mode
        self.location = location
        self.state = DashboardState()
        self.summary_error = ""
        self.filter_text = ""
        self.state_filter = "all"
        self.hidden: set[str] = set()
        """Sessions left out of the tree (closed in the live dashboard), sub-agents included."""
        self._group_by_day = group_by_day
        self._ready = False
        self._selected_on_mount: str | None = None
        self._titles: dict[str, str] = {}  # the border title last set on each pane
        self.withdrawn_note = "its turn was stopped"
        self.unanswerable_note: str | None = None  # None: the dialog's own (a recorded request)
        self._approval: ApprovalScreen | None = None  # the request dialog opened last

    def compose(self) -> ComposeResult:
        bar = SummaryBar(self.mode, id="summary")
        bar.location = self.location
        yield bar
        with Container(id="main"):
            with Vertical(id="tree-pane"):
                yield Input(placeholder="filter: name, prompt, cwd", id="tree-filter")
                yield SessionTree(id="tree", group_by_day=self._group_by_day)
            with Vertical(id="detail-pane"):
                yield self.make_detail()
                yield SpendChart(id="spend-chart")
                yield from self.compose_detail_bottom()
            yield ApprovalQueue(id="queue")
        yield from self.compose_bottom()
        yield Footer()

    def make_detail(self) -> SessionDetail:
        """The detail panel (the replay shows a lighter one)."""
        return SessionDetail(id="detail")

    def compose_detail_bottom(self) -> Iterable[Widget]:
        """Widgets under the detail, inside its panel (the live dashboard's composer)."""
        return ()

    def compose_bottom(self) -> Iterable[Widget]:
        """Widgets between the panels and the footer (the replay's scrubber)."""
        return ()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # In a text box these keys type. (Textual would keep `/` in the footer there: it does not
        # know `slash` is a character.)
        if action == "leave_text_box":
            return self.text_box_to_leave() is not None
        return not (action in TEXT_BOX_OPENERS and types(self.focused, "/"))

    def text_box_to_leave(self) -> Widget | None:
        """The focused text box that `escape` leaves for the tree (the tree filter), if any."""
        box = self.query_one("#tree-filter", Input)
        return box if box.has_focus else None

    def action_leave_text_box(self) -> None:
        """`escape`: back to the tree; from the tree filter, cleared (other boxes keep their text)."""
        if self.text_box_to_leave() is self.query_one("#tree-filter", Input):
            self._leave_filter(keep=False)
        else:
            focus_now(self.session_tree)

    def on_resize(self, event: events.Resize) -> None:
        self.query_one(Footer).compact = event.size.width < COMPACT_FOOTER_BELOW

    def on_mount(self) -> None:
        tall = self.CHART_FROM_HEIGHT
        self.query_one("#spend-chart", SpendChart).wanted = tall is not None and self.app.size.height >= tall
        self._ready = True
        self._set_title("#detail-pane", "Detail")
        self.queue.border_title = "Approvals"
        self._show_tree_title()
        self.session_tree.focus()
        self.show_state(self.state)
        if self._selected_on_mount is not None:
            self.select_session(self._selected_on_mount)

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

    @property
    def summary(self) -> SummaryBar:
        return self.query_one("#summary", SummaryBar)

    def now_ms(self) -> int | None:
        """The time running turns and waiting requests are measured to (None: not shown)."""
        return None

    # -- state → screen ------------------------------------------------------------------------
    def show_state(self, state: DashboardState) -> None:
        """Show `state` everywhere; widgets re-render only what changed."""
        self.state = state
        if not self._ready:
            return
        now = self.now_ms()
        shown = visible_sessions(state, self.filter_text, self.state_filter, self.hidden)
        self.session_tree.show_state(state, now_ms=now, shown=shown)
        self._show_detail()
        self.queue.show_state(state, now)
        self.summary.show_state(state, error=self.summary_error)
        self._show_tree_title(shown)
        self._close_withdrawn_approval()
        self._show_chart()

    def tick(self) -> None:
        """Redraw what the passing time changes (live durations, waits)."""
        if self._ready:
            self.show_state(self.state)

    def _show_detail(self) -> None:
        session_id = self.session_tree.selected_id
        self.detail.show(self.state, session_id, self.now_ms())
        session = self.state.sessions.get(session_id or "")
        self._set_title(
            "#detail-pane",
            "Detail · " + session_path(self.state, session.session_id) if session is not None else "Detail",
        )

    @on(SessionSelected)
    def _session_selected(self, event: SessionSelected) -> None:
        self._show_detail()
        self._show_chart()

    # -- spend ---------------------------------------------------------------------------------
    def _show_chart(self) -> None:
        self.query_one("#spend-chart", SpendChart).show(
            self.state, self.session_tree.selected_id, self.now_ms()
        )

    def action_toggle_spend_chart(self) -> None:
        """`$`: show or hide the chart of what the selected tree spent over time."""
        chart = self.query_one("#spend-chart", SpendChart)
        chart.wanted = not chart.wanted
        self._show_chart()
        if chart.wanted and not chart.display:
            self.notify("Nothing in this tree has spent anything yet.", timeout=3)

    # -- filters -------------------------------------------------------------------------------
    def _set_title(self, selector: str, title: str) -> None:
        # Setting a border title repaints the whole pane, children included: only on a change.
        if self._titles.get(selector) != title:
            self._titles[selector] = title
            self.query_one(selector).border_title = marked(title)  # text, not markup

    def _show_tree_title(self, shown: tuple[set[str], set[str]] | None = None) -> None:
        bits = ["Sessions"]
        if self.state_filter != "all":
            bits.append(STATE_FILTER_LABEL[self.state_filter])
        if self.filter_text.strip():
            bits.append(f"/{self.filter_text.strip()}")
        if shown is not None and (self.filter_text.strip() or self.state_filter != "all"):
            bits.append(f"{len(shown[0])} of {len(self.state.sessions) - len(self.hidden)}")
        self._set_title("#tree-pane", " · ".join(bits))

    def action_filter(self) -> None:
        """`/`: type to filter the tree (enter or ↓ goes back to the tree, esc clears)."""
        box = self.query_one("#tree-filter", Input)
        box.add_class("-shown")
        focus_now(box)

    @on(Input.Changed, "#tree-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.filter_text = event.value
        self.show_state(self.state)

    @on(Input.Submitted, "#tree-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._leave_filter(keep=True)

    def on_key(self, event: events.Key) -> None:
        box = self.query_one("#tree-filter", Input)
        if box.has_focus and event.key == "down":
            event.stop()
            self._leave_filter(keep=True)

    def _leave_filter(self, *, keep: bool) -> None:
        box = self.query_one("#tree-filter", Input)
        if not keep:
            box.value = ""
            self.filter_text = ""
            self.show_state(self.state)
        box.set_class(bool(box.value), "-shown")
        focus_now(self.session_tree)

    def action_cycle_state_filter(self) -> None:
        """`S`: show only sessions that need me, then running, then failed, then all again."""
        self.state_filter = next_state_filter(self.state_filter)
        self.show_state(self.state)
        label = STATE_FILTER_LABEL.get(self.state_filter, "all sessions")
        self.notify(f"Showing {label}.", timeout=2)

    def clear_filters(self) -> None:
        box = self.query_one("#tree-filter", Input)
        box.value = ""
        box.remove_class("-shown")
        self.filter_text = ""
        self.state_filter = "all"
        self.show_state(self.state)

    # -- approvals -----------------------------------------------------------------------------
    def can_answer(self, view: PermissionView) -> bool:
        """Whether someone is waiting for this answer (only a live run)."""
        return False

    def answer(self, view: PermissionView, answer: PermissionAnswer) -> None:
        """Deliver the user's answer (the live dashboard overrides this)."""
        self.notify("A recorded request cannot be answered.", severity="warning")

    def change_preview(self, view: PermissionView) -> ChangePreview | None:
        """What a write_file/edit_file would change now (only the live dashboard looks)."""
        return None

    def agent_options(self, view: PermissionView) -> tuple[AgentOption, ...]:
        """The options an external agent offers for this request, as its `permission.requested`
        recorded them (so a local, an attached and a browser dashboard show the same ones)."""
        from agent_tui.ports import AgentOption

        call = call_of(self.state, view)
        offered = call.options if call is not None else ()
        return tuple(AgentOption(o.option_id, o.name, o.kind) for o in offered)

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
        from agent_tui.tui.screens.approval import RECORDED_NOTE, ApprovalScreen  # the engine's answers

        modal = ApprovalScreen(
            self.state,
            view,
            answerable=self.can_answer(view),
            position=(index + 1, len(pending)),
            note=self.unanswerable_note or RECORDED_NOTE,
            preview=self.change_preview(view),
            options=self.agent_options(view),
            host=self.queue.where(view.session_id),
            terminal=terminal_of(self.state.sessions.get(view.session_id)),
        )

        def answered(answer: PermissionAnswer | None) -> None:
            if answer is not None:
                self.answer(view, answer)

        self._approval = modal
        self.app.push_screen(modal, answered)

    def _close_withdrawn_approval(self) -> None:
        # Asked at every redraw: is the dialog this screen opened last still open, right above it?
        top = self._approval
        if top is None or self.app.screen_stack[-2:] != [self, top]:
            return
        pending = {(v.session_id, v.request_id) for v in self.state.pending_permissions()}
        if top.key not in pending:
            top.withdraw()
            path = session_path(self.state, top.view.session_id)
            taken_back = _taken_back(self.state, top.view)  # a terminal agent's CLI says how
            how = taken_back or f"withdrawn ({self.withdrawn_note})"
            severity: SeverityLevel = "information" if taken_back else "warning"
            self.notify(
                f"{path}: the {top.view.tool} request was {how}.",
                title="Request withdrawn",
                severity=severity,
            )

    # -- follow, palette -----------------------------------------------------------------------
    def action_toggle_follow(self) -> None:
        detail = self.detail
        detail.follow = not detail.follow
        self.notify(f"Follow {'on' if detail.follow else 'off'}.", timeout=2)

    def action_toggle_whole_lines(self) -> None:
        """`W`: the detail's long lines whole (wrapped) or cut with `…`."""
        detail = self.detail
        detail.whole_lines = not detail.whole_lines
        self.notify(f"Long lines {'whole' if detail.whole_lines else 'cut with …'}.", timeout=2)

    def select_session(self, session_id: str) -> None:
        """Show `session_id` (clearing the filters if they hide it) and put the cursor on it.

        A session the tree does not show yet (its first events are still on their way) is
        selected as soon as it appears.
        """
        if not self._ready:
            self._selected_on_mount = session_id
            return
        if session_id not in self.session_tree.visible_ids and session_id in self.state.sessions:
            self.clear_filters()
        if self.session_tree.select_session(session_id):
            self.session_tree.focus()
        else:
            self.session_tree.want(session_id)

    def palette_commands(self) -> list[PaletteCommand]:
        """What the command palette offers on this screen."""
        export, html = "The selected session and its sub-agents as", "HTML (one file, works offline)"
        return palette(
            ("Open next approval", "Open the oldest pending request", self.action_open_next_approval),
            ("Toggle follow", "Keep the newest output in view (or stop)", self.action_toggle_follow),
            ("Filter sessions", "Type to filter the tree (/)", self.action_filter),
            ("Cycle state filter", "Needs me, running, failed, all (S)", self.action_cycle_state_filter),
            ("Help", "Keys, phases, statuses and risks", self.app.action_help),  # type: ignore[attr-defined]
            ("Notices", "Every notice of this run, whole (N)", self.app.action_notices),  # type: ignore[attr-defined]
            ("Export session as Markdown", f"{export} Markdown", partial(self.export_selected, "md")),
            ("Export session as HTML", f"{export} {html}", partial(self.export_selected, "html")),
        ) + [
            PaletteCommand(
                f"Jump to {path}", f"Show {sid} in the detail panel", partial(self.select_session, sid)
            )
            for sid, path in self._session_paths()
        ]

    # -- export --------------------------------------------------------------------------------
    def log_of(self, session_id: str) -> Path | None:
        """The log of `session_id` on disk (None: this view has none, e.g. events given in memory)."""
        return None

    def export_selected(self, fmt: Literal["md", "html"] = "md") -> None:
        """Write the selected session and its sub-agents into the exports directory."""
        session_id = self.session_tree.selected_id
        if session_id is None:
            self.notify("Select a session to export.", severity="warning")
            return
        log = self.log_of(session_id)
        if log is None or not log.is_file():
            self.notify("This view has no log on disk to export.", severity="warning")
            return
        self._export(log, fmt)

    @work(thread=True, group="export", exit_on_error=False)
    def _export(self, log: Path, fmt: Literal["md", "html"]) -> None:
        from agent_tui.ports import ExportFailed, exports_dir, write_export  # loaded when first asked

        try:
            written = write_export(log, exports_dir(), fmt)
        except ExportFailed as error:
            self.app.call_from_thread(self.notify, f"Export failed: {error}", severity="error")
            return
        self.app.call_from_thread(self.notify, f"Exported to {written}", title="Export", timeout=10)

    def _session_paths(self) -> list[tuple[str, str]]:
        state = self.state
        paths = [(sid, agent_path_text(state.agent_path(sid))) for sid in state.sessions]
        paths.sort(key=lambda item: item[1])
        return paths


def palette(*rows: tuple[str, str, Callable[[], Any]]) -> list[PaletteCommand]:
    """Palette commands from `(name, help, run)` rows."""
    return [PaletteCommand(*row) for row in rows]


def _taken_back(state: DashboardState, view: PermissionView) -> str | None:
    """How a terminal agent's CLI took a question back (`answered in the terminal`, `handed back
    to the terminal`), if it did: its `withdrawn` resolution's reason."""
    call = call_of(state, view)
    if call is not None and call.decisions and call.decisions[-1][0] == "withdrawn":
        return call.answer_reason or "withdrawn in the terminal"
    return None
