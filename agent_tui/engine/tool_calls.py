"""One tool call inside a turn: permission, the run, and exactly one result.

Invariants:
- a call goes `model.tool_call_requested` → `permission.requested` (with the risk, why, and any
  warning) → `permission.resolved` (a first `ask` from the policy, then the user's or the
  system's answer) → `tool.started` only after an allow → `tool.delta`* → exactly one
  `tool.completed`/`tool.failed`; a denied call gets `tool.failed{permission_denied}` and never
  runs;
- a call that would change a protected path carries the change's warning in its
  `permission.requested` and is asked (`engine.protected_paths`); rules that cannot be read
  when the call is decided deny it (`permission.resolved{deny, system, policy: rules}` with a
  reason naming the file and the field), and the turn goes on;
- every event is worded by the turn's `TurnWriter` (`events/turn_writer.py`), which also answers
  the calls still open when a turn ends;
- the runner gets what it uses (the router, the default policy, who to ask, how to name a
  session's agent path), never the engine; a question is put to `Questions` only after its
  `permission.requested` and the policy's `ask` are stored;
- what a call is (its id, tool, args) and how far it got (its stage, its request id) is read
  from `SessionInfo.open_calls`, which the stored events keep; nothing here keeps a copy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_tui.engine.clock import new_id
from agent_tui.engine.permissions import (
    PermissionEngine,
    PermissionRequest,
    PermissionRulesError,
    Verdict,
)
from agent_tui.engine.questions import Questions
from agent_tui.engine.session_info import OpenCall, TurnHandle
from agent_tui.engine.tools.base import Risk, ToolError
from agent_tui.engine.tools.router import ToolRouter


class Cancelled(Exception):
    """Raised inside a turn when the cancel guard trips (no anyio cancellation involved)."""


class ToolCallRunner:
    """Runs the tool calls of turns.

    Args:
        router: the tools.
        permissions: the policy of sessions without one of their own.
        questions: who holds and answers the questions (`engine.questions`).
        agent_path: names a session from the root down (what the person asked is shown).
    """

    def __init__(
        self,
        router: ToolRouter,
        permissions: PermissionEngine,
        questions: Questions,
        agent_path: Callable[[str], tuple[str, ...]],
    ) -> None:
        self.router = router
        self.permissions = permissions
        self.questions = questions
        self.agent_path = agent_path

    async def run(self, turn: TurnHandle, call: OpenCall) -> None:
        """Ask permission for one call, run it if allowed, and store its one result."""
        writer = turn.writer
        info = turn.session
        router = info.router or self.router
        if turn.cancel_requested:
            raise Cancelled
        try:
            tool, parsed = router.parse(call.tool, call.args)
        except ToolError as error:
            await writer.fail_call(call.call_id, call.tool, error.code, error.message)
            return
        preview = router.preview(call.args)
        if not await self._allowed(turn, call, router, parsed, preview):
            await writer.deny(call.call_id, call.tool)
            return
        if turn.cancel_requested:
            raise Cancelled
        await writer.start_call(call.call_id, call.tool, preview)
        call_id = call.call_id

        async def on_output(stream: str, text: str) -> None:
            await writer.call_output(call_id, stream, text)

        context = router.make_context(
            cwd=info.cwd, session_id=info.id, turn_id=turn.turn_id, tool_call_id=call_id, on_output=on_output
        )
        result = await router.run(tool, parsed, context)
        if not result.ok:
            await writer.fail_call(call_id, call.tool, result.error_code or "unknown", result.text)
            return
        await writer.complete_call(call_id, call.tool, result.text, result.exit_code, result.truncated)

    async def _allowed(
        self, turn: TurnHandle, call: OpenCall, router: ToolRouter, parsed: Any, preview: str
    ) -> bool:
        """Store the call's permission request and its answer (the policy's, or the person's)."""
        writer = turn.writer
        info = turn.session
        assessment = router.assess(call.tool, parsed, cwd=info.cwd)
        risk = assessment.risk
        permissions = info.permissions or self.permissions
        protected = permissions.protected_change(call.tool, parsed, risk, info.cwd)
        warning = _joined(protected.warning if protected else None, assessment.warning)
        await writer.request_permission(
            call.call_id, call.tool, new_id("perm"), risk, preview, reason=assessment.reason, warning=warning
        )
        try:
            verdict = permissions.evaluate(info.id, call.tool, call.args, risk, protected=protected)
        except PermissionRulesError as error:  # the rules cannot be read now: no rule allows it
            verdict = Verdict("deny", "rules", reason=f"the permission rules cannot be used: {error}")
        asked = verdict.decision == "ask"
        actor = "system" if verdict.policy == "rules" else "policy"  # rules it cannot read
        reason = (verdict.warning or verdict.reason) if asked else verdict.reason
        await writer.resolve(
            call.call_id, call.request_id, verdict.decision, actor, policy=verdict.policy, reason=reason
        )
        if not asked:
            return verdict.decision == "allow"
        warning = _joined(protected.warning if protected else None, assessment.warning or verdict.warning)
        return await self._asked(turn, call, permissions, risk, preview, warning, assessment.reason)

    async def _asked(
        self,
        turn: TurnHandle,
        call: OpenCall,
        permissions: PermissionEngine,
        risk: Risk,
        preview: str,
        warning: str | None,
        reason: str | None,
    ) -> bool:
        """Put the call's question to `Questions`, store the answer, and keep what the person
        asked to remember."""
        request = PermissionRequest(
            session_id=turn.session_id,
            turn_id=turn.turn_id,
            request_id=call.request_id or "",
            tool_call_id=call.call_id,
            tool=call.tool,
            risk=risk,
            args_preview=preview,
            args=dict(call.args),
            agent_path=self.agent_path(turn.session_id),
            warning=warning,
            reason=reason,
        )
        answer = await self.questions.ask(request)
        user = answer.actor == "user"
        await turn.writer.resolve(
            call.call_id,
            call.request_id,
            answer.decision,
            answer.actor,
            remember=answer.remember if user else None,
            reason=answer.reason,
            by=dict(answer.by) if answer.by else None,
        )
        if user:
            try:
                permissions.remember(turn.session_id, call.tool, call.args, risk, answer)
            except PermissionRulesError:
                pass  # the answer still decides this call; the next one meets the same error
        return answer.decision == "allow"


def _joined(*warnings: str | None) -> str | None:
    """Warnings that are set, in order, without repeats, as one line."""
    return "; ".join(dict.fromkeys(warning for warning in warnings if warning)) or None
