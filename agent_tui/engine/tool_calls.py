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
- calls still open when a turn ends (or when a reopened log shows a turn that never ended) are
  answered by `answer_open_calls`: a pending ask is withdrawn (`permission.resolved{deny,
  system}`), and each call gets its `tool.failed`;
- what a call is (its id, tool, args) and how far it got (its stage, its request id) is read
  from `SessionInfo.open_calls`, which the stored events keep; nothing here keeps a copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_tui.engine.clock import new_id
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest, PermissionRulesError, Verdict
from agent_tui.engine.session_info import OpenCall, SessionInfo
from agent_tui.engine.tools.base import Risk, ToolError
from agent_tui.engine.turn_handle import TurnHandle

if TYPE_CHECKING:
    from agent_tui.engine.engine import SessionEngine


@dataclass(frozen=True)
class CallEnding:
    """How the calls still open at a turn's end are answered: `tool.failed{code, message}`,
    after withdrawing a pending ask with `withdrawn` as its reason."""

    code: str
    message: str
    withdrawn: str


CANCELLED = CallEnding("cancelled", "the turn was cancelled before this call finished", "cancelled")
TURN_ENDED = CallEnding("unknown", "the turn ended before this call ran", "turn ended")
INTERRUPTED = CallEnding("cancelled", "the turn was interrupted before this call finished", "interrupted")
"""A turn a reopened log shows unfinished: the process that ran it stopped."""


class Cancelled(Exception):
    """Raised inside a turn when the cancel guard trips (no anyio cancellation involved)."""


class ToolCallRunner:
    """Runs the tool calls of one engine's turns."""

    def __init__(self, engine: SessionEngine) -> None:
        self.engine = engine

    async def answer_open_calls(self, info: SessionInfo, turn_id: str | None, ending: CallEnding) -> None:
        """Answer every call of `info`'s open turn: withdraw a pending ask, then fail the call."""
        for call in list(info.open_calls.values()):
            if call.stage == "asking":
                await self._resolve(info, turn_id, call, "deny", "system", reason=ending.withdrawn)
            await self._fail_call(info, turn_id, call, ending.code, ending.message)

    async def run(self, turn: TurnHandle, call: OpenCall) -> None:
        """Ask permission for one call, run it if allowed, and store its one result."""
        engine = self.engine
        commit = engine.commit
        info = turn.session
        router = engine.router
        args = call.args
        if turn.cancel_requested:
            raise Cancelled
        try:
            tool, parsed = router.parse(call.tool, args)
        except ToolError as error:
            await self._fail_call(info, turn.turn_id, call, error.code, error.message)
            return
        assessment = router.assess(call.tool, parsed, cwd=info.cwd)
        risk = assessment.risk
        preview = router.preview(args)
        permissions = info.permissions or engine.permissions
        protected = permissions.protected_change(call.tool, parsed, risk, info.cwd)
        warning = _joined(protected.warning if protected else None, assessment.warning)
        await commit(
            info,
            turn.turn_id,
            "permission.requested",
            requestId=new_id("perm"),
            toolCallId=call.call_id,
            tool=call.tool,
            risk=risk,
            argsPreview=preview,
            reason=assessment.reason,
            warning=warning,
        )
        try:
            verdict = permissions.evaluate(info.id, call.tool, args, risk, protected=protected)
        except PermissionRulesError as error:  # the rules cannot be read now: no rule allows it
            verdict = Verdict("deny", "rules", reason=f"the permission rules cannot be used: {error}")
        warning = _joined(protected.warning if protected else None, assessment.warning or verdict.warning)
        if verdict.decision == "ask":
            await self._resolve(
                info,
                turn.turn_id,
                call,
                "ask",
                "policy",
                policy=verdict.policy,
                reason=verdict.warning or verdict.reason,
            )
            answer = await self._ask(turn, call, risk, preview, args, warning, assessment.reason)
            asked_someone = engine.prompter is not None
            await self._resolve(
                info,
                turn.turn_id,
                call,
                answer.decision,
                answer.actor if asked_someone else "system",
                remember=answer.remember if asked_someone and answer.actor == "user" else None,
                reason=answer.reason,
                by=dict(answer.by) if answer.by else None,
            )
            if asked_someone and answer.actor == "user":
                try:
                    permissions.remember(info.id, call.tool, args, risk, answer)
                except PermissionRulesError:
                    pass  # the answer still decides this call; the next one meets the same error
            allowed = answer.decision == "allow"
        else:
            await self._resolve(
                info,
                turn.turn_id,
                call,
                verdict.decision,
                "system" if verdict.policy == "rules" else "policy",
                policy=verdict.policy,
                reason=verdict.reason,
            )
            allowed = verdict.decision == "allow"
        if not allowed:
            await self._fail_call(
                info, turn.turn_id, call, "permission_denied", f"{call.tool} was denied permission"
            )
            return
        if turn.cancel_requested:
            raise Cancelled
        await commit(
            info, turn.turn_id, "tool.started", toolCallId=call.call_id, tool=call.tool, argsPreview=preview
        )

        async def on_output(stream: str, text: str) -> None:
            await commit(info, turn.turn_id, "tool.delta", toolCallId=call.call_id, stream=stream, text=text)

        context = router.make_context(
            cwd=info.cwd,
            session_id=info.id,
            turn_id=turn.turn_id,
            tool_call_id=call.call_id,
            on_output=on_output,
        )
        result = await router.run(tool, parsed, context)
        if not result.ok:
            await self._fail_call(info, turn.turn_id, call, result.error_code or "unknown", result.text)
            return
        await commit(
            info,
            turn.turn_id,
            "tool.completed",
            toolCallId=call.call_id,
            tool=call.tool,
            result=result.text,
            exitCode=result.exit_code,
            truncated=result.truncated,
        )

    async def _resolve(
        self, info: SessionInfo, turn_id: str | None, call: OpenCall, decision: str, actor: str, **fields: Any
    ) -> None:
        """Store one `permission.resolved` of `call`'s request."""
        await self.engine.commit(
            info,
            turn_id,
            "permission.resolved",
            requestId=call.request_id,
            toolCallId=call.call_id,
            decision=decision,
            actor=actor,
            **fields,
        )

    async def _fail_call(
        self, info: SessionInfo, turn_id: str | None, call: OpenCall, code: str, message: str
    ) -> None:
        await self.engine.commit(
            info,
            turn_id,
            "tool.failed",
            toolCallId=call.call_id,
            tool=call.tool,
            errorCode=code,
            message=message,
        )

    async def _ask(
        self,
        turn: TurnHandle,
        call: OpenCall,
        risk: Risk,
        preview: str,
        args: Mapping[str, Any],
        warning: str | None,
        reason: str | None,
    ) -> PermissionAnswer:
        engine = self.engine
        if engine.prompter is None:
            return PermissionAnswer("deny", reason="no one to ask")
        request = PermissionRequest(
            session_id=turn.session_id,
            turn_id=turn.turn_id,
            request_id=call.request_id or "",
            tool_call_id=call.call_id,
            tool=call.tool,
            risk=risk,
            args_preview=preview,
            args=dict(args),
            agent_path=engine.agent_path(turn.session_id),
            warning=warning,
            reason=reason,
        )
        return await engine.prompter.ask(request)


def _joined(*warnings: str | None) -> str | None:
    """Warnings that are set, in order, without repeats, as one line."""
    kept: list[str] = []
    for warning in warnings:
        if warning and warning not in kept:
            kept.append(warning)
    return "; ".join(kept) or None
