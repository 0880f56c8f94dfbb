"""`RemoteFinishing`: finishing a session's work on its host, for an attached dashboard.

The host carries out each finishing command (`review`, `turns`, `commit`, `merge`, `discard`,
`rewind_plan`, `rewind`, `closed`, `reopen`: `agent_tui.runtime.commands`) through its
workbench's own `Finishing` methods (`CommandExecutor`); an attached dashboard sends them through
`RemoteFinishing`, which is a `Finishing` too, so the review screen and the reopen list work the
same on either side. The results are the runtime's own frozen dataclasses, carried in the reply's
`detail` as pydantic dumps them (`command_executor.Adapters`) and checked by pydantic when read.

Invariants:
- a review's reply is bounded on the host (`command_executor.bounded`): files beyond the bound
  keep their names and counts, their diffs cut or left out with a marker; `Review.cut` says so;
- a rewind plan crosses without the files' old bytes (they stay with the host, which plans again
  when it rewinds); `PlannedFile.existed` still says which files a rewind removes;
- a repeated request id is answered once by the host (`ControlServer`): a commit, merge,
  discard, rewind or reopen retried after a timeout is done once; the reads are read again;
- an action on a session whose host is unreachable or gone, or while the bus is away, is
  refused at once with the sentence `refusal` gives, never sent; a host that does not answer in
  time is a `FinishRefused` saying the retry is the same request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar

from pydantic import TypeAdapter, ValidationError

from agent_tui.bus.remote import BusCommands, RemoteOutcome
from agent_tui.events import Event
from agent_tui.runtime import commands as c
from agent_tui.runtime.command_executor import Adapters
from agent_tui.runtime.finishing import (
    CommitRequest,
    DiscardRequest,
    FinishRefused,
    MergeRequest,
    RewindRequest,
    TurnFacts,
)
from agent_tui.runtime.review import CommitResult, MergeResult, Review
from agent_tui.runtime.rewind import RewindPlan, RewindResult
from agent_tui.runtime.session_dirs import StoredSession

FINISH_TIMEOUT_S: Final = 60.0
"""How long a dashboard waits for a host to finish (a merge of a big branch takes a while)."""
T = TypeVar("T")


class RemoteFinishing:
    """`Finishing` for an attached dashboard: each action asked of the session's host.

    Args:
        control: the dashboard's control requests.
        host_of: the host that publishes a session (None: none known).
        refusal: why an action on a session (None: on no session in particular) cannot be sent
            now (its host unreachable or gone, the bus away), or None.
        hosts: the hosts that can be asked now (for the closed sessions of all of them).
        timeout: seconds to wait for a host's reply.
    """

    def __init__(
        self,
        control: BusCommands,
        *,
        host_of: Callable[[str], str | None],
        refusal: Callable[[str | None], str | None],
        hosts: Callable[[], list[str]],
        timeout: float = FINISH_TIMEOUT_S,
    ) -> None:
        self.control = control
        self.host_of = host_of
        self.refusal = refusal
        self.hosts = hosts
        self.timeout = timeout
        self._closed_on: dict[str, str] = {}  # a closed session listed → its host

    async def review(self, session_id: str) -> Review:
        return await self._read(Adapters.review, c.Review(sessionId=session_id), "review")

    async def turns(self, session_id: str) -> tuple[TurnFacts, ...]:
        return await self._read(Adapters.turns, c.Turns(sessionId=session_id), "turns")

    async def commit(self, request: CommitRequest) -> CommitResult:
        command = c.Commit(sessionId=request.session_id, message=request.message)
        return await self._read(Adapters.commit, command, "commit")

    async def merge(self, request: MergeRequest) -> MergeResult:
        command = c.Merge(sessionId=request.session_id, message=request.message)
        return await self._read(Adapters.merge, command, "merge")

    async def discard(self, request: DiscardRequest) -> None:
        await self._ask(c.Discard(sessionId=request.session_id))

    async def rewind_plan(self, request: RewindRequest) -> RewindPlan:
        command = c.RewindPlan(sessionId=request.session_id, turnId=request.turn_id)
        return await self._read(Adapters.plan, command, "plan")

    async def rewind(self, request: RewindRequest) -> RewindResult:
        command = c.Rewind(
            sessionId=request.session_id, turnId=request.turn_id, allowProtected=request.allow_protected
        )
        return await self._read(Adapters.rewind, command, "rewind")

    async def closed(self) -> list[StoredSession]:
        """The closed sessions of every host `hosts` names, newest first. A host that refuses or
        does not answer is passed over; when no host answered, its reasons are the refusal."""
        refusal = self.refusal(None)
        if refusal is not None:
            raise FinishRefused(refusal)
        found: list[StoredSession] = []
        answered = False
        problems: list[str] = []
        for host in self.hosts():
            outcome = await self.control.send(host, c.Closed(), timeout=self.timeout)
            try:
                sessions = _understood(
                    Adapters.closed, _checked(outcome, "list the closed sessions"), "closed", host
                )
            except FinishRefused as error:
                problems.append(str(error))
                continue
            answered = True
            self._closed_on.update((session.session_id, host) for session in sessions)
            found.extend(sessions)
        if problems and not answered:
            raise FinishRefused(" ".join(problems))
        found.sort(key=lambda session: session.session_id)
        found.sort(key=lambda session: session.last_ts, reverse=True)
        return found

    async def reopen(self, session_id: str, fold: Callable[[Event], None]) -> list[str]:
        """Reopen it on its host; its events reach this dashboard by the stream, not `fold`."""
        return await self._read(Adapters.problems, c.Reopen(sessionId=session_id), "problems")

    async def _read(self, adapter: TypeAdapter[T], command: c.Command, key: str) -> T:
        host, detail = await self._ask(command)
        return _understood(adapter, detail, key, host)

    async def _ask(self, command: c.Command) -> tuple[str, dict[str, Any]]:
        """The host's `detail`, or why not as a `FinishRefused` (refused here, or by the host)."""
        session_id = getattr(command, "session_id", "")
        known = self.host_of(session_id)
        host = known or self._closed_on.get(session_id)  # a closed one the stream no longer has
        refusal = self.refusal(session_id if known else None)
        if refusal is not None or host is None:
            raise FinishRefused(refusal or "No host publishes that session.")
        outcome = await self.control.send(host, command, timeout=self.timeout)
        return host, _checked(outcome, command.verb.replace("_", " "))


def _understood(adapter: TypeAdapter[T], detail: dict[str, Any], key: str, host: str) -> T:
    try:
        return adapter.validate_python(detail[key])
    except (KeyError, ValidationError):
        raise FinishRefused(f"Host {host} sent a reply that is not understood ({key}).") from None


def _checked(outcome: RemoteOutcome, what: str) -> dict[str, Any]:
    """The reply's detail, or the refusal (or the silence) as a `FinishRefused`."""
    if not outcome.answered or not outcome.ok:
        raise FinishRefused(outcome.sentence(what))
    return outcome.detail
