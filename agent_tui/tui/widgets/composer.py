"""The composer: a chat-style input at the bottom of the detail panel.

It talks to the selected session: on a running turn, `enter` steers it (the turn reads the text
at its next step); on an idle or finished session, `enter` starts its next turn, which sees the
whole transcript. An external (ACP) agent takes text only between turns: while its turn runs,
the hint says so (and `enter` is refused, the text kept). `shift+enter` or `ctrl+j` adds a line;
`escape` goes back to the tree (the screen's priority binding, so the keys after it in a burst
are not typed here). `A` right after a follow-up was sent (the box emptied by the send, nothing
typed since) opens the next waiting request when one waits; once the user types, or comes to
the box with `i`, it is a letter.

Each session keeps its own draft: selecting another session puts the text typed so far aside as
that session's and shows the new one's (empty if nothing was typed for it), so text typed for one
agent is never shown as, or sent to, another's.

Invariant: the text is never lost. `enter` only posts `Composer.Submitted`; the screen decides,
and a draft is cleared only by `sent(session_id, text)` (the session's, whichever is shown by
then, and only if it still holds the text that was sent). A send that fails calls
`failed(reason, session_id)`, which keeps the text and shows why above it (when that session is
shown again, if another is shown now).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static, TextArea

from agent_tui.tui.marked import marked

MUTED = "$text-muted"


class ComposerInput(TextArea):
    """A TextArea whose `enter` submits (a newline is `shift+enter` or `ctrl+j`), and which
    leaves `A` to the app (open the next request) right after a follow-up was sent, while a
    request waits.

    Args:
        request_waits: whether a permission request waits for an answer now.
    """

    def __init__(self, *, request_waits: Callable[[], bool], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.request_waits = request_waits
        self.just_sent = False
        """The box was emptied by a send and nothing was typed (or focused, or switched) since."""

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        # Right after a follow-up is sent the focus is still here, in an empty box, exactly when
        # a request tends to arrive: `A` then opens it. Once the user types (or comes here with
        # `i`, or to another session's draft) it is a letter: a message starting "Also…" must
        # never open a dialog whose keys (`s`, `y`, `n`) would answer for them.
        if character == "A" and self.just_sent and not self.text and self.request_waits():
            return False
        return super().check_consume_key(key, character)

    def on_focus(self) -> None:
        self.just_sent = False

    @dataclass
    class Submit(Message):
        """`enter` was pressed."""

    async def _on_key(self, event: events.Key) -> None:
        self.just_sent = False
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submit())
            return
        if event.key in ("shift+enter", "ctrl+j", "alt+enter"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)


class Composer(Vertical):
    """The selected session's input line (hidden where nothing can be sent: a recorded view)."""

    DEFAULT_CSS = """
    Composer {
        height: auto;
        border-top: hkey $border-blurred;
        padding: 0 1;
        & > #composer-note { height: 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
        & > #composer-note.-error { color: $text-error; height: auto; text-wrap: wrap; }
        & > #composer-note.-refused { height: auto; text-wrap: wrap; }
        & > ComposerInput { height: auto; min-height: 1; max-height: 6; border: none; padding: 0 1;
                            background: $panel; }
        & > ComposerInput:focus { background: $panel-lighten-1; }
    }
    Composer:focus-within { border-top: hkey $border; }
    """

    @dataclass
    class Submitted(Message):
        """The user pressed enter with `text` for `session_id`."""

        composer: Composer
        session_id: str | None
        text: str

    def __init__(self, *, id: str | None = None, request_waits: Callable[[], bool] = lambda: False) -> None:
        super().__init__(id=id)
        self._request_waits = request_waits
        self.session_id: str | None = None
        self.reason: str | None = None
        self.drafts: dict[str | None, str] = {}
        """The text typed for each session not shown now (the shown one's is in the box)."""
        self._reasons: dict[str | None, str] = {}
        self._hint = Content("")
        self._refused = False  # the selected session takes nothing from here (a terminal agent)
        self._shown_note: tuple[object, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static(id="composer-note")
        yield ComposerInput(
            request_waits=self._request_waits,
            id="composer-input",
            soft_wrap=True,
            compact=True,
            placeholder="Talk to the selected session…",
        )

    @property
    def input(self) -> ComposerInput:
        return self.query_one("#composer-input", ComposerInput)

    @property
    def text(self) -> str:
        return self.input.text

    def show_target(
        self,
        session_id: str | None,
        agent_path: str,
        running: bool,
        turns: int,
        *,
        steerable: bool = True,
        refused: str | None = None,
    ) -> None:
        """Say what enter will do for the selected session (the typed text stays as it is).

        `steerable` is False for an agent that takes text only between turns (an ACP agent);
        `refused` says why nothing can be sent to it here (a terminal agent's session)."""
        if session_id != self.session_id:
            self._switch_to(session_id)
        if session_id is None:
            hint = Content.styled("Select a session to talk to it.", MUTED)
        elif refused is not None:  # (said whole: it names the agent's path, which may be long)
            hint = marked(refused, MUTED)
        elif running and not steerable:
            hint = Content.assemble(
                ("send once this turn ends · ", MUTED),
                ("x ", "bold"),
                ("stops it", MUTED),
            )
        elif running:
            hint = Content.assemble(
                ("enter ", "bold"),
                marked(f"steers {agent_path} at its next step · shift+enter new line", MUTED),
            )
        else:
            hint = Content.assemble(
                ("enter ", "bold"),
                marked(f"starts turn {turns + 1} of {agent_path} · shift+enter new line", MUTED),
            )
        self._hint = hint
        self._refused = refused is not None
        if self.reason is None:
            self._note(hint, error=False)

    def _switch_to(self, session_id: str | None) -> None:
        """Put the shown draft (and why it was not sent) aside, show `session_id`'s."""
        text = self.input.text
        if text:
            self.drafts[self.session_id] = text
        else:
            self.drafts.pop(self.session_id, None)
        if self.reason is not None:
            self._reasons[self.session_id] = self.reason
        self.session_id = session_id
        self.input.just_sent = False
        self.input.load_text(self.drafts.pop(session_id, ""))
        self.input.move_cursor(self.input.document.end)
        self.reason = self._reasons.pop(session_id, None)
        if self.reason is not None:
            self._say_failed(self.reason)

    def failed(self, reason: str, session_id: str | None = None) -> None:
        """The text for `session_id` (None: the shown session) could not be sent: keep it, say why."""
        if session_id is not None and session_id != self.session_id:
            self._reasons[session_id] = reason
            return
        self.reason = reason
        self._say_failed(reason)

    def _say_failed(self, reason: str) -> None:
        self._note(Content.assemble(("✗ not sent: ", "bold"), marked(reason)), error=True)

    def sent(self, session_id: str | None = None, text: str | None = None) -> None:
        """`text` was handed over to `session_id` (None: the shown session, whatever it holds):
        clear its draft, unless more was typed for it since."""
        if session_id is not None and session_id != self.session_id:
            if text is None or self.drafts.get(session_id) == text:
                self.drafts.pop(session_id, None)
            self._reasons.pop(session_id, None)
            return
        self.reason = None
        if text is None or self.input.text == text:
            self.input.clear()
            self.input.just_sent = True
        self._note(self._hint, error=False)

    def _note(self, content: Content, *, error: bool) -> None:
        # The dashboard asks on every redraw; an update lays the screen out again, so only on a change.
        key = (content.plain, tuple(content.spans), error, self._refused)
        if key == self._shown_note:
            return
        self._shown_note = key
        note = self.query_one("#composer-note", Static)
        note.update(content)
        note.set_class(error, "-error")
        note.set_class(self._refused and not error, "-refused")

    def on_composer_input_submit(self, message: ComposerInput.Submit) -> None:
        message.stop()
        self.post_message(self.Submitted(self, self.session_id, self.input.text))
