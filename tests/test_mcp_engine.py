"""MCP servers in the engine: a real server (the SDK's server side) started with a root session,
its tools called by a scripted model through the one call chain, and every way a call can fail."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from support_engine import HeldPrompter, collect, make_engine, steps, types, workspace
from support_mcp import (
    SERVER,
    assert_gone,
    call,
    http_server,
    of_type,
    pids_written,
    run_one_call,
    stdio_config,
)

from agent_tui.engine.permissions import PermissionAnswer, PolicyConfig
from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events.chains import chain_violations
from agent_tui.mcp.config import McpServerConfig
from agent_tui.mcp.launch import server_dirs
from agent_tui.mcp.servers import McpServers
from agent_tui.store import JsonlEventLog

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class TestStdioServer:
    async def test_tools_are_offered_with_their_schemas_and_a_call_streams_progress_and_completes(
        self, tmp_path: Path
    ) -> None:
        events, provider = await run_one_call(tmp_path, stdio_config(), "mcp__test__count", {"steps": 3})
        offered = {schema["name"]: schema for schema in provider.calls[0].tools}
        assert "read_file" in offered  # the built-ins stay
        assert offered["mcp__test__count"]["input_schema"]["properties"]["steps"]["type"] == "integer"
        assert "mcp__test__echo" in offered
        deltas = [event.payload["text"] for event in of_type(events, "tool.delta")]
        assert deltas == ["step 1 of 3\n", "step 2 of 3\n", "step 3 of 3\n"]
        (completed,) = of_type(events, "tool.completed")
        assert completed.payload["tool"] == "mcp__test__count"
        assert completed.payload["result"] == "counted to 3"
        # The model read the result in its next call.
        assert "counted to 3" in str(provider.calls[1].messages)
        assert types(events)[-1] == "turn.completed"

    async def test_the_server_runs_outside_the_session_directory_without_keys_but_with_its_named_variables(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("MCP_TEST_API_KEY", "sk-never-seen")
        monkeypatch.setenv("MCP_TEST_GRANTED_TOKEN", "granted-value")
        config = stdio_config(env=("MCP_TEST_GRANTED_TOKEN",))
        events, _ = await run_one_call(tmp_path, config, "mcp__test__where", {"variable": "MCP_TEST_API_KEY"})
        result = of_type(events, "tool.completed")[0].payload["result"]
        # A private folder of its own, not the session's directory (tests/test_mcp_confinement.py).
        cwd, variable = result.split(" ")
        assert Path(cwd.removeprefix("cwd=")).parent == server_dirs()
        assert variable == "MCP_TEST_API_KEY=<unset>"
        events, _ = await run_one_call(
            tmp_path, config, "mcp__test__where", {"variable": "MCP_TEST_GRANTED_TOKEN"}
        )
        assert (
            of_type(events, "tool.completed")[0]
            .payload["result"]
            .endswith("MCP_TEST_GRANTED_TOKEN=granted-value")
        )

    async def test_an_image_comes_back_as_a_note(self, tmp_path: Path) -> None:
        events, _ = await run_one_call(tmp_path, stdio_config(), "mcp__test__picture", {})
        result = of_type(events, "tool.completed")[0].payload["result"]
        assert result == "a red dot\n[an image (image/png) the server returned is not shown]"

    async def test_a_turn_that_starts_while_its_tree_opens_the_servers_waits_for_them(
        self, tmp_path: Path
    ) -> None:
        """A root's and its sub-agent's first turns at once: both are offered the tree's tools
        and run them (the second waited for the opening, not went on without it)."""
        cwd = workspace(tmp_path)
        provider = ScriptedProvider()
        servers = McpServers({"test": stdio_config()})
        engine = make_engine(tmp_path, provider, session_tools=servers)
        ran: dict[str, list[str]] = {}
        async with engine:
            root = await engine.create_session(cwd)
            child = await engine.create_session(cwd, parent_session_id=root, agent_name="helper")
            for sid in (root, child):
                provider.assign(
                    sid, steps({"toolCalls": [call("mcp__test__echo", text=sid)]}, {"text": ["done"]})
                )

            async def turn(sid: str) -> None:
                events = await collect(engine.run_turn(sid, "go"))
                ran[sid] = [event.payload["result"] for event in of_type(events, "tool.completed")]

            async with anyio.create_task_group() as group:
                group.start_soon(turn, child)
                group.start_soon(turn, root)
            assert len(servers.started(root)) == 1
        assert ran == {root: [f"echo: {root}"], child: [f"echo: {child}"]}

    async def test_sub_agents_share_the_root_session_servers(self, tmp_path: Path) -> None:
        cwd = workspace(tmp_path)
        servers = McpServers({"test": stdio_config()})
        engine = make_engine(tmp_path, ScriptedProvider(), session_tools=servers)
        async with engine:
            root = await engine.create_session(cwd)
            child = await engine.create_session(cwd, parent_session_id=root, agent_name="helper")
            assert servers.started(root) == []  # they start with the tree's first turn
            tools = await engine.tree_tools(engine.session(child))
            assert tools is not None and "mcp__test__echo" in tools.names()
            assert await engine.tree_tools(engine.session(root)) is tools
            assert len(servers.started(root)) == 1 and servers.started(child) == []

    async def test_a_root_let_go_and_read_again_gets_its_trees_servers_again(self, tmp_path: Path) -> None:
        """The dashboard lets go of a finished session it read on demand (`forget_session`):
        its tree's servers stop with it, and its next turn, read again, starts and offers them."""
        cwd = workspace(tmp_path)
        provider = ScriptedProvider()
        servers = McpServers({"test": stdio_config()})
        engine = make_engine(tmp_path, provider, session_tools=servers)
        async with engine:
            root = await engine.create_session(cwd)
            for _ in range(2):
                provider.assign(
                    root, steps({"toolCalls": [call("mcp__test__echo", text="hi")]}, {"text": ["ok"]})
                )
                events = await collect(engine.run_turn(root, "go"))
                assert [e.payload["result"] for e in of_type(events, "tool.completed")] == ["echo: hi"]
                engine.forget_session(root)
                assert servers.started(root) == []  # stopped with it
                engine.load_session(root)


class TestPermissions:
    async def test_a_call_is_execute_by_default_and_the_read_only_hint_is_shown_not_trusted(
        self, tmp_path: Path
    ) -> None:
        events, _ = await run_one_call(tmp_path, stdio_config(), "mcp__test__echo", {"text": "hi"})
        (requested,) = of_type(events, "permission.requested")
        assert requested.payload["risk"] == "execute"
        assert requested.payload["reason"] == "MCP server test, tool echo (the server says it only reads)"

    async def test_the_risk_the_user_set_per_server_and_per_tool_is_the_risk(self, tmp_path: Path) -> None:
        config = stdio_config(risk="network", tool_risks={"echo": "read"})
        events, _ = await run_one_call(tmp_path, config, "mcp__test__echo", {"text": "hi"})
        assert of_type(events, "permission.requested")[0].payload["risk"] == "read"
        events, _ = await run_one_call(tmp_path, config, "mcp__test__count", {"steps": 1})
        assert of_type(events, "permission.requested")[0].payload["risk"] == "network"

    async def test_a_denied_call_never_reaches_the_server(self, tmp_path: Path) -> None:
        events, _ = await run_one_call(
            tmp_path,
            stdio_config(),
            "mcp__test__count",
            {"steps": 2},
            policy=PolicyConfig(default="ask"),
            approve="deny",
        )
        assert "tool.started" not in types(events)
        assert "tool.delta" not in types(events)
        (failed,) = of_type(events, "tool.failed")
        assert failed.payload["errorCode"] == "permission_denied"
        assert types(events)[-1] == "turn.completed"

    async def test_an_answer_for_the_session_is_remembered_for_that_server_and_tool_only(
        self, tmp_path: Path
    ) -> None:
        cwd = workspace(tmp_path)
        provider = ScriptedProvider()
        prompter = HeldPrompter()
        servers = McpServers({"test": stdio_config()})
        engine = make_engine(
            tmp_path, provider, policy=PolicyConfig(default="ask"), approve=None, session_tools=servers
        )
        engine.questions.answerer = prompter.ask
        async with engine:
            sid = await engine.create_session(cwd)
            provider.assign(
                sid,
                steps(
                    {"text": ["1"], "toolCalls": [call("mcp__test__echo", text="a")]},
                    {"text": ["2"], "toolCalls": [call("mcp__test__echo", text="b")]},
                    {"text": ["3"], "toolCalls": [call("mcp__test__count", steps=1)]},
                    {"text": ["done"]},
                ),
            )
            async with anyio.create_task_group() as group:
                handle = engine.start_turn(sid, "go")
                first = await prompter.next_request()
                assert first.tool == "mcp__test__echo" and first.args == {"text": "a"}
                prompter.answer(first, PermissionAnswer("allow", remember="session"))
                second = await prompter.next_request()  # echo "b" was not asked again
                assert second.tool == "mcp__test__count"
                prompter.answer(second, PermissionAnswer("deny"))
                await handle.wait()
                group.cancel_scope.cancel()
        assert len(prompter.requests) == 2


class TestFailures:
    async def test_a_server_that_cannot_start_leaves_the_session_working_without_it(
        self, tmp_path: Path
    ) -> None:
        broken = McpServerConfig("broken", command=str(tmp_path / "no-such-server"))
        servers = McpServers({"broken": broken, "test": stdio_config()})
        cwd = workspace(tmp_path)
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider, session_tools=servers)
        async with engine:
            sid = await engine.create_session(cwd)
            provider.assign(
                sid, steps({"text": ["x"], "toolCalls": [call("mcp__broken__anything")]}, {"text": ["ok"]})
            )
            events = await collect(engine.run_turn(sid, "try"))
            (down, up) = servers.started(sid)
            assert down.status == "failed"
            assert down.reason == f"cannot run {tmp_path / 'no-such-server'}: no such program"
            assert up.status == "running"
        failed = of_type(events, "tool.failed")[0].payload
        assert failed["errorCode"] == "not_found"
        assert "unknown tool 'mcp__broken__anything'" in failed["message"]
        assert types(events)[-1] == "turn.completed"

    async def test_a_server_that_crashes_mid_call_fails_the_call_and_the_turn_goes_on(
        self, tmp_path: Path
    ) -> None:
        cwd = workspace(tmp_path)
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider, session_tools=McpServers({"test": stdio_config()}))
        async with engine:
            sid = await engine.create_session(cwd)
            provider.assign(
                sid,
                steps(
                    {"text": ["x"], "toolCalls": [call("mcp__test__crash")]},
                    {"text": ["y"], "toolCalls": [call("mcp__test__echo", text="again")]},
                    {"text": ["carried on"]},
                ),
            )
            events = await collect(engine.run_turn(sid, "crash it"))
        assert chain_violations(list(engine.store.replay(sid))) == []
        crashed, after = (event.payload for event in of_type(events, "tool.failed"))
        assert crashed["errorCode"] == "io_error"
        assert crashed["message"] == "MCP server test exited during the call (crash has no result)"
        assert after["message"] == "MCP server test is not running: it exited during a call"
        end = of_type(events, "turn.completed")[0].payload
        assert end["stopReason"] == "final"

    async def test_a_call_past_the_timeout_fails_as_timeout(self, tmp_path: Path) -> None:
        config = stdio_config(timeout=1.0)
        events, _ = await run_one_call(tmp_path, config, "mcp__test__hang", {})
        failed = of_type(events, "tool.failed")[0].payload
        assert failed["errorCode"] == "timeout"
        assert failed["message"] == "MCP server test did not answer hang within 1 s"
        assert of_type(events, "turn.completed")[0].payload["stopReason"] == "final"

    async def test_a_cancel_during_a_call_ends_the_turn_and_the_server_and_its_children_stop_with_the_session(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        pidfile = tmp_path / "pids"
        monkeypatch.setenv("MCP_TEST_PIDS", str(pidfile))
        config = stdio_config(env=("MCP_TEST_PIDS",))
        cwd = workspace(tmp_path)
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider, session_tools=McpServers({"test": config}))
        async with engine:
            sid = await engine.create_session(cwd)
            provider.assign(
                sid, steps({"text": ["x"], "toolCalls": [call("mcp__test__hang")]}, {"text": ["no"]})
            )
            handle = engine.start_turn(sid, "hang")
            pids = await pids_written(pidfile)
            engine.cancel_turn(sid)
            assert await handle.wait() == "cancelled"
            engine.dispose_session(sid)
        assert_gone(pids)

    async def test_a_malformed_result_fails_the_call_with_what_was_wrong(self, tmp_path: Path) -> None:
        config = McpServerConfig("raw", command=sys.executable, args=(str(SERVER), "malformed"))
        events, _ = await run_one_call(tmp_path, config, "mcp__raw__odd", {})
        failed = of_type(events, "tool.failed")[0].payload
        assert failed["errorCode"] == "unknown"
        assert (
            failed["message"]
            == "MCP server raw answered odd with a malformed result (content: Input should be a valid list)"
        )
        assert of_type(events, "turn.completed")[0].payload["stopReason"] == "final"


class TestHttpServer:
    async def test_a_streamable_http_server_on_loopback_is_listed_and_called(self, tmp_path: Path) -> None:
        with http_server() as url:
            config = McpServerConfig("web", url=url)
            events, provider = await run_one_call(tmp_path, config, "mcp__web__echo", {"text": "over http"})
        assert of_type(events, "tool.completed")[0].payload["result"] == "echo: over http"
        assert "mcp__web__count" in {schema["name"] for schema in provider.calls[0].tools}


class TestWorkbench:
    async def test_an_agent_started_from_the_form_gets_the_servers_of_its_models_profile_and_hears_of_one_that_failed(
        self, tmp_path: Path
    ) -> None:
        from agent_tui.runtime.model_router import ModelChoice
        from agent_tui.runtime.workbench import AgentSpec, Workbench

        provider = ScriptedProvider()
        configs = {
            "test": stdio_config(profiles=("work",)),
            "gone": McpServerConfig("gone", command=str(tmp_path / "missing")),
        }
        notices: list[str] = []
        workbench = Workbench.for_project(
            project=tmp_path,
            sessions_dir=tmp_path / "s",
            models=[ModelChoice("work", "scripted", build=lambda: provider)],
            questions=Questions(fixed_answer("allow")),
            mcp_servers=configs,
            notice=notices.append,
        )
        async with workbench.engine:
            sid = await workbench.start_agent(AgentSpec("use the server", workspace(tmp_path), model="work"))
            provider.assign(
                sid,
                steps({"text": ["x"], "toolCalls": [call("mcp__test__echo", text="hi")]}, {"text": ["ok"]}),
            )
            await workbench.engine.session(sid).turn.wait()  # type: ignore[union-attr]
            assert await workbench.close()
        workbench.close_store()
        events = list(JsonlEventLog(tmp_path / "s" / f"{sid}.jsonl").replay("strict"))
        assert of_type(events, "tool.completed")[0].payload["result"] == "echo: hi"
        assert notices == [
            f"MCP server gone did not start: cannot run {tmp_path / 'missing'}: no such program"
        ]
