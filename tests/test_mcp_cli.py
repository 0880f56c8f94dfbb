"""MCP servers as a user meets them: `[mcp.NAME]` in the config file, `agent-tui run --prompt`
against an OpenAI-compatible model on loopback that calls a real server's tools, `agent-tui mcp
list` and `agent-tui mcp import`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import orjson
import pytest
from fake_model_server import FakeModelServer, Stream, openai_stream
from support_mcp import CONTROLS, SERVER, assert_gone, http_server, stdio_toml
from support_providers import agent_tui, clean_env

from agent_tui.events.chains import chain_violations
from agent_tui.mcp.config import McpConfigError, load_mcp_servers
from agent_tui.store import JsonlEventLog


def project(tmp_path: Path) -> Path:
    cwd = tmp_path / "project"
    cwd.mkdir(exist_ok=True)
    return cwd


def write_config(tmp_path: Path, text: str) -> Path:
    config = tmp_path / "config.toml"
    config.write_text(text)
    return config


def run_prompt(
    tmp_path: Path, config: Path, server: FakeModelServer, *extra: str, env: dict[str, str] | None = None
) -> tuple[int, str, list]:
    done = agent_tui(
        "run", "--prompt", "use the tools", "--cwd", str(project(tmp_path)),
        "--sessions-dir", str(tmp_path / "s"), "--provider", "openai", "--model", "gpt-4.1-mini",
        "--base-url", server.openai_url, *extra,
        env=clean_env(AGENT_TUI_CONFIG=str(config), XDG_DATA_HOME=str(tmp_path / "data"), **(env or {})),
    )  # fmt: skip
    logs = list((tmp_path / "s").glob("*.jsonl"))
    events = list(JsonlEventLog(logs[0]).replay("strict")) if logs else []
    return done.returncode, done.stdout + done.stderr, events


class TestRunWithAnOpenAiCompatibleModel:
    def test_a_server_that_never_answers_or_exits_is_said_in_one_visible_line_and_a_projects_mcp_json_is_never_loaded(
        self, tmp_path: Path
    ) -> None:
        marker = tmp_path / "the-repository-ran-this"
        sneaky = {"mcpServers": {"sneaky": {"command": "touch", "args": [str(marker)]}}}
        (project(tmp_path) / ".mcp.json").write_text(json.dumps(sneaky))
        pidfile = tmp_path / "pids"
        mute = f'[mcp.mute]\ncommand = "{sys.executable}"\nargs = ["{SERVER}", "mute"]\n'
        mute += 'env = ["MCP_TEST_PIDS"]\nstartup_timeout = 3\n'
        mute += f'[mcp.noisy]\ncommand = "{sys.executable}"\nargs = ["{SERVER}", "noisy"]\n'
        with FakeModelServer() as server:
            server.script(Stream(openai_stream(["Nothing to call."])))
            status, output, _ = run_prompt(
                tmp_path, write_config(tmp_path, mute), server, env={"MCP_TEST_PIDS": str(pidfile)}
            )
            (request,) = server.requests
        assert status == 0, output
        assert "agent-tui: MCP server mute did not start: did not start within 3 s\n" in output
        assert "agent-tui: MCP server noisy did not start: exited while starting: fatal: ␛[2J" in output
        assert not any(control in output for control in CONTROLS)
        offered = [tool["function"]["name"] for tool in request.body["tools"]]
        assert not any(name.startswith("mcp__") for name in offered)
        assert not marker.exists()
        assert_gone([int(pid) for pid in pidfile.read_text().split()])

    def test_the_model_is_offered_the_servers_tools_and_its_call_runs_on_the_server(
        self, tmp_path: Path
    ) -> None:
        config = write_config(tmp_path, stdio_toml("test", 'tools = { count = "read" }'))
        with FakeModelServer() as server:
            server.script(
                Stream(openai_stream(["Counting."], [("call_1", "mcp__test__count", ['{"steps": 2}'])])),
                Stream(openai_stream(["Counted."])),
            )
            status, output, events = run_prompt(tmp_path, config, server)
            first, second = (request.body for request in server.requests)
        assert status == 0, output
        assert chain_violations(events) == []
        offered = {tool["function"]["name"]: tool["function"] for tool in first["tools"]}
        assert offered["mcp__test__count"]["parameters"]["properties"]["steps"]["type"] == "integer"
        assert "read_file" in offered
        completed = [event.payload for event in events if event.type == "tool.completed"]
        assert completed == [
            {"toolCallId": "call_1", "tool": "mcp__test__count", "result": "counted to 2", "truncated": False}
        ]
        assert [event.payload["text"] for event in events if event.type == "tool.delta"] == [
            "step 1 of 2\n",
            "step 2 of 2\n",
        ]
        tool_message = next(message for message in second["messages"] if message["role"] == "tool")
        assert tool_message["content"] == "counted to 2"

    def test_an_execute_call_is_denied_without_approval_and_the_model_reads_why(self, tmp_path: Path) -> None:
        config = write_config(tmp_path, stdio_toml("test"))
        with FakeModelServer() as server:
            server.script(
                Stream(openai_stream([], [("call_1", "mcp__test__echo", ['{"text": "hi"}'])])),
                Stream(openai_stream(["Denied, fine."])),
            )
            status, output, events = run_prompt(tmp_path, config, server, "--approve", "deny")
        assert status == 0, output
        requested = next(event.payload for event in events if event.type == "permission.requested")
        assert requested["risk"] == "execute"  # the server's readOnlyHint does not lower it
        assert requested["reason"] == "MCP server test, tool echo (the server says it only reads)"
        failed = next(event.payload for event in events if event.type == "tool.failed")
        assert failed["errorCode"] == "permission_denied"
        assert "tool.started" not in [event.type for event in events]

    def test_a_streamable_http_server_is_called_the_same_way(self, tmp_path: Path) -> None:
        with http_server() as url, FakeModelServer() as server:
            config = write_config(tmp_path, f'[mcp.web]\nurl = "{url}"\nrisk = "read"\n')
            server.script(
                Stream(openai_stream([], [("call_1", "mcp__web__echo", ['{"text": "over http"}'])])),
                Stream(openai_stream(["Done."])),
            )
            status, output, events = run_prompt(tmp_path, config, server)
        assert status == 0, output
        completed = next(event.payload for event in events if event.type == "tool.completed")
        assert completed["result"] == "echo: over http"

    def test_a_server_that_does_not_start_is_said_and_the_run_goes_on(self, tmp_path: Path) -> None:
        config = write_config(tmp_path, f'[mcp.gone]\ncommand = "{tmp_path / "missing"}"\n')
        with FakeModelServer() as server:
            server.script(Stream(openai_stream(["Nothing to call."])))
            status, output, _ = run_prompt(tmp_path, config, server)
        assert status == 0, output
        assert (
            f"agent-tui: MCP server gone did not start: cannot run {tmp_path / 'missing'}: no such program"
            in output
        )


class TestMcpList:
    def test_a_hostile_servers_names_and_descriptions_reach_the_terminal_without_control_codes(
        self, tmp_path: Path
    ) -> None:
        hostile = f'[mcp.hostile]\ncommand = "{sys.executable}"\nargs = ["{SERVER}", "hostile"]\n'
        done = agent_tui(
            "mcp", "list", "--cwd", str(project(tmp_path)),
            env=clean_env(AGENT_TUI_CONFIG=str(write_config(tmp_path, hostile))),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "mcp__hostile__loud  [execute]  says " in done.stdout
        assert "mcp__hostile__trusted  [execute, says read-only]" in done.stdout
        assert not any(control in done.stdout for control in CONTROLS)

    def test_each_server_is_listed_with_whether_it_started_and_its_tools(self, tmp_path: Path) -> None:
        config = write_config(
            tmp_path,
            stdio_toml("test", 'tools = { echo = "read" }')
            + f'[mcp.gone]\ncommand = "{tmp_path / "missing"}"\n'
            + '[mcp.work]\ncommand = "never-run"\nprofiles = ["work"]\n'
            + '[mcp.off]\ncommand = "never-run"\nenabled = false\n',
        )
        done = agent_tui(
            "mcp", "list", "--cwd", str(project(tmp_path)), env=clean_env(AGENT_TUI_CONFIG=str(config))
        )
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        test = lines.index(next(line for line in lines if line.startswith("test (stdio: ")))
        assert lines[test + 1] == "  started, 7 tools"
        assert "    mcp__test__echo  [read, says read-only]  Say the text back." in lines
        assert "    mcp__test__crash  [execute]  The process dies before it answers." in lines
        assert f"  not started: cannot run {tmp_path / 'missing'}: no such program" in lines, done.stdout
        assert "  not started: only with profiles work (no profile here)" in lines
        assert "  not started: enabled = false" in lines

    def test_a_wrong_table_is_one_line_naming_the_file_and_line(self, tmp_path: Path) -> None:
        config = write_config(tmp_path, '[mcp.bad]\ncommand = "x"\nenv = ["GITHUB_TOKEN=ghp_123"]\n')
        done = agent_tui("mcp", "list", env=clean_env(AGENT_TUI_CONFIG=str(config)))
        assert done.returncode == 2
        assert done.stderr.startswith(
            f"agent-tui: {config}:3: mcp.bad.env: 'GITHUB_TOKEN=ghp_123' is not a variable name"
        )
        assert len(done.stderr.splitlines()) == 1


class TestMcpImport:
    def test_a_file_with_literal_secrets_is_refused_with_the_lines_to_move_and_no_value_repeated(
        self, tmp_path: Path
    ) -> None:
        source = tmp_path / ".mcp.json"
        source.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_literal_secret"}},
                        "docs": {
                            "type": "http",
                            "url": "https://docs.example/mcp",
                            "headers": {"Authorization": "Bearer s3cr3t"},
                        },
                    }
                },
                indent=2,
            )
        )
        config = tmp_path / "config.toml"
        done = agent_tui("mcp", "import", str(source), env=clean_env(AGENT_TUI_CONFIG=str(config)))
        assert done.returncode == 2
        assert "ghp_literal_secret" not in done.stderr and "s3cr3t" not in done.stderr
        assert f"  export GITHUB_TOKEN=...   # the value at {source}:6" in done.stderr
        assert (
            f"  export DOCS_AUTHORIZATION=...   # the value of header Authorization at {source}:13"
            in done.stderr
        )
        assert not config.exists()

    def test_servers_that_name_their_variables_are_added_and_read_back(self, tmp_path: Path) -> None:
        source = tmp_path / ".mcp.json"
        source.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "github": {
                            "command": "gh-mcp",
                            "args": ["stdio"],
                            "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "OPENAI_API_KEY": "${OPENAI_API_KEY}"},
                        },
                        "docs": {
                            "type": "http",
                            "url": "https://docs.example/mcp",
                            "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
                        },
                    }
                }
            )
        )
        config = write_config(tmp_path, 'default_profile = "p"\n[profiles.p]\nprovider = "openai"\n')
        done = agent_tui("mcp", "import", str(source), env=clean_env(AGENT_TUI_CONFIG=str(config)))
        assert done.returncode == 0, done.stderr
        servers = load_mcp_servers(config)
        assert servers["github"].command == "gh-mcp"
        assert servers["github"].env == ("GITHUB_TOKEN", "OPENAI_API_KEY")
        assert servers["docs"].headers == {"Authorization": "Bearer ${DOCS_TOKEN}"}
        # A repository's servers are for that repository, and a model key handed on is said.
        assert {server.projects for server in servers.values()} == {(tmp_path.resolve(),)}
        note = "# note: this gives OPENAI_API_KEY, a model key agent-tui keeps from its tools, to github"
        assert note in done.stdout and note in config.read_text()
        assert done.stdout.count("# note:") == 1
        again = agent_tui("mcp", "import", str(source), env=clean_env(AGENT_TUI_CONFIG=str(config)))
        assert again.returncode == 2
        assert "the config file has a server named github already" in again.stderr


class TestConfig:
    @pytest.mark.parametrize(
        ("table", "line", "said"),
        [
            ('[mcp.a]\ncommand = "x"\nurl = "http://h/mcp"\n', 1, "set command (a stdio server) or url"),
            (
                '[mcp.a]\nurl = "http://h/mcp"\nheaders = { Authorization = "Bearer abc" }\n',
                3,
                "a secret is never written",
            ),
            ('[mcp.a]\ncommand = "x"\nrisk = "safe"\n', 3, "risk: expected one of read, write"),
            ('[mcp.a]\ncommand = "x"\ntimeout = 0\n', 3, "timeout: expected seconds"),
            ('[mcp.a]\ncommand = "x"\nstartup_timeout = "soon"\n', 3, "startup_timeout: expected seconds"),
            ('[mcp.a__b]\ncommand = "x"\n', 1, "single '_' between them only"),
            ('[mcp.a_]\ncommand = "x"\n', 1, "single '_' between them only"),
            ('[mcp.a]\ncommand = "x"\nsecret = "y"\n', 3, "secret: unknown setting"),
        ],
    )
    def test_a_wrong_table_names_the_file_line_and_key(
        self, tmp_path: Path, table: str, line: int, said: str
    ) -> None:
        config = write_config(tmp_path, table)
        with pytest.raises(McpConfigError) as raised:
            load_mcp_servers(config)
        assert str(raised.value).startswith(f"{config}:{line}: mcp.a")
        assert said in str(raised.value)

    def test_a_section_that_is_not_a_table_of_tables_names_the_file_and_line_for_mcp_and_acp(
        self, tmp_path: Path
    ) -> None:
        from agent_tui.acp.config import AcpConfigError, load_acp_agents

        config = write_config(tmp_path, 'default_profile = "x"\nmcp = 3\nacp = "no"\n')
        with pytest.raises(McpConfigError, match=r":2: mcp must be a table of \[mcp.NAME\] tables$"):
            load_mcp_servers(config)
        with pytest.raises(AcpConfigError, match=r":3: acp must be a table of \[acp.NAME\] tables$"):
            load_acp_agents(config)
        assert load_mcp_servers(tmp_path / "none.toml") == {}
        assert load_acp_agents(tmp_path / "none.toml") == {}

    def test_a_server_is_enabled_by_profile_and_project(self, tmp_path: Path) -> None:
        inside = project(tmp_path) / "sub"
        inside.mkdir()
        config = write_config(
            tmp_path, f'[mcp.a]\ncommand = "x"\nprofiles = ["work"]\nprojects = ["{project(tmp_path)}"]\n'
        )
        server = load_mcp_servers(config)["a"]
        assert server.enabled_for("work", inside)
        assert not server.enabled_for("home", inside)
        assert not server.enabled_for("work", tmp_path)

    def test_the_start_up_bound_is_the_startup_timeout_else_the_timeout_at_least_30_s(
        self, tmp_path: Path
    ) -> None:
        text = '[mcp.a]\ncommand = "x"\nstartup_timeout = 2.5\n[mcp.b]\ncommand = "x"\ntimeout = 5\n'
        text += '[mcp.c]\ncommand = "x"\ntimeout = 90\n'
        servers = load_mcp_servers(write_config(tmp_path, text))
        assert [servers[name].start_timeout for name in "abc"] == [2.5, 30.0, 90.0]

    def test_the_main_config_reader_accepts_the_mcp_tables(self, tmp_path: Path) -> None:
        from agent_tui.providers.config import load_config

        config = write_config(tmp_path, stdio_toml("test"))
        assert load_config(config).exists
        assert orjson.loads(orjson.dumps(sorted(load_mcp_servers(config)))) == ["test"]
