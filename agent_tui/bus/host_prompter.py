"""`BusPrompter`: the host's `Prompter`; a permission request waits for an attached dashboard's
answer over the control subject, as the local dashboard's approval queue waits for its user.

Invariants:
- `ask` parks one future per (session, request) and waits; `answer` resolves exactly that
  future, once: the first answer wins, and every later one is refused with who answered first
  and when (`AlreadyAnswered`), including answers the engine stored itself (a withdrawal, a
  timeout) which it hears as `permission.resolved` events;
- an answer carries who gave it (`Caller`): the engine stores it as the `permission.resolved`'s
  `by`, with `actor: "user"`;
- with an `ask_timeout`, a request nobody answers in time is denied by `system` (its reason
  says so); without one it waits for as long as the turn runs;
- when the engine stops waiting (the turn was cancelled) the request is no longer waiting and
  the cancellation propagates unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from datetime import UTC, datetime

from agent_tui.bus.protocol import AlreadyAnswered, Caller, WaitingRequest
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest
from agent_tui.events import Event

Key = tuple[str, str]


@dataclass
class _Answered:
    by: Caller | None
    actor: str
    at: str
    decision: str


class BusPrompter:
    def __init__(self, ask_timeout: float | None = None) -> None:
        self.ask_timeout = ask_timeout
        self._waiting: dict[Key, tuple[PermissionRequest, asyncio.Future[PermissionAnswer]]] = {}
        self._answered: dict[Key, _Answered] = {}
        self.asked = asyncio.Event()
        """Set whenever a request starts waiting (tests and the host's notices watch it)."""

    async def ask(self, request: PermissionRequest) -> PermissionAnswer:
        key = (request.session_id, request.request_id)
        future: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
        self._waiting[key] = (request, future)
        self.asked.set()
        try:
            if self.ask_timeout is None:
                return await future
            try:
                return await asyncio.wait_for(asyncio.shield(future), self.ask_timeout)
            except TimeoutError:
                if future.done():
                    return future.result()
                answer = PermissionAnswer(
                    "deny",
                    reason=f"no answer within {self.ask_timeout:g} s (--ask-timeout)",
                    actor="system",
                )
                self._answered[key] = _Answered(None, "system", _now(), "deny")
                future.set_result(answer)
                return answer
        finally:
            self._waiting.pop(key, None)
            if not future.done():
                future.cancel()

    def answer(
        self, session_id: str, request_id: str, answer: PermissionAnswer, by: Caller
    ) -> AlreadyAnswered | None:
        """Answer a waiting request (None), or say who answered it first (or that nobody asked)."""
        key = (session_id, request_id)
        first = self._answered.get(key)
        if first is not None:
            return AlreadyAnswered(by=first.by, actor=first.actor, at=first.at, decision=first.decision)
        waiting = self._waiting.get(key)
        if waiting is None or waiting[1].done():
            raise LookupError(f"no permission request {request_id} waits in session {session_id}")
        self._answered[key] = _Answered(by, "user", _now(), answer.decision)
        waiting[1].set_result(
            PermissionAnswer(
                answer.decision,
                remember=answer.remember,
                reason=answer.reason,
                by={"dashboard": by.dashboard, "user": by.user, "host": by.host},
            )
        )
        return None

    def heard(self, event: Event) -> None:
        """The engine's listener: remembers how each request was resolved (first one kept)."""
        if event.type != "permission.resolved":
            return
        payload = event.payload
        if payload.get("decision") == "ask":
            return
        key = (event.session_id, str(payload.get("requestId")))
        if key in self._answered:
            return
        by = payload.get("by")
        caller = None
        if isinstance(by, dict):
            with contextlib.suppress(ValueError):
                caller = Caller.model_validate(by)
        self._answered[key] = _Answered(
            caller, str(payload.get("actor")), event.ts, str(payload.get("decision"))
        )

    def waiting(self) -> list[WaitingRequest]:
        return [
            WaitingRequest(
                sessionId=request.session_id,
                requestId=request.request_id,
                toolCallId=request.tool_call_id,
                tool=request.tool,
                risk=request.risk,
                argsPreview=request.args_preview,
                warning=request.warning,
                reason=request.reason,
                agentPath=list(request.agent_path),
            )
            for request, future in self._waiting.values()
            if not future.done()
        ]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def already_sentence(first: AlreadyAnswered) -> str:
    """ "already answered by laptop (ana) at 14:02:07"."""
    at = first.at
    with contextlib.suppress(ValueError):
        at = datetime.fromisoformat(at.replace("Z", "+00:00")).strftime("%H:%M:%S")
    if first.by is not None:
        who = f"{first.by.dashboard} ({first.by.user}@{first.by.host})"
    elif first.actor == "system":
        who = "the host (no answer in time, or the turn ended)"
    else:
        who = first.actor
    return f"already answered ({first.decision}) by {who} at {at}"
