"""Builders for engine tests: real stores in tmp_path, scripted providers, scenario steps."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, Literal

from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import PermissionEngine, PolicyConfig
from agent_tui.engine.provider import ModelRequest, ProviderChunk, StepDone, TextDelta
from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scenario import Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.store import JsonlFileEventStore

ALLOW_ALL = PolicyConfig(default="allow")


def fixed_clock() -> str:
    return "2026-11-29T00:00:00.000Z"


def steps(*specs: dict[str, Any]) -> list[Step]:
    return [Step.model_validate(spec) for spec in specs]


def make_engine(
    tmp_path: Path,
    provider: Any = None,
    *,
    policy: PolicyConfig | None = ALLOW_ALL,
    approve: Literal["allow", "deny"] | None = "allow",
    store: Any = None,
    **kwargs: Any,
) -> SessionEngine:
    store = store if store is not None else JsonlFileEventStore(tmp_path / "sessions")
    provider = provider if provider is not None else ScriptedProvider()
    return SessionEngine(
        store,
        provider,
        permissions=PermissionEngine(policy),
        questions=Questions(fixed_answer(approve)) if approve else None,
        clock=fixed_clock,
        **kwargs,
    )


def workspace(tmp_path: Path) -> Path:
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    return cwd


async def collect(iterator: AsyncIterator[Event]) -> list[Event]:
    return [event async for event in iterator]


def types(events: Sequence[Event]) -> list[str]:
    return [event.type for event in events]


class EndlessProvider:
    """A provider that keeps streaming, ignoring cancellation: the engine's cancel guard must hold."""

    max_context_tokens = 100_000

    def __init__(self, chunks: int = 50) -> None:
        self.chunks = chunks
        self.yielded = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        for index in range(self.chunks):
            self.yielded += 1
            yield TextDelta(f"chunk{index} ")
        yield StepDone()


class HeldPrompter:
    """A prompter that holds every ask until the test answers it (a user who has not looked yet)."""

    def __init__(self) -> None:
        import anyio

        self.requests: list[Any] = []
        self.asked = anyio.Event()
        self._answers: dict[str, Any] = {}
        self._events: dict[str, Any] = {}
        self.withdrawn: list[str] = []

    async def ask(self, request: Any) -> Any:
        import anyio

        self.requests.append(request)
        self._events[request.request_id] = anyio.Event()
        self.asked.set()
        try:
            await self._events[request.request_id].wait()
        except anyio.get_cancelled_exc_class():
            self.withdrawn.append(request.request_id)
            raise
        return self._answers[request.request_id]

    def answer(self, request: Any, answer: Any) -> None:
        self._answers[request.request_id] = answer
        self._events[request.request_id].set()

    async def next_request(self) -> Any:
        import anyio

        while not [r for r in self.requests if r.request_id not in self._answers]:
            self.asked = anyio.Event()
            await self.asked.wait()
        return next(r for r in self.requests if r.request_id not in self._answers)
