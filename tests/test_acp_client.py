"""External ACP agents as sessions: the SDK-shaped test agent (`acp_test_agent.py`) as a subprocess.

It sends every kind of session update, asks with its own options, uses the client's files and
terminals, and misbehaves on request (crash, garbage on stdout, a hang on start, a cancel it
never answers). Every message is checked against the SDK's schema (`WireValidator`); every log
must keep the chains of our event log.
"""

from __future__ import annotations

import json
import os
import select
import sys
from pathlib import Path

import anyio
import pytest
from acp.schema import SessionNotification
from acp_support import Harness, QueuePrompter, script_agent_config

from agent_tui.acp.config import AcpAgentConfig
from agent_tui.acp.permissions import AcpPermissionAnswer, AcpPermissionRequest
from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.mcp.config import McpServerConfig
from agent_tui.reducer import DashboardState, apply_event

pytestmark = pytest.mark.anyio

EVERY_UPDATE_KIND = set(SessionNotification.model_fields["update"].annotation.__args__)  # type: ignore[union-attr]


def payloads(log: list[Event], kind: str) -> list[dict]:
    return [event.payload for event in log if event.type == kind]


def answer_with_option(option_id: str):
    def decide(request):
        if isinstance(request, AcpPermissionRequest):
            return AcpPermissionAnswer("allow", option_id=option_id)
        return PermissionAnswer("allow")

    return decide


async def test_every_update_kind_is_kept_and_file_and_terminal_requests_run_as_our_calls(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("old\n")
    prompter = QueuePrompter(answer_with_option("yes"))
    async with Harness(tmp_path / "logs", prompter) as harness:
        session = await harness.agents.start(script_agent_config(), workspace, prompt="every update")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)

    validator = harness.validator
    assert validator.problems == []
    kinds = {update.model_fields["session_update"].annotation.__args__[0] for update in EVERY_UPDATE_KIND}
    assert set(validator.updates) == kinds  # all thirteen, each parsed by the SDK's schema
    for method in ("fs/read_text_file", "fs/write_text_file", "terminal/create", "terminal/output",
                   "terminal/wait_for_exit", "terminal/release", "session/request_permission"):  # fmt: skip
        assert validator.methods[method] >= 1, method
    assert chain_violations(log) == []
    assert log[0].payload["client"] == "test-agent"

    # Message chunks are the model's text; what our events cannot say is kept as it was sent.
    text = "".join(item["text"] for item in payloads(log, "model.delta"))
    assert text.startswith("Reading the file.") and text.endswith(" Done.")
    records = {item["recordType"]: item for item in payloads(log, "source.record")}
    assert records["agent_thought_chunk"]["data"]["content"]["text"] == "Let me think."
    assert records["plan"]["data"]["entries"][0]["content"] == "read the file"
    for kind in ("user_message_chunk", "plan_update", "plan_removed", "available_commands_update",
                 "current_mode_update", "config_option_update", "session_info_update", "usage_update"):  # fmt: skip
        assert records[kind]["format"] == "acp", kind
    [context] = payloads(log, "context.built")
    assert context["tokens"]["transcript"] == 1200 and context["maxContextTokens"] == 200000

    # The agent's own calls: kind → tool and risk; `ls -la` is classified like our shell.
    requested = {item["toolCallId"]: item for item in payloads(log, "model.tool_call_requested")}
    assert requested["t1"]["tool"] == "execute" and requested["t2"]["tool"] == "edit"
    risks = {item["toolCallId"]: item["risk"] for item in payloads(log, "permission.requested")}
    assert risks["t1"] == "read" and risks["t2"] == "write" and risks["t3"] == "execute"
    completed = {item["toolCallId"]: item for item in payloads(log, "tool.completed")}
    assert completed["t1"]["result"] == "a.txt\nb.txt\n"
    assert completed["t2"]["result"].startswith("--- ") and "+new" in completed["t2"]["result"]

    # The edit's question went to our prompter with the agent's own options; it chose "Yes".
    [question] = [r for r in prompter.requests if isinstance(r, AcpPermissionRequest)]
    assert [option.option_id for option in question.options] == ["yes", "always", "no"]
    resolved = [p for p in payloads(log, "permission.resolved") if p["toolCallId"] == "t2"]
    assert [(p["decision"], p["actor"]) for p in resolved] == [("ask", "policy"), ("allow", "user")]
    assert resolved[-1]["reason"] == "chose 'Yes'"

    # Its file and terminal requests ran as our own tools, under our policy and path rules.
    ours = [
        item for item in payloads(log, "model.tool_call_requested") if item["toolCallId"].startswith("call_")
    ]
    assert [item["tool"] for item in ours] == ["read_file", "write_file", "read_file", "shell"]
    assert (workspace / "a.txt").read_text() == "new\n"
    policies = {
        p["toolCallId"]: p
        for p in payloads(log, "permission.resolved")
        if p["toolCallId"].startswith("call_")
    }
    write_call = ours[1]["toolCallId"]
    assert policies[write_call]["policy"] == "agent:test-agent"  # the user allowed the edit already
    outside = ours[2]["toolCallId"]
    [escape] = [p for p in payloads(log, "tool.failed") if p["toolCallId"] == outside]
    assert escape["errorCode"] == "path_unsafe"
    assert "refused" in text
    terminal = ours[3]["toolCallId"]
    assert [p["text"] for p in payloads(log, "tool.delta") if p["toolCallId"] == terminal] == [
        "hello terminal\n"
    ]
    [shell_done] = [p for p in payloads(log, "tool.completed") if p["toolCallId"] == terminal]
    assert shell_done["exitCode"] == 0
    assert policies[terminal]["policy"] == "byRisk.read"  # `echo` only prints: our policy allows reads


@pytest.mark.parametrize(("decision", "said"), [("allow", "exit 7: out\n"), ("deny", "refused: ")])
async def test_a_terminal_command_asks_like_our_shell(tmp_path: Path, decision: str, said: str) -> None:
    prompter = QueuePrompter(lambda request: PermissionAnswer(decision))  # type: ignore[arg-type]
    async with Harness(tmp_path / "logs", prompter) as harness:
        session = await harness.agents.start(
            script_agent_config(), tmp_path, prompt="terminal: python3 -c 'print(\"out\")'; exit 7"
        )
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert harness.validator.problems == []
    assert chain_violations(log) == []
    [question] = prompter.requests
    assert (question.tool, question.risk) == ("shell", "execute")
    assert "".join(p["text"] for p in payloads(log, "model.delta")).startswith(said)
    if decision == "deny":
        [failed] = payloads(log, "tool.failed")
        assert failed["errorCode"] == "permission_denied"
    else:
        [done] = payloads(log, "tool.completed")
        assert done["exitCode"] == 7


async def test_a_terminal_reading_a_credential_store_is_asked_like_our_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's terminal is judged where it runs, with the same look at what a read names."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "auth.json").write_text('{"OPENAI_API_KEY": "sk-leak-7d1e"}\n')
    monkeypatch.setenv("HOME", str(home))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    prompter = QueuePrompter(lambda request: PermissionAnswer("deny"))
    async with Harness(tmp_path / "logs", prompter) as harness:
        session = await harness.agents.start(
            script_agent_config(), workspace, prompt=f"program: cat {home}/.codex/auth.json"
        )
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    [question] = prompter.requests
    assert (question.tool, question.risk) == ("shell", "execute")
    assert "sk-leak" not in "".join(p["text"] for p in payloads(log, "model.delta"))


async def test_denying_through_the_agents_options_fails_its_call(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("old\n")
    prompter = QueuePrompter(lambda request: PermissionAnswer("deny"))
    async with Harness(tmp_path / "logs", prompter) as harness:
        session = await harness.agents.start(script_agent_config(), workspace, prompt="every update")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert harness.validator.problems == []
    assert chain_violations(log) == []
    [failed] = [p for p in payloads(log, "tool.failed") if p["toolCallId"] == "t2"]
    assert failed["errorCode"] == "permission_denied"
    assert (workspace / "a.txt").read_text() == "old\n"
    [answer] = [
        p for p in payloads(log, "permission.resolved") if p["toolCallId"] == "t2" and p["actor"] == "user"
    ]
    assert answer["reason"] == "chose 'No'"


async def test_a_question_about_a_call_that_already_ended_is_kept_not_requested_again(tmp_path: Path) -> None:
    """The agent asks about a call it already finished: the question is kept as it came, and
    the call is not requested a second time (its id would name two calls)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    prompter = QueuePrompter(lambda request: PermissionAnswer("allow"))
    async with Harness(tmp_path / "logs", prompter) as harness:
        session = await harness.agents.start(script_agent_config(), workspace, prompt="ask late")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert harness.validator.problems == []
    assert chain_violations(log) == []
    assert [p["toolCallId"] for p in payloads(log, "model.tool_call_requested")] == ["t1"]
    kept = [p for p in payloads(log, "source.record") if p["recordType"] == "request_permission"]
    assert [k["data"]["toolCall"]["toolCallId"] for k in kept] == ["t1"]


async def test_a_question_about_a_call_the_agent_already_runs_is_an_event_in_the_queue(
    tmp_path: Path,
) -> None:
    """The agent marks its call in_progress, then asks: the question is a `permission.requested`
    (and the policy's `ask`) in the log before anyone is asked, so the approval queue (the
    reducer's, from the events only) shows it, and an answer through `engine.questions` reaches
    the agent; a second answer hears who answered first. `in_progress` alone started nothing:
    the call starts at the allow."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    async with Harness(tmp_path / "logs", None) as harness:
        questions = harness.engine.questions
        questions.answerer = None  # the people answer
        session = await harness.agents.start(script_agent_config(), workspace, prompt="ask running")
        await harness.watch.wait_for(
            lambda e: e.type == "permission.resolved" and e.payload["decision"] == "ask"
        )
        state = DashboardState()
        for event in harness.watch.events:
            apply_event(state, event)
        [queued] = state.pending_permissions()
        assert (queued.session_id, queued.tool_call_id) == (session.session_id, "t1")
        while questions.request(session.session_id, queued.request_id) is None:
            await anyio.sleep(0)
        assert questions.answer(session.session_id, queued.request_id, PermissionAnswer("allow")) is None
        first = questions.answer(session.session_id, queued.request_id, PermissionAnswer("deny"))
        assert first is not None and (first.decision, first.actor) == ("allow", "user")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert harness.validator.problems == []
    assert chain_violations(log) == []
    kinds = [e.type for e in log if e.payload.get("toolCallId") == "t1"]
    assert kinds == [
        "model.tool_call_requested",
        "permission.requested",
        "permission.resolved",
        "permission.resolved",
        "tool.started",
        "tool.completed",
    ]
    [*_, told] = payloads(log, "model.delta")
    assert told["text"].endswith("told yes")


@pytest.mark.parametrize(
    ("prompt", "args", "expected"),
    [
        ("crash", (), "test-agent exited with status 3; stderr: fatal: out of cheese"),
        ("garbage", (), "test-agent wrote something that is not JSON-RPC to stdout: 'this is not json'"),
        ("deep 100000", (), "test-agent wrote a message nested deeper than 64 levels to stdout"),
        ("deep 900", (), "test-agent wrote a message nested deeper than 64 levels to stdout"),
        ("hello", ("--hang-initialize",), "test-agent did not answer initialize and session/new within 1 s"),
        (
            "hello",
            ("--protocol", "2"),
            "test-agent speaks ACP protocol version 2; agent-tui speaks version 1",
        ),
    ],
)
async def test_a_misbehaving_agent_ends_the_turn_with_the_reason(
    tmp_path: Path, prompt: str, args: tuple[str, ...], expected: str
) -> None:
    start_timeout = 1.0 if "--hang-initialize" in args else 30.0
    async with Harness(
        tmp_path / "logs", QueuePrompter(lambda request: None), start_timeout=start_timeout
    ) as harness:
        session = await harness.agents.start(script_agent_config(*args), tmp_path, prompt=prompt)
        assert await session.turn.wait() == "error"  # type: ignore[union-attr]
        process = session.process
        log = harness.log(session.session_id)
    assert chain_violations(log) == []
    [end] = payloads(log, "turn.completed")
    assert end["errorCode"] == "provider_failure"
    assert end["message"].startswith(expected)
    assert process is not None and process.returncode is not None  # it is gone, and reaped


async def test_an_agent_that_never_answers_a_cancel_is_killed(tmp_path: Path) -> None:
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None), cancel_timeout=1.0) as harness:
        session = await harness.agents.start(script_agent_config(), tmp_path, prompt="ignore cancel")
        await harness.watch.wait_for(lambda event: event.type == "model.delta")
        assert session.cancel() is True
        assert await session.turn.wait() == "cancelled"  # type: ignore[union-attr]
        assert session.process is not None
        log = harness.log(session.session_id)
        assert session.process.returncode == -9  # SIGKILL
    assert chain_violations(log) == []
    [end] = payloads(log, "turn.completed")
    assert end["message"].startswith("test-agent did not answer session/cancel within 1 s and was killed")


async def test_a_program_that_is_not_there_is_reported(tmp_path: Path) -> None:
    config = AcpAgentConfig("ghost", str(tmp_path / "no-such-agent"), env=("GHOST_API_KEY",))
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None), env={}) as harness:
        session = await harness.agents.start(config, tmp_path, prompt="hi")
        assert await session.turn.wait() == "error"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert chain_violations(log) == []
    [end] = payloads(log, "turn.completed")
    assert (
        end["message"]
        == f"ghost could not start: {tmp_path / 'no-such-agent'}: command not found (is it installed and on PATH?)"
    )


async def test_nothing_the_agent_started_outlives_the_agents_block(tmp_path: Path) -> None:
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None)) as harness:
        session = await harness.agents.start(script_agent_config(), tmp_path, prompt="spawn child")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        [said] = [
            event.payload["text"] for event in harness.log(session.session_id) if event.type == "model.delta"
        ]
        assert session.process is not None
        child = os.pidfd_open(int(said.split()[-1]))  # readable once that very process has ended
    try:
        assert session.process.returncode is not None  # the agent was waited for
        # Its child got SIGKILL with the group; the kernel ends it (a signal is not synchronous).
        ended, _, _ = await anyio.to_thread.run_sync(select.select, [child], [], [], 30.0)
        assert ended == [child]
    finally:
        os.close(child)


async def test_a_follow_up_prompt_reuses_the_running_agent(tmp_path: Path) -> None:
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None)) as harness:
        session = await harness.agents.start(script_agent_config(), tmp_path, prompt="first")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        process = session.process
        assert await session.prompt("second").wait() == "final"
        assert session.process is process
        log = harness.log(session.session_id)
    assert [p["text"] for p in payloads(log, "model.delta")] == ["echo: first", "echo: second"]
    assert harness.validator.methods["initialize"] == 1 and harness.validator.methods["session/prompt"] == 2
    assert sys.executable  # the agent ran under this interpreter


async def test_a_reopened_session_loads_the_agents_own_session(tmp_path: Path) -> None:
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None)) as harness:
        session = await harness.agents.start(script_agent_config(), tmp_path, prompt="first")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        session_id = session.session_id
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None)) as harness:
        again = await harness.agents.reopen(script_agent_config(), session_id)
        assert await again.prompt("second").wait() == "final"
        log = harness.log(session_id)
    assert harness.validator.methods["session/load"] == 1 and harness.validator.methods["session/new"] == 0
    assert harness.validator.problems == []
    assert chain_violations(log) == []
    # The history the agent replays is in our log already: only the new turn is added.
    assert [p["text"] for p in payloads(log, "model.delta")] == ["echo: first", "echo: second"]
    records = [p["recordType"] for p in payloads(log, "source.record")]
    assert records == ["session/new", "session/load"]


async def test_a_history_replayed_after_the_load_answer_is_not_the_new_turns_words(tmp_path: Path) -> None:
    """Gemini CLI answers `session/load` before its replay ends: the rest of the history comes
    in the turn that loaded it, and must not be logged as that turn's answer."""
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None)) as harness:
        session = await harness.agents.start(script_agent_config(), tmp_path, prompt="first")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        session_id = session.session_id
    late = script_agent_config("--late-replay", "echo: first")
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None)) as harness:
        again = await harness.agents.reopen(late, session_id)
        assert await again.prompt("echo: first, again").wait() == "final"
        log = harness.log(session_id)
    assert chain_violations(log) == []
    # Its answer begins as the replayed one did: only the words that go on with the history are it.
    assert [p["text"] for p in payloads(log, "model.delta")] == ["echo: first", "echo: echo: first, again"]
    kept = [p["data"]["content"]["text"] for p in payloads(log, "source.record") if "content" in p["data"]]
    assert kept == ["echo:", " first"]


async def test_the_agent_is_given_the_users_mcp_servers_in_session_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_SEARCH_TOKEN", "search-token-value")
    servers = {
        "files": McpServerConfig(
            "files", command="files-server", args=("--root", "."), env=("MCP_SEARCH_TOKEN",)
        ),
        "docs": McpServerConfig(
            "docs", url="http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer ${MCP_SEARCH_TOKEN}"}
        ),
        "off": McpServerConfig("off", command="never", enabled=False),
        "elsewhere": McpServerConfig("elsewhere", command="never", projects=(tmp_path / "other",)),
    }
    async with Harness(tmp_path / "logs", None, mcp_servers=servers) as harness:
        session = await harness.agents.start(script_agent_config(), tmp_path, prompt="mcp servers")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert harness.validator.problems == []
    received = json.loads("".join(p["text"] for p in payloads(log, "model.delta")))
    assert received == [
        {
            "name": "files",
            # Our launcher: the agent starts it in its project; the server starts in a private
            # folder, and its whole process tree ends with it (tests/test_mcp_confinement.py).
            "command": sys.executable,
            "args": ["-P", "-m", "agent_tui.mcp.launch", "--", "files-server", "--root", "."],
            "env": [{"name": "MCP_SEARCH_TOKEN", "value": "search-token-value"}],
        },
        {
            "type": "http",
            "name": "docs",
            "url": "http://127.0.0.1:9/mcp",
            "headers": [{"name": "Authorization", "value": "Bearer search-token-value"}],
        },
    ]
    # The values went to the agent on its pipe; our log keeps none of them (but what the agent
    # itself said, which here is them).
    kept = [event for event in log if event.type != "model.delta"]
    assert "search-token-value" not in str([event.payload for event in kept])


async def test_what_an_agent_sends_is_what_a_log_can_hold(tmp_path: Path) -> None:
    """A tool call's input with an integer past 64 bits: the turn ends as the agent ended it and
    the log holds the call (the integer as a float), instead of a store failure ending the turn."""
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None)) as harness:
        session = await harness.agents.start(script_agent_config(), tmp_path, prompt="huge input")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert chain_violations(log) == []
    [call] = payloads(log, "model.tool_call_requested")
    assert call["args"]["rawInput"] == {"count": 1e23}
