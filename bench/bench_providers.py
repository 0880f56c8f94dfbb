"""Model adapters: the engine driven by a real adapter whose stream is already in memory, against
the engine driven by the scripted provider, in the same run.

The adapters are pointed at an in-process transport (`httpx2.MockTransport` through the SDK's
`http_client=`): no socket and no server, but the SDK's whole path is real (the request built and
sent, the response's SSE decoded, each event's JSON parsed) and then ours (the event mapped to
the port, the retry wrapper). Each call streams its text in chunks and ends with usage, so both
runs store the same events.

A call costs a fixed part (the SDK builds and sends a request; the engine opens and closes a
step) and a part per chunk. Both runs are timed at two answer lengths, `SHORT` and `LONG`
chunks, and the difference between the lengths gives each run's cost per chunk, free of the
fixed part:

- overhead per chunk = (adapter's cost per chunk) - (scripted run's cost per chunk); the target:
  at most twice the scripted run's whole cost per stored event (answers of `LONG` chunks);
- overhead per call = what the adapter adds to a call beyond its chunks (mostly the SDK building
  the request, well under a millisecond beside a network round trip): informational.

    .venv/bin/python bench/bench_providers.py [--turns N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
from bench_log import Row, format_table

from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import PermissionEngine, PolicyConfig
from agent_tui.engine.scenario import Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.providers.config import ModelSettings
from agent_tui.providers.factory import build_provider
from agent_tui.store import JsonlFileEventStore

SHORT = 10
LONG = 110
TARGET_RATIO = 2.0
KEY = "sk-bench-not-a-real-key"


def _openai_body(chunks: int) -> bytes:
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
    frames += [frame({"content": f"token{i} "}) for i in range(chunks)]
    frames.append(frame({}, finish="stop"))
    frames.append(
        frame(None, usage={"prompt_tokens": 100, "completion_tokens": chunks, "total_tokens": 100 + chunks})
    )
    frames.append("data: [DONE]\n\n")
    return "".join(frames).encode()


def _anthropic_body(chunks: int) -> bytes:
    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    message: dict[str, Any] = {
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
        for i in range(chunks)
    ]
    frames.append(event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    frames.append(
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": chunks},
            },
        )
    )
    frames.append(event("message_stop", {"type": "message_stop"}))
    return "".join(frames).encode()


def _in_memory(vendor: str, chunks: int) -> Any:
    body = _openai_body(chunks) if vendor == "openai" else _anthropic_body(chunks)

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


async def _run(
    root: Path, turns: int, make_provider: Callable[[], Any], chunks: int | None
) -> tuple[int, float]:
    """`turns` one-turn sessions; `chunks` is None for an adapter (its stream is already made),
    else the scripted provider is told to stream that many chunks. A fresh session per turn: a
    real request sends the whole transcript, and the SDK walks it to build the body, so one turn
    per session keeps that cost the same in every turn. Returns (events stored, seconds)."""
    provider = make_provider()
    store = JsonlFileEventStore(root / "sessions")
    engine = SessionEngine(store, provider, permissions=PermissionEngine(PolicyConfig(default="allow")))
    steps = [Step(text=[f"token{i} " for i in range(chunks)])] if chunks is not None else []
    sessions = []
    async with engine:
        started = time.perf_counter()
        for _ in range(turns):
            session_id = await engine.create_session(root)
            sessions.append(session_id)
            if chunks is not None:
                provider.assign(session_id, steps)
            await engine.start_turn(session_id, "go").wait()
        elapsed = time.perf_counter() - started
    if chunks is None:
        await provider.aclose()
    store.close()
    return sum(store.log(session_id).last_sequence for session_id in sessions), elapsed


def _turn_cost(turns: int, make_provider: Callable[[], Any], chunks: int | None) -> tuple[float, float]:
    """(seconds per turn, events per turn) of one run."""
    root = Path(tempfile.mkdtemp(prefix="bench-providers-"))
    try:
        events, elapsed = anyio.run(_run, root, turns, make_provider, chunks)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return elapsed / turns, events / turns


def bench_providers(turns: int = 150, repeats: int = 3) -> list[Row]:
    """Two rows a vendor: the overhead per chunk (with its target) and per call (informational).

    Every timing is the best of `repeats`; the four runs of a vendor (scripted and adapter, short
    and long answers) alternate, so a busy spell of the machine falls on all of them.
    """
    rows = []
    for vendor in ("openai", "anthropic"):
        best: dict[tuple[str, int], float] = {}
        events_long = 0.0
        for _ in range(repeats):
            for chunks in (SHORT, LONG):
                for kind in ("scripted", "adapter"):
                    if kind == "scripted":
                        cost, events = _turn_cost(turns, ScriptedProvider, chunks)
                    else:
                        cost, events = _turn_cost(turns, partial(_in_memory, vendor, chunks), None)
                    best[kind, chunks] = min(best.get((kind, chunks), float("inf")), cost)
                    if kind == "scripted" and chunks == LONG:
                        events_long = events
        span = LONG - SHORT
        adapter_per_chunk = (best["adapter", LONG] - best["adapter", SHORT]) / span
        scripted_per_chunk = (best["scripted", LONG] - best["scripted", SHORT]) / span
        per_chunk = max(0.0, adapter_per_chunk - scripted_per_chunk)
        per_call = max(0.0, best["adapter", SHORT] - best["scripted", SHORT] - SHORT * per_chunk)
        scripted_per_event = best["scripted", LONG] / events_long
        rows.append(
            Row(
                name=f"provider: {vendor} adapter overhead per chunk",
                measured=per_chunk * 1e6,
                baseline=scripted_per_event * 1e6,
                ratio=per_chunk / scripted_per_event,
                target=f"<= {TARGET_RATIO:g}x scripted µs/event",
                passed=per_chunk <= TARGET_RATIO * scripted_per_event,
                unit="µs",
            )
        )
        rows.append(
            Row(
                name=f"provider: {vendor} adapter overhead per call",
                measured=per_call * 1e6,
                baseline=best["scripted", SHORT] * 1e6,
                ratio=per_call / best["scripted", SHORT],
                target="informational (vs a scripted turn)",
                passed=True,
                unit="µs",
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=150)
    args = parser.parse_args()
    print(format_table(bench_providers(args.turns)))


if __name__ == "__main__":
    main()
