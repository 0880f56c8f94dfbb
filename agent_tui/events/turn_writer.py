"""`TurnWriter`: one turn's chain, written in one place, over a `commit` function.

Whoever runs a turn (the engine's model loop, an external ACP agent, an importer reading another
tool's log) is a *driver*: it converses, and tells the writer what happened. The writer words
each event of the chain once, so every driver writes the same log for the same happening, and a
new driver (a remote host, another protocol) needs no copy of the rules.

Invariants:
- a turn is `turn.started, user.message, …, turn.completed`: `start` writes the first two and
  `end` the last, and nothing of the turn is written through the writer after `end`;
- a call's chain is worded here only: `request_call` → `request_permission` → `resolve` (the
  policy's `ask`, then the final answer) → `start_call` → `call_output`* → exactly one
  `complete_call`/`fail_call`; `deny_call` is a denial's whole chain (request, `deny`, and
  `tool.failed{permission_denied}`);
- `end` first answers the calls still open (`answer_open`): a pending ask is withdrawn
  (`permission.resolved{deny, system}`) and its call fails `cancelled`; every other call fails
  with the ending's code when the turn was cancelled or interrupted, `permission_denied` when
  the call was denied, else with the ending's code (`CallEnding`);
- the rule for an answer without text is decided here: a model call that ends without asking for
  tools must have said something, so when nothing was said since the step began (`context_built`)
  `answered` writes an empty `model.delta`; a `final` end applies the same rule. A writer that
  keeps a source (`keeps_source=True`, the importers) never invents text or an error: what its
  source had is in the turn as `source.record`s already, so a final turn with records and no text
  stays final; only a turn with neither (the source shows no answer at all) ends `error/unknown`;
- empty text is never written as a delta by `delta` (only the rule above writes one);
- `model_usage` writes what one model call used, after its stream and before the next
  `context_built` or `end` (the driver calls it then);
- fields that are not known (None) are left out of what is committed, and the keys come in the
  log's order, so a sink that writes lines as they are (the importers') writes the log's bytes.

`commit(turn_id, kind, fields)` returns an awaitable; the engine's stores the event (its commit
pipeline), an importer's appends a line and never suspends. A method that writes one event
returns the commit's awaitable (await it; a synchronous sink may drop it, already done), one that
writes several is a coroutine, driven synchronously to its end over such a sink (`run_now`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agent_tui.events.turn_vocabulary import TurnEnd, given

Commit = Callable[[str | None, str, dict[str, Any]], Awaitable[object]]
"""Store one event: `(turn id, event type, fields)`."""

PREVIEW_CHARS = 80
"""How much of a prompt `turn.started` shows."""


@dataclass(frozen=True, slots=True)
class CallEnding:
    """How the calls still open at a turn's end are answered: `tool.failed{code, message}`,
    after withdrawing a pending ask with `withdrawn` as its reason."""

    code: str
    message: str
    withdrawn: str


CANCELLED = CallEnding("cancelled", "the turn was cancelled before this call finished", "cancelled")
TURN_ENDED = CallEnding("unknown", "the turn ended before this call ran", "turn ended")
BUDGET_SPENT = CallEnding(
    "budget_exceeded", "the budget was spent before this call ran (the turn was stopped)", "budget spent"
)
"""A turn stopped by its tree's budget: the calls it had not run yet."""
INTERRUPTED = CallEnding("cancelled", "the turn was interrupted before this call finished", "interrupted")
"""A turn a reopened log shows unfinished: the process that ran it stopped."""
WITHDRAWN = "the turn ended before this call finished"
"""What a call whose question was withdrawn by a turn's end (not a cancel) fails with."""


class OpenCallState(Protocol):
    """What the writer reads of a call still open: who it is and how far it got."""

    @property
    def call_id(self) -> str: ...
    @property
    def tool(self) -> str: ...
    @property
    def stage(self) -> str: ...  # "asking" while a question waits
    @property
    def request_id(self) -> str | None: ...
    @property
    def decision(self) -> str | None: ...


class Done:
    """An awaitable that is already finished (what a synchronous sink's commit returns)."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # pragma: no cover - makes this a generator


DONE = Done()


class Then:
    """Several commits' awaitables, awaited in order (made in order, so a synchronous sink has
    written them all already); one that is never reached is closed, not left unawaited."""

    __slots__ = ("_steps",)

    def __init__(self, *steps: Awaitable[object]) -> None:
        self._steps = steps

    def __await__(self) -> Generator[Any, None, None]:
        steps = self._steps
        reached = 0
        try:
            for step in steps:
                reached += 1
                yield from step.__await__()
        finally:
            for step in steps[reached:]:
                close = getattr(step, "close", None)
                if close is not None:
                    close()


def run_now(step: Awaitable[object]) -> None:
    """Drive one writer call to its end over a commit that never suspends (an importer's)."""
    steps = step.__await__()
    try:
        next(steps)
    except StopIteration:
        return
    close = getattr(steps, "close", None)
    if close is not None:
        close()
    raise RuntimeError("a synchronous sink's commit suspended")


class TurnWriter:
    """The chain of one turn of one session (see the module docstring for its rules).

    Args:
        commit: stores one event of the session.
        turn_id: the turn this writer writes.
        keeps_source: an importer's writer (see the rule for an answer without text).
    """

    __slots__ = ("_commit", "_recorded", "_said", "keeps_source", "turn_id")

    def __init__(self, commit: Commit, turn_id: str, *, keeps_source: bool = False) -> None:
        self._commit = commit
        self.turn_id = turn_id
        self.keeps_source = keeps_source
        self._said = False  # text (or the empty delta) written since the step began
        self._recorded = False  # a source.record written in this turn

    def _put(self, kind: str, **fields: Any) -> Awaitable[object]:
        """Commit one event of this turn whose payload is `fields` as given (the events an
        import writes for nearly every source line commit their dict directly: no keywords)."""
        return self._commit(self.turn_id, kind, fields)

    # -- the turn --------------------------------------------------------------------------------
    def start(self, prompt: str, input_id: str | None = None) -> Awaitable[object]:
        turn_id = self.turn_id
        commit = self._commit
        return Then(
            commit(turn_id, "turn.started", {"promptPreview": prompt[:PREVIEW_CHARS]}),
            commit(
                turn_id,
                "user.message",
                {"content": prompt} if input_id is None else {"content": prompt, "inputId": input_id},
            ),
        )

    def steer(self, text: str, input_id: str | None = None) -> Awaitable[object]:
        """Input taken into the running turn (not a new prompt)."""
        message: dict[str, Any] = {"content": text, **given(inputId=input_id), "steered": True}
        return self._commit(self.turn_id, "user.message", message)

    def end(
        self, end: TurnEnd, open_calls: Collection[OpenCallState] = (), ending: CallEnding | None = None
    ) -> Awaitable[object]:
        """Answer the calls still open (as `ending` says, else as the turn's end says: cancelled,
        a spent budget, or ended), apply the rule for an answer without text, write the end."""
        if ending is None:
            code = end.error_code if end.stop_reason == "error" else end.stop_reason
            ending = (
                CANCELLED
                if code == "cancelled"
                else BUDGET_SPENT
                if code == "budget_exceeded"
                else TURN_ENDED
            )
        if open_calls or (end.stop_reason == "final" and not self._said):
            return self._end(end, open_calls, ending)
        return self._commit(self.turn_id, "turn.completed", end.payload())

    def end_final(self, usage: dict[str, Any] | None) -> Awaitable[object] | None:
        """`end(TurnEnd("final", usage=...))` when that writes `turn.completed` alone (text was
        said), from the usage's payload (`usage_total`): an import ends a turn per prompt and
        makes no models for it. None when the rule for an answer without text applies (`end`)."""
        if not self._said:
            return None
        fields = {"stopReason": "final"} if usage is None else {"stopReason": "final", "usage": usage}
        return self._commit(self.turn_id, "turn.completed", fields)

    async def _end(self, end: TurnEnd, open_calls: Collection[OpenCallState], ending: CallEnding) -> None:
        await self.answer_open(open_calls, ending)
        if end.stop_reason == "final" and not self._said:
            if not self.keeps_source:
                await self.answered()
            elif not self._recorded:
                end = TurnEnd.failed("unknown", end.message, end.usage)
        await self._commit(self.turn_id, "turn.completed", end.payload())

    # -- the model -------------------------------------------------------------------------------
    def context_built(self, step: int, tokens: dict[str, int], max_context_tokens: int) -> Awaitable[object]:
        """A model call's context is ready: a step begins."""
        self._said = False
        return self._put("context.built", step=step, tokens=tokens, maxContextTokens=max_context_tokens)

    def compacted(self, step: int, before: int, after: int, summary: str) -> Awaitable[object]:
        return self._put(
            "context.compacted", step=step, beforeTokens=before, afterTokens=after, summary=summary
        )

    def delta(self, text: str) -> Awaitable[object]:
        """Text the model said (empty text is not written)."""
        if not text:
            return DONE
        self._said = True
        return self._commit(self.turn_id, "model.delta", {"text": text})

    async def answered(self) -> None:
        """The model answered without asking for tools: an answer without text is an empty delta."""
        if not self._said:
            self._said = True
            await self._put("model.delta", text="")

    def model_usage(self, fields: dict[str, Any]) -> Awaitable[object]:
        """What the step's model call used (its `ModelUsage.fields()`), once its stream ended
        (before the next step)."""
        return self._commit(self.turn_id, "model.usage", fields)

    def retry(self, attempt: int, delay_ms: int, reason: str) -> Awaitable[object]:
        return self._put("model.retry", attempt=attempt, delayMs=delay_ms, reason=reason)

    def delivered(self, child_session_id: str, agent_name: str, status: str, text: str) -> Awaitable[object]:
        """A sub-agent's result, taken into this turn."""
        fields = {"childSessionId": child_session_id, "agentName": agent_name, "status": status, "text": text}
        return self._commit(self.turn_id, "subagent.delivered", fields)

    def record(self, fmt: str, record_type: str, data: dict[str, Any]) -> Awaitable[object]:
        """What the source said that our events cannot (a `source.record` of this turn)."""
        self._recorded = True
        return self._commit(
            self.turn_id, "source.record", {"format": fmt, "recordType": record_type, "data": data}
        )

    # -- tool calls ------------------------------------------------------------------------------
    def request_call(self, call_id: str, tool: str, args: dict[str, Any]) -> Awaitable[object]:
        fields = {"toolCallId": call_id, "tool": tool, "args": args}
        return self._commit(self.turn_id, "model.tool_call_requested", fields)

    def request_permission(
        self,
        call_id: str,
        tool: str,
        request_id: str,
        risk: str,
        args_preview: str,
        *,
        reason: str | None = None,
        warning: str | None = None,
        options: Sequence[Mapping[str, str]] | None = None,
    ) -> Awaitable[object]:
        fields: dict[str, Any] = {"requestId": request_id, "toolCallId": call_id, "tool": tool, "risk": risk}
        fields["argsPreview"] = args_preview
        offered = [dict(option) for option in options] if options else None
        fields |= given(reason=reason, warning=warning, options=offered)
        return self._commit(self.turn_id, "permission.requested", fields)

    def resolve(
        self,
        call_id: str,
        request_id: str | None,
        decision: str,
        actor: str,
        *,
        policy: str | None = None,
        reason: str | None = None,
        remember: str | None = None,
        by: dict[str, Any] | None = None,
    ) -> Awaitable[object]:
        """One `permission.resolved` of a call's request (the policy's `ask`, or an answer;
        `by`: who answered, when the answer came over a bus)."""
        fields: dict[str, Any] = {"requestId": request_id, "toolCallId": call_id, "decision": decision}
        fields["actor"] = actor
        fields |= given(policy=policy, reason=reason, remember=remember, by=by)
        return self._commit(self.turn_id, "permission.resolved", fields)

    async def deny_call(
        self,
        call_id: str,
        tool: str,
        request_id: str,
        risk: str,
        args_preview: str,
        message: str,
        actor: str = "user",
    ) -> None:
        """A denial's whole chain: the request, its `deny`, and `tool.failed{permission_denied}`."""
        await self.request_permission(call_id, tool, request_id, risk, args_preview)
        await self.resolve(call_id, request_id, "deny", actor)
        await self.fail_call(call_id, tool, "permission_denied", message)

    def start_call(self, call_id: str, tool: str, args_preview: str) -> Awaitable[object]:
        fields = {"toolCallId": call_id, "tool": tool, "argsPreview": args_preview}
        return self._commit(self.turn_id, "tool.started", fields)

    def call_output(self, call_id: str, stream: str, text: str) -> Awaitable[object]:
        return self._put("tool.delta", toolCallId=call_id, stream=stream, text=text)

    def complete_call(
        self, call_id: str, tool: str, result: str, exit_code: int | None = None, truncated: bool = False
    ) -> Awaitable[object]:
        fields: dict[str, Any] = {"toolCallId": call_id, "tool": tool, "result": result}
        if exit_code is not None:
            fields["exitCode"] = exit_code
        fields["truncated"] = truncated
        return self._commit(self.turn_id, "tool.completed", fields)

    def fail_call(self, call_id: str, tool: str, code: str, message: str) -> Awaitable[object]:
        fields = {"toolCallId": call_id, "tool": tool, "errorCode": code, "message": message}
        return self._commit(self.turn_id, "tool.failed", fields)

    def deny(self, call_id: str, tool: str) -> Awaitable[object]:
        """The end of a call that was denied permission."""
        return self.fail_call(call_id, tool, "permission_denied", f"{tool} was denied permission")

    async def answer_open(self, calls: Iterable[OpenCallState], ending: CallEnding) -> None:
        """Answer every call still open: withdraw a pending ask, then fail the call."""
        cancelled = ending.code == "cancelled"
        for call in list(calls):
            if call.stage == "asking":  # its question is withdrawn: the call is cancelled
                await self.resolve(call.call_id, call.request_id, "deny", "system", reason=ending.withdrawn)
                await self.fail_call(
                    call.call_id, call.tool, "cancelled", ending.message if cancelled else WITHDRAWN
                )
            elif not cancelled and call.decision == "deny":
                await self.deny(call.call_id, call.tool)
            else:
                await self.fail_call(call.call_id, call.tool, ending.code, ending.message)
