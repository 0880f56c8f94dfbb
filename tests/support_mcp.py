"""The test MCP server (`mcp_test_server.py`, written with the SDK's server side), started for real:
as a stdio server a config names, or as a streamable-HTTP one on loopback."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
from support_engine import collect, make_engine, steps, workspace

from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.mcp.config import McpServerConfig
from agent_tui.mcp.servers import McpServers

SERVER = Path(__file__).with_name("mcp_test_server.py")
CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\u202c")
"""The control codes the hostile server sends (`mcp_test_server.HOSTILE_TEXT`): none may reach a
terminal."""


def stdio_config(name: str = "test", **settings: Any) -> McpServerConfig:
    """A stdio server running the test server with this Python."""
    return McpServerConfig(name, command=sys.executable, args=(str(SERVER), "stdio"), **settings)


def raw_config(mode: str, **settings: Any) -> McpServerConfig:
    """A server written by hand (`malformed`, `mute`, `orphans`, `hostile`), named after its mode."""
    return McpServerConfig(mode, command=sys.executable, args=(str(SERVER), mode), **settings)


def stdio_toml(name: str = "test", extra: str = "") -> str:
    """The same server as an `[mcp.NAME]` table of a config file."""
    return f'[mcp.{name}]\ncommand = "{sys.executable}"\nargs = ["{SERVER}", "stdio"]\n{extra}\n'


@contextmanager
def http_server(mode: str = "http") -> Iterator[str]:
    """The test server over streamable HTTP on a free loopback port (`http-json`: answering with
    plain JSON); yields its URL."""
    process = subprocess.Popen(
        [sys.executable, str(SERVER), mode], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting for its parent counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


async def pids_written(path: Path) -> list[int]:
    """The two pids the `hang` tool writes (the file is its only signal); fails rather than hangs."""
    with anyio.fail_after(30):
        while not path.exists():
            await anyio.sleep(0.02)
    return [int(pid) for pid in path.read_text().split()]


def assert_gone(pids: list[int]) -> None:
    """Every one of these processes ended (the kernel may take a moment after the kill)."""
    for pid in pids:
        deadline = time.monotonic() + 10.0
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not alive(pid), f"process {pid} outlived its session"


def call(tool: str, **args: object) -> dict:
    """A tool call a scripted model makes."""
    return {"tool": tool, "args": args}


def of_type(events: list[Event], kind: str) -> list[Event]:
    return [event for event in events if event.type == kind]


async def run_one_call(
    tmp_path: Path, config: McpServerConfig, tool: str, args: dict, **engine_args: object
) -> tuple[list[Event], ScriptedProvider]:
    """One turn of a scripted model that calls `tool` on the server `config` declares, then ends;
    the events of the turn (their chains checked) and the model (what it was offered and read)."""
    cwd = workspace(tmp_path)
    provider = ScriptedProvider()
    servers = McpServers({config.name: config})
    engine = make_engine(tmp_path, provider, session_tools=servers, **engine_args)  # type: ignore[arg-type]
    async with engine:
        sid = await engine.create_session(cwd)
        provider.assign(
            sid, steps({"text": ["calling"], "toolCalls": [call(tool, **args)]}, {"text": ["done"]})
        )
        events = await collect(engine.run_turn(sid, "use the server"))
    assert chain_violations(list(engine.store.replay(sid))) == []
    return events, provider
