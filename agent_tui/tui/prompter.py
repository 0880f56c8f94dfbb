"""`TuiPrompter`: the engine asks, the dashboard's user answers.

Invariants:
- `ask` never touches the screen: it parks a future per request, posts `PermissionAsked` and
  waits; the user opens the request from the approval queue when they choose to (a modal never
  pops up and steals focus on its own);
- `answer` resolves exactly the future of that (session, request); a request that is no longer
  waiting (answered, or withdrawn) is refused with False, never answered twice;
- when the engine stops waiting (the turn was cancelled, so `ask` is cancelled), the future is
  dropped and `PermissionWithdrawn` is posted; the cancellation itself propagates unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from textual.message import Message

from agent_tui.ports import PermissionAnswer, PermissionRequest, Prompter
from agent_tui.tui.messages import PermissionAsked, PermissionWithdrawn

RequestKey = tuple[str, str]
"""(session id, request id): what names one permission request across sessions."""


@dataclass(eq=False)
class _Waiting:
    request: PermissionRequest
    future: asyncio.Future[PermissionAnswer]


class TuiPrompter(Prompter):
    """A `Prompter` whose answers come from the approval queue.

    Args:
        post: delivers a message to the UI (the app's `post_message`); called on the event loop
            the engine runs on, which is the app's own.
    """

    def __init__(self, post: Callable[[Message], object]) -> None:
        self._post = post
        self._waiting: dict[RequestKey, _Waiting] = {}

    async def ask(self, request: PermissionRequest) -> PermissionAnswer:
        key = (request.session_id, request.request_id)
        future = self.park(request)
        self._post(PermissionAsked(request))
        try:
            return await future
        except asyncio.CancelledError:
            self._post(PermissionWithdrawn(request))
            raise
        finally:
            self._waiting.pop(key, None)

    def park(self, request: PermissionRequest) -> asyncio.Future[PermissionAnswer]:
        """Register `request` as waiting and return the future its answer will resolve.

        `ask` parks and then waits; a test or a screenshot can park requests to build a
        dashboard that has answerable approvals without a running engine.
        """
        future: asyncio.Future[PermissionAnswer] = asyncio.get_running_loop().create_future()
        self._waiting[(request.session_id, request.request_id)] = _Waiting(request, future)
        return future

    def answer(self, session_id: str, request_id: str, answer: PermissionAnswer) -> bool:
        """Resolve the request's future. Returns False if it is not waiting any more."""
        waiting = self._waiting.get((session_id, request_id))
        if waiting is None or waiting.future.done():
            return False
        waiting.future.set_result(answer)
        return True

    def request(self, session_id: str, request_id: str) -> PermissionRequest | None:
        """The request still waiting under that key, if any."""
        waiting = self._waiting.get((session_id, request_id))
        return waiting.request if waiting is not None else None

    def future(self, session_id: str, request_id: str) -> asyncio.Future[PermissionAnswer] | None:
        """The future `ask` waits on for that request (tests watch it resolve)."""
        waiting = self._waiting.get((session_id, request_id))
        return waiting.future if waiting is not None else None

    def waiting(self) -> list[PermissionRequest]:
        """Every request waiting for an answer, oldest first."""
        return [waiting.request for waiting in self._waiting.values()]
