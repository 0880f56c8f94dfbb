"""`CommandExecutor`: the host's one place where a `Command` is carried out.

Whoever sent it (a key on the local dashboard, a control request on the bus), a command is done
here, against the workbench (`serve`, the local dashboard) or, for a scenario run on the bus
(`run --bus`), against its engine alone.

Invariants:
- one branch per verb (`_<verb>`), each doing the work through its one owner: the engine
  (stop, steer, budgets), the workbench (send, new agents, closing, finishing), the host's open
  questions (`engine.questions`), the bus's own `BusVerbs` (sessions, republish); adding a verb is one
  variant, one branch, one test (`tests/test_commands.py` checks every variant has its branch);
- a refusal is a `Reply` with `ok: false` and one sentence (the workbench's, the engine's), never
  an exception; an unexpected failure is `"<verb> failed: <what>"`;
- an `answer` goes to the engine's `questions` (refused when an answerer of its own answers them); the first answer wins, a later one is refused with
  "already answered … by … at …" and `AlreadyAnswered` as its detail;
- finishing results are the runtime's dataclasses as pydantic dumps them (`Adapters`), read back
  by any front end with `read_result`; a review is bounded to `review_limit` bytes when one is
  given (a reply on the bus), see `bounded`; a reopened session's stored events go to `reopened`
  (the local dashboard's state; on the bus they reach a dashboard by the stream);
- a terminal session (a Claude Code or Codex session run in the user's own terminal, followed by
  `terminal`) is stopped through that port; a follow-up, a steer or a budget for it is refused
  with `events.driven_from_its_terminal`;
- a host without a workbench refuses what only a workbench does (new agents, closing, finishing,
  the project's rules) with a sentence naming `agent-tui serve`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import orjson
from pydantic import TypeAdapter, ValidationError

from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.errors import TurnConflict, UnknownSession
from agent_tui.engine.permission_rules import PermissionRulesError
from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events import Event
from agent_tui.events.clients import driven_from_its_terminal, terminal_name
from agent_tui.runtime import commands as c
from agent_tui.runtime.agent_requests import AgentSpec, AgentStartError, BudgetRefused, SendRefused
from agent_tui.runtime.external_agents import AcpPermissionAnswer
from agent_tui.runtime.finishing import FinishRefused, TurnFacts
from agent_tui.runtime.review import CommitResult, MergeResult, Review, ReviewFile
from agent_tui.runtime.rewind import RewindPlan, RewindResult
from agent_tui.runtime.session_dirs import StoredSession
from agent_tui.runtime.terminal_sessions import TerminalSessions
from agent_tui.runtime.workbench import Workbench
from agent_tui.turns import Attached

T = TypeVar("T")


class Refused(Exception):
    """The host will not do what was asked; the message says why in one sentence."""


class BusVerbs(Protocol):
    """What only a host on the bus does: list its sessions, publish logged events again."""

    def sessions(self) -> dict[str, Any]: ...
    async def republish(self, session_id: str, first: int, last: int | None) -> tuple[int, int]: ...


class Adapters:
    """How each finishing result crosses as JSON (and is read back on the other side)."""

    review: TypeAdapter[Review] = TypeAdapter(Review)
    turns: TypeAdapter[tuple[TurnFacts, ...]] = TypeAdapter(tuple[TurnFacts, ...])
    commit: TypeAdapter[CommitResult] = TypeAdapter(CommitResult)
    merge: TypeAdapter[MergeResult] = TypeAdapter(MergeResult)
    plan: TypeAdapter[RewindPlan] = TypeAdapter(RewindPlan)
    rewind: TypeAdapter[RewindResult] = TypeAdapter(RewindResult)
    closed: TypeAdapter[list[StoredSession]] = TypeAdapter(list[StoredSession])
    problems: TypeAdapter[list[str]] = TypeAdapter(list[str])


def _dump(adapter: TypeAdapter[T], value: T) -> Any:
    return adapter.dump_python(value, mode="json")


def read_result(reply: c.Reply, adapter: TypeAdapter[T], key: str) -> T:
    """What a finishing command's `reply` carries under `key`, as the runtime's own value.

    Raises:
        FinishRefused: the reply's refusal (its sentence), or a reply that is not understood.
    """
    if not reply.ok:
        raise FinishRefused(reply.message or "the host refused")
    try:
        return adapter.validate_python(reply.detail[key])
    except (KeyError, ValidationError):
        raise FinishRefused(f"The host sent a reply that is not understood ({key}).") from None


class CommandExecutor:
    """Carries out commands on one host (see the module docstring).

    Args:
        engine: the host's engine.
        workbench: its workbench (None: a scenario run, which starts, closes and finishes nothing).
        project: the directory a new agent's relative `cwd` is relative to.
        bus: the bus's own verbs (None: not on a bus).
        review_limit: the most bytes a review's reply carries (None: unbounded).
        reopened: sees a reopened session's stored events (None: nobody here folds them).
        terminal: the terminal sessions this host follows (None: none; may be set later).
    """

    def __init__(
        self,
        engine: SessionEngine,
        *,
        workbench: Workbench | None = None,
        project: Path | None = None,
        bus: BusVerbs | None = None,
        review_limit: Callable[[], int] | None = None,
        reopened: Callable[[Event], None] | None = None,
        terminal: TerminalSessions | None = None,
    ) -> None:
        self.engine = engine
        self.terminal = terminal
        self.workbench = workbench
        self.project = project
        self.bus = bus
        self.review_limit = review_limit
        self.reopened = reopened or (lambda _event: None)

    def branch(self, verb: str) -> Callable[[Any, c.Caller | None], Awaitable[c.Reply]] | None:
        """The branch that carries out `verb` (None: none does)."""
        return getattr(self, f"_{verb}", None)

    async def send(
        self, command: c.Command, host: str | None = None, *, by: c.Caller | None = None
    ) -> c.Reply:
        """Carry out `command`, asked by `by` (None: this process's own user); `host` is a
        `CommandClient`'s, and this is the host."""
        branch = self.branch(command.verb)
        if branch is None:
            return c.refused(f"unknown action {command.verb}")
        try:
            return await branch(command, by)
        except (Refused, FinishRefused, BudgetRefused, AgentStartError, PermissionRulesError) as error:
            return c.refused(str(error))
        except Exception as error:  # a bug in a branch: said, and the host goes on
            return c.refused(f"{command.verb} failed: {error}")

    # -- what a branch needs ---------------------------------------------------------------------
    def _known(self, session_id: str) -> None:
        try:
            self.engine.session(session_id)
        except UnknownSession:
            raise Refused(f"no session {session_id} runs on this host") from None

    def _not_terminal(self, session_id: str) -> None:
        """Refuse what a terminal session cannot take (its CLI reads its own terminal only)."""
        if self.terminal is not None and self.terminal.runs(session_id):
            info = self.engine.session(session_id)
            raise Refused(driven_from_its_terminal(terminal_name(info.client, info.label)))

    async def _stopped(self, session_id: str, by: c.Caller | None, stop: Callable[[str], int]) -> c.Reply:
        """`stop(session_id)`'s count of stopped turns; a terminal session is stopped through
        its own port, whatever `stop` is (its CLI stops its own sub-agents)."""
        self._known(session_id)
        if self.terminal is not None and self.terminal.runs(session_id):
            return c.done(stopped=await self.terminal.stop(session_id, by=by.text() if by else None))
        return c.done(stopped=stop(session_id))

    def _bus(self) -> BusVerbs:
        if self.bus is None:
            raise Refused("this process is not on a bus")
        return self.bus

    def _bench(self, what: str) -> Workbench:
        if self.workbench is None:
            raise Refused(f"this host runs a scenario: {what} is for `agent-tui serve`'s sessions")
        return self.workbench

    # -- the branches ------------------------------------------------------------------------------
    async def _answer(self, command: c.Answer, by: c.Caller | None) -> c.Reply:
        questions = self.engine.questions
        if questions.answerer is not None:
            raise Refused("this host answers its permission requests itself (--approve allow|deny)")
        answer = (
            AcpPermissionAnswer(
                command.decision, command.remember, reason=command.reason, option_id=command.option_id
            )
            if command.option_id is not None
            else PermissionAnswer(command.decision, remember=command.remember, reason=command.reason)
        )
        try:
            first = questions.answer(
                command.session_id, command.request_id, answer, by.model_dump() if by is not None else None
            )
        except LookupError as error:
            raise Refused(str(error)) from None
        if first is not None:
            already = c.AlreadyAnswered.model_validate(dataclasses.asdict(first))
            return c.refused(already.sentence(), **already.model_dump(by_alias=True))
        return c.done(decision=command.decision, remember=command.remember)

    async def _stop(self, command: c.Stop, by: c.Caller | None) -> c.Reply:
        return await self._stopped(command.session_id, by, lambda sid: int(self.engine.cancel_turn(sid)))

    async def _stop_subtree(self, command: c.StopSubtree, by: c.Caller | None) -> c.Reply:
        return await self._stopped(command.session_id, by, self.engine.stop_subtree)

    async def _stop_all(self, command: c.StopAll, by: c.Caller | None) -> c.Reply:
        return c.done(stopped=self.engine.stop_all())

    async def _steer(self, command: c.Steer, by: c.Caller | None) -> c.Reply:
        self._known(command.session_id)
        self._not_terminal(command.session_id)
        if isinstance(self.engine.submit(command.session_id, command.text.strip()), Attached):
            return c.done(how="steered")
        raise Refused("no turn is running in that session to steer (send a follow-up instead)")

    async def _follow_up(self, command: c.FollowUp, by: c.Caller | None) -> c.Reply:
        session_id, text = command.session_id, command.text.strip()
        self._not_terminal(session_id)
        if self.workbench is not None:
            sent = self.workbench.send(session_id, text)
            if isinstance(sent, SendRefused):
                raise Refused(sent.reason)
            return c.done(how=sent.how)
        self._known(session_id)
        if isinstance(self.engine.submit(session_id, text), Attached):
            return c.done(how="steered")
        try:
            self.engine.start_turn(session_id, text)
        except (TurnConflict, RuntimeError) as error:
            raise Refused(f"no new turn: {error}") from None
        return c.done(how="started")

    async def _new_agent(self, command: c.NewAgent, by: c.Caller | None) -> c.Reply:
        if self.workbench is None:
            raise Refused("this host runs a scenario and starts no other agents (use `agent-tui serve`)")
        base = self.project or Path.cwd()
        spec = AgentSpec(
            prompt=command.prompt,
            cwd=base / command.cwd if command.cwd else base,  # a relative directory is the host's own
            name=command.name,
            model=command.model,
            own_worktree=command.own_worktree,
            acp=command.acp,
            budget=command.budget(),
        )
        return c.done(sessionId=await self.workbench.start_agent(spec))

    async def _set_budget(self, command: c.SetBudget, by: c.Caller | None) -> c.Reply:
        self._not_terminal(command.session_id)
        who = by.text() if by is not None else "dashboard"
        if self.workbench is not None:
            await self.workbench.set_budget(command.session_id, command.limit(), by=who)
        else:
            self._known(command.session_id)
            await self.engine.set_budget(command.session_id, command.limit(), by=who)
        return c.done()

    async def _close(self, command: c.Close, by: c.Caller | None) -> c.Reply:
        bench = self.workbench
        if bench is None:
            raise Refused("a scenario run closes its sessions itself when it ends")
        session_id = command.session_id
        if session_id not in bench.listed:  # listed from its log, not read in the engine yet
            self._known(session_id)
        remove = bench.facts(session_id).worktree_path if command.worktree == "remove" else None
        if remove is not None and not remove.exists():
            remove = None  # removed already
        return c.done(problem=await bench.dispose(session_id, remove=remove))

    async def _accept_project_rules(self, command: c.AcceptProjectRules, by: c.Caller | None) -> c.Reply:
        return c.done(accepted=self._bench("the project's rules").accept_project_rules(command.digest))

    async def _sessions(self, command: c.Sessions, by: c.Caller | None) -> c.Reply:
        return c.done(**self._bus().sessions())

    async def _republish(self, command: c.Republish, by: c.Caller | None) -> c.Reply:
        published, stored = await self._bus().republish(command.session_id, command.first, command.last)
        return c.done(republished=published, stored=stored)

    # -- finishing a session's work ------------------------------------------------------------------
    async def _review(self, command: c.ReadReview, by: c.Caller | None) -> c.Reply:
        review = await self._bench("review").review(command.session_id)
        if self.review_limit is not None:
            review = bounded(review, self.review_limit())
        return c.done(review=_dump(Adapters.review, review))

    async def _turns(self, command: c.Turns, by: c.Caller | None) -> c.Reply:
        return c.done(turns=_dump(Adapters.turns, await self._bench("turns").turns(command.session_id)))

    async def _commit(self, command: c.Commit, by: c.Caller | None) -> c.Reply:
        done = await self._bench("commit").commit(command.session_id, command.message)
        return c.done(commit=_dump(Adapters.commit, done))

    async def _merge(self, command: c.Merge, by: c.Caller | None) -> c.Reply:
        merged = await self._bench("merge").merge(command.session_id, command.message)
        return c.done(merge=_dump(Adapters.merge, merged))

    async def _discard(self, command: c.Discard, by: c.Caller | None) -> c.Reply:
        await self._bench("discard").discard(command.session_id)
        return c.done()

    async def _rewind_plan(self, command: c.PlanRewind, by: c.Caller | None) -> c.Reply:
        plan = await self._bench("rewind_plan").rewind_plan(command.session_id, command.turn_id)
        kept = tuple(dataclasses.replace(item, before=None) for item in plan.files)  # bytes stay here
        return c.done(plan=_dump(Adapters.plan, dataclasses.replace(plan, files=kept)))

    async def _rewind(self, command: c.Rewind, by: c.Caller | None) -> c.Reply:
        bench = self._bench("rewind")
        done = await bench.rewind(
            command.session_id, command.turn_id, allow_protected=command.allow_protected
        )
        return c.done(rewind=_dump(Adapters.rewind, done))

    async def _closed(self, command: c.Closed, by: c.Caller | None) -> c.Reply:
        return c.done(closed=_dump(Adapters.closed, await self._bench("closed").closed()))

    async def _reopen(self, command: c.Reopen, by: c.Caller | None) -> c.Reply:
        return c.done(problems=await self._bench("reopen").reopen(command.session_id, self.reopened))


# -- a review's reply, bounded -------------------------------------------------------------------
REVIEW_REPLY_BYTES = 512 * 1024
"""The most a review's reply carries of diffs and texts (a NATS server takes 1 MB a message by
default)."""
_SMALLEST_CUT = 2_000
"""A diff cut to less than this is left out whole instead."""
_ENTRY_BYTES = 200
"""What a file of a review takes in the reply besides its name and texts (status, counts, keys)."""


def review_limit(max_payload: int | None) -> int:
    """The bound of a review's reply on a server that takes `max_payload` bytes a message."""
    return REVIEW_REPLY_BYTES if not max_payload else min(REVIEW_REPLY_BYTES, max_payload // 2)


def bounded(review: Review, limit: int) -> Review:
    """`review` with at most about `limit` bytes of names, diffs and texts: each file whole while
    it fits, then its plain diff without the texts, then its diff cut at a line with a marker (or
    the marker alone); files whose very names no longer fit are counted in `more_files`, and
    `Review.cut` says what was cut in a sentence."""
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
    sentence = (
        f"{' and '.join(said)} to keep the reply under {_amount(limit)}; "
        f"the whole change is on the host, in its {review.kind}"
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
