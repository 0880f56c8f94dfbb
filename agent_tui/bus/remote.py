"""`BusCommands`: a `Command` sent to a host over its control subject.

An attached dashboard runs no agent: every command it gives (`agent_tui.runtime.commands`: answer
a request, stop, steer, start an agent, set a budget, finish a session's work, ...) is a
`ControlRequest` sent to the host that runs the session, on `control_subject(host, user)` (the
caller's own user suffix, which the server lets only that user publish on), answered by one
`ControlReply`.

Invariants:
- every request carries an id; the same command to the same host,
  asked again while its earlier request got no reply (a timeout, or no host listening), reuses
  that id, so the host, which treats a repeated id as the same request, never does it twice
  (a follow-up sent once, one agent started); once a reply came, the next ask is a new request;
- a host that does not reply within `timeout` seconds gives a `RemoteOutcome` with
  `answered=False` (never an exception): the action is retriable and the caller says so; a
  request that finds no responder is sent again while that time lasts (a host just up is
  present before it serves its control subject);
- a reply that is not a `ControlReply`, or answers another id, is an outcome with `ok=False`
  whose message says the host's reply was not understood;
- nothing here folds events or reads the screen: what a control did shows up in the stream.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from nats.aio.client import Client
from nats.errors import ConnectionClosedError, NoRespondersError
from nats.errors import TimeoutError as NatsTimeout
from pydantic import ValidationError

from agent_tui.bus.protocol import (
    DEFAULT_CONTROL_TIMEOUT_S,
    Caller,
    ControlReply,
    ControlRequest,
    control_subject,
)
from agent_tui.runtime.commands import Command, Reply

NO_RESPONDER_RETRY_S = 0.1
"""How soon a request that found no responder is sent again, while its time lasts."""


@dataclass(frozen=True)
class RemoteOutcome:
    """What became of one control request."""

    host: str
    request_id: str
    answered: bool
    """False: the host did not reply in time (or none listens): retry, the id stays the same."""
    ok: bool = False
    message: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def sentence(self, what: str) -> str:
        """One line for the user about `what` (`stop lead`)."""
        if not self.answered:
            return f"Host {self.host} did not answer ({what}); try again: the retry is the same request."
        if self.ok:
            return self.message or f"{what}: done on {self.host}."
        return self.message or f"{what}: host {self.host} refused."

    def reply(self, what: str) -> Reply:
        """As the `Reply` of the command (`what`: its words for a refusal or a silence)."""
        if self.answered and self.ok:
            return Reply(ok=True, message=self.message, detail=self.detail)
        return Reply(ok=False, message=self.sentence(what), detail=self.detail)


class BusCommands:
    """Commands to every host on the bus (see the module docstring).

    Args:
        connection: the dashboard's connection.
        caller: who asks (recorded by the host with what it commits).
        timeout: seconds to wait for a host's reply.
    """

    def __init__(
        self, connection: Client, caller: Caller, *, timeout: float = DEFAULT_CONTROL_TIMEOUT_S
    ) -> None:
        self._connection = connection
        self.caller = caller
        self.timeout = timeout
        self._unanswered: dict[str, str] = {}  # what was asked → the id of its unanswered request

    async def send(self, host: str, command: Command, *, timeout: float | None = None) -> RemoteOutcome:
        """Ask `host` to carry out `command`; wait `timeout` seconds for its reply (default:
        `self.timeout`)."""
        identity = _identity(host, command)
        request_id = self._unanswered.get(identity)
        if request_id is None:
            request_id = f"{self.caller.dashboard}-{secrets.token_hex(8)}"
            self._unanswered[identity] = request_id
        request = ControlRequest(id=request_id, by=self.caller, command=command)
        body = request.model_dump_json(by_alias=True, exclude_none=True).encode()
        wait = timeout if timeout is not None else self.timeout
        deadline = asyncio.get_running_loop().time() + wait
        while True:
            left = deadline - asyncio.get_running_loop().time()
            try:
                message = await self._connection.request(
                    control_subject(host, self.caller.user), body, timeout=max(left, 0.001)
                )
                break
            except NoRespondersError:
                # A host that has just come up is present before its control subject is served:
                # within the time given, that is a host slow to answer, not one that is gone.
                if left <= NO_RESPONDER_RETRY_S:
                    return RemoteOutcome(host, request_id, answered=False)
                await asyncio.sleep(NO_RESPONDER_RETRY_S)
            except (NatsTimeout, ConnectionClosedError, TimeoutError):
                return RemoteOutcome(host, request_id, answered=False)
        self._unanswered.pop(identity, None)
        try:
            reply = ControlReply.model_validate_json(message.data)
        except ValidationError:
            return RemoteOutcome(
                host, request_id, True, False, f"Host {host} sent a reply that is not understood."
            )
        if reply.id != request_id:
            return RemoteOutcome(host, request_id, True, False, f"Host {host} answered another request.")
        return RemoteOutcome(host, request_id, True, reply.ok, reply.message, dict(reply.detail))


def _identity(host: str, command: Command) -> str:
    return json.dumps([host, command.model_dump(mode="json", by_alias=True)], sort_keys=True)
