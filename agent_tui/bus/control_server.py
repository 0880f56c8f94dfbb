"""`ControlServer`: a host's actions, asked by request/reply on `control_subject(host, user)`.

Invariants:
- who asked is the user of the subject the request came on (`caller_user`), which the
  server's permissions let only that user publish on: the request's own `by.user` is replaced
  by it before anything is done or recorded (an answer's `by`, an "always" rule, a budget's
  `by`); `by.dashboard` and `by.host` are what the sender says of itself;
- a request is acted on only when its reply subject is in that user's own inboxes
  (`inbox_prefix(user)`, which only that user may subscribe to): a message the server itself
  put on the subject (a stream's republish, a consumer's delivery, which no permission of the
  subject's stops) has no such reply and is ignored;
- every message is answered with one `ControlReply`; a message that is not a `ControlRequest`
  gets `ok: false` and the reason (never a crash, never silence), except an empty one with no
  reply subject (a dashboard probing whether it may publish here), which is ignored quietly;
- a request's `id` (with its user) is its identity: a repeat (a retry after a timeout) gets the very reply the
  first one got, and one that arrives while the first is still being handled waits for it, so a
  follow-up is never sent twice and an agent never started twice; the last `REPLIES_KEPT`
  replies are kept;
- an `answer` goes to the engine's `Questions`: the first answer to a request wins; a later one is
  `ok: false` with "already answered … by … at …" and `AlreadyAnswered` as its detail;
- what an action does is the `HostActions`' business (the workbench on `serve`, the scenario's
  engine on `run --bus`); a refusal is `ok: false` with its sentence; an unexpected failure is
  `ok: false` naming the action, and the host goes on;
- a `republish` is the `Publisher`'s refill (`HostActions.republish`): its reply comes once the
  stream acknowledged what was published again;
- the finishing actions go to `HostActions.finishing` (the workbench's own methods, through
  `perform_finishing`); a host without one (`run --bus`) refuses them; a finishing read
  (`READS`) is not kept by its id: its reply may be big, and reading again changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, Protocol

from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from pydantic import ValidationError

from agent_tui.bus.host_link import BusLink
from agent_tui.bus.protocol import (
    REPLIES_KEPT,
    AgentArgs,
    AlreadyAnswered,
    AnswerArgs,
    BudgetArgs,
    ControlReply,
    ControlRequest,
    RepublishArgs,
    SessionSummary,
    WaitingRequest,
    caller_user,
    host_controls,
    inbox_prefix,
)
from agent_tui.bus.remote_finishing import FINISHING_ACTIONS, READS, perform_finishing, review_limit
from agent_tui.costs.budgets import BudgetLimit
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest
from agent_tui.engine.questions import Questions
from agent_tui.runtime.finishing import Finishing, FinishRefused


class Refused(Exception):
    """The host will not do what was asked; the message says why in one sentence."""


class HostActions(Protocol):
    """What a host can be asked to do (each raises `Refused` with the reason)."""

    def stop(self, session_id: str) -> int: ...
    def stop_subtree(self, session_id: str) -> int: ...
    def stop_all(self) -> int: ...
    def steer(self, session_id: str, text: str) -> str: ...
    def follow_up(self, session_id: str, text: str) -> str: ...
    async def new_agent(self, args: AgentArgs) -> str: ...
    async def close(self, session_id: str) -> None: ...
    def sessions(self) -> list[SessionSummary]: ...
    async def set_budget(self, session_id: str, budget: BudgetLimit | None, by: str) -> None: ...
    async def republish(self, session_id: str, first: int, last: int | None) -> tuple[int, int]: ...

    @property
    def finishing(self) -> Finishing | None:
        """Finishing sessions' work (None: this host does not: a scenario run)."""


class ControlServer:
    def __init__(
        self,
        host: str,
        link: BusLink,
        actions: HostActions,
        questions: Questions,
        *,
        say: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.host = host
        self.link = link
        self.actions = actions
        self.questions = questions
        self.say = say
        self._replies: OrderedDict[tuple[str, str], ControlReply] = OrderedDict()
        self._handling: dict[tuple[str, str], asyncio.Future[ControlReply]] = {}
        self._subscription: Subscription | None = None
        self._starting = asyncio.Lock()  # one subscription, however many callers start it
        self._tasks: set[asyncio.Task[None]] = set()
        link.watchers.append(self._link_changed)

    @property
    def serving(self) -> bool:
        return self._subscription is not None

    async def start(self) -> None:
        async with self._starting:
            client = self.link.client
            if client is None or self._subscription is not None:
                return
            self._subscription = await client.subscribe(host_controls(self.host), cb=self._on_message)
            await client.flush()  # the server knows the subscription: a request now has its responder

    async def _link_changed(self, up: bool) -> None:
        if up and self._subscription is None:
            with contextlib.suppress(Exception):
                await self.start()  # the first connection came late (the client resubscribes after)

    async def _on_message(self, message: Msg) -> None:
        if not message.data and not message.reply:
            return  # a dashboard's probe of its rights (`ControlRights`): nothing to answer
        # Each request is handled in a task of its own: a slow action (a new agent) does not
        # hold up an answer, and a retry of it waits on the first one's future.
        task = asyncio.get_running_loop().create_task(self._respond(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _respond(self, message: Msg) -> None:
        user = caller_user(message.subject)
        if user is None:
            return  # `agent-tui.HOST.control.events`: an events subject, never a request
        if not (message.reply or "").startswith(inbox_prefix(user) + "."):
            return  # not from `user`'s own connection (see the module docstring)
        reply = await self.handle(message.data, user)
        if message.reply:
            with contextlib.suppress(Exception):
                await message.respond(reply.model_dump_json(by_alias=True).encode())

    async def handle(self, data: bytes, user: str) -> ControlReply:
        """Answer one request that came on `user`'s control subject."""
        try:
            request = ControlRequest.model_validate_json(data)
        except (ValidationError, ValueError) as error:
            return ControlReply(id="", ok=False, message=f"not a control request: {_first_error(error)}")
        request = request.model_copy(update={"by": request.by.model_copy(update={"user": user})})
        key = (user, request.id)
        kept = self._replies.get(key)
        if kept is not None:
            return kept
        running = self._handling.get(key)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[ControlReply] = asyncio.get_running_loop().create_future()
        self._handling[key] = future
        try:
            reply = await self._perform(request)
        except Exception as error:  # a bug in an action: said, and the host goes on
            reply = ControlReply(id=request.id, ok=False, message=f"{request.action} failed: {error}")
        finally:
            self._handling.pop(key, None)
        if request.action not in READS:
            self._replies[key] = reply
        while len(self._replies) > REPLIES_KEPT:
            self._replies.popitem(last=False)
        future.set_result(reply)
        return reply

    async def _perform(self, request: ControlRequest) -> ControlReply:
        def ok(**detail: Any) -> ControlReply:
            return ControlReply(id=request.id, ok=True, detail=detail)

        def refused(message: str, **detail: Any) -> ControlReply:
            return ControlReply(id=request.id, ok=False, message=message, detail=detail)

        action = request.action
        actions = self.actions
        session_id = request.session_id
        needs_session = action not in ("stop_all", "new_agent", "sessions", "closed")
        if needs_session and not session_id:
            return refused(f"{action} needs a sessionId")
        if action in FINISHING_ACTIONS:
            return await self._finish(request, ok, refused)
        try:
            if action == "answer":
                return self._answer(request, ok, refused)
            if action == "stop":
                return ok(stopped=actions.stop(session_id or ""))
            if action == "stop_subtree":
                return ok(stopped=actions.stop_subtree(session_id or ""))
            if action == "stop_all":
                return ok(stopped=actions.stop_all())
            if action in ("steer", "follow_up"):
                text = request.args.get("text")
                if not isinstance(text, str) or not text.strip():
                    return refused(f"{action} needs a text")
                send = actions.steer if action == "steer" else actions.follow_up
                return ok(how=send(session_id or "", text))
            if action == "new_agent":
                try:
                    spec = AgentArgs.model_validate(request.args)
                except ValidationError as error:
                    return refused(f"new_agent: {_first_error(error)}")
                return ok(sessionId=await actions.new_agent(spec))
            if action == "close":
                await actions.close(session_id or "")
                return ok()
            if action == "set_budget":
                try:
                    limits = BudgetArgs.model_validate(request.args)
                except ValidationError as error:
                    return refused(f"set_budget: {_first_error(error)}")
                budget = BudgetLimit(limits.usd, limits.tokens)
                by = request.by
                await actions.set_budget(
                    session_id or "",
                    None if budget.empty else budget,
                    f"{by.dashboard} ({by.user}@{by.host})",
                )
                return ok()
            if action == "republish":
                try:
                    wanted = RepublishArgs.model_validate(request.args)
                except ValidationError as error:
                    return refused(f"republish: {_first_error(error)}")
                published, stored = await actions.republish(session_id or "", wanted.first, wanted.last)
                return ok(republished=published, stored=stored)
            if action == "sessions":
                waiting = (
                    [_waiting(r) for r in self.questions.waiting()] if self.questions.answerer is None else []
                )
                return ok(
                    host=self.host,
                    sessions=[s.model_dump(by_alias=True) for s in actions.sessions()],
                    waiting=[w.model_dump(by_alias=True) for w in waiting],
                )
        except Refused as error:
            return refused(str(error))
        return refused(f"unknown action {action}")

    async def _finish(
        self,
        request: ControlRequest,
        ok: Callable[..., ControlReply],
        refused: Callable[..., ControlReply],
    ) -> ControlReply:
        finishing = self.actions.finishing
        if finishing is None:
            return refused(f"this host runs a scenario: {request.action} is for `agent-tui serve`'s sessions")
        client = self.link.client
        limit = review_limit(client.max_payload if client is not None else None)
        try:
            detail = await perform_finishing(
                finishing, request.action, request.session_id or "", request.args, limit=limit
            )
        except FinishRefused as error:
            return refused(str(error))  # as the local review screen shows it
        return ok(**detail)

    def _answer(
        self,
        request: ControlRequest,
        ok: Callable[..., ControlReply],
        refused: Callable[..., ControlReply],
    ) -> ControlReply:
        if self.questions.answerer is not None:
            return refused("this host answers its permission requests itself (--approve allow|deny)")
        try:
            args = AnswerArgs.model_validate(request.args)
        except ValidationError as error:
            return refused(f"answer: {_first_error(error)}")
        answer = PermissionAnswer(args.decision, remember=args.remember, reason=args.reason)
        try:
            by = request.by.model_dump() if request.by is not None else None
            first = self.questions.answer(request.session_id or "", args.request_id, answer, by)
        except LookupError as error:
            return refused(str(error))
        if first is not None:
            already = AlreadyAnswered.model_validate(asdict(first))
            return refused(already.sentence(), **already.model_dump(by_alias=True))
        return ok(decision=args.decision, remember=args.remember)

    async def stop(self) -> None:
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._subscription.unsubscribe(), 2.0)
            self._subscription = None
        for task in list(self._tasks):
            task.cancel()


def _waiting(request: PermissionRequest) -> WaitingRequest:
    return WaitingRequest(
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


def _first_error(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    return str(error).splitlines()[0] if str(error) else type(error).__name__
