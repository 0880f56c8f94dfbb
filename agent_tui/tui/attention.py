"""Telling a user who is away: the terminal's desktop notification and the config's command.

`Attention` sits between the dashboard and `AttentionPolicy` (which decides what counts, gathers
and spaces notifications): the app hands it every stored event, the terminal's focus, and a tick;
it writes what the policy says is due as an OSC sequence and hands it to the `notify_command`.

Invariants:
- a notification is written as one OSC sequence: OSC 777 (`notify;TITLE;BODY`) where the
  terminal is known to read it (foot, urxvt: `$TERM`), OSC 9 everywhere else (iTerm2, kitty,
  WezTerm, Ghostty and tmux read it; a terminal that reads neither ignores it). Never both: a
  terminal that reads both would show it twice;
- the text inside is `visible` and on one line (again here, whatever the policy gave): no ESC,
  BEL or C1 string terminator, no newline, can end the sequence and start one of its own; a `;`
  in the title of OSC 777 cannot move the body (it becomes `,`), and an OSC 9 body never starts
  with a digit and `;` (ConEmu's and Windows Terminal's own OSC 9 commands);
- the command runs in a worker off the UI's path (`NotifyCommand.send` is bounded by its
  timeout); its failure is reported once per dashboard run, never again, and the next
  notifications still try it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping

from agent_tui.events import visible
from agent_tui.ports import NotifyCommand
from agent_tui.reducer import AttentionPolicy, Notification

OSC_9 = "osc9"
OSC_777 = "osc777"


def terminal_protocol(env: Mapping[str, str] | None = None) -> str:
    """Which notification sequence this terminal reads (see the module docstring)."""
    env = os.environ if env is None else env
    term = env.get("TERM", "")
    if term.startswith(("foot", "rxvt")):
        return OSC_777
    return OSC_9


def _safe(text: str) -> str:
    return " ".join(visible(text).split())


def notification_sequence(title: str, body: str, protocol: str = OSC_9) -> str:
    """The escape sequence that shows `title` and `body` as a desktop notification."""
    title, body = _safe(title), _safe(body)
    if protocol == OSC_777:
        return f"\x1b]777;notify;{title.replace(';', ',')};{body}\x07"
    text = f"{title}: {body}" if title else body
    if text[:1].isdigit():
        text = "· " + text
    return f"\x1b]9;{text}\x07"


class Attention:
    """The dashboard's notifier.

    Args:
        policy: what counts, gathered and spaced.
        write: writes an escape sequence to the terminal (nothing when headless).
        command: the config's `notify_command`, if any.
        run: runs a coroutine off the UI's path (the app's worker).
        report: says a sentence to the user (a notice), for the command's first failure.
        protocol: the terminal's notification sequence (default: `terminal_protocol()`).
    """

    def __init__(
        self,
        policy: AttentionPolicy,
        write: Callable[[str], None],
        *,
        command: NotifyCommand | None = None,
        run: Callable[[Awaitable[None]], object] | None = None,
        report: Callable[[str], None] | None = None,
        protocol: str | None = None,
    ) -> None:
        self.policy = policy
        self._write = write
        self.command = command
        self._run = run
        self._report = report
        self.protocol = protocol or terminal_protocol()
        self.sent: list[Notification] = []
        """Every notification sent (the newest last)."""
        self.reported: str | None = None
        """The command's failure, once said."""

    def tick(self) -> None:
        """Send what is due now, if anything."""
        notification = self.policy.due()
        if notification is None:
            return
        self.sent.append(notification)
        self._write(notification_sequence(notification.title, notification.body, self.protocol))
        if self.command is not None and self._run is not None:
            self._run(self._tell_command(self.command, notification))

    async def _tell_command(self, command: NotifyCommand, notification: Notification) -> None:
        payload = json.dumps(notification.payload(), ensure_ascii=True).encode()
        problem = await command.send(payload)
        if problem is not None and self.reported is None:
            self.reported = problem
            if self._report is not None:
                self._report(problem + " (not said again in this run)")
