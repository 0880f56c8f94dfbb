"""What each model call is given and checked against: the reported prompt size, each session's own
window and instructions, and tool-call ids that name one call each.

The providers here are small in-test models that record each request and answer from a list,
run through the real engine with a real store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
from support_engine import make_engine, workspace

from agent_tui.engine.provider import ModelRequest, ProviderChunk, StepDone, TextDelta, ToolCall
from agent_tui.events.chains import chain_violations
from agent_tui.runtime.model_router import ModelChoice, ProviderRouter


class RecordingModel:
    """Answers call N with `answers[N]` and keeps every request it was sent."""

    def __init__(self, answers: Sequence[Sequence[ProviderChunk]], *, window: int = 100_000) -> None:
        self.answers = list(answers)
        self.requests: list[ModelRequest] = []
        self.max_context_tokens = window

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        self.requests.append(request)
        for chunk in self.answers[len(self.requests) - 1]:
            yield chunk


def run_turn(engine: Any, cwd: Path, text: str = "go") -> list[Any]:
    async def main() -> list[Any]:
        async with engine:
            session = await engine.create_session(cwd)
            await engine.start_turn(session, text).wait()
            return list(engine.store.replay(session))

    return anyio.run(main)


def list_dir(call_id: str) -> ToolCall:
    return ToolCall("list_dir", {"path": "."}, call_id)


class TestPreflight:
    def test_a_reported_prompt_larger_than_the_estimate_makes_the_next_call_compact(
        self, tmp_path: Path
    ) -> None:
        # The estimate of the first prompt is far below the window, but the model counted 9,990
        # tokens for it: the second call must be checked against that count plus the tool's
        # result, and compacted.
        model = RecordingModel(
            [
                [list_dir("c1"), StepDone(prompt_tokens=9_990, completion_tokens=5)],
                [TextDelta("done"), StepDone(prompt_tokens=900, completion_tokens=2)],
            ],
            window=10_000,
        )
        engine = make_engine(tmp_path, model)
        cwd = workspace(tmp_path)
        for name in ("alpha.txt", "beta.txt", "gamma.txt"):
            (cwd / name).write_text("x")
        events = run_turn(engine, cwd)
        assert chain_violations(events) == []
        built = [e for e in events if e.type == "context.built"]
        assert sum(built[0].payload["tokens"].values()) < 9_000
        assert sum(built[1].payload["tokens"].values()) < 9_000  # after the compaction
        compacted = [e for e in events if e.type == "context.compacted"]
        assert len(compacted) == 1 and compacted[0].payload["beforeTokens"] > 10_000
        assert events[-1].payload["stopReason"] == "final"

    def test_a_report_smaller_than_the_estimate_never_lowers_it(self, tmp_path: Path) -> None:
        model = RecordingModel(
            [
                [list_dir("c1"), StepDone(prompt_tokens=1)],
                [TextDelta("done"), StepDone(prompt_tokens=1)],
            ]
        )
        engine = make_engine(tmp_path, model)
        events = run_turn(engine, workspace(tmp_path))
        built = [sum(e.payload["tokens"].values()) for e in events if e.type == "context.built"]
        assert built[1] >= built[0] > 1

    def test_after_compaction_the_old_report_no_longer_counts(self, tmp_path: Path) -> None:
        # Without forgetting the report, the summary would still "weigh" 9,000 tokens and the
        # turn would end context_overflow instead of going on.
        model = RecordingModel(
            [
                [list_dir("c1"), StepDone(prompt_tokens=9_500)],
                [list_dir("c2"), StepDone(prompt_tokens=600)],
                [TextDelta("done"), StepDone(prompt_tokens=700)],
            ],
            window=10_000,
        )
        events = run_turn(make_engine(tmp_path, model), workspace(tmp_path))
        assert events[-1].payload["stopReason"] == "final"
        assert len(model.requests) == 3


class TestPerSession:
    def test_each_session_is_told_its_own_directory(self, tmp_path: Path) -> None:
        def instructions(cwd: Path, tools: Sequence[Mapping[str, Any]]) -> str:
            return f"work in {cwd} with {len(tools)} tools"

        model = RecordingModel([[TextDelta("a"), StepDone()], [TextDelta("b"), StepDone()]])
        engine = make_engine(tmp_path, model, instructions=instructions)
        first, second = tmp_path / "one", tmp_path / "two"
        first.mkdir()
        second.mkdir()

        async def main() -> None:
            async with engine:
                for cwd in (first, second):
                    session = await engine.create_session(cwd)
                    await engine.start_turn(session, "go").wait()

        anyio.run(main)
        systems = [request.messages[0].text for request in model.requests]
        tool_count = len(engine.router.schemas())
        assert systems == [
            f"work in {first} with {tool_count} tools",
            f"work in {second} with {tool_count} tools",
        ]

    def test_the_router_checks_each_session_against_its_own_models_window(self, tmp_path: Path) -> None:
        small = RecordingModel([[TextDelta("never")]], window=50)
        large = RecordingModel([[TextDelta("fits"), StepDone()]], window=100_000)
        choices = [ModelChoice("large", "large", lambda: large), ModelChoice("small", "small", lambda: small)]
        router = ProviderRouter(choices, parent_of=lambda sid: None)
        engine = make_engine(tmp_path, router)
        cwd = workspace(tmp_path)

        async def main() -> tuple[list[Any], list[Any]]:
            async with engine:
                on_small = await engine.create_session(cwd)
                router.assign(on_small, choices[1])
                on_large = await engine.create_session(cwd)
                router.assign(on_large, choices[0])
                await engine.start_turn(on_small, "go").wait()
                await engine.start_turn(on_large, "go").wait()
                return list(engine.store.replay(on_small)), list(engine.store.replay(on_large))

        small_log, large_log = anyio.run(main)
        assert small_log[-1].payload["errorCode"] == "context_overflow"
        assert small.requests == []
        assert large_log[-1].payload["stopReason"] == "final"
        built = next(e for e in large_log if e.type == "context.built")
        assert built.payload["maxContextTokens"] == 100_000

    def test_a_model_that_cannot_be_built_ends_the_turn_provider_failure(self, tmp_path: Path) -> None:
        def missing_key() -> Any:
            raise RuntimeError("OPENAI_API_KEY is not set")

        router = ProviderRouter([ModelChoice("broken", "broken", missing_key)], parent_of=lambda sid: None)
        events = run_turn(make_engine(tmp_path, router), workspace(tmp_path))
        assert chain_violations(events) == []
        ended = events[-1].payload
        assert (ended["stopReason"], ended["errorCode"]) == ("error", "provider_failure")
        assert ended["message"] == "OPENAI_API_KEY is not set"


class TestToolCallIds:
    def test_an_id_the_model_reuses_in_a_later_step_is_replaced(self, tmp_path: Path) -> None:
        model = RecordingModel(
            [
                [list_dir("toolu_1"), StepDone()],
                [list_dir("toolu_1"), StepDone()],
                [TextDelta("done"), StepDone()],
            ]
        )
        events = run_turn(make_engine(tmp_path, model), workspace(tmp_path))
        assert chain_violations(events) == []
        ids = [e.payload["toolCallId"] for e in events if e.type == "model.tool_call_requested"]
        assert ids[0] == "toolu_1" and ids[1] != "toolu_1" and len(set(ids)) == 2
        # What the model is sent back pairs each result with its own call.
        third = model.requests[2].messages
        results = [m.tool_call_id for m in third if m.role == "tool"]
        assert results == ids
