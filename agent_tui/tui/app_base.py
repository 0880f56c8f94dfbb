"""`AgentTuiBase`: what the dashboard and the replay scrubber share, whatever they show.

Both apps load the one stylesheet, pick a theme (`$AGENT_TUI_THEME`, else tokyo-night; an
unknown name falls back with a warning rather than failing), open the help on `?`/F1, and list
their screens in the command palette. Notifications go to the summary bar of the top-most screen
that has one (the dashboard's, or a scrubber's opened over it), never as toasts over the panels or
a dialog; the app keeps the latest `MAX_NOTICES` of them.
`A` opens the next waiting request from anywhere: it closes the help or an approval on top
first, and refuses (with a notice) to throw away any other dialog. It is read before the focused
widget (priority); a text box that takes `A` as text keeps it (Textual leaves a key the focused
widget consumes out of the bindings), and the composer gives it up right after a follow-up was
sent, while a request waits (see `ComposerInput`).

The footer always says how to quit and get help: `q` and `?`, or, while the focus is in a text
box (where those keys type), `ctrl+q` and `f1`, which work everywhere.
"""

from __future__ import annotations

import os
from collections import deque
from importlib import resources
from pathlib import Path

from textual import events, on
from textual.app import App
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel

from agent_tui.tui.commands import ScreenCommands
from agent_tui.tui.messages import NoticePosted
from agent_tui.tui.notice import Notice
from agent_tui.tui.screens.help import HelpScreen
from agent_tui.tui.screens.notices import NoticesScreen
from agent_tui.tui.screens.sessions import SessionsScreen
from agent_tui.tui.text_entry import types
from agent_tui.tui.widgets.summary_bar import SummaryBar

DEFAULT_THEME = "tokyo-night"
THEME_ENV = "AGENT_TUI_THEME"
TITLE = "agent-tui"
MAX_NOTICES = 100

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The `agent_tui` package directory (this module is `agent_tui/tui/app_base.py`)."""


def stylesheet_path() -> Path:
    """`app.tcss`: inside the package when installed from a wheel, else the repo's `styles/`."""
    packaged = Path(str(resources.files("agent_tui") / "styles" / "app.tcss"))
    return packaged if packaged.is_file() else _PACKAGE_DIR.parent / "styles" / "app.tcss"


class AgentTuiBase(App[int]):
    """What both apps share: styles, theme, help, notices, the next-request key, the palette."""

    CSS_PATH = str(stylesheet_path())
    TITLE = TITLE
    COMMANDS = App.COMMANDS | {ScreenCommands}
    BINDINGS = [
        # Run as the app reads the key (priority), like the keys that open a text box, so a key
        # typed after `q` in one burst never runs first (`n` opening a form while the app
        # closes). In a text box it is refused and `q` types.
        Binding("q", "quit_outside_text", "Quit", priority=True),
        Binding("question_mark", "help", "Help", key_display="?"),
        # The first of a key's bindings whose action is enabled runs: in a text box the shown
        # one, elsewhere the hidden one (`check_action`).
        Binding("f1", "help_in_text", "Help"),
        Binding("f1", "help", "Help", show=False),
        Binding("ctrl+q", "quit_in_text", "Quit", priority=True),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
        Binding("A", "next_approval", "Next request", show=False, priority=True),
        Binding("N", "notices", "Notices", show=False),
    ]
    HORIZONTAL_BREAKPOINTS = [(0, "-phone"), (70, "-narrow"), (100, "-normal"), (160, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]  # a short screen packs the forms tighter

    def __init__(self, *, theme: str | None = None) -> None:
        super().__init__()
        self._initial_theme = theme or os.environ.get(THEME_ENV) or DEFAULT_THEME
        self.theme_warning: str | None = None
        self.notices: deque[Notice] = deque(maxlen=MAX_NOTICES)
        """The latest notifications, oldest first (the summary bar shows the newest)."""

    def on_mount(self) -> None:
        if self._initial_theme in self.available_themes:
            self.theme = self._initial_theme
        else:
            self.theme_warning = (
                f"Unknown theme {self._initial_theme!r} (from ${THEME_ENV}); using {DEFAULT_THEME}. "
                "The palette lists the themes."
            )
            self.theme = DEFAULT_THEME
            self.call_after_refresh(self.notify, self.theme_warning, severity="warning", timeout=10)

    def on_ready(self) -> None:
        if self.is_web:
            # The web driver starts the app without the focus until the page says it has it, and
            # the page's word can come first (it takes the focus as it opens: web.js): without
            # this, keys worked but the footer stayed blank until something was clicked.
            self.post_message(events.AppFocus())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("help_in_text", "quit_in_text"):
            # A dialog has no footer of its own: the one under it is the screen's, unchanged.
            return not self.screen.is_modal and types(self.focused, "q")
        if action == "quit_outside_text":
            if self.screen.is_modal:
                # Refused in a dialog, where `q` is the dialog's (the help closes on it) or types,
                # as a plain binding of the app never reached it; None: the footer under the
                # dialog (the screen's) still shows it, dimmed.
                return None
            return not types(self.focused, "q")
        return True

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_notices(self) -> None:
        """`N`: every notice of this run, whole (the top line cuts them and lets them go)."""
        if not isinstance(self.screen, NoticesScreen):
            self.push_screen(NoticesScreen(self.notices))

    def action_help_in_text(self) -> None:
        self.action_help()

    async def action_quit_in_text(self) -> None:
        await self.request_quit()

    async def action_quit_outside_text(self) -> None:
        await self.request_quit()

    async def request_quit(self) -> None:
        """`q` / `ctrl+q`: quit (the live dashboard asks first when quitting would stop agents)."""
        await self.run_action("quit")

    @property
    def sessions_screen(self) -> SessionsScreen:
        screen = self.screen_stack[0]
        assert isinstance(screen, SessionsScreen)
        return screen

    # -- notices in the summary bar ------------------------------------------------------------
    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Show a notification in the summary bar (never as a toast over the panels)."""
        self.notices.append(Notice(message, title, severity))
        bar = self._summary_bar()
        if bar is not None:
            bar.show_notice(message, title=title, severity=severity, timeout=timeout or 5)

    @on(NoticePosted)
    def _notice_posted(self, message: NoticePosted) -> None:
        self.notify(message.text, title=message.title, severity=message.severity, timeout=message.timeout)

    def clear_notifications(self) -> None:
        """Clear the notice in the summary bar too."""
        super().clear_notifications()
        bar = self._summary_bar()
        if bar is not None:
            bar.clear_notice()

    def _summary_bar(self) -> SummaryBar | None:
        """The summary bar of the top-most screen that has one: the dashboard's, or that of a
        scrubber opened over it (from a search result); a dialog has none."""
        for screen in reversed(self.screen_stack):
            try:
                return screen.query_one("#summary", SummaryBar)
            except NoMatches:
                continue
        return None

    # -- the next request, from anywhere -------------------------------------------------------
    def action_next_approval(self) -> None:
        """`A`: open the next waiting request (after the open one), wherever the user is."""
        screen = self.sessions_screen
        pending = screen.state.pending_permissions()
        if not pending:
            self.notify("No approvals are waiting.", timeout=3)
            return
        from agent_tui.tui.screens.approval import ApprovalScreen  # the engine's answers, when first asked

        top = self.screen
        after = top.key if isinstance(top, ApprovalScreen) else None
        keys = [(v.session_id, v.request_id) for v in pending]
        index = (keys.index(after) + 1) % len(keys) if after in keys else 0
        view = pending[index]
        while len(self.screen_stack) > 1:
            if not isinstance(self.screen, ApprovalScreen | HelpScreen):
                self.notify("Close this dialog first (esc), then press A.", severity="warning")
                return
            self.pop_screen()
        screen.select_session(view.session_id)
        screen.open_approval(view.session_id, view.request_id)
