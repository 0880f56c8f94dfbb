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
- "for this session" is ours: the user's session answer is remembered in the session's
  `PermissionEngine` (a command by its programs, as for our shell), and answers the agent's
  later questions it covers without asking (`actor: policy`, `policy: session:<tool>`, the
  agent told `allow_once`/`reject_once`); the agent's persistent option is never picked for it;
- a question is withdrawn when its turn stops or ends (`withdraw_all`): the `ask` is
  cancelled (the dashboard drops it from the queue), the answer is `deny` by `system`, and the
  agent hears `cancelled`, as the protocol asks;
- an answerer that raises is a denial by `system` (`Questions`), never an error out of the session.
"""

from __future__ import annotations

import contextlib
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
from agent_tui.acp.approvals import paths_of
from agent_tui.acp.permissions import AcpPermissionRequest, AgentOption, agent_options, choose_option
from agent_tui.acp.session_side import SessionSide
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest, PermissionRulesError, Verdict


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
        asked = await session.write(lambda: recorder.ask_for_agent_call(tool_call, self._remembered, options))
        if asked is None:  # no turn, or the call already ended: nothing is left to decide
            return _cancelled()
        call, ruled = asked
        choices = agent_options(options)
        if ruled is not None:  # our session rule answered it
            return _selected(choose_option(choices, PermissionAnswer(ruled.decision)).option)  # type: ignore[arg-type]
        answer, actor = await self.ask_user(call, dict(call.args), None, options=choices)
        choice = choose_option(choices, answer, protected=self._protected(call)) if actor == "user" else None
        option = choice.option if choice is not None else None
        if option is None and actor == "user" and answer.decision == "allow":
            answer = PermissionAnswer("deny", reason="the agent offered no option to allow it")
        decision = "allow" if option is not None and option.kind.startswith("allow") else "deny"
        reason = f"chose {option.name!r}" if option is not None else answer.reason
        if choice is not None and choice.note is not None:
            reason = choice.note
        await session.write(lambda: recorder.answer(call, decision, actor, answer, reason))
        if actor == "user" and answer.remember in ("session", "always"):
            tool, args = self._our_terms(call)
            # a session answer writes no file; nothing to report
            with contextlib.suppress(PermissionRulesError):
                session.permissions.remember(
                    session.session_id,
                    tool,
                    args,
                    call.risk,
                    PermissionAnswer(decision, "session"),  # type: ignore[arg-type]
                )
        return _selected(option)

    def _our_terms(self, call: AcpCall) -> tuple[str, dict[str, Any]]:
        """The agent's call in our permission engine's terms: a command as our `shell`."""
        command = self.session.recorder.command_of_call(call)
        if command is not None:
            return "shell", {"cmd": command}
        return call.tool, call.args

    def _remembered(self, call: AcpCall) -> Verdict | None:
        """Our session rule's answer to the agent's question, if one covers it."""
        session = self.session
        tool, args = self._our_terms(call)
        try:
            verdict = session.permissions.evaluate(session.session_id, tool, args, call.risk)
        except PermissionRulesError:
            return None
        policy = verdict.policy or ""
        if verdict.decision == "ask" or not policy.startswith("session:"):
            return None
        if verdict.decision == "allow" and self._protected(call):
            return None  # a protected path is asked about every time
        return verdict

    def _protected(self, call: AcpCall) -> bool:
        """Whether the agent's call changes a protected path (its command, or a path it names)."""
        session = self.session
        permissions = session.permissions
        tool, args = self._our_terms(call)
        if tool == "shell":
            return permissions.protected_change(tool, args, call.risk, session.cwd) is not None
        if call.risk == "read":
            return False
        return any(
            permissions.protected_change("write_file", {"path": path}, call.risk, session.cwd) is not None
            for path in paths_of(call.args)
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


def _cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


def _selected(option: AgentOption | None) -> RequestPermissionResponse:
    if option is None:
        return _cancelled()
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option.option_id))
