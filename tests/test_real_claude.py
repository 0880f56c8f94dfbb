"""Claude Code through its ACP adapter (`claude-agent-acp`), supervised like our own agents.

Each test runs the pinned agent against the fake Anthropic Messages server (`real_agent_claude.py`
scripts it): a shell command asked and allowed, the same denied, a stop while the question waits,
a stop during start-up, a follow-up turn with the first turn's history, and a reopen after a
restart. Each checks the log's chains and the wire against the ACP schema.

With `AGENT_TUI_RECORD_TRANSCRIPTS=1` the allowed, denied and stopped runs also write their wire
(scrubbed of host paths) to `tests/fixtures/acp-transcripts/claude/`, the transcripts the mapping's
unit tests read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
import real_agent_claude as claude
from acp.connection import StreamDirection, StreamEvent
from acp_support import Harness, QueuePrompter, WireValidator
from fake_model_server import Recorded
from support_real_agents import RealRun, real_agent

from agent_tui.acp.permissions import AcpPermissionRequest
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.safety.shell_risk import classify_shell

pytestmark = [pytest.mark.anyio, pytest.mark.real_agents]

COMMAND = "printf hello > made.txt; echo done"
TRANSCRIPTS = Path(__file__).parent / "fixtures" / "acp-transcripts" / "claude"
TURN_LIMIT = 120.0
"""Seconds a turn of the real agent may take on a loaded CI machine before the test gives up."""


def payloads(log: list[Event], kind: str) -> list[dict[str, Any]]:
    return [event.payload for event in log if event.type == kind]


def kinds(log: list[Event]) -> list[str]:
    return [event.type for event in log]


class Wire:
    """An observer that keeps every JSON-RPC message, and checks a copy of it against the schema
    with the adapter's own extensions taken out (`claude.KNOWN_EXTENSIONS`)."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []
        self.schema = WireValidator()
        self.sent: dict[str, anyio.Event] = {}
        self._asked: dict[Any, str] = {}

    def __call__(self, event: StreamEvent) -> None:
        way = "out" if event.direction is StreamDirection.OUTGOING else "in"
        self.messages.append((way, event.message))
        method = event.message.get("method")
        if way == "out" and isinstance(method, str):
            self.sent.setdefault(method, anyio.Event()).set()
            self._asked[event.message.get("id")] = method
        answering = self._asked.pop(event.message.get("id"), None) if way == "in" and method is None else None
        standard = claude.without_extensions(event.message, answering)
        if standard is not None:
            self.schema(StreamEvent(event.direction, standard))

    def advertised_terminal_output(self) -> bool:
        """Whether our `initialize` told the agent we show terminal output (`_meta`)."""
        for way, message in self.messages:
            if way == "out" and message.get("method") == "initialize":
                meta = message["params"]["clientCapabilities"].get("_meta") or {}
                return meta.get("terminal_output") is True
        raise AssertionError("agent-tui sent no initialize")

    def save(self, name: str, run: RealRun) -> None:
        """Write the transcript when recording is asked for (`AGENT_TUI_RECORD_TRANSCRIPTS=1`)."""
        if os.environ.get("AGENT_TUI_RECORD_TRANSCRIPTS") != "1":
            return
        TRANSCRIPTS.mkdir(parents=True, exist_ok=True)
        (TRANSCRIPTS / f"{name}.jsonl").write_text(claude.transcript(self.messages, run))


async def started(run: RealRun, wire: Wire, prompt: str) -> Any:
    run.harness.agents.observers.append(wire)
    return await run.harness.agents.start(run.agent.config, run.workspace, prompt=prompt)


async def ended(turn: Any) -> str:
    with anyio.fail_after(TURN_LIMIT):
        return str(await turn.wait())


def assert_clean(run: RealRun, wire: Wire, log: list[Event]) -> None:
    assert chain_violations(log) == []
    assert wire.schema.problems == [], "\n".join(wire.schema.problems)


def allow(request: PermissionRequest) -> PermissionAnswer:
    return PermissionAnswer("allow")


def deny(request: PermissionRequest) -> PermissionAnswer:
    return PermissionAnswer("deny")


async def test_a_shell_command_is_asked_with_its_real_command_and_runs_when_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(allow)
    wire = Wire()
    async with real_agent(claude, tmp_path, monkeypatch, prompter) as run:
        claude.shell_call(run.model, COMMAND, then="The file is made.")
        session = await started(run, wire, "make the file")
        assert await ended(session.turn) == "final"
        log = run.harness.log(session.session_id)
    wire.save("shell-allowed", run)
    assert_clean(run, wire, log)
    assert (run.workspace / "made.txt").read_text() == "hello"

    [question] = prompter.requests
    assert isinstance(question, AcpPermissionRequest)
    # The agent's own options: once, its persistent rule for the command, no.
    assert [(option.option_id, option.kind) for option in question.options] == [
        ("allow-once", "allow_once"),
        ("allow-with-updates", "allow_always"),
        ("reject", "reject_once"),
    ]
    assert COMMAND in question.args_preview
    assert question.risk == classify_shell(COMMAND)
    [requested] = payloads(log, "model.tool_call_requested")
    assert requested["toolCallId"] == claude.CALL_ID
    assert COMMAND in json.dumps(requested["args"])
    order = [kind for kind in kinds(log) if kind.startswith(("model.tool_call", "permission.", "tool."))]
    assert order == [
        "model.tool_call_requested",
        "permission.requested",
        "permission.resolved",
        "permission.resolved",
        "tool.started",
        "tool.completed",
    ]
    [asked] = payloads(log, "permission.requested")
    assert COMMAND in asked["argsPreview"] and asked["risk"] == classify_shell(COMMAND)
    [completed] = payloads(log, "tool.completed")
    assert "done" in completed["result"] and "{" not in completed["result"]
    # Claude's adapter reports the exit code (`_meta.terminal_exit.exit_code`) only to a client
    # that advertises terminal output (`clientCapabilities._meta.terminal_output`); to any other
    # it reports none, and none may be made up.
    if wire.advertised_terminal_output():
        assert completed.get("exitCode") == 0
    else:
        assert completed.get("exitCode") is None
    texts = "".join(p["text"] for p in payloads(log, "model.delta"))
    assert texts.endswith("The file is made.")
    # All it sent went to the Messages API: the turn, its title, its guess at the next prompt.
    assert {(recorded.method, recorded.path) for recorded in run.model.requests} == {
        ("POST", "/v1/messages?beta=true")
    }


async def test_a_denied_shell_command_is_logged_as_a_denial_and_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(deny)
    wire = Wire()
    async with real_agent(claude, tmp_path, monkeypatch, prompter) as run:
        claude.shell_call(run.model, COMMAND, then="I will not make it.")
        session = await started(run, wire, "make the file")
        end = await ended(session.turn)
        log = run.harness.log(session.session_id)
    wire.save("shell-denied", run)
    assert_clean(run, wire, log)
    assert not (run.workspace / "made.txt").exists()
    # Claude Code tells its model the user refused and lets it answer: the turn ends as the
    # agent ended it (`end_turn`), with what the model said.
    assert end == "final"
    assert "".join(p["text"] for p in payloads(log, "model.delta")).endswith("I will not make it.")
    [question] = prompter.requests
    assert COMMAND in question.args_preview
    resolved = [p for p in payloads(log, "permission.resolved") if p["actor"] == "user"]
    assert [(p["decision"], p["toolCallId"]) for p in resolved] == [("deny", claude.CALL_ID)]
    [failed] = payloads(log, "tool.failed")
    assert failed["toolCallId"] == claude.CALL_ID and failed["errorCode"] == "permission_denied"
    assert payloads(log, "tool.started") == [] and payloads(log, "tool.completed") == []


async def test_stop_while_the_question_waits_withdraws_it_and_a_follow_up_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(lambda request: None)  # nobody answers
    wire = Wire()
    async with real_agent(claude, tmp_path, monkeypatch, prompter) as run:
        claude.shell_call(run.model, COMMAND, then="never said")
        session = await started(run, wire, "make the file")
        with anyio.fail_after(TURN_LIMIT):
            await prompter.asked.wait()
        assert session.cancel() is True
        assert await ended(session.turn) == "cancelled"
        assert prompter.withdrawn == 1
        claude.answer(run.model, "Here again.")
        assert await ended(session.prompt("are you there?")) == "final"
        log = run.harness.log(session.session_id)
    wire.save("stopped-while-asking", run)
    assert_clean(run, wire, log)
    assert not (run.workspace / "made.txt").exists()
    first, second = payloads(log, "turn.completed")
    assert first["stopReason"] == "cancelled" and second["stopReason"] == "final"
    assert payloads(log, "tool.started") == [] and payloads(log, "tool.completed") == []
    [failed] = payloads(log, "tool.failed")
    assert failed["toolCallId"] == claude.CALL_ID and failed["errorCode"] == "cancelled"
    assert "".join(p["text"] for p in payloads(log, "model.delta")).endswith("Here again.")


async def test_stop_during_start_up_then_a_new_prompt_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(allow)
    wire = Wire()
    async with real_agent(claude, tmp_path, monkeypatch, prompter) as run:
        session = await started(run, wire, "hello")
        with anyio.fail_after(TURN_LIMIT):
            await wire.sent.setdefault("session/new", anyio.Event()).wait()
        # The observer sees `session/new` as it is written: the agent has not answered it yet.
        assert session.cancel() is True
        stopped = await ended(session.turn)
        claude.answer(run.model, "Started after all.")
        again = await ended(session.prompt("hello again"))
        log = run.harness.log(session.session_id)
    assert_clean(run, wire, log)
    first, second = payloads(log, "turn.completed")
    assert (stopped, first["stopReason"]) == ("cancelled", "cancelled")
    assert (again, second["stopReason"]) == ("final", "final"), second
    assert "".join(p["text"] for p in payloads(log, "model.delta")) == "Started after all."


async def test_a_follow_up_turn_reaches_the_model_with_the_first_turns_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(allow)
    wire = Wire()
    async with real_agent(claude, tmp_path, monkeypatch, prompter) as run:
        claude.answer(run.model, "The first answer.")
        session = await started(run, wire, "first question")
        assert await ended(session.turn) == "final"
        claude.answer(run.model, "The second answer.")
        assert await ended(session.prompt("second question")) == "final"
        log = run.harness.log(session.session_id)
    assert_clean(run, wire, log)
    mains = [recorded for recorded in run.model.requests if claude.is_main(recorded)]
    assert len(mains) == 2
    history = user_and_assistant_texts(mains[1])
    assert history[:2] == [("user", "first question"), ("assistant", "The first answer.")]
    assert history[-1] == ("user", "second question")
    first, second = payloads(log, "turn.completed")
    assert first["stopReason"] == second["stopReason"] == "final"
    # The agent's own cost (its `usage_update.cost`, in USD, summed over the session) is the
    # turn's cost: each turn costs what the sum grew by.
    reported = claude.reported_costs(wire.messages)
    assert len(reported) == 2 and reported[1] > reported[0] > 0
    assert first["usage"]["costUsd"] == pytest.approx(reported[0])
    assert second["usage"]["costUsd"] == pytest.approx(reported[1] - reported[0])


def user_and_assistant_texts(recorded: Recorded) -> list[tuple[str, str]]:
    """The (role, text) of each message of a Messages request that says something in text (the
    reminders Claude Code adds to a user message are left out)."""
    said = []
    for message in recorded.body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts = [
            block["text"]
            for block in blocks
            if block.get("type") == "text" and not block["text"].startswith("<system-reminder>")
        ]
        if message["role"] in ("user", "assistant") and texts:
            said.append((message["role"], texts[-1]))
    return said


async def test_reopen_after_a_restart_loads_the_agents_session_and_continues_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(allow)
    wire = Wire()
    async with real_agent(claude, tmp_path, monkeypatch, prompter) as run:
        claude.answer(run.model, "Before the restart.")
        session = await started(run, wire, "first question")
        assert await ended(session.turn) == "final"
        session_id = session.session_id
        await run.harness.agents.close(session_id)
        run.harness.store.release(session_id)
        claude.answer(run.model, "After the restart.")
        again_wire = Wire()
        async with Harness(run.sessions_dir, prompter, env={**os.environ, **run.agent.env}) as restarted:
            restarted.agents.observers.append(again_wire)
            restarted.agents.start_timeout = 120.0
            again = await restarted.agents.reopen(run.agent.config, session_id)
            assert await ended(again.prompt("second question")) == "final"
            log = restarted.log(session_id)
    assert_clean(run, again_wire, log)
    assert again_wire.schema.methods["session/load"] == 1 and again_wire.schema.methods["session/new"] == 0
    # The history the agent replays on load is in our log already: only the new turn is added.
    assert [p["text"] for p in payloads(log, "model.delta")] == ["Before the restart.", "After the restart."]
    assert [p["stopReason"] for p in payloads(log, "turn.completed")] == ["final", "final"]
    mains = [recorded for recorded in run.model.requests if claude.is_main(recorded)]
    assert user_and_assistant_texts(mains[-1])[:2] == [
        ("user", "first question"),
        ("assistant", "Before the restart."),
    ]
