"""`RemoteWorkbench`: the workbench's controls, asked of a host over its control subject.

An attached dashboard runs no agent: every action (answer a request, stop, stop a subtree, stop
all, steer, follow up, start an agent, close a session, set a budget, publish a session's events again, and the finishing actions
`remote_finishing.RemoteFinishing` asks through `request`) is a `ControlRequest` sent to the host
that runs the session, on `control_subject(host, user)` (the caller's own user suffix, which the
server lets only that user publish on), answered by one `ControlReply`.

Invariants:
- every request carries an id; the same action on the same target with the same arguments,
  asked again while its earlier request got no reply (a timeout, or no host listening), reuses
  that id, so the host, which treats a repeated id as the same request, never does it twice
  (a follow-up sent once, one agent started); once a reply came, the next ask is a new request;
- a host that does not reply within `timeout` seconds gives a `RemoteOutcome` with
  `answered=False` (never an exception): the action is retriable and the caller says so;
- a reply that is not a `ControlReply`, or answers another id, is an outcome with `ok=False`
  whose message says the host's reply was not understood;
- nothing here folds events or reads the screen: what a control did shows up in the stream.
"""

from __future__ import annotations

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
    ControlAction,
    ControlReply,
    ControlRequest,
    control_subject,
)
from agent_tui.costs.budgets import BudgetLimit
from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.runtime.agent_requests import AgentSpec


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


class RemoteWorkbench:
    """The controls of every host on the bus (see the module docstring).

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

    def pending_id(
        self, host: str, action: ControlAction, session_id: str | None, args: dict[str, Any]
    ) -> str | None:
        """The id a retry of this action would carry (None: no request of it waits)."""
        return self._unanswered.get(_identity(host, action, session_id, args))

    async def request(
        self,
        host: str,
        action: ControlAction,
        session_id: str | None = None,
        args: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> RemoteOutcome:
        """Ask `host` for `action`; wait `timeout` seconds for its reply (default: `self.timeout`)."""
        args = dict(args or {})
        identity = _identity(host, action, session_id, args)
        request_id = self._unanswered.get(identity)
        if request_id is None:
            request_id = f"{self.caller.dashboard}-{secrets.token_hex(8)}"
            self._unanswered[identity] = request_id
        request = ControlRequest(
            id=request_id, action=action, by=self.caller, sessionId=session_id, args=args
        )
        body = request.model_dump_json(by_alias=True, exclude_none=True).encode()
        try:
            message = await self._connection.request(
                control_subject(host, self.caller.user),
                body,
                timeout=timeout if timeout is not None else self.timeout,
            )
        except (NatsTimeout, NoRespondersError, ConnectionClosedError, TimeoutError):
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

    # -- the controls ----------------------------------------------------------------------------
    async def answer(
        self, host: str, session_id: str, request_id: str, answer: PermissionAnswer
    ) -> RemoteOutcome:
        args: dict[str, Any] = {
            "requestId": request_id,
            "decision": answer.decision,
            "remember": answer.remember,
        }
        if answer.reason:
            args["reason"] = answer.reason
        return await self.request(host, "answer", session_id, args)

    async def stop(self, host: str, session_id: str) -> RemoteOutcome:
        return await self.request(host, "stop", session_id)

    async def stop_subtree(self, host: str, session_id: str) -> RemoteOutcome:
        return await self.request(host, "stop_subtree", session_id)

    async def stop_all(self, host: str) -> RemoteOutcome:
        return await self.request(host, "stop_all")

    async def steer(self, host: str, session_id: str, text: str) -> RemoteOutcome:
        return await self.request(host, "steer", session_id, {"text": text})

    async def follow_up(self, host: str, session_id: str, text: str) -> RemoteOutcome:
        return await self.request(host, "follow_up", session_id, {"text": text})

    async def new_agent(self, host: str, spec: AgentSpec) -> RemoteOutcome:
        args: dict[str, Any] = {"prompt": spec.prompt, "cwd": str(spec.cwd), "ownWorktree": spec.own_worktree}
        for key, value in (("name", spec.name), ("model", spec.model), ("acp", spec.acp)):
            if value:
                args[key] = value
        if spec.budget is not None:
            args.update({f"budget{key.capitalize()}": value for key, value in spec.budget.payload().items()})
        return await self.request(host, "new_agent", None, args)

    async def set_budget(self, host: str, session_id: str, budget: BudgetLimit | None) -> RemoteOutcome:
        """The whole budget of the session's tree (None: none)."""
        return await self.request(host, "set_budget", session_id, budget.payload() if budget else {})

    async def republish(self, host: str, session_id: str, first: int, last: int) -> RemoteOutcome:
        """The session's events `first`..`last` published again from the host's log."""
        return await self.request(host, "republish", session_id, {"first": first, "last": last})

    async def close(self, host: str, session_id: str, *, remove_worktree: bool = False) -> RemoteOutcome:
        return await self.request(host, "close", session_id, {"removeWorktree": remove_worktree})


def _identity(host: str, action: str, session_id: str | None, args: dict[str, Any]) -> str:
    return json.dumps([host, action, session_id, args], sort_keys=True, default=str)
