"""What `agent-tui serve` prints while it runs: one line on stdout per agent's turn started or
ended and per question waiting for a person, so the terminal it runs in shows what it does.

Invariants:
- a line names the agent by its path (`[lead › tester]`, as `agent-tui run` does) and says what
  happened in a few words: `started: PROMPT`, `ended: final ($0.0042)` or `ended: error/…: why`,
  `waits for an answer: shell rm -rf build (answer it in an attached dashboard)`;
- what an agent, a tool or a person wrote (a prompt, a command, an error) is cut to one line
  of at most `SHOWN` characters, with its control characters shown as markers (`visible`): a
  hostile prompt or argument cannot move the cursor, clear the screen or start a line of its own;
- a question is said once, when it starts to wait for a person (the policy's `ask`), never
  when a rule answered it;
- a write that fails (stdout went away) silences the lines for the rest of the host's life;
  the host goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TextIO

from agent_tui.events import Event, visible

__all__ = ["SHOWN", "ServeLines"]

SHOWN = 100
"""The most characters of a prompt, a command or an error a line shows."""


class ServeLines:
    """A listener for `SessionEngine.subscribe` that prints serve's lines (see the module).

    Args:
        out: where to print (stdout).
        names: maps a session id to its agent path (root first).
    """

    def __init__(self, out: TextIO, names: Callable[[str], tuple[str, ...]]) -> None:
        self.out = out
        self.names = names
        self._asked: dict[tuple[str, str], str] = {}
        self._gone = False

    def __call__(self, event: Event) -> None:
        payload = event.payload
        kind = event.type
        if kind == "turn.started":
            self._say(event, f"started: {_short(payload.get('promptPreview'))}")
        elif kind == "turn.completed":
            self._say(event, f"ended: {_ending(payload)}")
        elif kind == "permission.requested":
            what = f"{payload.get('tool')} {_short(payload.get('argsPreview'))}".strip()
            self._asked[(event.session_id, str(payload.get("requestId")))] = what
        elif kind == "permission.resolved":
            asked = self._asked.pop((event.session_id, str(payload.get("requestId"))), None)
            if payload.get("decision") == "ask" and payload.get("actor") == "policy":
                self._say(
                    event,
                    f"waits for an answer: {asked or 'a permission'} (answer it in an attached dashboard)",
                )

    def _say(self, event: Event, text: str) -> None:
        if self._gone:
            return
        who = " › ".join(self.names(event.session_id)) or event.session_id
        try:
            self.out.write(visible(f"[{_short(who)}] {text}") + "\n")
            self.out.flush()
        except (OSError, ValueError):  # the terminal hung up, the pipe's reader left, a closed file
            self._gone = True


def _ending(payload: dict[str, Any]) -> str:
    """`final ($0.0042)`, `error/provider_failure: 401 Unauthorized`, `cancelled`."""
    from agent_tui.costs.wording import PRICE_UNKNOWN, usd_text

    said = str(payload.get("stopReason"))
    if payload.get("errorCode"):
        said += f"/{payload['errorCode']}"
    if payload.get("message"):
        said += f": {_short(payload['message'])}"
    usage = payload.get("usage")
    if usage:
        cost = usage.get("costUsd")
        said += f" ({usd_text(cost) if cost is not None else PRICE_UNKNOWN})"
    return said


def _short(value: object) -> str:
    """One line of at most `SHOWN` characters (white space, line breaks included, made one space)."""
    text = " ".join(str(value if value is not None else "").split())
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"
