"""`AgentQuestions`: what an ACP-backed session puts to the user, and how a stop withdraws it.

The agent's own `session/request_permission`, and the permission asks of the file and terminal
requests it makes of us, all go to the engine's one `Questions` (the dashboard's approval queue).

Invariants:
- an agent's question is a `permission.requested` and the policy's `ask` in the log before it
  reaches `engine.questions` as an `AcpPermissionRequest` carrying its options, also when the
  agent already runs the call or was answered about it (a new request of the same call); a
  question about a call that already ended is kept as a `source.record` and answered
  `cancelled` (nothing is left to decide);
  the answer is one of those options (`choose_option`), or `cancelled` when none fits, and the
  log gets the matching `permission.resolved`;
- a question is withdrawn when its turn stops or ends (`withdraw_all`): the `ask` is
  cancelled (the dashboard drops it from the queue), the answer is `deny` by `system`, and the
  agent hears `cancelled`, as the protocol asks;
- an answerer that raises is a denial by `system` (`Questions`), never an error out of the session.
"""

from __future__ import annotations

from typing import Any

import anyio
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from agent_tui.acp.acp_call import AcpCall
from agent_tui.acp.permissions import AcpPermissionRequest, agent_options, choose_option
from agent_tui.acp.session_side import SessionSide
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest


class AgentQuestions:
    """The questions of one ACP-backed session (see the module docstring)."""

    def __init__(self, session: SessionSide) -> None:
        self.session = session
        self._waiting: set[anyio.CancelScope] = set()

    def withdraw_all(self) -> None:
        for scope in list(self._waiting):
            scope.cancel()

    async def permission(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """`session/request_permission`: into our approval queue, with the agent's options."""
        session = self.session
        recorder = session.recorder
        call = await session.write(lambda: recorder.ask_for_agent_call(tool_call))
        if call is None:  # no turn, or the call already ended: nothing is left to decide
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        choices = agent_options(options)
        answer, actor = await self.ask_user(call, dict(call.args), None, options=choices)
        option = choose_option(choices, answer) if actor == "user" else None
        if option is None and actor == "user" and answer.decision == "allow":
            answer = PermissionAnswer("deny", reason="the agent offered no option to allow it")
        decision = "allow" if option is not None and option.kind.startswith("allow") else "deny"
        reason = f"chose {option.name!r}" if option is not None else answer.reason
        remember = answer.remember if actor == "user" else None
        await session.write(lambda: recorder.answer(call, decision, actor, remember=remember, reason=reason))
        if option is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    async def ask_user(
        self, call: AcpCall, args: dict[str, Any], warning: str | None, *, options: tuple[Any, ...] = ()
    ) -> tuple[PermissionAnswer, str]:
        """Put `call`'s question (its `permission.requested` and `ask` are in the log) to
        `engine.questions`; (answer, actor). A stop withdraws it (`system`)."""
        session = self.session
        turn = session.recorder.turn
        if turn is None:
            return PermissionAnswer("deny", reason="no one to ask"), "system"
        fields: dict[str, Any] = {
            "session_id": session.session_id,
            "turn_id": turn.turn_id,
            "request_id": call.request_id or "",
            "tool_call_id": call.call_id,
            "tool": call.tool,
            "risk": call.risk,
            "args_preview": call.title,
            "args": args,
            "agent_path": session.agent_path(),
            "warning": warning,
        }
        request = AcpPermissionRequest(**fields, options=options) if options else PermissionRequest(**fields)
        with anyio.CancelScope() as scope:
            self._waiting.add(scope)
            try:
                answer = await session.questions.ask(request)
                return answer, answer.actor
            finally:
                self._waiting.discard(scope)
        return PermissionAnswer("deny", reason="cancelled"), "system"
