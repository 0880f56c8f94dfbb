"""`Command`: every control action, as one value; `Reply`: what became of it.

A key press on the local dashboard, a request on the bus and a script all ask for an action the
same way: one variant of the `Command` union, carried out by the host's `CommandExecutor`
(`agent_tui.runtime.command_executor`), answered by one `Reply`. The bus ships a `Command` as it
is inside its `ControlRequest` (one schema for both ends).

Invariants:
- each variant is a frozen pydantic model with a `verb` literal (the union's discriminator) and
  camelCase aliases on the wire; adding a verb is one variant here, one executor branch and
  its test;
- what a peer sends is checked here, as strictly as the flags and the config check it: a budget
  is a JSON number of dollars or a whole number of tokens (`costs.budgets`), an answer's
  decision and scope are the engine's words, a request id is not empty;
- a `Reply` is `ok` with its `detail` (plain JSON values), or not `ok` with a `message` that is
  one sentence for a person; nothing else is said of a failure;
- `Caller` is who asked (the dashboard, its bus user, its machine): recorded with what the host
  commits for the command (an answer's `by`, a budget's `by`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter
from pydantic_core import PydanticCustomError
from typing_extensions import TypeAliasType

from agent_tui.costs.budgets import BudgetLimit, tokens_problem, usd_problem
from agent_tui.runtime.agent_requests import AgentSpec


class _Value(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class Caller(_Value):
    """Who sent a command: on the bus, a host replaces `user` by the user of the subject the
    request came on; `dashboard` and `host` are what the sender says of itself."""

    dashboard: str
    user: str
    host: str

    def text(self) -> str:
        """`laptop (ana@ana-machine)`: how a budget's `by` names it."""
        return f"{self.dashboard} ({self.user}@{self.host})"


class AlreadyAnswered(_Value):
    """The `detail` of a refused answer: who answered first, and when (the event's `ts`)."""

    by: Caller | None
    actor: str
    at: str
    decision: str

    def sentence(self) -> str:
        """ "already answered (allow) by laptop (ana@box) at 14:02:07"."""
        at = self.at
        with contextlib.suppress(ValueError):
            at = datetime.fromisoformat(at.replace("Z", "+00:00")).strftime("%H:%M:%S")
        if self.by is not None:
            who = self.by.text()
        elif self.actor == "system":
            who = "the host (no answer in time, or the turn ended)"
        else:
            who = self.actor
        return f"already answered ({self.decision}) by {who} at {at}"


def _checked(problem_of: Callable[[Any], str | None]) -> BeforeValidator:
    """A budget's check: `problem_of` says what is wrong with a value (None: nothing)."""

    def check(value: Any) -> Any:
        problem = problem_of(value) if value is not None else None
        if problem is not None:
            raise PydanticCustomError("budget", "expected {problem}", {"problem": problem})
        return value

    return BeforeValidator(check)


Usd = Annotated[float | None, _checked(usd_problem)]
"""A dollar budget as a peer sends it, checked as the flag and the config check it."""
Tokens = Annotated[int | None, _checked(tokens_problem)]
"""A token budget as a peer sends it: a JSON integer from 1 to `MAX_TOKENS` (not 5.0, not "5")."""
Scope = Literal["once", "session", "always"]


class _OnSession(_Value):
    session_id: str = Field(alias="sessionId", min_length=1)


class Answer(_OnSession):
    """Answer a waiting permission request; the first answer wins. `optionId` picks one of an
    external agent's own options (its `always` is used only when picked so)."""

    verb: Literal["answer"] = "answer"
    request_id: str = Field(alias="requestId", min_length=1)
    decision: Literal["allow", "deny"]
    remember: Scope = "once"
    reason: str | None = None
    option_id: str | None = Field(default=None, alias="optionId", min_length=1)


class Stop(_OnSession):
    """Stop the session's running turn (`detail.stopped`: how many turns)."""

    verb: Literal["stop"] = "stop"


class StopSubtree(_OnSession):
    """Stop the session and everything it spawned (`detail.stopped`)."""

    verb: Literal["stop_subtree"] = "stop_subtree"


class StopAll(_Value):
    """Stop every running turn (`detail.stopped`)."""

    verb: Literal["stop_all"] = "stop_all"


class Steer(_OnSession):
    """Text into the running turn (`detail.how` = `steered`), refused when none runs."""

    verb: Literal["steer"] = "steer"
    text: str = Field(pattern=r"\S")


class FollowUp(_OnSession):
    """Text to the session: into its running turn, else its next turn (`detail.how`)."""

    verb: Literal["follow_up"] = "follow_up"
    text: str = Field(pattern=r"\S")


class NewAgent(_Value):
    """Start an agent (the new-agent form's fields); `detail.sessionId` is its session."""

    verb: Literal["new_agent"] = "new_agent"
    prompt: str
    cwd: str | None = None
    """The directory on the host (default: the host's project; a relative one is relative to it)."""
    name: str = ""
    model: str | None = None
    acp: str | None = None
    own_worktree: bool = Field(default=False, alias="ownWorktree")
    budget_usd: Usd = Field(default=None, alias="budgetUsd")
    budget_tokens: Tokens = Field(default=None, alias="budgetTokens")

    @classmethod
    def of(cls, spec: AgentSpec) -> NewAgent:
        """The command that starts what the new-agent form asked for."""
        budget = spec.budget or BudgetLimit()
        return cls(
            prompt=spec.prompt,
            cwd=str(spec.cwd),
            name=spec.name,
            model=spec.model,
            acp=spec.acp,
            ownWorktree=spec.own_worktree,
            budgetUsd=budget.usd,
            budgetTokens=budget.tokens,
        )

    def budget(self) -> BudgetLimit | None:
        """Its tree's budget (None: the host's default)."""
        return BudgetLimit.of({"usd": self.budget_usd, "tokens": self.budget_tokens})


class SetBudget(_OnSession):
    """The whole budget of the session's tree (neither: none); committed as `session.budget{by}`."""

    verb: Literal["set_budget"] = "set_budget"
    usd: Usd = None
    tokens: Tokens = None

    def limit(self) -> BudgetLimit | None:
        return BudgetLimit.of({"usd": self.usd, "tokens": self.tokens})


class Close(_OnSession):
    """Close the session: its subtree stopped and forgotten, its log kept, its worktree kept or
    removed (`detail.problem`: why the worktree stays, or None)."""

    verb: Literal["close"] = "close"
    worktree: Literal["keep", "remove"] = "keep"


class AcceptProjectRules(_Value):
    """Accept the project's rules file if it still has this content (`detail.accepted`)."""

    verb: Literal["accept_project_rules"] = "accept_project_rules"
    digest: str


class Sessions(_Value):
    """What the host runs now (a `HostSessions` as `detail`), for a dashboard that attaches."""

    verb: Literal["sessions"] = "sessions"


class Republish(_OnSession):
    """The session's logged events `first`..`last` (None: its end) published again."""

    verb: Literal["republish"] = "republish"
    first: int = Field(ge=1)
    last: int | None = Field(default=None, ge=1)


class _Finishing(_OnSession):
    slow: ClassVar[bool] = True
    """The host runs git or reads a whole log for it: a dashboard waits longer for the reply."""


class ReadReview(_Finishing):
    """The session's whole change against its base (`detail.review`, bounded on the bus)."""

    verb: Literal["review"] = "review"


class Turns(_Finishing):
    verb: Literal["turns"] = "turns"


class Commit(_Finishing):
    verb: Literal["commit"] = "commit"
    message: str


class Merge(_Finishing):
    verb: Literal["merge"] = "merge"
    message: str | None = None


class Discard(_Finishing):
    verb: Literal["discard"] = "discard"


class PlanRewind(_Finishing):
    """What rewinding the turn would write back (`detail.plan`, without the files' old bytes)."""

    verb: Literal["rewind_plan"] = "rewind_plan"
    turn_id: str = Field(alias="turnId", min_length=1)


class Rewind(_Finishing):
    verb: Literal["rewind"] = "rewind"
    turn_id: str = Field(alias="turnId", min_length=1)
    allow_protected: bool = Field(default=False, alias="allowProtected")


class Closed(_Value):
    """The host's closed sessions (`detail.closed`)."""

    verb: Literal["closed"] = "closed"
    slow: ClassVar[bool] = True


class Reopen(_Finishing):
    """Reopen a closed session and its sub-agents (`detail.problems`: one line per log that
    could not be reopened)."""

    verb: Literal["reopen"] = "reopen"


Command = TypeAliasType(
    "Command",
    Annotated[
        Answer
        | Stop
        | StopSubtree
        | StopAll
        | Steer
        | FollowUp
        | NewAgent
        | SetBudget
        | Close
        | AcceptProjectRules
        | Sessions
        | Republish
        | ReadReview
        | Turns
        | Commit
        | Merge
        | Discard
        | PlanRewind
        | Rewind
        | Closed
        | Reopen,
        Field(discriminator="verb"),
    ],
)
COMMAND: TypeAdapter[Command] = TypeAdapter(Command)

READS = frozenset({"review", "turns", "rewind_plan", "closed", "sessions"})
"""Verbs that change nothing: a repeat is read again rather than kept by its request id."""


class Reply(_Value):
    """What became of a command (see the module contract)."""

    ok: bool
    message: str | None = None
    """Why not, in words a person reads ("already answered by laptop (ana) at 14:02:07")."""
    detail: dict[str, Any] = Field(default_factory=dict)


def done(**detail: Any) -> Reply:
    return Reply(ok=True, detail=detail)


def refused(message: str, **detail: Any) -> Reply:
    return Reply(ok=False, message=message, detail=detail)


class CommandClient(Protocol):
    """How a front end gives commands: the local dashboard's is the executor itself, an attached
    dashboard's sends each to the host that runs the session."""

    async def send(self, command: Command, host: str | None = None) -> Reply:
        """Carry out `command` (on `host`, for a command that names no session: a new agent)."""
        ...
