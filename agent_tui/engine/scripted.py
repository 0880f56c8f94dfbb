"""`ScriptedProvider`: a model that plays scenario steps, for the demo, the headless runner and tests.

Each session has a script (a list of steps); every model call plays the next step. Children
spawned with `spawn_agent{agentName}` play `agents[agentName]`. When a script runs out, the model
answers a short final text, so later turns (a hydrated session, a steered turn) still work.

The hooks let a step act on the run that drives it: `cancelAfterChunks` calls `on_cancel` (and
the provider keeps streaming, as a real provider that ignores cancellation would), `steer` calls
`on_steer` before the step's text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import anyio

from agent_tui.engine.provider import (
    ModelRequest,
    ProviderChunk,
    ProviderFailure,
    StepDone,
    TextDelta,
    ToolCall,
)
from agent_tui.engine.scenario import AgentScript, Step

OUT_OF_SCRIPT = "(end of script)"

Hook = Callable[[str, str], Awaitable[None] | None]
"""`on_cancel(session_id, turn_id)`, `on_steer(session_id, text)`; may be a coroutine function."""


class ScriptedProvider:
    """Args:
    max_context_tokens: the context window the engine preflights against.
    agents: scripts for spawned children, by agent name.
    model: the name reported in `StepDone` (shown as "executing" frame meta).
    """

    def __init__(
        self,
        *,
        max_context_tokens: int = 128_000,
        agents: dict[str, AgentScript] | None = None,
        model: str = "scripted",
    ) -> None:
        self.max_context_tokens = max_context_tokens
        self.agents = dict(agents or {})
        self.model = model
        self._scripts: dict[str, list[Step]] = {}
        self._cursor: dict[str, int] = {}
        self.on_cancel: Hook | None = None
        self.on_steer: Hook | None = None
        self.calls: list[ModelRequest] = []

    def assign(self, session_id: str, steps: Sequence[Step]) -> None:
        """Give a session its script (replacing what is left of an earlier one)."""
        self._scripts[session_id] = list(steps)
        self._cursor[session_id] = 0

    def _next_step(self, request: ModelRequest) -> Step | None:
        if request.session_id not in self._scripts and request.agent_name in self.agents:
            self.assign(request.session_id, self.agents[request.agent_name].steps)
        steps = self._scripts.get(request.session_id, [])
        position = self._cursor.get(request.session_id, 0)
        self._cursor[request.session_id] = position + 1
        return steps[position] if position < len(steps) else None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        self.calls.append(request)
        step = self._next_step(request)
        if step is None:
            yield TextDelta(OUT_OF_SCRIPT)
            yield StepDone(model=self.model, prompt_tokens=0, completion_tokens=1)
            return
        if step.fail is not None:
            raise ProviderFailure(f"scripted {step.fail} at step {request.step}")
        if step.steer is not None and self.on_steer is not None:
            await _maybe_await(self.on_steer(request.session_id, step.steer))
        for index, chunk in enumerate(step.text):
            if step.delayMs and index:
                await anyio.sleep(step.delayMs / 1000)
            yield TextDelta(chunk)
            if index + 1 == step.cancelAfterChunks and self.on_cancel is not None:
                await _maybe_await(self.on_cancel(request.session_id, request.turn_id))
        if step.cancelAfterChunks == 0 and self.on_cancel is not None:
            await _maybe_await(self.on_cancel(request.session_id, request.turn_id))
        for call in step.toolCalls:
            if step.delayMs:
                await anyio.sleep(step.delayMs / 1000)
            yield ToolCall(call.tool, dict(call.args))
        yield StepDone(
            model=self.model,
            prompt_tokens=len(request.messages),
            completion_tokens=sum(len(t) for t in step.text) // 4,
        )


async def _maybe_await(value: Awaitable[None] | None) -> None:
    if value is not None:
        await value
