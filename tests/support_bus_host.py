"""Helpers for the host side's tests: a host on an engine of scripted agents, what the stream
holds, read back whole, the host's events as they are published (`Heard`), and the two
scenarios the end-to-end tests run on a host (`RENAMING`: one agent whose shell call waits for
an answer; `SPAWNING`: a lead whose sub-agent's write waits)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nats
import orjson
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from agent_tui.bus.protocol import (
    MSG_ID_HEADER,
    STREAM,
    Caller,
    ControlReply,
    control_subject,
    inbox_prefix,
)
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


async def reader(url: str, nkeys_seed: str | None = None) -> tuple[nats.NATS, JetStreamContext]:
    """A connection as a dashboard of bus user `ana` makes it (its replies in `_INBOX_ana`);
    `nkeys_seed`: the path of the nkey seed file it signs in with."""
    client = await nats.connect(
        url, nkeys_seed=nkeys_seed, connect_timeout=5, inbox_prefix=inbox_prefix("ana")
    )
    return client, client.jetstream()


def host_env(tmp_path: Path, config: str = "", **extra: str) -> dict[str, str]:
    """An environment of the test's own: no config of the person running the tests (the sandbox
    off, plus `config`), private runtime and data dirs."""
    import os

    base = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_TUI", "XDG_", "NATS"))}
    for name in ("run", "data", "tmp"):
        (tmp_path / name).mkdir(exist_ok=True, mode=0o700)
    path = tmp_path / f"config-{len(list(tmp_path.glob('config-*.toml')))}.toml"  # each env its own
    path.write_text("[sandbox]\nenabled = false\n" + config)
    base.update(
        AGENT_TUI_CONFIG=str(path),
        XDG_RUNTIME_DIR=str(tmp_path / "run"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        TMPDIR=str(tmp_path / "tmp"),
    )
    base.update(extra)
    return base


def start_agent_tui(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agent_tui", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def wait_for_line(process: subprocess.Popen[str], words: str) -> list[str]:
    """stderr's lines up to the first holding `words` (fails if the process ends first)."""
    assert process.stderr is not None
    seen: list[str] = []
    for line in process.stderr:
        seen.append(line)
        if words in line:
            return seen
    raise AssertionError(f"the process ended ({process.wait()}) before saying {words!r}: {seen}")


async def control(
    client: nats.NATS,
    host: str,
    action: str,
    *,
    request_id: str,
    dashboard: str = "laptop",
    user: str = "ana",
    **fields: Any,
) -> ControlReply:
    """One control request, as a dashboard of bus user `user` sends it, and the host's reply."""
    session_id = fields.pop("session_id", None)
    command = {"verb": action, **({"sessionId": session_id} if session_id else {}), **fields}
    by = Caller(dashboard=dashboard, user="ana", host="laptop-machine").model_dump()
    request = json.dumps({"id": request_id, "by": by, "command": command}).encode()  # the host checks it
    reply = await client.request(control_subject(host, user), request, timeout=10)
    return ControlReply.model_validate_json(reply.data)


class Heard:
    """The host's events as they are published, and a way to wait for one."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._waiters: list[tuple[Callable[[dict[str, Any]], bool], asyncio.Future[dict[str, Any]]]] = []

    async def hear(self, message: Msg) -> None:
        event = orjson.loads(message.data)
        self.events.append(event)
        for wanted, future in self._waiters:
            if not future.done() and wanted(event):
                future.set_result(event)

    async def first(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        for event in self.events:
            if wanted(event):
                return event
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiters.append((wanted, future))
        return await asyncio.wait_for(future, 60)


RENAMING: dict[str, object] = {
    "sessions": [
        {
            "title": "lead",
            "cwd": "ws",
            "prompt": "Rename src/foo.py to bar.py",
            "steps": [
                {
                    "text": ["Renaming."],
                    "toolCalls": [{"tool": "shell", "args": {"cmd": "mv src/foo.py src/bar.py"}}],
                },
                {"text": ["Done."]},
            ],
        }
    ]
}


SPAWNING: dict[str, object] = {
    "policy": {"byRisk": {"read": "allow", "write": "ask", "execute": "allow"}},
    "sessions": [
        {
            "title": "lead",
            "agentName": "lead",
            "cwd": "ws",
            "prompt": "hand the writing over",
            "steps": [
                {
                    "text": ["x"],
                    "toolCalls": [{"tool": "spawn_agent", "args": {"agentName": "writer", "prompt": "p"}}],
                },
                {"text": ["w"], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
                {"text": ["done"]},
            ],
        }
    ],
    "agents": {
        "writer": {
            "steps": [
                {
                    "text": ["writing"],
                    "toolCalls": [{"tool": "write_file", "args": {"path": "x.txt", "content": "x"}}],
                },
                {"text": ["ok"]},
            ]
        }
    },
}
