"""A turn stopped in the middle of a model's stream ends without a word on stderr.

When the engine stops reading a stream between two chunks (a cancel, Ctrl-C), the vendor SDK's
chain of async generators over the HTTP body is left suspended, and it holds itself in a
reference cycle: only the cyclic collector, or the event loop's shutdown, closes it. With
httpcore2 before 2.13 that close raised inside the HTTP library, and asyncio printed "an error
occurred during closing of asynchronous generator" with a traceback when `agent-tui run` exited
after Ctrl-C. These tests keep the collector out of the way so the chain is still there when the
loop shuts down (the case that printed), and check that asyncio reported nothing.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from fake_model_server import FakeModelServer, Stream, anthropic_stream, openai_stream
from support_providers import cancel_on_first_delta, fake_model_server  # noqa: F401 - fixture

# Each stream sends its first text delta, then stays open and silent; the turn is cancelled on
# that delta, so the engine stops with the SDK's generators suspended between chunks.
HELD_STREAMS = {
    "openai": Stream(openai_stream(["first ", "second "]), hold_after=2),
    "anthropic": Stream(anthropic_stream(["first ", "second "]), hold_after=4),
}


@pytest.fixture
def collector_paused() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("vendor", sorted(HELD_STREAMS))
@pytest.mark.usefixtures("collector_paused")
def test_a_turn_cancelled_between_chunks_leaves_nothing_for_asyncio_to_report(
    vendor: str, server: FakeModelServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.script(HELD_STREAMS[vendor])
    base_url = server.openai_url if vendor == "openai" else server.anthropic_url
    with caplog.at_level(logging.DEBUG, logger="asyncio"):
        events, saw_close = anyio.run(cancel_on_first_delta, server, vendor, base_url, tmp_path)
    assert saw_close
    assert events[-1].payload["stopReason"] == "cancelled"
    reported = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert reported == []
