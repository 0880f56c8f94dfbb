"""`agent-tui acp` driven by our own ACP client, both real processes talking over stdio.

The client side is `AcpAgents` on an engine (what the dashboard runs), the agent side is
`python -m agent_tui acp --scenario FILE`. Every message between them goes through the SDK's
schema models (`WireValidator`), and both logs must keep the chains of our event log.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_support import PASS_ON, Harness, QueuePrompter, server_config

from agent_tui.acp.permissions import AcpPermissionRequest
from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.store import JsonlFileEventStore

pytestmark = pytest.mark.anyio


def write_scenario(tmp_path: Path, steps: list[dict[str, Any]], **extra: Any) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"sessions": [{"prompt": "(from the client)", "steps": steps}], **extra}))
    return path


def server_logs(directory: Path) -> list[Event]:
    store = JsonlFileEventStore(directory)
    events: list[Event] = []
    for log in sorted(directory.glob("*.jsonl")):
        events.extend(store.replay(log.stem))
    store.close()
    return events


def types(events: list[Event]) -> list[str]:
    return [event.type for event in events]


WORK: list[dict[str, Any]] = [
    {"text": ["Hello", " from", " agent-tui."], "toolCalls": [{"tool": "shell", "args": {"cmd": "ls"}}]},
    {
        "text": ["Writing."],
        "toolCalls": [{"tool": "write_file", "args": {"path": "notes.txt", "content": "hi\n"}}],
    },
    {"text": ["Done."]},
    {"text": ["Follow-up answer."]},
]


def our_acp_agent(base_url: str, sessions_dir: Path) -> Any:
    """`agent-tui acp` itself as the agent, on model `m` of the OpenAI-compatible `base_url`."""
    from agent_tui.acp.config import AcpAgentConfig

    args = ("-m", "agent_tui", "acp", "--provider", "openai", "--model", "m", "--base-url", base_url)
    return AcpAgentConfig(
        "agent-tui", sys.executable, (*args, "--sessions-dir", str(sessions_dir)),
        env=("AGENT_TUI_CONFIG", *PASS_ON),
    )  # fmt: skip


async def test_prompt_streams_text_and_tools_and_asks_through_the_prompter(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README").write_text("x\n")
    scenario = write_scenario(tmp_path, WORK)
    prompter = QueuePrompter(lambda request: PermissionAnswer("allow"))
    async with Harness(tmp_path / "client", prompter) as harness:
        session = await harness.agents.start(
            server_config(scenario, tmp_path / "server"), workspace, prompt="Please take notes"
        )
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        follow_up = session.prompt("And now?")
        assert await follow_up.wait() == "final"
        log = harness.log(session.session_id)

    assert harness.validator.problems == []
    assert harness.validator.pending == []
    assert harness.validator.updates["agent_message_chunk"] == 6
    assert harness.validator.updates["tool_call"] == 2
    assert chain_violations(log) == []
    assert log[0].payload["client"] == "agent-tui"
    assert [event.payload["text"] for event in log if event.type == "model.delta"] == [
        "Hello", " from", " agent-tui.", "Writing.", "Done.", "Follow-up answer.",
    ]  # fmt: skip
    turns = [event for event in log if event.type == "turn.completed"]
    assert [turn.payload["stopReason"] for turn in turns] == ["final", "final"]

    # `ls` is a read: the server's policy allowed it, and our log says the agent decided.
    calls = [event for event in log if event.type == "model.tool_call_requested"]
    assert [call.payload["tool"] for call in calls] == ["execute", "edit"]
    resolved = [event.payload for event in log if event.type == "permission.resolved"]
    assert resolved[0]["actor"] == "policy" and resolved[0]["policy"] == "agent:agent-tui"
    assert [(item["decision"], item["actor"]) for item in resolved[1:]] == [
        ("ask", "policy"),
        ("allow", "user"),
    ]

    # The write asked the client; the question reached our prompter with the server's options.
    [request] = prompter.requests
    assert isinstance(request, AcpPermissionRequest)
    assert request.risk == "write"
    assert [option.kind for option in request.options] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    assert (workspace / "notes.txt").read_text() == "hi\n"

    # The server wrote its own log of the same session, with the user's answer from our side.
    served = server_logs(tmp_path / "server")
    assert chain_violations(served) == []
    assert served[0].session_id == session.acp_session_id
    server_resolved = [
        e.payload for e in served if e.type == "permission.resolved" and e.payload["actor"] == "user"
    ]
    assert [(item["decision"], item["remember"]) for item in server_resolved] == [("allow", "once")]


async def test_the_client_log_dumps_and_replays_like_any_other(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    scenario = write_scenario(tmp_path, [{"text": ["Short answer."]}])
    async with Harness(tmp_path / "client", QueuePrompter(lambda request: None)) as harness:
        session = await harness.agents.start(
            server_config(scenario, tmp_path / "server"), workspace, prompt="hi"
        )
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
    out = subprocess.run(
        [sys.executable, "-m", "agent_tui", "replay", str(tmp_path / "client"), "--dump", "state"],
        capture_output=True,
        text=True,
        check=True,
    )
    [state] = json.loads(out.stdout)["sessions"]
    assert state["agentName"] == "agent-tui"
    assert [turn["stopReason"] for turn in state["turns"]] == ["final"]


async def test_cancel_mid_stream_ends_both_turns_cancelled(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    chunks = [f"chunk {n} " for n in range(60)]
    scenario = write_scenario(tmp_path, [{"text": chunks, "delayMs": 200}, {"text": ["Back again."]}])
    async with Harness(tmp_path / "client", QueuePrompter(lambda request: None)) as harness:
        session = await harness.agents.start(
            server_config(scenario, tmp_path / "server"), workspace, prompt="Stream"
        )
        await harness.watch.wait_for(lambda event: event.type == "model.delta")
        assert session.cancel() is True
        assert await session.turn.wait() == "cancelled"  # type: ignore[union-attr]
        again = session.prompt("Still there?")
        assert await again.wait() == "final"
        log = harness.log(session.session_id)

    assert harness.validator.problems == []
    assert harness.validator.methods["session/cancel"] == 1
    assert chain_violations(log) == []
    first_turn = log[: types(log).index("turn.completed") + 1]
    assert 1 <= types(first_turn).count("model.delta") < len(chunks)
    assert first_turn[-1].payload["stopReason"] == "cancelled"
    assert log[-1].payload["stopReason"] == "final"
    served = server_logs(tmp_path / "server")
    assert chain_violations(served) == []
    assert [e.payload["stopReason"] for e in served if e.type == "turn.completed"] == ["cancelled", "final"]


async def test_cancel_while_a_question_waits_withdraws_it_on_both_sides(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    step = {
        "text": ["Writing."],
        "toolCalls": [{"tool": "write_file", "args": {"path": "x.txt", "content": "x"}}],
    }
    scenario = write_scenario(tmp_path, [step])
    prompter = QueuePrompter(lambda request: None)  # nobody answers
    async with Harness(tmp_path / "client", prompter) as harness:
        session = await harness.agents.start(
            server_config(scenario, tmp_path / "server"), workspace, prompt="Write"
        )
        await prompter.asked.wait()
        harness.engine.cancel_turn(session.session_id)  # what the dashboard's stop does
        assert await session.turn.wait() == "cancelled"  # type: ignore[union-attr]
        log = harness.log(session.session_id)

    assert prompter.withdrawn == 1
    assert chain_violations(log) == []
    resolved = [event.payload for event in log if event.type == "permission.resolved"]
    assert (resolved[-1]["decision"], resolved[-1]["actor"]) == ("deny", "system")
    [failed] = [event.payload for event in log if event.type == "tool.failed"]
    assert failed["errorCode"] == "cancelled"
    assert not (workspace / "x.txt").exists()
    # The client answered the pending request `cancelled`, as the protocol asks.
    [answer] = [m for m in harness.validator.methods if m == "session/request_permission"]
    assert answer
    served = server_logs(tmp_path / "server")
    assert chain_violations(served) == []
    assert [e.payload["stopReason"] for e in served if e.type == "turn.completed"] == ["cancelled"]


async def test_a_killed_agent_closes_the_turn_with_the_reason(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    step = {
        "text": ["Writing."],
        "toolCalls": [{"tool": "write_file", "args": {"path": "x.txt", "content": "x"}}],
    }
    scenario = write_scenario(tmp_path, [step])
    prompter = QueuePrompter(lambda request: None)
    async with Harness(tmp_path / "client", prompter) as harness:
        session = await harness.agents.start(
            server_config(scenario, tmp_path / "server"), workspace, prompt="Write"
        )
        await prompter.asked.wait()
        assert session.process is not None and session.process.process is not None
        os.kill(session.process.process.pid, signal.SIGKILL)
        assert await session.turn.wait() == "error"  # type: ignore[union-attr]
        later = session.prompt("Are you there?")
        assert await later.wait() == "error"
        log = harness.log(session.session_id)

    assert chain_violations(log) == []
    ends = [event.payload for event in log if event.type == "turn.completed"]
    assert [end["errorCode"] for end in ends] == ["provider_failure", "provider_failure"]
    assert "agent-tui was killed by SIGKILL" in ends[0]["message"]
    assert ends[1]["message"] == ends[0]["message"]
    assert prompter.withdrawn == 1
    [failed] = [event.payload for event in log if event.type == "tool.failed"]
    assert failed["errorCode"] == "cancelled"


async def test_model_flags_serve_a_real_model(tmp_path: Path) -> None:
    from fake_model_server import FakeModelServer, Stream, openai_stream

    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = tmp_path / "config.toml"
    config.write_text("")
    with FakeModelServer() as model:
        model.script(Stream(openai_stream(["Hello from ", "a real model."])))
        agent = our_acp_agent(model.openai_url, tmp_path / "server")
        async with Harness(
            tmp_path / "client",
            QueuePrompter(lambda request: None),
            env={**os.environ, "AGENT_TUI_CONFIG": str(config)},
        ) as harness:
            session = await harness.agents.start(agent, workspace, prompt="Say hello")
            assert await session.turn.wait() == "final"  # type: ignore[union-attr]
            log = harness.log(session.session_id)
        [request] = model.requests
    assert "".join(p.payload["text"] for p in log if p.type == "model.delta") == "Hello from a real model."
    assert request.body["model"] == "m"
    assert request.body["messages"][-1]["content"] == "Say hello"
    assert harness.validator.problems == []


def test_without_a_model_the_server_says_how_to_configure_one(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "AGENT_TUI_CONFIG": str(config)}
    env.update({name: os.environ[name] for name in PASS_ON if name in os.environ})
    out = subprocess.run(
        [sys.executable, "-m", "agent_tui", "acp"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 2
    assert out.stderr.startswith("agent-tui: acp: ")
    assert "--provider" in out.stderr and out.stderr.endswith(
        "; or pass --scenario FILE for a scripted model\n"
    )
    assert out.stdout == ""


async def test_a_sub_agents_question_reaches_the_client_under_its_root_session(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    lead: list[dict[str, Any]] = [
        {
            "text": ["Delegating."],
            "toolCalls": [{"tool": "spawn_agent", "args": {"agentName": "explorer", "prompt": "w"}}],
        },
        {"text": ["Waiting."], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
        {"text": ["All done."]},
    ]
    explorer: list[dict[str, Any]] = [
        {
            "text": ["Writing."],
            "toolCalls": [{"tool": "write_file", "args": {"path": "e.txt", "content": "e"}}],
        },
        {"text": ["Wrote it."]},
    ]
    scenario = write_scenario(tmp_path, lead, agents={"explorer": {"steps": explorer}})
    prompter = QueuePrompter(lambda request: PermissionAnswer("allow"))
    async with Harness(tmp_path / "client", prompter) as harness:
        session = await harness.agents.start(
            server_config(scenario, tmp_path / "server"), workspace, prompt="Go"
        )
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert harness.validator.problems == []
    assert chain_violations(log) == []
    assert (workspace / "e.txt").read_text() == "e"
    titles = [request.args_preview for request in prompter.requests]
    assert titles[0].startswith("spawn_agent")
    assert titles[1].startswith("explorer › write_file")
    served = server_logs(tmp_path / "server")
    assert chain_violations(served) == []
    assert {event.payload.get("agentName") for event in served if event.type == "session.created"} == {
        None,
        "explorer",
    }


async def test_a_served_session_keeps_the_configs_budget_and_refuses_a_prompt_once_it_is_spent(
    tmp_path: Path,
) -> None:
    from fake_model_server import FakeModelServer, Stream, openai_stream

    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = tmp_path / "config.toml"
    config.write_text('[budget]\nusd = 0.04\n[prices."m"]\ninput = 1.0\noutput = 1.0\n'
                      '[prices."gpt-4.1-mini"]\ninput = 1.0\noutput = 1.0\n')  # fmt: skip
    big = (40, 24_960, 0)  # $0.025 a call
    with FakeModelServer() as model:
        model.script(
            Stream(openai_stream(calls=[("a", "list_dir", ['{"path": "."}'])], usage=big)),
            Stream(openai_stream(calls=[("b", "list_dir", ['{"path": "."}'])], usage=big)),
        )
        agent = our_acp_agent(model.openai_url, tmp_path / "server")
        async with Harness(
            tmp_path / "client",
            QueuePrompter(lambda request: None),
            env={**os.environ, "AGENT_TUI_CONFIG": str(config)},
        ) as harness:
            session = await harness.agents.start(agent, workspace, prompt="Look around")
            assert await session.turn.wait() == "error"  # type: ignore[union-attr]
            again = session.prompt("More")
            assert await again.wait() == "error"
            log = harness.log(session.session_id)
        assert len(model.requests) == 2  # the refused prompt reached no model
    ends = [e.payload.get("message") or "" for e in log if e.type == "turn.completed"]
    assert "budget exceeded: spent $0.05 of a $0.04 budget" in ends[0]
    assert "budget exceeded: spent $0.05 of a $0.04 budget; raise the budget to go on" in ends[1]
    served = [e for e in server_logs(tmp_path / "server") if e.type == "session.created"]
    assert [e.payload["budget"] for e in served] == [{"usd": 0.04}]  # the one session opened
    assert [
        e.payload["stopReason"] for e in server_logs(tmp_path / "server") if e.type == "turn.completed"
    ] == ["error"]  # the refused prompt wrote nothing
