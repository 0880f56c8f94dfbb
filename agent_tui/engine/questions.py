"""`Questions`: the one owner of the permission questions waiting on this host.

Whoever asks (the engine's tool runner, an ACP agent's `session/request_permission`) first
commits the question's `permission.requested` (and the policy's `ask`), then calls `ask` and
waits; whoever answers (the approval queue, an attached dashboard over the bus, the ACP server's
client, a fixed `--approve`) calls `answer`, or is the `answerer` registered here.

Invariants:
- one future per (session, request); the first answer wins: a later `answer` returns who
  answered first and when (`FirstAnswer`), also when that was the `answerer`, a timeout or a
  withdrawal; an `answer` to a request that never waited raises `LookupError` with a sentence;
- with an `answerer`, each question is put to it instead of the people (none waits for
  `answer`); an answerer that raises is a denial by `system`, never an error out of the turn;
- with an `ask_timeout`, a question nobody answers in time is denied by `system`;
- when the asker stops waiting (its turn was cancelled, so `ask` is cancelled) the question is
  withdrawn: it no longer waits, the answerer is cancelled, and the cancellation propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from agent_tui.engine.clock import utc_now
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest

Answerer = Callable[[PermissionRequest], Awaitable[PermissionAnswer]]
"""Who answers a question without a person (headless `--approve`, the ACP server's client)."""


async def no_one_to_ask(request: PermissionRequest) -> PermissionAnswer:
    """The answerer of an engine nobody watches: every question is denied by `system`."""
    return PermissionAnswer("deny", reason="no one to ask", actor="system")


def fixed_answer(decision: Literal["allow", "deny"], reason: str | None = None) -> Answerer:
    """An answerer that answers every question the same way (`agent-tui run --approve`)."""
    answer = PermissionAnswer(decision, reason=reason)

    async def answering(request: PermissionRequest) -> PermissionAnswer:
        return answer

    return answering


@dataclass(frozen=True, slots=True)
class FirstAnswer:
    """Who answered a question first (`by`: an attached dashboard's name, user and host)."""

    by: Mapping[str, str] | None
    actor: str
    at: str
    decision: str


class Questions:
    """The questions waiting for an answer (see the module docstring).

    Args:
        answerer: who answers every question instead of the people (None: the people do, through
            `answer`; by default every question is denied: no one to ask).
        ask_timeout: seconds after which an unanswered question is denied (None: never).
    """

    def __init__(self, answerer: Answerer | None = no_one_to_ask, ask_timeout: float | None = None) -> None:
        self.answerer = answerer
        self.ask_timeout = ask_timeout
        self._waiting: dict[tuple[str, str], tuple[PermissionRequest, asyncio.Future[PermissionAnswer]]] = {}
        self._answered: dict[tuple[str, str], FirstAnswer] = {}

    async def ask(self, request: PermissionRequest) -> PermissionAnswer:
        """Wait for the answer to `request` (its `permission.requested` is committed)."""
        key = (request.session_id, request.request_id)
        if self.answerer is not None:
            try:
                answer = await self.answerer(request)
            except Exception as error:
                answer = PermissionAnswer("deny", reason=f"the question failed: {error}", actor="system")
            self._answered[key] = FirstAnswer(answer.by, answer.actor, utc_now(), answer.decision)
            return answer
        future: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
        self._waiting[key] = (request, future)
        try:
            if self.ask_timeout is None:
                return await future
            try:
                return await asyncio.wait_for(asyncio.shield(future), self.ask_timeout)
            except TimeoutError:
                reason = f"no answer within {self.ask_timeout:g} s (--ask-timeout)"
                self._settle(key, PermissionAnswer("deny", reason=reason, actor="system"))
                return future.result()
        except asyncio.CancelledError:
            self._settle(key, PermissionAnswer("deny", reason="withdrawn", actor="system"))
            raise
        finally:
            if self._waiting.get(key, (None, None))[1] is future:  # asked again meanwhile: keep that
                del self._waiting[key]

    def _settle(self, key: tuple[str, str], answer: PermissionAnswer) -> None:
        """The first answer to a waiting question is kept and resolves its future."""
        waiting = self._waiting.get(key)
        if waiting is None or key in self._answered:
            return
        self._answered[key] = FirstAnswer(answer.by, answer.actor, utc_now(), answer.decision)
        if not waiting[1].done():  # a cancelled `ask` cancelled its future
            waiting[1].set_result(answer)

    def answer(
        self,
        session_id: str,
        request_id: str,
        answer: PermissionAnswer,
        by: Mapping[str, str] | None = None,
    ) -> FirstAnswer | None:
        """Answer a waiting question (None), or say who answered it first.

        Raises:
            LookupError: no such question waits (and none was answered).
        """
        key = (session_id, request_id)
        first = self._answered.get(key)
        if first is not None:
            return first
        if key not in self._waiting:
            raise LookupError(f"no permission request {request_id} waits in session {session_id}")
        if by is not None:
            answer = replace(answer, by=dict(by))
        self._settle(key, answer)
        return None

    def request(self, session_id: str, request_id: str) -> PermissionRequest | None:
        """The question still waiting under that key, if any."""
        waiting = self._waiting.get((session_id, request_id))
        return waiting[0] if waiting is not None and not waiting[1].done() else None

    def waiting(self) -> list[PermissionRequest]:
        """Every question waiting for an answer, oldest first."""
        return [request for request, future in self._waiting.values() if not future.done()]
