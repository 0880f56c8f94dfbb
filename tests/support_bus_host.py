"""Helpers for the host side's tests: a host on an engine of scripted agents, and what the
stream holds, read back whole."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path

import nats
from nats.js import JetStreamContext

from agent_tui.bus.protocol import MSG_ID_HEADER, STREAM
from agent_tui.store.jsonl import iter_lines


def log_lines(sessions_dir: Path) -> dict[str, list[bytes]]:
    """Every complete line of every log, by session."""
    return {
        path.stem: [line for _, line, complete in iter_lines(path) if complete]
        for path in sorted(sessions_dir.glob("*.jsonl"))
    }


async def stream_lines(stream: JetStreamContext) -> tuple[dict[str, list[bytes]], list[str]]:
    """What the events stream holds, by session (in stream order), and every message id."""
    info = await stream.stream_info(STREAM)
    by_session: dict[str, list[bytes]] = defaultdict(list)
    ids: list[str] = []
    if info.state.messages == 0:
        return {}, []
    subscription = await stream.subscribe(">", ordered_consumer=True, stream=STREAM)
    try:
        for _ in range(info.state.messages):
            message = await subscription.next_msg(timeout=10)
            msg_id = (message.headers or {}).get(MSG_ID_HEADER, "")
            ids.append(msg_id)
            by_session[msg_id.rpartition(":")[0]].append(message.data)
    finally:
        await subscription.unsubscribe()
    return dict(by_session), ids


async def reader(url: str, token: str | None = None) -> tuple[nats.NATS, JetStreamContext]:
    client = await nats.connect(url, token=token, connect_timeout=5)
    return client, client.jetstream()


def counting_listener(target: int) -> tuple[asyncio.Event, list[int]]:
    """An event set once `target` events were heard, and the count."""
    reached = asyncio.Event()
    count = [0]
    return reached, count
