"""Model adapters: the engine driven by a real adapter whose stream is already in memory, against
the engine driven by the scripted provider, in the same run.

The adapters are pointed at an in-process transport (`httpx2.MockTransport` through the SDK's
`http_client=`): no socket and no server, but the SDK's whole path is real (the request built and
sent, the response's SSE decoded, each event's JSON parsed) and then ours (the event mapped to
the port, the retry wrapper). Each call streams `CHUNKS` text chunks and ends with usage, so both
runs store the same events.

The figure is the adapter's overhead per streamed chunk: (cost of the adapter's run - cost of
the scripted run) / chunks, everything the adapter adds (its per-call request included) spread
over the call's chunks. The target: at most twice the scripted run's whole cost per event. The
total cost per event of both runs is printed too.

    .venv/bin/python bench/bench_providers.py [--turns N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2

from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import PermissionEngine, PolicyConfig
from agent_tui.engine.scenario import Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.providers.config import ModelSettings
from agent_tui.providers.factory import build_provider
from agent_tui.store import JsonlFileEventStore

CHUNKS = 50
TARGET_RATIO = 2.0
KEY = "sk-bench-not-a-real-key"


def _openai_body() -> bytes:
    def frame(delta: dict[str, Any] | None, finish: str | None = None, usage: Any = None) -> str:
        choices = (
            [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        )
        chunk = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1_745_678_496,
            "model": "gpt-bench",
            "choices": choices,
            "usage": usage,
        }
        return f"data: {json.dumps(chunk)}\n\n"

    frames = [frame({"role": "assistant", "content": ""})]
    frames += [frame({"content": f"token{i} "}) for i in range(CHUNKS)]
    frames.append(frame({}, finish="stop"))
    frames.append(frame(None, usage={"prompt_tokens": 100, "completion_tokens": CHUNKS, "total_tokens": 150}))
    frames.append("data: [DONE]\n\n")
    return "".join(frames).encode()


def _anthropic_body() -> bytes:
    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    message = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-bench",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 1},
    }
    frames = [event("message_start", {"type": "message_start", "message": message})]
    frames.append(
        event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        )
    )
    frames += [
        event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": f"token{i} "},
            },
        )
        for i in range(CHUNKS)
    ]
    frames.append(event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    frames.append(
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": CHUNKS},
            },
        )
    )
    frames.append(event("message_stop", {"type": "message_stop"}))
    return "".join(frames).encode()


def _in_memory(vendor: str) -> Any:
    body = _openai_body() if vendor == "openai" else _anthropic_body()

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    settings = ModelSettings(
        provider=vendor,
        model="bench-model",
        base_url="http://bench.invalid/v1" if vendor == "openai" else "http://bench.invalid",
        api_key_env="BENCH_KEY",
        context_window=1_000_000,
        max_output_tokens=1024,
        temperature=None,
        profile=None,
        sources={},
    )
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    return build_provider(settings, {"BENCH_KEY": KEY}, http_client=client)


async def _run(root: Path, turns: int, make_provider: Callable[[], Any], scripted: bool) -> tuple[int, float]:
    """`turns` one-turn sessions (a real request sends the whole transcript, and the SDK walks it
    to build the body: a fresh session per turn keeps that cost, which is per request and not per
    chunk, the same in every turn)."""
    provider = make_provider()
    store = JsonlFileEventStore(root / "sessions")
    engine = SessionEngine(store, provider, permissions=PermissionEngine(PolicyConfig(default="allow")))
    step = Step(text=[f"token{i} " for i in range(CHUNKS)])
    sessions = []
    async with engine:
        started = time.perf_counter()
        for _ in range(turns):
            session_id = await engine.create_session(root)
            sessions.append(session_id)
            if scripted:
                provider.assign(session_id, [step])
            await engine.start_turn(session_id, "go").wait()
        elapsed = time.perf_counter() - started
    if not scripted:
        await provider.aclose()
    store.close()
    return sum(store.log(session_id).last_sequence for session_id in sessions), elapsed


def _best_cost(turns: int, make_provider: Callable[[], Any], scripted: bool, repeats: int) -> float:
    """Seconds per stored event, best of `repeats` runs."""
    best = float("inf")
    for _ in range(repeats):
        root = Path(tempfile.mkdtemp(prefix="bench-providers-"))
        try:
            events, elapsed = anyio.run(_run, root, turns, make_provider, scripted)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        best = min(best, elapsed / events)
    return best


def bench_providers(turns: int = 200, repeats: int = 3) -> list[tuple[str, float, float, str, float]]:
    """Rows: (name, adapter overhead µs per chunk, scripted µs per event, verdict, adapter µs per event).

    The adapter and scripted runs alternate, so a busy spell of the machine falls on both.
    """
    rows = []
    for vendor in ("openai", "anthropic"):
        scripted = adapter = float("inf")
        for _ in range(repeats):
            scripted = min(scripted, _best_cost(turns, ScriptedProvider, True, 1))
            adapter = min(adapter, _best_cost(turns, lambda v=vendor: _in_memory(v), False, 1))
        # Both runs store the same events, one per chunk but for a few per turn: the difference
        # per event is what the adapter adds per chunk.
        overhead = max(0.0, adapter - scripted)
        verdict = "pass" if overhead <= TARGET_RATIO * scripted else "FAIL"
        rows.append(
            (
                f"provider: {vendor} adapter overhead per chunk",
                overhead * 1e6,
                scripted * 1e6,
                verdict,
                adapter * 1e6,
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    for name, overhead, base, verdict, total in bench_providers(args.turns):
        print(
            f"{name:42} +{overhead:6.1f} µs/chunk  scripted {base:6.1f} µs/event  "
            f"ratio {overhead / base:4.2f} (target <= {TARGET_RATIO:g})  "
            f"[adapter run {total:.1f} µs/event]  {verdict}"
        )


if __name__ == "__main__":
    main()
