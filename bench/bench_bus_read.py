"""Reading the events stream with the NATS client three ways, in CPU seconds of the reading
process: the ordered push consumer an attached dashboard uses (the baseline), a pull consumer's
`fetch` in batches, and JetStream's batched direct get. A batched read would only shorten an
attach's catch-up if the client took each message for less work than the ordered consumer does.

Run alone: `python bench/bench_bus_read.py [--events N]` (100 sessions, as bench_bus_attach).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import nats
import orjson
from bench_bus_attach import _logs, _publish
from bench_bus_host import _server
from bench_log import Row
from nats.aio.msg import Msg
from nats.js import api

from agent_tui.bus.protocol import ALL_EVENTS, STREAM

BATCH = 5_000

Reader = Callable[[nats.NATS, int], Awaitable[None]]


async def _ordered(client: nats.NATS, total: int) -> None:
    taken = 0
    done = asyncio.Event()

    async def take(_message: Msg) -> None:
        nonlocal taken
        taken += 1
        if taken >= total:
            done.set()

    await client.jetstream().subscribe(
        ALL_EVENTS,
        stream=STREAM,
        cb=take,
        ordered_consumer=True,
        pending_msgs_limit=total,
        pending_bytes_limit=total * 1024,
    )
    await done.wait()


async def _fetched(client: nats.NATS, total: int) -> None:
    config = api.ConsumerConfig(ack_policy=api.AckPolicy.NONE, inactive_threshold=30)
    pull = await client.jetstream().pull_subscribe(ALL_EVENTS, stream=STREAM, config=config)
    taken = 0
    while taken < total:
        taken += len(await pull.fetch(BATCH, timeout=10))


async def _direct(client: nats.NATS, total: int) -> None:
    taken, next_sequence = 0, 1
    batch_end = asyncio.Event()

    async def take(message: Msg) -> None:
        nonlocal taken, next_sequence
        headers = message.headers or {}
        if "Status" in headers:  # 204: the end of this batch
            batch_end.set()
            return
        taken += 1
        next_sequence = int(headers["Nats-Sequence"]) + 1

    inbox = client.new_inbox()
    await client.subscribe(inbox, cb=take, pending_msgs_limit=total, pending_bytes_limit=total * 1024)
    while taken < total:
        batch_end.clear()
        request = orjson.dumps({"seq": next_sequence, "batch": BATCH})
        await client.publish(f"$JS.API.DIRECT.GET.{STREAM}", request, reply=inbox)
        await batch_end.wait()


async def _cpu_seconds(url: str, read: Reader, total: int) -> float:
    client = await nats.connect(url)
    try:
        started = time.process_time()
        await read(client, total)
        return time.process_time() - started
    finally:
        await client.close()


async def _allow_direct(url: str) -> None:
    client = await nats.connect(url)
    js = client.jetstream()
    config = (await js.stream_info(STREAM)).config
    config.allow_direct = True
    await js.update_stream(config)
    await client.close()


def bench_bus_read(events: int = 200_000) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-read-") as tmp:
        root = Path(tmp)
        process, url = _server(root / "store")
        try:
            total = asyncio.run(_publish(url, _logs(root, events)))
            asyncio.run(_allow_direct(url))
            ordered = asyncio.run(_cpu_seconds(url, _ordered, total))
            rows = []
            for name, read in ((f"pull fetch({BATCH})", _fetched), (f"direct get batch {BATCH}", _direct)):
                seconds = asyncio.run(_cpu_seconds(url, read, total))
                rows.append(
                    Row(
                        name=f"read {total:,} events by {name} (CPU)",
                        measured=seconds,
                        baseline=ordered,
                        ratio=seconds / ordered,
                        target="< 1.0x of ordered",
                        passed=seconds < ordered,
                        unit="s",
                    )
                )
        finally:
            process.kill()
            process.wait()
    return rows


if __name__ == "__main__":
    from bench_log import format_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    print(format_table(bench_bus_read(parser.parse_args().events)))
