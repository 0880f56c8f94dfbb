"""Finishing a session's work over the bus: review, commit, merge, discard, rewind, reopen.

The host runs each of these through its workbench's own `Finishing` methods
(`perform_finishing`, called by the `ControlServer`); an attached dashboard calls them through
`RemoteFinishing`, which is a `Finishing` too, so the review screen and the reopen list work
the same on either side. The results are the runtime's own frozen dataclasses (`Review`,
`CommitResult`, `MergeResult`, `RewindPlan`, `RewindResult`, `StoredSession`, `TurnFacts`),
carried in the reply's `detail` as pydantic dumps them and checked by pydantic when read.

Invariants:
- the actions and their arguments: `review`, `turns`, `discard`, `reopen` take none;
  `commit` a `CommitArgs`, `merge` a `MergeArgs`, `rewind_plan` and `rewind` a `RewindArgs`;
  `closed` needs no session. Each is done on the host by the workbench method of the same
  name, with its safety rules (a merge only into a clean checkout, conflicts found before
  anything is written, no hook run); a refusal is the reply's `message`, `ok: false`;
- a review's reply is bounded (`review_limit`: at most `REVIEW_REPLY_BYTES`, and half the
  server's largest message): files beyond the bound keep their names and counts, their diffs
  cut at a line or left out with a marker in the diff's text; files whose names no longer fit
  are counted in `more_files`; and `Review.cut` says what was cut in a sentence;
- a rewind plan crosses without the files' old bytes (they stay with the host, which plans again
  when it rewinds); `PlannedFile.existed` still says which files a rewind removes;
- a repeated request id is answered once by the host (`ControlServer`): a commit, merge,
  discard, rewind or reopen retried after a timeout is done once; the reads (`review`,
  `turns`, `rewind_plan`, `closed`) are read again instead of kept;
- on the dashboard, an action on a session whose host is unreachable or gone, or while the bus
  is away, is refused at once with the sentence `refusal` gives, never sent; a host that does
  not answer in time is a `FinishRefused` saying the retry is the same request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from agent_tui.bus.protocol import ControlAction
from agent_tui.bus.remote import RemoteOutcome, RemoteWorkbench
from agent_tui.events import Event
from agent_tui.runtime.finishing import (
    CommitRequest,
    DiscardRequest,
    Finishing,
    FinishRefused,
    MergeRequest,
    RewindRequest,
    TurnFacts,
)
from agent_tui.runtime.review import CommitResult, MergeResult, Review, ReviewFile
from agent_tui.runtime.rewind import RewindPlan, RewindResult
from agent_tui.runtime.session_dirs import StoredSession

FINISHING_ACTIONS: Final = frozenset(
    {"review", "turns", "commit", "merge", "discard", "rewind_plan", "rewind", "closed", "reopen"}
)
READS: Final = frozenset({"review", "turns", "rewind_plan", "closed"})
"""Finishing actions that change nothing: a repeat is read again rather than kept."""
REVIEW_REPLY_BYTES = 512 * 1024
"""The most a review's reply carries of diffs and texts (a NATS server takes 1 MB a message by
default)."""
FINISH_TIMEOUT_S = 60.0
"""How long a dashboard waits for a host to finish (a merge of a big branch takes a while)."""
_SMALLEST_CUT = 2_000
"""A diff cut to less than this is left out whole instead."""
_ENTRY_BYTES = 200
"""What a file of a review takes in the reply besides its name and texts (status, counts, keys)."""
T = TypeVar("T")

_REVIEW: TypeAdapter[Review] = TypeAdapter(Review)
_TURNS: TypeAdapter[tuple[TurnFacts, ...]] = TypeAdapter(tuple[TurnFacts, ...])
_COMMIT: TypeAdapter[CommitResult] = TypeAdapter(CommitResult)
_MERGE: TypeAdapter[MergeResult] = TypeAdapter(MergeResult)
_PLAN: TypeAdapter[RewindPlan] = TypeAdapter(RewindPlan)
_REWOUND: TypeAdapter[RewindResult] = TypeAdapter(RewindResult)
_CLOSED: TypeAdapter[list[StoredSession]] = TypeAdapter(list[StoredSession])
_PROBLEMS: TypeAdapter[list[str]] = TypeAdapter(list[str])


class _Args(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class CommitArgs(_Args):
    message: str


class MergeArgs(_Args):
    message: str | None = None


class RewindArgs(_Args):
    turn_id: str = Field(alias="turnId", min_length=1)
    allow_protected: bool = Field(default=False, alias="allowProtected")


# -- the host's side -------------------------------------------------------------------------


def review_limit(max_payload: int | None) -> int:
    """The bound of a review's reply on a server that takes `max_payload` bytes a message."""
    return REVIEW_REPLY_BYTES if not max_payload else min(REVIEW_REPLY_BYTES, max_payload // 2)


async def perform_finishing(
    finishing: Finishing, action: str, session_id: str, args: dict[str, Any], *, limit: int
) -> dict[str, Any]:
    """Do one finishing action through `finishing` (the host's workbench); the reply's detail.

    Raises:
        FinishRefused: the workbench refused, or the arguments are not the action's.
    """
    try:
        if action == "review":
            return {
                "review": _REVIEW.dump_python(bounded(await finishing.review(session_id), limit), mode="json")
            }
        if action == "turns":
            return {"turns": _TURNS.dump_python(await finishing.turns(session_id), mode="json")}
        if action == "commit":
            message = CommitArgs.model_validate(args).message
            done = await finishing.commit(CommitRequest(session_id, message))
            return {"commit": _COMMIT.dump_python(done, mode="json")}
        if action == "merge":
            merged = await finishing.merge(MergeRequest(session_id, MergeArgs.model_validate(args).message))
            return {"merge": _MERGE.dump_python(merged, mode="json")}
        if action == "discard":
            await finishing.discard(DiscardRequest(session_id))
            return {}
        if action in ("rewind_plan", "rewind"):
            rewind = RewindArgs.model_validate(args)
            request = RewindRequest(session_id, rewind.turn_id, allow_protected=rewind.allow_protected)
            if action == "rewind":
                return {"rewind": _REWOUND.dump_python(await finishing.rewind(request), mode="json")}
            plan = await finishing.rewind_plan(request)
            kept = tuple(dataclasses.replace(item, before=None) for item in plan.files)  # bytes stay here
            return {"plan": _PLAN.dump_python(dataclasses.replace(plan, files=kept), mode="json")}
        if action == "closed":
            return {"closed": _CLOSED.dump_python(await finishing.closed(), mode="json")}
        if action == "reopen":
            return {"problems": await finishing.reopen(session_id, lambda _event: None)}
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise FinishRefused(f"{action}: {where}: {first.get('msg')}") from None
    raise FinishRefused(f"{action} is not a finishing action")


def bounded(review: Review, limit: int) -> Review:
    """`review` with at most about `limit` bytes of names, diffs and texts (see the module
    contract): each file whole while it fits, then its plain diff without the texts, then its
    diff cut at a line with a marker (or the marker alone); files whose very names no longer fit
    are counted in `more_files`."""
    marker = f"[diff not sent: the review reached its {_amount(limit)} bound for the bus]"
    room = limit
    files: list[ReviewFile] = []
    cut = 0
    for item in review.files:
        entry = _size(item.path) + _ENTRY_BYTES
        if room < entry + _size(marker):
            break
        room -= entry
        whole = _size(item.diff) + _size(item.old_text) + _size(item.new_text)
        if whole <= room:
            files.append(item)
            room -= whole
            continue
        diff = _size(item.diff)
        if diff <= room:  # the plain diff, without the texts the highlighted view is drawn from
            files.append(dataclasses.replace(item, old_text=None, new_text=None))
            room -= diff
            continue
        cut += 1
        text = _cut(item.diff, room - _size(marker) - 8) if room > _SMALLEST_CUT else ""
        shown = f"{text}\n{marker}\n" if text else marker
        files.append(dataclasses.replace(item, diff=shown, old_text=None, new_text=None))
        room -= _size(shown)
    left_out = len(review.files) - len(files)
    if not cut and not left_out:
        return review
    said = []
    if cut:
        said.append(f"{cut} file's diff was cut" if cut == 1 else f"{cut} files' diffs were cut")
    if left_out:
        said.append(f"{left_out} more {'file is' if left_out == 1 else 'files are'} only counted")
    place = "worktree" if review.kind == "worktree" else "directory"
    sentence = (
        f"{' and '.join(said)} to keep the reply under {_amount(limit)}; "
        f"the whole change is on the host, in its {place}"
    )
    return dataclasses.replace(
        review, files=tuple(files), more_files=review.more_files + left_out, cut=sentence
    )


def _amount(limit: int) -> str:
    return f"{limit // 1024:,} KB" if limit % 1024 == 0 else f"{limit:,} bytes"


def _size(text: str | None) -> int:
    return 0 if text is None else len(orjson.dumps(text))


def _cut(text: str, room: int) -> str:
    """A start of `text` that ends at a line's end and whose JSON takes at most `room` bytes
    (found by halving: about half the room, at least)."""
    end = min(len(text), max(room, 0) // 2)
    while end > 0 and _size(text[:end]) > room:
        end //= 2
    line_end = text.rfind("\n", 0, end)
    return text[:line_end] if line_end > 0 else text[:end]


# -- the dashboard's side --------------------------------------------------------------------


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
        control: RemoteWorkbench,
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
        return await self._read(_REVIEW, "review", session_id, "review")

    async def turns(self, session_id: str) -> tuple[TurnFacts, ...]:
        return await self._read(_TURNS, "turns", session_id, "turns")

    async def commit(self, request: CommitRequest) -> CommitResult:
        args = {"message": request.message}
        return await self._read(_COMMIT, "commit", request.session_id, "commit", args)

    async def merge(self, request: MergeRequest) -> MergeResult:
        args = {"message": request.message} if request.message else {}
        return await self._read(_MERGE, "merge", request.session_id, "merge", args)

    async def discard(self, request: DiscardRequest) -> None:
        await self._ask("discard", request.session_id)

    async def rewind_plan(self, request: RewindRequest) -> RewindPlan:
        args = {"turnId": request.turn_id}
        return await self._read(_PLAN, "rewind_plan", request.session_id, "plan", args)

    async def rewind(self, request: RewindRequest) -> RewindResult:
        args = {"turnId": request.turn_id, "allowProtected": request.allow_protected}
        return await self._read(_REWOUND, "rewind", request.session_id, "rewind", args)

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
            outcome = await self.control.request(host, "closed", None, {}, timeout=self.timeout)
            try:
                sessions = _understood(_CLOSED, _checked(outcome, "list the closed sessions"), "closed", host)
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
        return await self._read(_PROBLEMS, "reopen", session_id, "problems")

    async def _read(
        self,
        adapter: TypeAdapter[T],
        action: ControlAction,
        session_id: str,
        key: str,
        args: dict[str, Any] | None = None,
    ) -> T:
        host, detail = await self._ask(action, session_id, args)
        return _understood(adapter, detail, key, host)

    async def _ask(
        self, action: ControlAction, session_id: str, args: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """The host's `detail`, or why not as a `FinishRefused` (refused here, or by the host)."""
        known = self.host_of(session_id)
        host = known or self._closed_on.get(session_id)  # a closed one the stream no longer has
        refusal = self.refusal(session_id if known else None)
        if refusal is not None or host is None:
            raise FinishRefused(refusal or "No host publishes that session.")
        outcome = await self.control.request(host, action, session_id, args or {}, timeout=self.timeout)
        return host, _checked(outcome, action.replace("_", " "))


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
