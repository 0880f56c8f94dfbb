"""`BudgetKeeper`: what each session's tree spent, and stopping a tree that crosses its budget.

The keeper reads the stored events (the engine tells it each one, live or replayed from a log
when a session is reopened): `session.created` (the tree's shape, the model, the budget),
`session.budget` (a budget set or changed) and `model.usage` (one model call's tokens and
cost). It acts through the engine's `stop` (end these sessions' running turns, with this
message).

Invariants:
- a budget counts for its session's whole subtree: a tree's spend is the sum of `model.usage`
  over the session and every session below it (`costUsd` for dollars, prompt plus completion
  tokens for tokens); a session's spend is re-read from its log when it is reopened, so a
  budget and what was spent against it survive the process;
- when a tree's spend reaches its budget (any ancestor's budget counts for the whole subtree
  under it), every running turn of that tree, and only of it, is stopped with the sentence
  saying what was spent and allowed; siblings outside the tree go on;
- until the budget is raised, `refusal(session)` says why a new turn there is refused (the
  engine refuses it before writing anything);
- the preflight: before a model call (at its `context.built`), a call whose worst case (the
  prompt estimate plus the most output tokens the model may answer with) would cross a budget
  of the session's chain is refused: only that turn is stopped;
- dollars are never guessed: a model with no price leaves the dollar budget unchecked, which is
  said once per model through `notice` (the token budget still holds).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agent_tui.costs.budgets import BudgetLimit, BudgetSpend, over_sentence
from agent_tui.costs.prices import PriceTable
from agent_tui.costs.wording import usd_text
from agent_tui.events import Event
from agent_tui.events.session_tree import SessionIndex

__all__ = ["BudgetExceeded", "BudgetKeeper"]

PREFIX = "budget exceeded: "
_HEARD = frozenset(
    {"session.created", "session.budget", "model.usage", "context.built", "turn.started", "turn.completed"}
)

Stop = Callable[[Iterable[str], str], None]
"""`stop(session ids, message)`: end those sessions' running turns `error/budget_exceeded`."""


class BudgetExceeded(RuntimeError):
    """A turn was refused: its session's tree has spent its budget (the message says so)."""

    def __init__(self, session_id: str, message: str) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.message = message


class BudgetKeeper:
    """Budgets and spend of an engine's sessions (see the module docstring).

    Args:
        stop: ends the running turns of sessions, with the message (the engine's).
        output_limit: the most output tokens a session's model may answer with (None: unknown).
        prices: the price table the preflight prices a call's worst case with.
    """

    def __init__(self, stop: Stop, output_limit: Callable[[str], int | None], prices: PriceTable) -> None:
        self._stop = stop
        self._output_limit = output_limit
        self.prices = prices
        self.notice: Callable[[str], None] | None = None
        """Told, once per model, that a dollar budget cannot be checked (the embedding program's)."""
        self.index: SessionIndex[BudgetLimit, BudgetSpend] = SessionIndex(
            BudgetLimit.of, BudgetSpend.of, BudgetSpend()
        )
        """The engine's sessions' family, labels, models, budgets, spend and open turns, as
        the events it is told make them (its sessions read now, listed or let go)."""
        self._unpriced_said: set[str] = set()

    # -- reading the log -------------------------------------------------------------------------
    def track(self, event: Event) -> None:
        """Keep the accounts in step with one stored event (replayed or live)."""
        self.index.track(event)

    def hear(self, event: Event) -> None:
        """The engine's listener: track a live event, then act on what it changed (its index
        opens and closes turns from `turn.started`/`turn.completed`, as it does for a reopened
        log's turns, which were never run here)."""
        kind = event.type
        if kind not in _HEARD:  # most events (deltas, tool output): one set lookup
            return
        self.track(event)
        if kind in ("model.usage", "session.budget"):
            self._stop_what_is_over(event.session_id)
        elif kind == "context.built":
            self._preflight(event)

    # -- what a tree spent -----------------------------------------------------------------------
    def usd_left(self, session_id: str) -> tuple[float, str] | None:
        """The fewest dollars any budget over the session has left, and whose budget it is
        (None: no dollar budget counts for the session)."""
        tightest: tuple[float, str] | None = None
        for sid in self.index.chain(session_id):
            budget = self.index.budget(sid)
            if budget is None or budget.usd is None:
                continue
            left = budget.usd - self.index.tree_spend(sid).usd
            if tightest is None or left < tightest[0]:
                tightest = (left, sid)
        return tightest

    def refusal(self, session_id: str) -> str | None:
        """Why a turn in the session would be refused now (a budget over it is spent), or None."""
        for sid in self.index.chain(session_id):
            message = self._over_message(sid)
            if message is not None:
                return message
        return None

    def _over_message(self, budget_owner: str) -> str | None:
        """What the tree of `budget_owner` spent of its budget, once it is spent (else None);
        the same words for the turns it stops and for the turns it refuses after."""
        budget = self.index.budget(budget_owner)
        if budget is None:
            return None
        sentence = over_sentence(self.index.tree_spend(budget_owner), budget)
        if sentence is None:
            return None
        if not self.index.children(budget_owner):
            return PREFIX + sentence
        return f"{PREFIX}{self.index.label(budget_owner)} and its sub-agents {sentence}"

    # -- acting ----------------------------------------------------------------------------------
    def _stop_what_is_over(self, session_id: str) -> None:
        """Stop the widest tree over `session_id` whose budget is spent (root first)."""
        for sid in self.index.chain(session_id):
            message = self._over_message(sid)
            if message is not None:
                self._stop(self.index.subtree(sid), message)
                return

    def _preflight(self, event: Event) -> None:
        session_id = event.session_id
        owners = [sid for sid in self.index.chain(session_id) if self.index.budget(sid) is not None]
        if not owners:
            return
        tokens = event.payload.get("tokens") or {}
        prompt = sum(int(tokens.get(part) or 0) for part in ("instruction", "transcript", "tools"))
        output = self._output_limit(session_id)
        model = self._model(session_id)
        worst_tokens = prompt + (output or 0)
        worst_usd = self.prices.cost_usd(model, prompt, output or 0)
        shape = f"{prompt:,} prompt tokens estimated" + (
            f" and up to {output:,} output tokens" if output else ""
        )
        for sid in owners:
            budget = self.index.budget(sid)
            assert budget is not None
            spent = self.index.tree_spend(sid)
            whose = "" if sid == session_id else f" of {self.index.label(sid)}'s tree"
            over = None
            if budget.tokens is not None and spent.tokens + worst_tokens > budget.tokens:
                left = max(budget.tokens - spent.tokens, 0)
                over = (
                    f"use {worst_tokens:,} tokens ({shape}), "
                    f"more than the {left:,} left of a {budget.tokens:,}-token budget{whose}"
                )
            elif budget.usd is not None and worst_usd is None:
                self._say_unpriced(model)
            elif budget.usd is not None and worst_usd is not None and spent.usd + worst_usd > budget.usd:
                left_usd = max(budget.usd - spent.usd, 0.0)
                over = (
                    f"cost up to {usd_text(worst_usd)} ({shape}), more than the "
                    f"{usd_text(left_usd)} left of a {usd_text(budget.usd)} budget{whose}"
                )
            if over is not None:
                self._stop([session_id], f"{PREFIX}the next model call could {over}")
                return

    def _model(self, session_id: str) -> str | None:
        """The session's model, else its nearest ancestor's (a sub-agent runs on its root's)."""
        models = self.index.models
        return next(
            (model for sid in reversed(self.index.chain(session_id)) if (model := models.get(sid))), None
        )

    def _say_unpriced(self, model: str | None) -> None:
        key = model or ""
        if key in self._unpriced_said:
            return
        self._unpriced_said.add(key)
        name = f"model {model}" if model else "the model"
        text = (
            f"the price of {name} is unknown, so a dollar budget cannot be checked for it "
            '(add it to the config as [prices."MODEL"]; a token budget still holds)'
        )
        if self.notice is not None:
            self.notice(text)
