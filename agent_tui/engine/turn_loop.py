"""The life of one turn: steps of model calls and tool calls, until the turn ends.

Invariants:
- every started turn ends with exactly one `turn.completed`, written shielded from cancellation
  (a turn cancelled from outside, e.g. the engine shutting down, still closes its log);
- every requested tool call is answered by exactly one `tool.completed`/`tool.failed` before the
  next model call or the turn's end; `tool.started` only ever follows an `allow`;
- the cancel guard runs before storing each chunk the model streams: nothing streamed after a
  cancel reaches the log;
- the model's failures never raise out of a turn: it ends `error/provider_failure` with the
  model's message. Only the model call is guarded: a bug elsewhere (a listener, the store) is
  not mistaken for the model's;
- `model.retry` is stored for each retry the provider announces, before its first content;
- usage the provider reports is summed over the turn's model calls onto `turn.completed`;
- a bug (an `Exception`) ends only its turn; `KeyboardInterrupt` and `SystemExit` settle the
  turn's registry entry and frames, then go on up: they stop the process, not one turn.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

import anyio

from agent_tui.engine.clock import new_id
from agent_tui.engine.errors import EventStoreFailure
from agent_tui.engine.provider import (
    ModelMessage,
    ModelRequest,
    Retrying,
    StepDone,
    TextDelta,
    ToolCall,
)
from agent_tui.engine.session_info import OpenCall
from agent_tui.engine.tool_calls import CANCELLED, TURN_ENDED, Cancelled, ToolCallRunner
from agent_tui.engine.turn_handle import TurnHandle
from agent_tui.turns import Fail, FrameError
from agent_tui.turns.frames import Fatal, RuntimeEvent

if TYPE_CHECKING:
    from agent_tui.engine.engine import SessionEngine

PREVIEW_CHARS = 80


class _ModelFailed(Exception):
    """The model call failed; the message is safe to store."""


class UsageTotals:
    """Token counts summed over a turn's model calls (only what the provider reported)."""

    __slots__ = ("cached", "completion", "prompt", "reported")

    def __init__(self) -> None:
        self.prompt = self.completion = self.cached = 0
        self.reported = False

    def add(self, done: StepDone) -> None:
        if done.prompt_tokens is None and done.completion_tokens is None:
            return
        self.reported = True
        self.prompt += done.prompt_tokens or 0
        self.completion += done.completion_tokens or 0
        self.cached += done.cached_tokens or 0

    def payload(self) -> dict[str, int] | None:
        if not self.reported:
            return None
        out = {"promptTokens": self.prompt, "completionTokens": self.completion}
        if self.cached:
            out["cachedTokens"] = self.cached
        return out


class TurnLoop:
    """Runs turns for one engine (it owns the store, the registry, the tools and the model)."""

    def __init__(self, engine: SessionEngine) -> None:
        self.engine = engine
        self.tools = ToolCallRunner(engine)

    # -- the task ------------------------------------------------------------------------------
    async def run_to_end(self, turn: TurnHandle) -> None:
        """The turn's task: run it, and whatever happens leave the registry and frames settled."""
        engine = self.engine
        info = turn.session
        if engine.sends_frames:
            engine.sink.attach(info.id)
        try:
            await self._run(turn)
        except EventStoreFailure as failure:
            turn.error = failure
            info.close_code = "store_failure"
            cause = failure.__cause__
            message = f"{failure}: {cause}" if cause else str(failure)
            engine.sink.emit(info.id, Fatal("store_failure", message))
            engine.registry.transition(info.id, Fail(FrameError("store_failure", message)))
        except BaseException as error:  # a bug must not kill the engine; it ends this turn
            if isinstance(error, anyio.get_cancelled_exc_class()):
                engine.registry.transition(info.id, Fail(FrameError("unknown", "engine shut down")))
                raise
            turn.error = error
            engine.sink.emit(info.id, Fatal("unknown", repr(error)))
            engine.registry.transition(info.id, Fail(FrameError("unknown", repr(error))))
            if not isinstance(error, Exception):  # KeyboardInterrupt, SystemExit: the process's
                raise
        finally:
            if engine.sends_frames:
                engine.sink.detach(info.id)
            turn.finish()

    async def _run(self, turn: TurnHandle) -> None:
        engine = self.engine
        info = turn.session
        if info.open_turn is not None:
            await engine.close_open_turn(info)
        await engine.commit(info, turn.turn_id, "turn.started", promptPreview=turn.text[:PREVIEW_CHARS])
        await engine.commit(info, turn.turn_id, "user.message", content=turn.text, inputId=turn.input_id)
        stop_reason, error_code, message = "cancelled", None, None
        usage = UsageTotals()
        shutdown: BaseException | None = None
        try:
            with anyio.CancelScope() as scope:
                turn.scope = scope
                if turn.cancel_requested:
                    scope.cancel()
                try:
                    stop_reason, error_code = await self._run_steps(turn, usage)
                except Cancelled:
                    stop_reason = "cancelled"
                except _ModelFailed as failure:
                    stop_reason, error_code, message = "error", "provider_failure", str(failure) or None
        except anyio.get_cancelled_exc_class() as cancelled:
            # Cancelled from outside the turn (the engine's task group is shutting down): close
            # the turn like any cancelled one, then let the cancellation go on.
            shutdown = cancelled
        turn.scope = None
        if shutdown is not None or scope.cancelled_caught or turn.cancel_requested:
            stop_reason, error_code, message = "cancelled", None, None
            # Stopping a turn stops everything it spawned, however deep.
            engine.registry.stop_children(info.id)
        with anyio.CancelScope(shield=True):
            ending = CANCELLED if stop_reason == "cancelled" else TURN_ENDED
            await self.tools.answer_open_calls(info, turn.turn_id, ending)
            await engine.commit(
                info,
                turn.turn_id,
                "turn.completed",
                stopReason=stop_reason,
                errorCode=error_code,
                usage=usage.payload(),
                message=message,
            )
            turn.stop_reason = stop_reason
            turn.error_code = error_code
            if not turn.fsm.is_terminal:  # the registry no longer tracks it (disposed)
                turn.fsm.finish(stop_reason)
            for extension in engine.extensions:
                await extension.turn_ended(engine, turn)
        if shutdown is not None:
            raise shutdown

    # -- steps ---------------------------------------------------------------------------------
    async def _absorb_arrivals(self, turn: TurnHandle) -> bool:
        """At a step boundary, store steer input and sub-agent deliveries. True if any came."""
        engine = self.engine
        info = turn.session
        arrived = False
        for pending in engine.registry.drain(info.id):
            await engine.commit(
                info,
                turn.turn_id,
                "user.message",
                content=pending.text,
                inputId=pending.id,
                steered=True,
            )
            engine.sink.emit(
                info.id,
                RuntimeEvent(
                    "user_input", {"inputId": pending.id, "text": pending.text, "turnId": turn.turn_id}
                ),
            )
            arrived = True
        while info.mailbox:
            delivery = info.mailbox.popleft()
            await engine.commit(
                info,
                turn.turn_id,
                "subagent.delivered",
                childSessionId=delivery.child_session_id,
                agentName=delivery.agent_name,
                status=delivery.status,
                text=delivery.text,
            )
            arrived = True
        return arrived

    async def _run_steps(self, turn: TurnHandle, usage: UsageTotals) -> tuple[str, str | None]:
        """Model call, then its tool calls, step after step, until the turn ends.

        Returns:
            The stop reason and error code the turn ends with (`final`, `max_steps`, or
            `error/context_overflow`); a cancel or the model's failure raise instead.
        """
        engine = self.engine
        info = turn.session
        builder = engine.context_builder(info.cwd)
        limit = engine.context_window(info.id)
        while True:
            if turn.step >= engine.max_steps:
                return "max_steps", None
            await self._absorb_arrivals(turn)
            turn.step += 1
            step = turn.step
            transcript = info.transcript
            estimate = builder.preflight(transcript)
            if estimate.total > limit:
                summary = builder.compact(transcript.messages)
                after = builder.estimate([ModelMessage("user", summary)])
                await engine.commit(
                    info,
                    turn.turn_id,
                    "context.compacted",
                    step=step,
                    beforeTokens=estimate.total,
                    afterTokens=after.total,
                    summary=summary,
                )
                estimate = builder.preflight(transcript)
                if estimate.total > limit:
                    return "error", "context_overflow"
            messages = transcript.messages
            sent_tokens = transcript.tokens
            await engine.commit(
                info,
                turn.turn_id,
                "context.built",
                step=step,
                tokens=estimate.as_payload(),
                maxContextTokens=limit,
            )
            request = ModelRequest(
                session_id=info.id,
                turn_id=turn.turn_id,
                step=step,
                messages=builder.request_messages(messages),
                tools=builder.tool_schemas,
                agent_name=info.agent_name,
            )
            calls, deltas, prompt_tokens = await self._call_model(turn, request, usage)
            if prompt_tokens is not None:
                transcript.record_prompt_tokens(prompt_tokens, sent_tokens)
            for call in calls:
                await self.tools.run(turn, call)
            if calls:
                continue
            if deltas == 0:
                await engine.commit(info, turn.turn_id, "model.delta", text="")
            # The model answered: input that arrived meanwhile keeps the same turn going.
            if await self._absorb_arrivals(turn):
                if turn.step >= engine.max_steps:
                    return "max_steps", None
                continue
            return "final", None

    # -- the model call ------------------------------------------------------------------------
    async def _call_model(
        self, turn: TurnHandle, request: ModelRequest, usage: UsageTotals
    ) -> tuple[list[OpenCall], int, int | None]:
        """Stream one model call into the log. Raises `_ModelFailed` when the model failed.

        Returns:
            The tool calls asked for, how many deltas were stored, and the prompt tokens the
            provider counted for this call (None when it did not say).
        """
        engine = self.engine
        info = turn.session
        calls: list[OpenCall] = []
        deltas = 0
        prompt_tokens: int | None = None
        finished = False
        try:
            stream = engine.provider.stream(request)
        except Exception as error:  # e.g. a provider that cannot be built for this session
            raise _ModelFailed(_failure_text(error)) from error
        try:
            while True:
                # Only this await is the model's: what the engine does with a chunk (storing it,
                # telling listeners) runs outside the `try`, so its failures are never blamed on
                # the model. (Inline, not a helper: it runs once per streamed chunk.)
                try:
                    chunk = await anext(stream)
                except StopAsyncIteration:
                    break
                except anyio.get_cancelled_exc_class():
                    raise
                except Exception as error:
                    raise _ModelFailed(_failure_text(error)) from error
                if turn.cancel_requested:  # the guard: nothing streamed after a cancel is stored
                    raise Cancelled
                if isinstance(chunk, TextDelta):
                    if not chunk.text:
                        continue
                    await engine.commit(info, turn.turn_id, "model.delta", text=chunk.text)
                    deltas += 1
                elif isinstance(chunk, ToolCall):
                    call_id = self._call_id(turn, chunk)
                    await engine.commit(
                        info,
                        turn.turn_id,
                        "model.tool_call_requested",
                        toolCallId=call_id,
                        tool=chunk.tool,
                        args=dict(chunk.args),
                    )
                    calls.append(info.open_calls[call_id])  # the call as stored
                elif isinstance(chunk, Retrying):
                    await engine.commit(
                        info,
                        turn.turn_id,
                        "model.retry",
                        attempt=chunk.attempt,
                        delayMs=chunk.delay_ms,
                        reason=chunk.reason,
                    )
                elif isinstance(chunk, StepDone):
                    usage.add(chunk)
                    if chunk.prompt_tokens is not None:
                        prompt_tokens = chunk.prompt_tokens
            finished = True
        finally:
            # An async generator run to its end has nothing left to close; any other iterator
            # may hold a connection until `aclose`.
            aclose = getattr(stream, "aclose", None)
            if aclose is not None and not (finished and inspect.isasyncgen(stream)):
                with anyio.CancelScope(shield=True):
                    try:
                        await aclose()
                    except Exception:
                        pass
        if turn.cancel_requested:
            raise Cancelled
        return calls, deltas, prompt_tokens

    @staticmethod
    def _call_id(turn: TurnHandle, chunk: ToolCall) -> str:
        """The model's own id for the call (tool results go back under it), unless it gave none
        or reused one this turn already stored (ids must name one call each in the log and in
        what the model is sent back)."""
        given = chunk.call_id
        call_id = given if given and given not in turn.call_ids else new_id("call")
        turn.call_ids.add(call_id)
        return call_id


def _failure_text(error: BaseException) -> str:
    """What the log says of a model's failure: the provider's own message (adapters keep keys
    out of it), or the exception's type when it has none."""
    text = str(error).strip()
    return text if text else type(error).__name__
