"""`agent-tui acp` gives its sessions MCP servers: the config file's `[mcp.NAME]` ones and those
the client sends in `session/new`. Both sides are real processes (our ACP client driving
`python -m agent_tui acp --scenario FILE`), and the servers are the real test MCP server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer
from acp_support import PASS_ON, Harness, QueuePrompter
from support_mcp import stdio_config, stdio_toml

from agent_tui.acp.config import AcpAgentConfig
from agent_tui.acp.served_mcp_servers import served_mcp_servers
from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events.chains import chain_violations
from agent_tui.mcp.config import NAME
from agent_tui.store import JsonlFileEventStore

pytestmark = pytest.mark.anyio


def test_a_clients_servers_become_ours_with_their_values_as_given() -> None:
    configs, left_out = served_mcp_servers(
        [
            McpServerStdio(
                name="My Files!",
                command="files",
                args=["--root", "."],
                env=[EnvVariable(name="T", value="${HOME}")],
            ),
            HttpMcpServer(
                type="http",
                name="My Files!",
                url="https://x.test/mcp",
                headers=[HttpHeader(name="A", value="b")],
            ),
            SseMcpServer(type="sse", name="old", url="https://x.test/sse", headers=[]),
            HttpMcpServer(type="http", name="\x1b[31mbad", url="file:///etc/passwd", headers=[]),
        ]
    )
    assert [config.name for config in configs] == ["My-Files", "My-Files-2"]
    assert all(NAME.match(config.name) for config in configs)
    stdio, http = configs
    # The client's values are used as they are: nothing of ours is filled into them.
    assert stdio.environment({"HOME": "/home/me"}) == {"T": "${HOME}"}
    assert http.header_values({}) == {"A": "b"}
    assert "${HOME}" not in repr(stdio)  # values never reach a repr (nor, so, a log line)
    assert left_out == [
        "MCP server old left out: SSE servers are not supported (use streamable HTTP)",
        "MCP server 31mbad left out: its url is not an http:// or https:// address",
    ]


async def test_a_served_session_calls_the_config_files_and_the_clients_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(stdio_toml("conf"))
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(config))
    monkeypatch.setenv("CLIENT_TOKEN", "client-token-value")
    scenario = tmp_path / "scenario.json"
    calls: list[dict[str, Any]] = [
        {"tool": "mcp__conf__echo", "args": {"text": "from the config"}},
        {"tool": "mcp__test__where", "args": {"variable": "CLIENT_TOKEN"}},
    ]
    steps = [{"text": ["Calling."], "toolCalls": calls}, {"text": ["Done."]}]
    scenario.write_text(json.dumps({"sessions": [{"prompt": "(from the client)", "steps": steps}]}))
    served_logs = tmp_path / "server"
    args = ("-m", "agent_tui", "acp", "--scenario", str(scenario), "--sessions-dir", str(served_logs))
    # The served process does not inherit CLIENT_TOKEN: the value reaches the MCP server only
    # because the client sent it with the server in `session/new`.
    agent = AcpAgentConfig("agent-tui", sys.executable, args, env=("AGENT_TUI_CONFIG", *PASS_ON))
    prompter = QueuePrompter(lambda request: PermissionAnswer("allow"))
    servers = {"test": stdio_config(env=("CLIENT_TOKEN",))}
    async with Harness(tmp_path / "client", prompter, mcp_servers=servers) as harness:
        session = await harness.agents.start(agent, tmp_path, prompt="Use the servers")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
    assert harness.validator.problems == []
    # Each MCP call asked the client (execute risk), and the client's user allowed it.
    asked = [(request.args["title"].split()[0], request.args["rawInput"]) for request in prompter.requests]
    assert asked == [(call["tool"], call["args"]) for call in calls]

    store = JsonlFileEventStore(served_logs)
    (log_path,) = served_logs.glob("*.jsonl")
    served = list(store.replay(log_path.stem))
    store.close()
    assert chain_violations(served) == []
    results = [event.payload["result"] for event in served if event.type == "tool.completed"]
    assert results[0].endswith("from the config")
    assert results[1].endswith("CLIENT_TOKEN=client-token-value")
    # The client's server started in a private folder of its own, not in the session's directory.
    assert results[1].startswith("cwd=") and "/agent-tui/mcp/server-" in results[1]
    # The value is in what the server answered, and nowhere else in the served log.
    others = [event.payload for event in served if event.type != "tool.completed"]
    assert "client-token-value" not in str(others)
