"""The composer: a chat-style input at the bottom of the detail panel.

It talks to the selected session: on a running turn, `enter` steers it (the turn reads the text
at its next step); on an idle or finished session, `enter` starts its next turn, which sees the
whole transcript. An external (ACP) agent takes text only between turns: while its turn runs,
the hint says so (and `enter` is refused, the text kept). `shift+enter` or `ctrl+j` adds a line;
`escape` goes back to the tree (the screen's priority binding, so the keys after it in a burst
are not typed here).

Invariant: the text is never lost. `enter` only posts `Composer.Submitted`; the screen decides,
and the box is cleared only by `sent()`. A send that fails calls `failed(reason)`, which keeps
the text and shows why above it.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static, TextArea

from agent_tui.tui.marked import marked

MUTED = "$text-muted"


class ComposerInput(TextArea):
    """A TextArea whose `enter` submits (a newline is `shift+enter` or `ctrl+j`)."""

    @dataclass
    class Submit(Message):
        """`enter` was pressed."""

    async def _on_key(self, event: events.Key) -> None:
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

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session_id: str | None = None
        self.reason: str | None = None
        self._hint = Content("")
        self._refused = False  # the selected session takes nothing from here (a terminal agent)
        self._shown_note: tuple[object, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static(id="composer-note")
        yield ComposerInput(
            id="composer-input", soft_wrap=True, compact=True, placeholder="Talk to the selected session…"
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
            self.session_id = session_id
            self.reason = None
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

    def failed(self, reason: str) -> None:
        """The text could not be sent: keep it, and say why."""
        self.reason = reason
        self._note(Content.assemble(("✗ not sent: ", "bold"), marked(reason)), error=True)

    def sent(self) -> None:
        """The text was handed over: clear the box."""
        self.reason = None
        self.input.clear()
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
