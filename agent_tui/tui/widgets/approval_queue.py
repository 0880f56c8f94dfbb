"""The approval queue: every pending permission request across sessions, oldest first.

Each entry names the agent path, the tool, its risk, how long it has waited, and its arguments
(a destructive call shows its warning), and with `origin` (an attached dashboard's hosts) the
host the request came from; entries are wrapped to the list's width here, so their
continuation rows hang under their text, and again when the width changes. Enter on an entry asks the screen to open it; nothing here answers anything.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.content import Content
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from agent_tui.reducer import DashboardState, PermissionView
from agent_tui.tui.formatting import approval_prompt
from agent_tui.tui.messages import ApprovalChosen
from agent_tui.tui.timing import format_duration, waited_ms

_EMPTY_ID = "-none-"
_SEPARATOR = "\x1f"


def queue_key(view: PermissionView) -> str:
    return f"{view.session_id}{_SEPARATOR}{view.request_id}"


class ApprovalQueue(OptionList):
    """Pending approvals; the highlight survives updates while its entry is still there."""

    DEFAULT_CSS = """
    ApprovalQueue {
        & > .option-list--option { padding: 0 1; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._keys: tuple[object, ...] | None = None
        self._views: dict[str, PermissionView] = {}
        self._last: tuple[DashboardState, int | None] | None = None
        self.origin: Callable[[str], str | None] | None = None
        """Where a session runs (an attached dashboard's host of it); None: here."""

    def where(self, session_id: str) -> str | None:
        """The host a session's requests come from (None: this process, or not known)."""
        return self.origin(session_id) if self.origin is not None else None

    def _text_width(self) -> int | None:
        # An entry's text: the list's width, less its scrollbar and the entries' padding.
        width = self.scrollable_content_region.width - 2
        return width if width > 10 else None

    def on_resize(self) -> None:
        if self._last is not None:
            self.show_state(*self._last)

    @property
    def count(self) -> int:
        return len(self._views)

    def show_state(self, state: DashboardState, now_ms: int | None = None) -> None:
        """Rebuild the entries if the pending set (or a label in it, or a wait) changed."""
        self._last = (state, now_ms)
        pending = state.pending_permissions()
        width = self._text_width()
        keys = (width,) + tuple(
            (
                queue_key(v),
                state.agent_path(v.session_id),
                self.where(v.session_id),
                format_duration(waited_ms(v.asked_ts, now_ms)),
            )
            for v in pending
        )
        if keys == self._keys:
            return
        self._keys = keys
        highlighted = self.highlighted_option.id if self.highlighted_option is not None else None
        self._views = {queue_key(view): view for view in pending}
        if pending:
            options: list[Option | None] = []
            for number, view in enumerate(pending, 1):
                if number > 1:
                    options.append(None)  # a separator line between entries
                prompt = approval_prompt(state, view, number, now_ms, width, self.where(view.session_id))
                options.append(Option(prompt, id=queue_key(view)))
        else:
            options = [
                Option(Content.styled("No pending approvals.", "$text-muted"), id=_EMPTY_ID, disabled=True)
            ]
        self.set_options(options)
        self.border_title = f"Approvals ({len(pending)})" if pending else "Approvals"
        self.set_class(bool(pending), "-pending")
        if not pending:
            return
        if highlighted in self._views:
            self.highlighted = self.get_option_index(highlighted)
        else:
            self.highlighted = 0

    def first(self) -> PermissionView | None:
        """The oldest pending request."""
        return next(iter(self._views.values()), None)

    def current(self) -> PermissionView | None:
        """The highlighted request (or the oldest)."""
        option = self.highlighted_option
        if option is not None and option.id in self._views:
            return self._views[option.id]
        return self.first()

    def focus_first(self) -> None:
        self.focus()
        if self._views:
            self.highlighted = 0

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        view = self._views.get(event.option.id or "")
        if view is not None:
            self.post_message(ApprovalChosen(view.session_id, view.request_id))
