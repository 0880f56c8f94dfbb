"""What deserves a notification while the user is away from the dashboard, gathered and spaced out.

`AttentionPolicy` watches the same events the dashboard folds and decides, without Textual and
without a clock of its own (it is given one), when to tell a user who is not looking: the
terminal's desktop notification and the configured `notify_command` both send what `due`
returns.

Invariants:
- what counts: an approval waiting (for any agent, a sub-agent's too: only the user can answer
  it), a root agent's turn that ended with an error, a root agent's turn that finished, and a
  budget warning: a tree's spend (its `model.usage`s) reaching `NEAR_SHARE` of a budget
  recorded in its log (`session.created.budget`, `session.budget`), told once per budget set,
  or by whoever else keeps budgets (`budget_warning`). Nothing else: a sub-agent's
  turns ending, its errors (its parent hears them) and every other event are never told;
- only while the user is away (`present(False)`, the terminal lost focus) and only once
  `arm`ed (the stored sessions a start-up folds are history, not news); coming back clears what
  waits to be told (the dashboard shows it all);
- an approval answered or withdrawn (its turn ended) before it was told is not told;
- gathered: nothing is told before `gather_ms` after the first thing to tell, so a burst reads
  as one ("3 requests waiting"); spaced: two notifications are at least `min_gap_ms` apart, what
  comes in between waits and goes out together in the next one;
- every text a notification holds went through `visible` and is one line (newlines and tabs
  are spaces) of bounded length: a model-chosen agent name or an error message cannot carry a
  control character, or a line break, into the terminal or into the command's JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from agent_tui.costs.budgets import NEAR_SHARE, BudgetLimit, budget_state, format_usd
from agent_tui.events import Event, counted, visible

GATHER_MS = 2_000
"""How long the first thing to tell waits for others to go with it."""
MIN_GAP_MS = 30_000
"""The least time between two notifications."""
TEXT_CHARS = 160
"""The longest one piece of text (an agent's name, an error message) in a notification."""
APP_NAME = "agent-tui"

_WATCHED = frozenset(
    {
        "session.created",
        "permission.requested",
        "permission.resolved",
        "turn.completed",
        "model.usage",
        "session.budget",
    }
)

Kind = Literal["approval", "error", "finished", "budget"]
KINDS: tuple[Kind, ...] = ("approval", "error", "finished", "budget")


def one_line(text: str, limit: int = TEXT_CHARS) -> str:
    """`text` made safe (`visible`), on one line, at most `limit` characters (`…` when cut)."""
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Occurrence:
    """One thing worth telling: what, for which agent, in a line."""

    kind: Kind
    session_id: str
    agent: str
    """The agent's path (`lead › explorer`), safe and on one line."""
    detail: str
    """What happened, safe and on one line (`shell (destructive)`, an error's message)."""
    key: str
    """The request's id for an approval (what answering it removes), else the turn's."""
    at_ms: int

    def payload(self) -> dict[str, str]:
        return {"kind": self.kind, "sessionId": self.session_id, "agent": self.agent, "detail": self.detail}


@dataclass(frozen=True)
class Notification:
    """What is told at once: a title, a one-line body, and what they sum up."""

    title: str
    body: str
    occurrences: tuple[Occurrence, ...]
    at_ms: int

    def count(self, kind: Kind) -> int:
        return sum(1 for occurrence in self.occurrences if occurrence.kind == kind)

    def payload(self) -> dict[str, Any]:
        """The JSON a `notify_command` reads on its stdin."""
        return {
            "title": self.title,
            "body": self.body,
            "atMs": self.at_ms,
            "counts": {kind: self.count(kind) for kind in KINDS},
            "events": [occurrence.payload() for occurrence in self.occurrences],
        }


@dataclass
class _Session:
    parent: str | None
    name: str
    budget: BudgetLimit | None = None
    tree_usd: float = 0.0  # what it and every session below it spent (the priced part)
    tree_tokens: int = 0
    warned: bool = False  # its budget's warning was told (a new budget may warn again)


class AttentionPolicy:
    """Decides what to tell a user who is away, and when (see the module's contract).

    Args:
        clock: now, in milliseconds (any monotonic origin).
        gather_ms: how long the first thing to tell waits for company.
        min_gap_ms: the least time between two notifications.
    """

    def __init__(
        self, clock: Callable[[], int], *, gather_ms: int = GATHER_MS, min_gap_ms: int = MIN_GAP_MS
    ) -> None:
        self._clock = clock
        self.gather_ms = gather_ms
        self.min_gap_ms = min_gap_ms
        self.armed = False
        self.away = False
        self._sessions: dict[str, _Session] = {}
        self._asked: dict[str, str] = {}  # requestId → `tool (risk)`, from permission.requested
        self._pending: list[Occurrence] = []
        self._last_told: int | None = None

    # -- what the dashboard says -------------------------------------------------------------
    def arm(self) -> None:
        """From now on, events are news (the stored sessions are folded in)."""
        self.armed = True

    def present(self, here: bool) -> None:
        """The user looks at the dashboard (`True`) or not; coming back drops what waits."""
        self.away = not here
        if here:
            self._pending.clear()

    def observe(self, event: Event) -> None:
        """Take in one stored event (every event, in store order)."""
        kind = event.type
        if kind not in _WATCHED:  # most events (deltas, tool output): one set lookup
            return
        payload = event.payload
        if kind == "model.usage":
            self._spent(event.session_id, payload)
        elif kind == "session.budget":
            budgeted = self._sessions.get(event.session_id)
            if budgeted is not None:
                budgeted.budget, budgeted.warned = _budget_of(payload), False
                self._check_budget(event.session_id, budgeted)
        elif kind == "session.created":
            name = payload.get("agentName") or payload.get("title") or event.session_id
            self._sessions[event.session_id] = _Session(
                payload.get("parentSessionId"), str(name), _budget_of(payload.get("budget"))
            )
        elif kind == "permission.requested":
            self._asked[str(payload.get("requestId"))] = f"{payload.get('tool')} ({payload.get('risk')})"
        elif kind == "permission.resolved":
            request = str(payload.get("requestId"))
            if payload.get("decision") == "ask":
                detail = self._asked.get(request, str(payload.get("toolCallId")))
                self._add("approval", event.session_id, detail, request)
            else:
                self._asked.pop(request, None)
                self._drop(lambda o: o.kind == "approval" and o.key == request)
        elif kind == "turn.completed":
            session = event.session_id
            self._drop(lambda o: o.kind == "approval" and o.session_id == session)
            if self._is_root(session):
                reason = payload.get("stopReason")
                if reason == "error":
                    code = payload.get("errorCode") or "unknown"
                    message = payload.get("message")
                    detail = f"{code}: {message}" if message else str(code)
                    self._add("error", session, detail, event.turn_id or event.id)
                elif reason == "final":
                    self._add("finished", session, "finished", event.turn_id or event.id)

    def budget_warning(self, session_id: str, text: str) -> None:
        """A budget is nearly spent (or spent): told like the rest."""
        self._add("budget", session_id, text, f"budget:{session_id}:{text}")

    def due(self) -> Notification | None:
        """The notification to send now, if one is due (what it sums up is then told)."""
        if not self._pending:
            return None
        now = self._clock()
        if now - self._pending[0].at_ms < self.gather_ms:
            return None
        if self._last_told is not None and now - self._last_told < self.min_gap_ms:
            return None
        told, self._pending = tuple(self._pending), []
        self._last_told = now
        return Notification(APP_NAME, _body(told), told, now)

    @property
    def waiting(self) -> tuple[Occurrence, ...]:
        """What waits to be told."""
        return tuple(self._pending)

    # -- inside ------------------------------------------------------------------------------
    def _spent(self, session_id: str, usage: dict[str, Any]) -> None:
        """Add one model call's spend to its session's tree and every tree above it."""
        cost = usage.get("costUsd") or 0.0
        tokens = int(usage.get("promptTokens") or 0) + int(usage.get("completionTokens") or 0)
        current: str | None = session_id
        seen: set[str] = set()
        while current is not None and current not in seen:
            seen.add(current)
            session = self._sessions.get(current)
            if session is None:
                return
            session.tree_usd += cost
            session.tree_tokens += tokens
            self._check_budget(current, session)
            current = session.parent

    def _check_budget(self, session_id: str, session: _Session) -> None:
        budget = session.budget
        if budget is None or session.warned:
            return
        state = budget_state(session.tree_usd, session.tree_tokens, budget.usd, budget.tokens)
        if state == "ok":
            return
        session.warned = True
        if budget.usd is not None and session.tree_usd >= budget.usd * NEAR_SHARE:
            detail = f"spent {format_usd(session.tree_usd)} of a {format_usd(budget.usd)} budget"
        else:
            detail = f"spent {session.tree_tokens:,} tokens of a {budget.tokens or 0:,}-token budget"
        self._add("budget", session_id, detail, f"budget:{session_id}:{detail}")

    def _is_root(self, session_id: str) -> bool:
        session = self._sessions.get(session_id)
        return session is None or session.parent is None

    def _path(self, session_id: str) -> str:
        names: list[str] = []
        current: str | None = session_id
        while current is not None and current not in names and len(names) < 16:
            session = self._sessions.get(current)
            names.append(session.name if session is not None else current)
            current = session.parent if session is not None else None
        return " › ".join(one_line(name, 40) for name in reversed(names))

    def _add(self, kind: Kind, session_id: str, detail: str, key: str) -> None:
        if not self.armed or not self.away:
            return
        if any(o.kind == kind and o.key == key for o in self._pending):
            return
        self._pending.append(
            Occurrence(kind, session_id, self._path(session_id), one_line(detail), key, self._clock())
        )

    def _drop(self, gone: Callable[[Occurrence], bool]) -> None:
        self._pending = [occurrence for occurrence in self._pending if not gone(occurrence)]


def _body(told: tuple[Occurrence, ...]) -> str:
    """One line summing up `told`: each kind alone when it is one, counted when more."""
    parts: list[str] = []
    for kind in KINDS:
        these = [occurrence for occurrence in told if occurrence.kind == kind]
        if not these:
            continue
        if len(these) == 1:
            one = these[0]
            parts.append(_ONE[kind].format(agent=one.agent, detail=one.detail))
        else:
            parts.append(_MANY[kind](len(these)))
    return one_line("; ".join(parts), 3 * TEXT_CHARS)


_ONE: dict[Kind, str] = {
    "approval": "1 request waiting: {agent} asks for {detail}",
    "error": "{agent}'s turn failed ({detail})",
    "finished": "{agent} finished",
    "budget": "{agent}: {detail}",
}
_MANY: dict[Kind, Callable[[int], str]] = {
    "approval": lambda n: f"{counted(n, 'request')} waiting",
    "error": lambda n: f"{counted(n, 'turn')} failed",
    "finished": lambda n: f"{counted(n, 'agent')} finished",
    "budget": lambda n: f"{counted(n, 'budget warning')}",
}


def _budget_of(payload: Any) -> BudgetLimit | None:
    """The budget a log states, or None (a malformed one from a foreign log counts as none)."""
    try:
        return BudgetLimit.of(payload if isinstance(payload, dict) else None)
    except (TypeError, ValueError):
        return None
