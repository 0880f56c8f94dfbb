"""`agent-tui acp` seen by a plain SDK client: version negotiation and `session/load` from our logs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.connection import StreamDirection, StreamEvent
from acp.schema import Implementation, SessionNotification
from acp_support import PASS_ON, Harness, QueuePrompter, WireValidator, server_config

from agent_tui.engine.permissions import PermissionAnswer

pytestmark = pytest.mark.anyio


class Collector:
    """The smallest ACP client. It keeps the session updates as they are read off the wire (an
    observer of the connection), so an answer never overtakes the updates sent before it."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.first = anyio.Event()

    def observe(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction is StreamDirection.INCOMING and message.get("method") == "session/update":
            self.updates.append(SessionNotification.model_validate(message["params"]).update)
            self.first.set()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None


def pass_on() -> dict[str, str]:
    return {name: os.environ[name] for name in PASS_ON if name in os.environ}


def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.json"
    steps = [
        {"text": ["Listing."], "toolCalls": [{"tool": "shell", "args": {"cmd": "echo listed"}}]},
        {"text": ["Listed."]},
    ]
    path.write_text(
        json.dumps({"sessions": [{"prompt": "-", "steps": steps}], "policy": {"default": "allow"}})
    )
    return path


def serve(tmp_path: Path, collector: Collector, validator: WireValidator):
    args = [
        "-m",
        "agent_tui",
        "acp",
        "--scenario",
        str(scenario(tmp_path)),
        "--sessions-dir",
        str(tmp_path / "server"),
    ]
    return spawn_agent_process(
        collector,  # type: ignore[arg-type]  # a partial client: only the calls these tests get
        sys.executable,
        *args,
        env=pass_on(),
        observers=[collector.observe, validator],
    )


async def test_an_older_or_newer_client_gets_our_version_and_a_notice(tmp_path: Path) -> None:
    validator = WireValidator()
    async with serve(tmp_path, Collector(), validator) as (conn, process):
        answer = await conn.initialize(protocol_version=PROTOCOL_VERSION + 1)
        assert answer.protocol_version == PROTOCOL_VERSION
        assert answer.agent_capabilities is not None and answer.agent_capabilities.load_session
    notice = (await process.stderr.read()).decode()
    assert f"asked for ACP protocol version {PROTOCOL_VERSION + 1}; agent-tui speaks version 1" in notice
    assert validator.problems == []


async def test_a_notice_quoting_the_client_shows_its_control_codes_as_markers(tmp_path: Path) -> None:
    async with serve(tmp_path, Collector(), WireValidator()) as (conn, process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION + 1,
            client_info=Implementation(name="zed\x1b]0;owned\x07\x1b[2J", version="1"),
        )
    notice = (await process.stderr.read()).decode()
    assert "the client zed" in notice and "asked for ACP protocol version" in notice
    assert "\x1b" not in notice and "\x07" not in notice


async def test_a_session_loads_from_our_log_and_replays_its_history(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    prompter = QueuePrompter(lambda request: PermissionAnswer("allow"))
    async with Harness(tmp_path / "client", prompter) as harness:
        first = await harness.agents.start(
            server_config(scenario(tmp_path), tmp_path / "server"), workspace, prompt="List"
        )
        assert await first.turn.wait() == "final"  # type: ignore[union-attr]
    session_id = first.acp_session_id
    assert session_id is not None

    collector = Collector()
    validator = WireValidator()
    async with serve(tmp_path, collector, validator) as (conn, _process):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        history = [(update.session_update, getattr(update, "status", None)) for update in collector.updates]
        assert history == [
            ("user_message_chunk", None),
            ("agent_message_chunk", None),
            ("tool_call", "pending"),
            ("tool_call_update", "in_progress"),
            ("tool_call_update", None),
            ("tool_call_update", "completed"),
            ("agent_message_chunk", None),
        ]
        assert collector.updates[0].content.text == "List"
        assert collector.updates[-2].raw_output["result"] == "listed\n"
        # The loaded session takes further prompts (the script is over: the scripted model says so).
        collector.updates.clear()
        answer = await conn.prompt(session_id=session_id, prompt=[text_block("More?")])
        assert answer.stop_reason == "end_turn"
        assert [update.content.text for update in collector.updates] == ["(end of script)"]

        with pytest.raises(RequestError, match="Invalid params") as wrong_place:
            await conn.load_session(cwd=str(tmp_path), session_id=session_id, mcp_servers=[])
        assert "works in" in str(wrong_place.value.data)
        with pytest.raises(RequestError) as unknown:
            await conn.load_session(cwd=str(workspace), session_id="sess_000000000000", mcp_servers=[])
        assert "no session sess_000000000000" in str(unknown.value.data)
    assert validator.problems == []
    assert [error["method"] for error in validator.errors] == ["session/load", "session/load"]


async def test_a_second_prompt_while_one_runs_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "slow.json"
    steps = [{"text": [f"{n} " for n in range(50)], "delayMs": 200}]
    path.write_text(json.dumps({"sessions": [{"prompt": "-", "steps": steps}]}))
    args = ["-m", "agent_tui", "acp", "--scenario", str(path), "--sessions-dir", str(tmp_path / "server")]
    collector = Collector()
    async with spawn_agent_process(
        collector,  # type: ignore[arg-type]  # a partial client: only the calls these tests get
        sys.executable,
        *args,
        env=pass_on(),
        observers=[collector.observe],
    ) as (
        conn,
        _process,
    ):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        async with anyio.create_task_group() as group:

            async def prompt() -> None:
                await conn.prompt(session.session_id, [text_block("go")])

            group.start_soon(prompt)
            await collector.first.wait()
            with pytest.raises(RequestError, match="Invalid request") as refused:
                await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
            assert "already running" in str(refused.value.data)
            await conn.cancel(session_id=session.session_id)


async def test_a_prompt_on_a_session_another_process_holds_is_refused_naming_it(tmp_path: Path) -> None:
    from store_writer import Writer

    workspace = tmp_path / "ws"
    workspace.mkdir()
    prompter = QueuePrompter(lambda request: PermissionAnswer("allow"))
    async with Harness(tmp_path / "client", prompter) as harness:
        first = await harness.agents.start(
            server_config(scenario(tmp_path), tmp_path / "server"), workspace, prompt="List"
        )
        assert await first.turn.wait() == "final"  # type: ignore[union-attr]
    session_id = first.acp_session_id
    assert session_id is not None
    log = tmp_path / "server" / f"{session_id}.jsonl"
    holder = Writer(tmp_path / "server", session_id)
    try:
        assert holder.ask("claim") == "claimed"
        before = log.read_bytes()
        async with serve(tmp_path, Collector(), WireValidator()) as (conn, _process):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            # Reading it is fine: only writing waits for the lock.
            await conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
            with pytest.raises(RequestError, match="Invalid request") as refused:
                await conn.prompt(session_id=session_id, prompt=[text_block("More?")])
            assert f"is open in agent-tui pid {holder.pid} since " in str(refused.value.data)
            assert log.read_bytes() == before
            assert holder.ask("release") == "released"
            answer = await conn.prompt(session_id=session_id, prompt=[text_block("More?")])
            assert answer.stop_reason == "end_turn"
    finally:
        holder.close()
