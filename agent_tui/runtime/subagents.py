"""Sub-agents: `spawn_agent`, `wait_agent`, the parent's mailbox, and delivery.

Invariants:
- a child is a real session (its own log, `session.created{parentSessionId, agentName}`, its
  own turn and frames), in the parent's cwd; `spawn_agent` answers at once with its id;
- at most `max_background` children of one parent run at once, and nesting stops at
  `max_depth` levels below the root; a refused spawn is a `tool.failed` the model can read;
- when a child's turn ends, its result goes into the parent's mailbox first and only then is
  `mark_delivered` called, so a child's `wait` returns once the parent can see the result;
  the parent's turn stores it as `subagent.delivered` at its next step boundary (or, if the
  parent is idle, at the start of its next turn);
- outcomes are kept after the registry drops finished records, so `wait_agent` on a child that
  finished long ago still answers with its final status;
- a cancelled turn stops its whole subtree (the engine calls `stop_children` on cancel);
- a child may get a dollar budget of its own (`budgetUsd`, in its `session.created.budget`),
  never more than what is left of the tightest dollar budget over its parent: asking for more
  is refused (a `tool.failed{budget_exceeded}` saying what is left), not clamped, so the model
  learns what it can spend; a tree that spent its budget spawns nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import orjson
from pydantic import Field

from agent_tui.costs.wording import usd_text
from agent_tui.engine.budgets import BudgetExceeded
from agent_tui.engine.engine import Delivery, EngineExtension, SessionEngine, TurnHandle
from agent_tui.engine.permissions import PolicyConfig
from agent_tui.engine.tools.base import BaseTool, ToolArgs, ToolContext, ToolError, ToolResult

DEFAULT_WAIT_MS = 600_000


@dataclass(frozen=True)
class ChildOutcome:
    session_id: str
    agent_name: str
    status: str  # completed | failed
    text: str


class SpawnArgs(ToolArgs):
    agentName: str = Field(min_length=1, description="Which agent to start (a name the runtime knows).")
    prompt: str = Field(description="The task for the sub-agent.")
    budgetUsd: float | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="Dollars the sub-agent and its own sub-agents may spend (at most what is left of yours).",
    )


class WaitArgs(ToolArgs):
    sessionId: str | None = Field(default=None, description="Wait for this child only.")
    agentName: str | None = Field(default=None, description="Wait for the children with this name.")
    timeoutMs: int | None = Field(default=None, ge=0, description="Give up after this long.")


class SubAgents(EngineExtension):
    """Installs the sub-agent tools on an engine and delivers children's results.

    Args:
        engine: the engine whose router gets `spawn_agent` and `wait_agent`.
        max_background: running children allowed per parent.
        max_depth: levels of sub-agents allowed below a root session.
        policies: a per-agent permission policy (by agent name), relaxing or tightening the
            engine's default for that agent's sessions.
    """

    def __init__(
        self,
        engine: SessionEngine,
        *,
        max_background: int = 4,
        max_depth: int = 3,
        policies: dict[str, PolicyConfig] | None = None,
    ) -> None:
        self.engine = engine
        self.max_background = max_background
        self.max_depth = max_depth
        self.policies = dict(policies or {})
        self.outcomes: dict[str, ChildOutcome] = {}
        engine.router.register(_SpawnTool(self))
        engine.router.register(_WaitTool(self))
        engine.extensions.append(self)

    # -- spawning --------------------------------------------------------------------------
    async def spawn(
        self, parent_id: str, agent_name: str, prompt: str, budget_usd: float | None = None
    ) -> str:
        engine = self.engine
        parent = engine.session(parent_id)
        spent = engine.budgets.refusal(parent_id)
        if spent is not None:
            raise ToolError("budget_exceeded", f"cannot spawn {agent_name}: {spent}")
        if budget_usd is not None:
            self._check_child_budget(parent_id, agent_name, budget_usd)
        depth = len(engine.budgets.index.chain(parent_id)) - 1
        if depth + 1 > self.max_depth:
            raise ToolError(
                "budget_exceeded",
                f"cannot spawn {agent_name}: sub-agents may nest at most {self.max_depth} levels "
                f"deep and this session is at level {depth}",
            )
        running = engine.registry.running_children(parent_id)
        if running >= self.max_background:
            raise ToolError(
                "budget_exceeded",
                f"cannot spawn {agent_name}: {running} sub-agents are already running (at most "
                f"{self.max_background}); wait for one with wait_agent first",
            )
        child_id = await engine.create_session(
            parent.cwd,
            parent_session_id=parent_id,
            agent_name=agent_name,
            title=prompt[:60] or agent_name,
            budget={"usd": budget_usd} if budget_usd is not None else None,
        )
        policy = self.policies.get(agent_name)
        if policy is not None:
            engine.session(child_id).permissions = engine.permissions.with_policy(policy)
        try:
            engine.start_turn(child_id, prompt)
        except BudgetExceeded as over:  # the tree spent its budget while the child was made
            raise ToolError("budget_exceeded", f"cannot start {agent_name}: {over.message}") from None
        return child_id

    def _check_child_budget(self, parent_id: str, agent_name: str, budget_usd: float) -> None:
        """Refuse a child's budget above what is left of the tightest dollar budget over it."""
        budgets = self.engine.budgets
        tightest = budgets.usd_left(parent_id)
        if tightest is None:
            return
        left, owner = tightest
        if budget_usd <= left + 1e-9:
            return
        limit = budgets.index.budget(owner)
        assert limit is not None and limit.usd is not None
        whose = "this session's" if owner == parent_id else f"{self.engine.session(owner).label}'s"
        raise ToolError(
            "budget_exceeded",
            f"cannot spawn {agent_name} with a budget of {usd_text(budget_usd)}: only "
            f"{usd_text(max(left, 0.0))} is left of {whose} {usd_text(limit.usd)} budget "
            "(ask for at most that, or leave budgetUsd out to share what is left)",
        )

    # -- delivery --------------------------------------------------------------------------
    async def turn_ended(self, engine: SessionEngine, turn: TurnHandle) -> None:
        child = turn.session
        parent_id = engine.budgets.index.parent_of(child.id)
        if parent_id is None:
            return
        status = turn.end.ending.delivery if turn.end is not None else "failed"
        text = _final_text(turn)
        outcome = ChildOutcome(child.id, child.agent_name or child.id, status, text)
        self.outcomes[child.id] = outcome
        engine.deliver(parent_id, Delivery(child.id, outcome.agent_name, status, text))
        engine.registry.mark_delivered(child.id)

    # -- waiting ---------------------------------------------------------------------------
    def _targets(self, parent_id: str, args: WaitArgs) -> list[str]:
        engine = self.engine
        read = {info.id for info in engine.sessions()}  # (one let go is no longer waited for)
        children = [sid for sid in engine.budgets.index.children(parent_id) if sid in read]
        if args.sessionId is not None:
            if args.sessionId not in children:
                raise ToolError("not_found", f"{args.sessionId} is not a sub-agent of this session")
            return [args.sessionId]
        if args.agentName is not None:
            named = [sid for sid in children if engine.session(sid).agent_name == args.agentName]
            if not named:
                raise ToolError("not_found", f"no sub-agent named {args.agentName!r} was spawned")
            return named
        return children

    async def wait(self, parent_id: str, args: WaitArgs) -> list[dict[str, Any]]:
        targets = self._targets(parent_id, args)
        timeout = (args.timeoutMs if args.timeoutMs is not None else DEFAULT_WAIT_MS) / 1000
        with anyio.move_on_after(timeout):
            for sid in targets:
                if sid not in self.outcomes:
                    await self.engine.registry.wait(sid, None)
        answers: list[dict[str, Any]] = []
        for sid in targets:
            outcome = self.outcomes.get(sid)
            answer: dict[str, Any] = {"sessionId": sid}
            if outcome is None:
                answer.update(agentName=self.engine.session(sid).agent_name, status="timeout")
            else:
                answer.update(agentName=outcome.agent_name, status=outcome.status, text=outcome.text)
            answers.append(answer)
        return answers


def _final_text(turn: TurnHandle) -> str:
    """What the parent reads: the ending's note (with its error code, and what the turn's end
    said of it: `failed: budget_exceeded (budget exceeded: spent $0.05 of a $0.04 budget)`) or
    the last answer."""
    end = turn.end
    note = end.ending.delivered_note if end is not None else None
    if end is not None and note is not None:
        text = f"{note}: {end.error_code}" if end.error_code else note
        return f"{text} ({end.message})" if end.message else text
    for message in reversed(turn.session.transcript.messages):
        if message.role == "assistant":
            return message.text
    return ""


class _AgentTool(BaseTool):
    def __init__(self, agents: SubAgents) -> None:
        self.agents = agents


class _SpawnTool(_AgentTool):
    name = "spawn_agent"
    description = (
        "Start a sub-agent on a task in the background, in this workspace. Returns its sessionId "
        "at once; its result arrives later (or use wait_agent)."
    )
    Args = SpawnArgs
    fixed_risk = "execute"

    async def run(self, args: SpawnArgs, ctx: ToolContext) -> ToolResult:
        child = await self.agents.spawn(ctx.session_id, args.agentName, args.prompt, args.budgetUsd)
        body: dict[str, Any] = {"sessionId": child, "agentName": args.agentName, "status": "running"}
        if args.budgetUsd is not None:
            body["budgetUsd"] = args.budgetUsd
        return ToolResult(ok=True, text=orjson.dumps(body).decode())


class _WaitTool(_AgentTool):
    name = "wait_agent"
    description = (
        "Wait for sub-agents to finish: one by sessionId, those with an agentName, or (no "
        "arguments) every running child. Returns each one's status and final text."
    )
    Args = WaitArgs
    fixed_risk = "read"

    async def run(self, args: WaitArgs, ctx: ToolContext) -> ToolResult:
        answers = await self.agents.wait(ctx.session_id, args)
        return ToolResult(ok=True, text=orjson.dumps(answers).decode())
