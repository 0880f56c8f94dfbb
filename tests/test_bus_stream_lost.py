"""A stream deleted under a running host (an administrator's `nats stream rm`): the host makes
it again and publishes every session again from its logs, saying so in one line, with no
traceback; a real `agent-tui run --bus` process and a real server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest
from nats.js import JetStreamContext
from support_bus_host import (
    RENAMING,
    control,
    host_env,
    log_lines,
    reader,
    start_agent_tui,
    stream_lines,
    wait_for_line,
)
from support_nats import NatsServer, nats_server
from test_bus_host_cli import first_request

from agent_tui.bus.protocol import MSG_ID_HEADER, STREAM

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio
GONE = f"the stream {STREAM} was gone from the bus"


async def held_until(stream: JetStreamContext, session_id: str, count: int) -> list[bytes]:
    """The stream's messages of one session, once it holds `count` of them (read as they come)."""
    held: list[bytes] = []
    subscription = await stream.subscribe(">", ordered_consumer=True, stream=STREAM)
    try:
        while len(held) < count:
            message = await subscription.next_msg(timeout=30)
            if (message.headers or {}).get(MSG_ID_HEADER, "").rpartition(":")[0] == session_id:
                held.append(message.data)
    finally:
        await subscription.unsubscribe()
    return held


async def test_a_deleted_stream_is_made_again_and_refilled_from_the_logs_in_one_line(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "ws" / "src" / "foo.py").write_text("x = 1\n")
    scenario = tmp_path / "scenario.json"
    scenario.write_bytes(orjson.dumps(RENAMING))
    sessions = tmp_path / "sessions"
    client, stream = await reader(nats_server.url)
    asked = await first_request(client, "box")
    args = ["run", str(scenario), "--sessions-dir", str(sessions), "--approve", "ask"]
    process = start_agent_tui([*args, "--bus", nats_server.url, "--host", "box"], host_env(tmp_path))
    session_id, request_id = await asyncio.wait_for(asked, 60)
    logged = log_lines(sessions)[session_id]  # the run waits for the answer: its log stays put
    assert await held_until(stream, session_id, len(logged)) == logged

    await stream.delete_stream(STREAM)  # the host is idle: only the server's advisory tells it
    try:
        said = await asyncio.wait_for(asyncio.to_thread(wait_for_line, process, GONE), 60)
    except TimeoutError:
        process.kill()  # ends the read of its stderr too
        pytest.fail(f"the host never said it made the stream again: {process.communicate()[1][-2000:]}")
    assert await held_until(stream, session_id, len(logged)) == logged

    answered = await control(
        client,
        "box",
        "answer",
        request_id="a1",
        session_id=session_id,
        requestId=request_id,
        decision="allow",
    )
    assert answered.ok, answered.message
    _, rest = process.communicate(timeout=60)
    stderr = "".join(said) + rest
    assert process.returncode == 0, stderr
    assert stderr.count(GONE) == 1, stderr
    assert "Traceback" not in stderr and "exception" not in stderr.lower(), stderr
    held, _ = await stream_lines(stream)
    assert held == log_lines(sessions)  # the whole log again, the later events too, once each
    await client.close()
