"""Plain-text progress for the headless runner: one line per thing a person wants to see.

Every line it writes goes through `visible`: what a model, a tool or a log says is shown with its
control characters as markers, so it cannot set the terminal's title or wipe its screen. A line
break inside what it says (a prompt, an error message) starts an indented line: only the printer
starts a line with `[agent]`, so a model cannot print one that passes for another event.

Invariants:
- what one model call said is one `says:` line, followed by a `wants` line per tool it asked
  for, printed when the call's message ends (`events.assistant_messages`): text streamed after
  a tool call joins the same line;
- a write that fails (the terminal hung up, the reader of a pipe went away, a full disk)
  silences the printer for the rest of the run instead of failing the listener: the run, and its
  logs, go on; `gone` says why, for the command to say at the end;
- quiet, it prints of the events only a turn's end that failed (not `final`, not `cancelled`),
  with its stop reason and why: a quiet run still says in one line why it failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agent_tui.costs.wording import PRICE_UNKNOWN, usd_text
from agent_tui.events import Event, visible
from agent_tui.events.assistant_messages import MESSAGE_PARTS, AssistantMessages
from agent_tui.events.wording import counted
from agent_tui.runtime.os_errors import os_reason

if TYPE_CHECKING:
    from agent_tui.runtime.runner import RunResult


class EventPrinter:
    """A listener for `SessionEngine.subscribe` that prints a readable run log.

    It prints a turn's end from its stored `turn.completed`, in store order with the rest.

    Args:
        out: where to print.
        quiet: print nothing per event but a turn's end that is a failure (why it failed), and
            the `summary`.
        names: maps a session id to its agent path (root first).
    """

    def __init__(self, out: TextIO, *, quiet: bool, names: Callable[[str], tuple[str, ...]]) -> None:
        self.out = out
        self.quiet = quiet
        self.names = names
        self._messages = AssistantMessages()
        self.events = 0
        self.gone: str | None = None
        """Why a write failed (the output is gone, nothing more is written), in the system's words."""

    def _write(self, text: str, *, flush: bool = False) -> None:
        if self.gone is not None:
            return
        try:
            self.out.write(text)
            if flush:
                self.out.flush()
        except OSError as error:  # EIO after a hang-up, EPIPE, ENOSPC
            self.gone = os_reason(error)
        except ValueError:  # a closed file
            self.gone = "closed"

    def _say(self, event: Event, text: str) -> None:
        who = " › ".join(self.names(event.session_id)) or event.session_id
        self._write(visible(f"[{who}] {text}").replace("\n", "\n    ") + "\n")

    def __call__(self, event: Event) -> None:
        self.events += 1
        if self.quiet:
            if event.type == "turn.completed" and event.payload.get("stopReason") not in QUIET_ENDS:
                self._say(event, _event_line(event.type, event.payload) or "")  # why it failed
                self._write("", flush=True)
            return
        payload = event.payload
        kind = event.type
        ended = self._messages.feed(event)  # what a model call said is one line, at its end
        if ended is not None:
            if ended.text.strip():
                self._say(event, f"says: {' '.join(ended.text.split())}")
            for call in ended.calls:
                self._say(event, f"wants {call['tool']} {_short(call['args'])}")
        if kind in MESSAGE_PARTS:
            return
        text = _event_line(kind, payload)
        if text is not None:
            self._say(event, text)
        self._write("", flush=True)

    def summary(self, result: RunResult, sessions_dir: Path) -> None:
        counts = Counter(reason or "unfinished" for reason in result.stop_reasons.values())
        if not counts:
            self._write(visible(f"no session started; logs in {sessions_dir}") + "\n", flush=True)
            return
        ends = ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items()))
        self._write(
            visible(
                f"{counted(len(result.stop_reasons), 'session')}, {counted(self.events, 'event')} "
                f"({ends}); logs in {sessions_dir}"
            )
            + "\n",
            flush=True,
        )


QUIET_ENDS = ("final", "cancelled")
"""The turn ends `--quiet` does not print: done, or stopped by the person (who was told so)."""


def _usage(usage: dict[str, Any] | None) -> str:
    if not usage:
        return ""
    cached = f", {usage['cachedTokens']:,} cached" if usage.get("cachedTokens") else ""
    cost = usage.get("costUsd")
    money = usd_text(cost) if cost is not None else PRICE_UNKNOWN
    return (
        f" ({usage['promptTokens']:,} prompt + {usage['completionTokens']:,} completion tokens{cached},"
        f" {money})"
    )


def _event_line(kind: str, payload: dict[str, Any]) -> str | None:
    """What the console says of one event that is not part of a model's message (None: nothing)."""
    if kind == "turn.started":
        return f"turn started: {payload['promptPreview']}"
    if kind == "user.message" and payload.get("steered"):
        return f"steered: {payload['content']}"
    if kind == "context.compacted":
        return f"compacted context {payload['beforeTokens']} → {payload['afterTokens']} tokens"
    if kind == "permission.resolved":
        reason = f" ({payload['reason']})" if payload.get("reason") else ""
        return f"permission {payload['decision']} by {payload['actor']}{reason}"
    if kind == "tool.completed":
        code = f" exit {payload['exitCode']}" if payload.get("exitCode") is not None else ""
        return f"{payload['tool']} done{code}: {_short(payload['result'])}"
    if kind == "tool.failed":
        return f"{payload['tool']} failed ({payload['errorCode']}): {payload['message']}"
    if kind == "subagent.delivered":
        return f"got {payload['agentName']}'s result ({payload['status']}): {_short(payload['text'])}"
    if kind == "model.retry":
        delay = payload["delayMs"] / 1000
        return f"model call failed ({payload['reason']}); retry {payload['attempt']} in {delay:g} s"
    if kind == "turn.completed":
        code = f"/{payload['errorCode']}" if payload.get("errorCode") else ""
        why = f": {payload['message']}" if payload.get("message") else ""
        return f"turn ended: {payload['stopReason']}{code}{why}{_usage(payload.get('usage'))}"
    return None


def _short(value: object, limit: int = 70) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
