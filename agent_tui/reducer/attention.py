"""What deserves a notification while the user is away from the dashboard, gathered and spaced out.

`AttentionPolicy` watches the same events the dashboard folds and decides, without Textual and
without a clock of its own (it is given one), when to tell a user who is not looking: the
terminal's desktop notification and the configured `notify_command` both send what `due`
returns.

Invariants:
- what counts: an approval waiting (for any agent, a sub-agent's too: only the user can answer
  it), a root agent's turn that ended with an error, a root agent's turn that finished, and a
  budget warning: a tree's spend (its `model.usage`s) reaching `NEAR_SHARE` of a budget
  recorded in its log (`session.created.budget`, `session.budget`), told once per budget set.
  Nothing else: a sub-agent's
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

from agent_tui.costs.budgets import NEAR_SHARE, BudgetLimit, BudgetSpend, budget_state
from agent_tui.costs.wording import usd_text
from agent_tui.events import Event, counted, visible
from agent_tui.events.session_tree import SessionIndex

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
        self._sessions: SessionIndex[BudgetLimit, BudgetSpend] = SessionIndex(
            BudgetLimit.of, BudgetSpend.of, BudgetSpend()
        )
        self._warned: set[str] = set()  # budgets whose warning was told (a new budget may warn again)
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
        self._sessions.track(event)
        if kind == "model.usage":  # its tree's spend, and every tree's above it, moved
            for sid in reversed(self._sessions.chain(event.session_id)):
                self._check_budget(sid)
        elif kind in ("session.budget", "session.created"):
            self._warned.discard(event.session_id)
            self._check_budget(event.session_id)
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
    def _check_budget(self, session_id: str) -> None:
        budget = self._sessions.budget(session_id)
        if budget is None or session_id in self._warned:
            return
        spent = self._sessions.tree_spend(session_id)
        if budget_state(spent.usd, spent.tokens, budget.usd, budget.tokens) == "ok":
            return
        self._warned.add(session_id)
        if budget.usd is not None and spent.usd >= budget.usd * NEAR_SHARE:
            detail = f"spent {usd_text(spent.usd)} of a {usd_text(budget.usd)} budget"
        else:
            detail = f"spent {spent.tokens:,} tokens of a {budget.tokens or 0:,}-token budget"
        self._add("budget", session_id, detail, f"budget:{session_id}:{detail}")

    def _is_root(self, session_id: str) -> bool:
        return self._sessions.parent_of(session_id) is None

    def _path(self, session_id: str) -> str:
        names = self._sessions.agent_path(session_id)[-16:]
        return " › ".join(one_line(name, 40) for name in names)

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
