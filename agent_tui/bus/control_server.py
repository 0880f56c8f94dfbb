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
- a request's command is carried out by the host's `CommandExecutor` (the workbench on
  `serve`, the scenario's engine on `run --bus`), which answers its `Reply`; a command that does
  not validate is refused as "VERB: FIELD: why" (the union's own checks are the wire's);
- a read (`commands.READS`: a review, the turns, a rewind plan, the closed sessions, the
  sessions) is not kept by its id: its reply may be big, and reading again changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_tui.bus.host_link import BusLink
from agent_tui.bus.protocol import (
    REPLIES_KEPT,
    Caller,
    ControlReply,
    caller_user,
    host_controls,
    inbox_prefix,
)
from agent_tui.runtime.command_executor import CommandExecutor
from agent_tui.runtime.commands import COMMAND, READS


class _Envelope(BaseModel):
    """A control request before its command is checked (so a bad one is refused by its id)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    id: str = Field(min_length=1, max_length=128)
    by: Caller
    command: dict[str, Any]


class ControlServer:
    def __init__(
        self,
        host: str,
        link: BusLink,
        executor: CommandExecutor,
        *,
        say: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.host = host
        self.link = link
        self.executor = executor
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
            request = _Envelope.model_validate_json(data)
        except (ValidationError, ValueError) as error:
            return ControlReply(id="", ok=False, message=f"not a control request: {_first_error(error)}")
        key = (user, request.id)
        kept = self._replies.get(key)
        if kept is not None:
            return kept
        running = self._handling.get(key)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[ControlReply] = asyncio.get_running_loop().create_future()
        self._handling[key] = future
        verb = str(request.command.get("verb"))
        try:
            command = COMMAND.validate_python(request.command)
        except ValidationError as error:
            reply = ControlReply(id=request.id, ok=False, message=f"{verb}: {_first_error(error, skip=1)}")
        else:
            by = request.by.model_copy(update={"user": user})
            done = await self.executor.send(command, by=by)
            reply = ControlReply(id=request.id, **done.model_dump())
        finally:
            self._handling.pop(key, None)
        if verb not in READS:
            self._replies[key] = reply
        while len(self._replies) > REPLIES_KEPT:
            self._replies.popitem(last=False)
        future.set_result(reply)
        return reply

    async def stop(self) -> None:
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._subscription.unsubscribe(), 2.0)
            self._subscription = None
        for task in list(self._tasks):
            task.cancel()


def _first_error(error: Exception, *, skip: int = 0) -> str:
    """The first problem of `error` in a line (`skip`: leading parts of its place left out)."""
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())[skip:])
        return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))
    return str(error).splitlines()[0] if str(error) else type(error).__name__
