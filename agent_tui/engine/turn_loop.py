"""`ModelLoop`: the engine's own turn driver: steps of model calls and tool calls, until the turn ends.

The loop converses with the model and the tools and tells the turn's `TurnWriter` what happened;
claiming the session, starting the turn's task, writing its end and settling it are the engine's
(`SessionEngine.drive`), the same for every driver.

Invariants:
- every requested tool call is answered by exactly one `tool.completed`/`tool.failed` before the
  next model call or the turn's end; `tool.started` only ever follows an `allow`;
- the cancel guard runs before storing each chunk the model streams: nothing streamed after a
  cancel reaches the log; a cancelled turn ends `cancelled` whatever the model said last;
- the model's failures never raise out of a turn: it ends `error/provider_failure` with the
  model's message. Only the model call is guarded: a bug elsewhere (a listener, the store) is
  not mistaken for the model's;
- `model.retry` is stored for each retry the provider announces, before its first content;
- each model call whose provider reported usage gets its `model.usage` (priced from the price
  table by the model the provider named; no cost when the table does not know it) when its
  stream ends, before the next `context.built` or the turn's end, so a crash mid-turn keeps the
  calls already made; the turn's total (`Usage.of_calls`) goes onto `turn.completed`;
- the loop gets what it uses (the model, the registry's steer queue, the tool runner, the
  context of a session's directory and its model's window, the step limit), never the engine.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path

import anyio

from agent_tui.costs.prices import PriceTable
from agent_tui.engine.clock import new_id
from agent_tui.engine.context import ContextBuilder, TokenEstimate
from agent_tui.engine.provider import (
    ModelMessage,
    ModelProvider,
    ModelRequest,
    ProviderChunk,
    Retrying,
    StepDone,
    TextDelta,
    ToolCall,
)
from agent_tui.engine.session_info import OpenCall, SessionInfo, TurnHandle
from agent_tui.engine.tool_calls import Cancelled, ToolCallRunner
from agent_tui.engine.tools.router import ToolRouter
from agent_tui.events.model import ModelUsage, Usage
from agent_tui.events.turn_vocabulary import TurnEnd
from agent_tui.turns import TurnRegistry


class _ModelFailed(Exception):
    """The model call failed; the message is safe to store."""


def _priced(prices: PriceTable, step: int, done: StepDone) -> ModelUsage | None:
    """The call's `model.usage`, priced from the price table (None when the provider reported
    no usage)."""
    if done.prompt_tokens is None and done.completion_tokens is None:
        return None
    return ModelUsage.priced(
        prices,
        step,
        done.model,
        done.prompt_tokens or 0,
        done.completion_tokens or 0,
        done.cached_tokens,
        done.cache_write_tokens,
    )


class ModelLoop:
    """Drives turns against a model (see the module docstring)."""

    def __init__(
        self,
        provider: ModelProvider,
        registry: TurnRegistry,
        tools: ToolCallRunner,
        context_builder: Callable[[Path, ToolRouter | None], ContextBuilder],
        context_window: Callable[[str], int],
        tree_tools: Callable[[SessionInfo], Awaitable[ToolRouter | None]],
        max_steps: int,
        prices: PriceTable,
    ) -> None:
        self.provider = provider
        self.tree_tools = tree_tools
        self.prices = prices
        self.registry = registry
        self.tools = tools
        self.context_builder = context_builder
        self.context_window = context_window
        self.max_steps = max_steps

    # -- the driver's side of a turn -----------------------------------------------------------
    async def open_turn(self, turn: TurnHandle) -> None:
        await turn.writer.start(turn.text, turn.input_id)

    async def converse(self, turn: TurnHandle) -> TurnEnd:
        """Step after step until the turn ends; a cancel (the guard, or the turn's cancel scope)
        ends it `cancelled`."""
        usage: list[ModelUsage] = []  # the turn's model calls that reported usage
        end = TurnEnd.cancelled()
        with anyio.CancelScope() as scope:
            turn.scope = scope
            if turn.cancel_requested:
                scope.cancel()
            try:
                end = await self._run_steps(turn, usage)
            except Cancelled:
                pass
            except _ModelFailed as failure:
                end = TurnEnd.failed("provider_failure", str(failure) or None)
        turn.scope = None
        if scope.cancelled_caught or turn.cancel_requested:
            end = TurnEnd.cancelled()
        return replace(end, usage=Usage.of_calls(usage))

    async def close_turn(self, turn: TurnHandle, end: TurnEnd) -> None:
        await turn.writer.end(end, turn.session.open_calls.values())

    # -- steps ---------------------------------------------------------------------------------
    async def _absorb_arrivals(self, turn: TurnHandle) -> bool:
        """At a step boundary, store steer input and sub-agent deliveries. True if any came."""
        info = turn.session
        writer = turn.writer
        arrived = False
        for pending in self.registry.drain(info.id):
            await writer.steer(pending.text, pending.id)
            arrived = True
        while info.mailbox:
            delivery = info.mailbox.popleft()
            await writer.delivered(
                delivery.child_session_id, delivery.agent_name, delivery.status, delivery.text
            )
            arrived = True
        return arrived

    async def _run_steps(self, turn: TurnHandle, usage: list[ModelUsage]) -> TurnEnd:
        """Model call, then its tool calls, step after step, until the turn ends.

        Returns:
            How the turn ends (`final`, `max_steps`, or `error/context_overflow`); a cancel or
            the model's failure raise instead.
        """
        info = turn.session
        writer = turn.writer
        info.router = await self.tree_tools(info)  # its tree's MCP servers start at its first turn
        builder = self.context_builder(info.cwd, info.router)
        limit = self.context_window(info.id)
        max_steps = self.max_steps
        while True:
            if turn.step >= max_steps:
                return TurnEnd("max_steps")
            await self._absorb_arrivals(turn)
            turn.step += 1
            step = turn.step
            transcript = info.transcript
            estimate = await _fitted(turn, builder, limit)
            if estimate is None:
                return TurnEnd.failed("context_overflow")
            messages = transcript.messages
            sent_tokens = transcript.tokens
            await writer.context_built(step, estimate.as_payload(), limit)
            if turn.cancel_requested:  # stopped as the call was prepared (a budget's preflight)
                raise Cancelled
            request = _request(turn, builder, messages)
            calls, prompt_tokens = await self._call_model(turn, request, usage)
            if prompt_tokens is not None:
                transcript.record_prompt_tokens(prompt_tokens, sent_tokens)
            for call in calls:
                await self.tools.run(turn, call)
            if calls:
                continue
            await writer.answered()
            # The model answered: input that arrived meanwhile keeps the same turn going.
            if await self._absorb_arrivals(turn):
                if turn.step >= max_steps:
                    return TurnEnd("max_steps")
                continue
            return TurnEnd.final()

    # -- the model call ------------------------------------------------------------------------
    async def _call_model(
        self, turn: TurnHandle, request: ModelRequest, usage: list[ModelUsage]
    ) -> tuple[list[OpenCall], int | None]:
        """Stream one model call into the log. Raises `_ModelFailed` when the model failed.

        Returns:
            The tool calls asked for, and the prompt tokens the provider counted for this call
            (None when it did not say).
        """
        writer = turn.writer
        calls: list[OpenCall] = []
        prompt_tokens: int | None = None
        finished = False
        stream = self._open(request)
        try:
            while True:
                # Only this await is the model's: what the engine does with a chunk (storing it,
                # telling listeners) runs outside the `try`, so its failures are never blamed on
                # the model. (Inline, not a helper: it runs once per streamed chunk.)
                try:
                    chunk = await anext(stream)
                except StopAsyncIteration:
                    break
                except Exception as error:  # (a cancellation is no `Exception`: it goes on up)
                    raise _ModelFailed(_failure_text(error)) from error
                if turn.cancel_requested:  # the guard: nothing streamed after a cancel is stored
                    raise Cancelled
                if isinstance(chunk, TextDelta):
                    await writer.delta(chunk.text)
                elif isinstance(chunk, ToolCall):
                    call_id = self._call_id(turn, chunk)
                    await writer.request_call(call_id, chunk.tool, dict(chunk.args))
                    calls.append(turn.session.open_calls[call_id])  # the call as stored
                elif isinstance(chunk, Retrying):
                    await writer.retry(chunk.attempt, chunk.delay_ms, chunk.reason)
                elif isinstance(chunk, StepDone):
                    used = _priced(self.prices, request.step, chunk)
                    if used is not None:  # the last chunk: the call's stream has ended
                        usage.append(used)
                        await writer.model_usage(used.fields())
                    if chunk.prompt_tokens is not None:
                        prompt_tokens = chunk.prompt_tokens
            finished = True
        finally:
            await _close(stream, finished)
        if turn.cancel_requested:
            raise Cancelled
        return calls, prompt_tokens

    def _open(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        """The model's stream for one call; raises `_ModelFailed` when it cannot be opened."""
        try:
            return self.provider.stream(request)
        except Exception as error:  # e.g. a provider that cannot be built for this session
            raise _ModelFailed(_failure_text(error)) from error

    @staticmethod
    def _call_id(turn: TurnHandle, chunk: ToolCall) -> str:
        """The model's own id for the call (tool results go back under it), unless it gave none
        or reused one this turn already stored (ids must name one call each in the log and in
        what the model is sent back)."""
        given = chunk.call_id
        call_id = given if given and given not in turn.call_ids else new_id("call")
        turn.call_ids.add(call_id)
        return call_id


def _request(turn: TurnHandle, builder: ContextBuilder, messages: Sequence[ModelMessage]) -> ModelRequest:
    """The model call of the turn's current step."""
    return ModelRequest(
        session_id=turn.session_id,
        turn_id=turn.turn_id,
        step=turn.step,
        messages=builder.request_messages(messages),
        tools=builder.tool_schemas,
        agent_name=turn.session.agent_name,
    )


async def _fitted(turn: TurnHandle, builder: ContextBuilder, limit: int) -> TokenEstimate | None:
    """The context of the turn's next step, compacted first when it is over the window's limit;
    None when even the compacted one does not fit."""
    transcript = turn.session.transcript
    estimate = builder.preflight(transcript)
    if estimate.total > limit:
        summary = builder.compact(transcript.messages)
        after = builder.estimate([ModelMessage("user", summary)])
        await turn.writer.compacted(turn.step, estimate.total, after.total, summary)
        estimate = builder.preflight(transcript)
        if estimate.total > limit:
            return None
    return estimate


async def _close(stream: AsyncIterator[ProviderChunk], finished: bool) -> None:
    """Close a model's stream: an async generator run to its end has nothing left to close; any
    other iterator may hold a connection until `aclose`."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None and not (finished and inspect.isasyncgen(stream)):
        with anyio.CancelScope(shield=True):
            try:
                await aclose()
            except Exception:
                pass


def _failure_text(error: BaseException) -> str:
    """What the log says of a model's failure: the provider's own message (adapters keep keys
    out of it), or the exception's type when it has none."""
    text = str(error).strip()
    return text if text else type(error).__name__
