"""`AttachedApp`: the dashboard attached to every host on a bus (`agent-tui attach`).

The same app as the local dashboard (`AgentTuiApp`) over an `AttachedRun`: the same panels,
keys, approval queue and dialogs (each request says the host it came from: `lead on build-box`); the tree lists sessions under a line per host (`host ·
unreachable since 14:02:07` when its heartbeat stopped, its sessions marked `host
unreachable`), the summary bar says where the bus is and, while it is away, `bus disconnected
since …` until it is back and caught up.

Invariants:
- quitting never asks and never stops anything: the agents run on their hosts;
- what a host refused, or a request it did not answer, is shown as a notice (a retry is the
  same request); the bus's own problems (an unreadable message) too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from textual.screen import Screen

from agent_tui.ports import AttachedBus
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.attached import AttachedRun, local_time
from agent_tui.tui.screens.dashboard import DashboardScreen
from agent_tui.tui.timing import now_epoch_ms


class AttachedApp(AgentTuiApp):
    """The attached dashboard.

    Args:
        bus: the bus (not opened yet: the app opens it, and closes it on quit).
        theme: a Textual theme name.
        clock: "now" in epoch milliseconds (default: the wall clock).
        time_text: how a moment is written (default: local `HH:MM:SS`; screenshots fix it).
    """

    def __init__(
        self,
        bus: AttachedBus,
        *,
        theme: str | None = None,
        clock: Callable[[], int] | None = None,
        time_text: Callable[[datetime], str] | None = None,
    ) -> None:
        super().__init__(live=False, theme=theme, clock=clock or now_epoch_ms)
        self.attached = AttachedRun(bus, self.post_message, time_text=time_text or local_time)
        # The app drives its run only through the `Run` surface, which an AttachedRun has; the
        # attribute keeps LiveRun's type for the local dashboard's callers (tests reach its engine).
        self.live = self.attached  # type: ignore[assignment]
        self._mode = self.attached.status()

    def get_default_screen(self) -> Screen[None]:
        return DashboardScreen(self.attached, self._mode)

    def on_mount(self) -> None:
        super().on_mount()
        self.call_after_refresh(self._group_by_host)

    def _group_by_host(self) -> None:
        tree = self.dashboard.session_tree
        tree.grouping = self.attached.groups
        tree.folded = self.attached.folded
        tree.marks = self.attached.mark
        self.dashboard.queue.origin = self.attached.bus.host_of
        self.attached.selected = lambda: tree.selected_id
        self.attached.redraws.dirty = True
        self._refresh_live()

    def _refresh_live(self) -> None:
        if self.is_running and self.screen_stack:
            dashboard = self.dashboard
            mode, trouble = self.attached.status(), self.attached.trouble()
            if dashboard.summary.mode != mode or dashboard.summary_error != trouble:
                dashboard.summary.mode = mode
                dashboard.summary_error = trouble
                self.attached.redraws.dirty = True
            read_only = self.attached.read_only_note()
            if read_only is not None:
                dashboard.unanswerable_note = read_only  # what the approval dialog says instead
        super()._refresh_live()

    async def request_quit(self) -> None:
        """Quit at once: the agents run on their hosts, nothing here stops them."""
        await self.run_action("quit")
