"""`AgentQuestions`: what an ACP-backed session puts to the user, and how a stop withdraws it.

The agent's own `session/request_permission`, and the permission asks of the file and terminal
requests it makes of us, all go to the engine's one `Questions` (the dashboard's approval queue).

Invariants:
- an agent's question reaches `engine.questions` as an `AcpPermissionRequest` carrying its options;
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
from agent_tui.acp.mapping import as_sent
from agent_tui.acp.permissions import AcpPermissionRequest, agent_options, choose_option
from agent_tui.acp.session_side import SessionSide
from agent_tui.engine.clock import new_id
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
        choices = agent_options(options)
        turn = recorder.turn
        if turn is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        args = dict(call.args) if call is not None else {"toolCall": as_sent(tool_call)}
        answer, actor = await self.ask_user(call, args, None, options=choices, tool_call=tool_call)
        option = choose_option(choices, answer) if actor == "user" else None
        if call is not None:
            if option is None and actor == "user" and answer.decision == "allow":
                answer = PermissionAnswer("deny", reason="the agent offered no option to allow it")
            decision = "allow" if option is not None and option.kind.startswith("allow") else "deny"
            reason = f"chose {option.name!r}" if option is not None else answer.reason
            remember = answer.remember if actor == "user" else None
            await session.write(
                lambda: recorder.answer(call, decision, actor, remember=remember, reason=reason)
            )
        if option is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    async def ask_user(
        self,
        call: AcpCall | None,
        args: dict[str, Any],
        warning: str | None,
        *,
        options: tuple[Any, ...] = (),
        tool_call: ToolCallUpdate | None = None,
    ) -> tuple[PermissionAnswer, str]:
        """Put one question to `engine.questions`; (answer, actor). A stop withdraws it (`system`)."""
        session = self.session
        turn = session.recorder.turn
        if turn is None:
            return PermissionAnswer("deny", reason="no one to ask"), "system"
        if call is not None:
            call_id, tool, risk, preview = call.call_id, call.tool, call.risk, call.title
            request_id = call.request_id or new_id("perm")
        else:  # a question about a call that is already decided (kept as a record in the log)
            call_id = tool_call.tool_call_id if tool_call is not None else ""
            preview = (tool_call.title or "") if tool_call is not None else ""
            tool, risk, request_id = "other", "execute", new_id("perm")
        fields: dict[str, Any] = {
            "session_id": session.session_id,
            "turn_id": turn.turn_id,
            "request_id": request_id,
            "tool_call_id": call_id,
            "tool": tool,
            "risk": risk,
            "args_preview": preview,
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
