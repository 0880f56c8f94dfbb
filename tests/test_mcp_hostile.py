"""MCP servers that do not play fair, and a repository that tries to bring its own: a server that
never answers `initialize` or exits leaving a child behind, control codes in names and results,
names that shadow others, a claimed `readOnlyHint`, a 100 MB answer, endless progress."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from support_engine import collect, make_engine, steps, types, workspace
from support_mcp import (
    CONTROLS,
    assert_gone,
    call,
    http_server,
    of_type,
    pids_written,
    raw_config,
    run_one_call,
    stdio_config,
)

from agent_tui.engine.permissions import PolicyConfig
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.engine.tools.shell_setup import ShellSetup, use_shell_setup
from agent_tui.events.terminal_text import visible
from agent_tui.mcp.config import McpServerConfig
from agent_tui.mcp.connection import MAX_TOOLS
from agent_tui.mcp.listing import servers_report
from agent_tui.mcp.servers import McpServers
from agent_tui.mcp.stdio import MAX_LINE

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def pidfile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "pids"
    monkeypatch.setenv("MCP_TEST_PIDS", str(path))
    return path


class TestStartUp:
    async def test_a_server_that_never_answers_initialize_is_left_out_after_its_startup_timeout(
        self, tmp_path: Path, pidfile: Path
    ) -> None:
        notices: list[str] = []
        servers = McpServers(
            {
                "mute": raw_config("mute", env=("MCP_TEST_PIDS",), startup_timeout=3.0),
                "test": stdio_config(),
            },
            notice=notices.append,
        )
        cwd = workspace(tmp_path)
        provider = ScriptedProvider()
        engine = make_engine(tmp_path, provider, session_tools=servers)
        async with engine:
            sid = await engine.create_session(cwd)
            provider.assign(
                sid,
                steps(
                    {"text": ["x"], "toolCalls": [call("mcp__test__echo", text="still here")]},
                    {"text": ["ok"]},
                ),
            )
            events = await collect(engine.run_turn(sid, "go"))
            pids = await pids_written(pidfile)
            offered = {schema["name"] for schema in provider.calls[0].tools}
            mute, _ = servers.started(sid)
            assert mute.status == "failed"
            assert mute.process.pid is not None  # our launcher, which ends the server's tree
            engine.dispose_session(sid)
        assert notices == ["MCP server mute did not start: did not start within 3 s"]
        assert "mcp__test__echo" in offered and not any(name.startswith("mcp__mute") for name in offered)
        assert of_type(events, "tool.completed")[0].payload["result"] == "echo: still here"
        assert types(events)[-1] == "turn.completed"
        assert_gone([*pids, mute.process.pid])

    async def test_a_server_that_exits_at_start_leaves_no_child_behind(
        self, tmp_path: Path, pidfile: Path
    ) -> None:
        notices: list[str] = []
        servers = McpServers(
            {"orphans": raw_config("orphans", env=("MCP_TEST_PIDS",))}, notice=notices.append
        )
        async with anyio.create_task_group() as group:
            assert await servers.open("root", workspace(tmp_path), group) == []
            servers.close("root")
        (notice,) = notices
        assert (
            notice == "MCP server orphans did not start: exited while starting (it wrote nothing on stderr)"
        )
        assert_gone(await pids_written(pidfile))


class TestWhatAServerGets:
    async def test_a_variable_the_setup_hides_and_a_secret_looking_one_never_reach_the_server_unless_named(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The model's api_key_env is hidden from tools although its name does not look secret.
        monkeypatch.setenv("PROVIDER_CREDENTIAL", "sk-model-key")
        monkeypatch.setenv("SOME_TOKEN", "tok")
        with use_shell_setup(ShellSetup(hidden=frozenset({"PROVIDER_CREDENTIAL"}))):
            for variable in ("PROVIDER_CREDENTIAL", "SOME_TOKEN"):
                events, _ = await run_one_call(
                    tmp_path, stdio_config(), "mcp__test__where", {"variable": variable}
                )
                assert of_type(events, "tool.completed")[0].payload["result"].endswith(f"{variable}=<unset>")
            named = stdio_config(env=("SOME_TOKEN",))
            events, _ = await run_one_call(tmp_path, named, "mcp__test__where", {"variable": "SOME_TOKEN"})
        assert of_type(events, "tool.completed")[0].payload["result"].endswith("SOME_TOKEN=tok")


class TestHostileServer:
    async def test_names_that_look_like_built_ins_or_collide_are_kept_apart_and_cut(
        self, tmp_path: Path
    ) -> None:
        events, provider = await run_one_call(tmp_path, raw_config("hostile"), "mcp__hostile__shell", {})
        offered = [schema["name"] for schema in provider.calls[0].tools]
        assert offered.count("shell") == 1  # the built-in, not the server's
        assert "mcp__hostile__shell" in offered
        assert offered.count("mcp__hostile__a_b") == 1  # `a.b` and `a_b`: the first one listed
        assert all(len(name) <= 64 and name.isascii() for name in offered)
        assert "mcp__hostile__bad__2J__52_c_cHduZWQ___31m_evil_name" in offered
        assert of_type(events, "tool.completed")[0].payload["result"].endswith("of shell")
        events, _ = await run_one_call(tmp_path, raw_config("hostile"), "mcp__hostile__a_b", {})
        assert of_type(events, "tool.completed")[0].payload["result"].endswith("of a.b")

    async def test_a_long_name_is_cut_in_the_approval_too(self, tmp_path: Path) -> None:
        name = ("mcp__hostile__" + "n" * 64)[:64]
        events, _ = await run_one_call(tmp_path, raw_config("hostile"), name, {})
        (requested,) = of_type(events, "permission.requested")
        assert requested.payload["reason"] == f"MCP server hostile, tool {'n' * 64}"

    async def test_a_claimed_read_only_hint_still_asks_and_a_deny_stops_the_call(
        self, tmp_path: Path
    ) -> None:
        events, _ = await run_one_call(
            tmp_path,
            raw_config("hostile"),
            "mcp__hostile__trusted",
            {},
            policy=PolicyConfig(byRisk={"read": "allow"}, default="ask"),
            approve="deny",
        )
        (requested,) = of_type(events, "permission.requested")
        assert requested.payload["risk"] == "execute"
        assert "tool.started" not in types(events)
        assert of_type(events, "tool.failed")[0].payload["errorCode"] == "permission_denied"

    async def test_a_100_mb_answer_fails_the_call_at_16_mb_and_the_turn_goes_on(self, tmp_path: Path) -> None:
        events, _ = await run_one_call(tmp_path, raw_config("hostile"), "mcp__hostile__flood", {})
        failed = of_type(events, "tool.failed")[0].payload
        assert failed["errorCode"] == "io_error"
        assert (
            failed["message"]
            == f"MCP server hostile answered flood with a message over {MAX_LINE // 2**20} MB"
        )
        assert of_type(events, "turn.completed")[0].payload["stopReason"] == "final"

    async def test_endless_progress_streams_no_more_than_the_output_budget_and_times_out(
        self, tmp_path: Path
    ) -> None:
        events, _ = await run_one_call(
            tmp_path, raw_config("hostile", timeout=1.0), "mcp__hostile__chatter", {}
        )
        streamed = "".join(event.payload["text"] for event in of_type(events, "tool.delta"))
        assert streamed.endswith("[more progress not shown: over 32000 characters]\n")
        assert len(streamed) <= 32_000 + 600
        assert of_type(events, "tool.failed")[0].payload["errorCode"] == "timeout"
        assert of_type(events, "turn.completed")[0].payload["stopReason"] == "final"

    async def test_control_codes_of_a_result_are_kept_in_the_log_and_shown_as_markers(
        self, tmp_path: Path
    ) -> None:
        events, _ = await run_one_call(tmp_path, raw_config("hostile"), "mcp__hostile__loud", {})
        result = of_type(events, "tool.completed")[0].payload["result"]
        assert "\x1b]52;" in result  # the model reads what the server said
        assert not any(control in visible(result) for control in CONTROLS)

    async def test_a_server_that_lists_tools_forever_gives_its_first_ones_with_their_descriptions_cut(
        self, tmp_path: Path
    ) -> None:
        servers = McpServers({"pages": raw_config("pages")})
        async with anyio.create_task_group() as group:
            tools = await servers.open("root", workspace(tmp_path), group)
            servers.close("root")
        assert len(tools) == MAX_TOOLS
        assert {len(tool.description) for tool in tools} == {2_000}

    async def test_an_http_answer_over_16_mb_fails_the_call_and_the_turn_goes_on(
        self, tmp_path: Path
    ) -> None:
        with http_server("http-json") as url:
            config = McpServerConfig("web", url=url)
            events, _ = await run_one_call(tmp_path, config, "mcp__web__big", {"megabytes": 20})
        failed = of_type(events, "tool.failed")[0].payload
        assert failed["message"] == (
            "MCP server web refused big: Failed to parse JSON response: the server sent over 16 MB in one answer"
        )
        assert of_type(events, "turn.completed")[0].payload["stopReason"] == "final"


async def test_the_list_says_which_of_two_same_named_tools_is_not_offered(tmp_path: Path) -> None:
    report = await servers_report({"hostile": raw_config("hostile")}, tmp_path, None)
    lines = [line for line in report.splitlines() if "mcp__hostile__a_b " in line]
    assert len(lines) == 2  # `a.b` and `a_b` are both listed ...
    assert "not offered" not in lines[0]  # ... the first one is offered, as the session does
    assert "not offered: hostile's a.b has the same name" in lines[1]
