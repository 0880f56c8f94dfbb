"""Codex (`@zed-industries/codex-acp`) supervised by agent-tui, end to end against a fake model.

The real agent, installed at its pinned version, runs against `FakeModelServer` speaking the
OpenAI Responses API (`real_agent_codex.py` says how it is pointed there). Each test drives it
through `AcpAgents` as the dashboard does and checks what our log says: a shell command is
asked with its real command and risk, runs only after an allow, is not run after a deny, a stop
works while the question waits and while the agent starts, a follow-up turn carries the first
turn's history, and a session reopened after a restart goes on. Every log keeps the chains of
our event log, and every message on the wire fits the ACP schema.

With `RECORD_ACP_TRANSCRIPTS=1` the allowed, denied and stopped runs also write their wire
transcripts to `tests/fixtures/acp-transcripts/codex/` (host paths replaced by fixed ones).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import real_agent_codex as codex
from acp.connection import StreamDirection, StreamEvent
from acp_support import Harness, QueuePrompter
from fake_responses_api import input_items, user_texts
from support_real_agents import RealRun, real_agent

from agent_tui.acp.permissions import AcpPermissionRequest
from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.safety.shell_risk import classify_shell

pytestmark = [pytest.mark.anyio, pytest.mark.real_agents]

COMMAND = "printf hello > made.txt; echo done"
TRANSCRIPTS = Path(__file__).parent / "fixtures" / "acp-transcripts" / "codex"


def payloads(log: list[Event], kind: str, call_id: str | None = None) -> list[dict[str, Any]]:
    return [
        event.payload
        for event in log
        if event.type == kind and (call_id is None or event.payload.get("toolCallId") == call_id)
    ]


def answering(decision: str) -> Callable[[PermissionRequest], PermissionAnswer]:
    return lambda request: PermissionAnswer(decision)  # type: ignore[arg-type]


def assert_clean(run: RealRun, log: list[Event], *, model_requests: int) -> None:
    """The log keeps its chains, the wire fits the schema, and the model was asked exactly what
    the test scripted (no side request, no retry: a request the script has no reply for would
    be answered 500)."""
    assert chain_violations(log) == []
    assert run.harness.validator.problems == []
    assert [(r.method, r.path) for r in run.model.requests] == [("POST", "/v1/responses")] * model_requests


class Transcript:
    """An observer that keeps every JSON-RPC message, to save as a fixture (see the docstring)."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def __call__(self, event: StreamEvent) -> None:
        direction = "in" if event.direction is StreamDirection.INCOMING else "out"
        self.lines.append({"dir": direction, "message": event.message})

    def save(self, name: str, run: RealRun) -> None:
        if os.environ.get("RECORD_ACP_TRANSCRIPTS") != "1":
            return
        places = {str(run.workspace): "/work/ws", str(run.home): "/work/home", str(run.home.parent): "/work"}
        text = "\n".join(json.dumps(line) for line in self.lines) + "\n"
        for place, fixed in sorted(places.items(), key=lambda item: -len(item[0])):
            text = text.replace(place, fixed)
        TRANSCRIPTS.mkdir(parents=True, exist_ok=True)
        (TRANSCRIPTS / f"{name}.jsonl").write_text(text)


def recording(run: RealRun) -> Transcript:
    transcript = Transcript()
    run.harness.agents.observers.append(transcript)
    return transcript


# -- a shell command, asked ------------------------------------------------------------------------


async def test_an_allowed_command_is_asked_with_its_real_command_then_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(answering("allow"))
    async with real_agent(codex, tmp_path, monkeypatch, prompter) as run:
        transcript = recording(run)
        call_id = codex.scripted_shell_call(run.model, COMMAND, then="The file is made.")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="make the file")
        assert session.turn is not None
        assert await session.turn.wait() == "final"
        log = run.harness.log(session.session_id)
        transcript.save("shell-allowed", run)

    assert_clean(run, log, model_requests=2)
    [question] = prompter.requests
    assert question.tool_call_id == call_id
    assert COMMAND in question.args_preview
    assert question.risk == classify_shell(COMMAND)
    assert (run.workspace / "made.txt").read_text() == "hello"

    steps = [(e.type, e.payload.get("decision")) for e in log if e.payload.get("toolCallId") == call_id]
    kinds = [kind for kind, _ in steps]
    assert kinds.count("model.tool_call_requested") == 1
    assert kinds.index("model.tool_call_requested") < kinds.index("permission.requested")
    resolved = payloads(log, "permission.resolved", call_id)
    assert [(p["decision"], p["actor"]) for p in resolved] == [("ask", "policy"), ("allow", "user")]
    assert kinds.count("tool.started") == 1
    assert kinds.index("tool.started") > steps.index(("permission.resolved", "allow"))
    [requested] = payloads(log, "model.tool_call_requested", call_id)
    assert COMMAND in json.dumps(requested["args"])
    [completed] = payloads(log, "tool.completed", call_id)
    assert completed["result"].strip() == "done"  # Codex's output text, not its raw output as JSON
    assert completed["exitCode"] == 0  # Codex says `rawOutput.exit_code`
    assert "".join(p["text"] for p in payloads(log, "model.delta")).endswith("The file is made.")


async def test_a_command_that_only_reads_has_its_own_risk_not_that_of_codexs_shell_wrapper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex runs every command as `/bin/bash -lc CMD` and says so in `rawInput.command` (a
    list); the command the model wrote, and the user reads, is CMD. `basename` is not on Codex's
    own list of safe commands, so it asks; our classifier calls it a read."""
    command = "basename /work/notes.txt"
    assert classify_shell(command) == "read"
    prompter = QueuePrompter(answering("allow"))
    async with real_agent(codex, tmp_path, monkeypatch, prompter) as run:
        call_id = codex.scripted_shell_call(run.model, command, then="It is notes.txt.")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="which file?")
        assert session.turn is not None
        assert await session.turn.wait() == "final"
        log = run.harness.log(session.session_id)

    assert_clean(run, log, model_requests=2)
    [question] = prompter.requests
    assert question.args_preview.endswith(command)
    assert question.risk == "read"
    [requested] = payloads(log, "permission.requested", call_id)
    assert requested["risk"] == "read"
    [completed] = payloads(log, "tool.completed", call_id)
    assert completed["result"].strip() == "notes.txt"
    assert completed["exitCode"] == 0


async def test_a_denied_command_is_logged_as_the_users_denial_and_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(answering("deny"))
    async with real_agent(codex, tmp_path, monkeypatch, prompter) as run:
        transcript = recording(run)
        call_id = codex.scripted_shell_call(run.model, COMMAND, then="unused: Codex ends its turn on a deny")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="make the file")
        assert session.turn is not None
        ending = await session.turn.wait()
        log = run.harness.log(session.session_id)
        transcript.save("shell-denied", run)

    assert_clean(run, log, model_requests=1)
    assert ending == "cancelled"  # Codex answers a deny by ending its prompt `cancelled`: kept as it ended
    [question] = prompter.requests
    assert COMMAND in question.args_preview
    assert not (run.workspace / "made.txt").exists()
    resolved = payloads(log, "permission.resolved", call_id)
    assert [(p["decision"], p["actor"]) for p in resolved] == [("ask", "policy"), ("deny", "user")]
    assert payloads(log, "tool.started", call_id) == []
    [failed] = payloads(log, "tool.failed", call_id)
    assert failed["errorCode"] == "permission_denied"


async def test_allow_for_the_session_is_ours_never_codexs_persistent_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex offers `approved` (once), `approved-execpolicy-amendment` (always: a rule it writes
    to `$CODEX_HOME/rules/`) and `abort`; our "allow for this session" must not pick the rule."""
    prompter = QueuePrompter(lambda request: PermissionAnswer("allow", remember="session"))
    async with real_agent(codex, tmp_path, monkeypatch, prompter) as run:
        transcript = recording(run)
        codex.shell_call(run.model, COMMAND, then="The file is made.")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="make the file")
        assert session.turn is not None
        assert await session.turn.wait() == "final"
        log = run.harness.log(session.session_id)

    assert_clean(run, log, model_requests=2)
    [question] = prompter.requests
    assert isinstance(question, AcpPermissionRequest)
    assert [(o.option_id, o.kind) for o in question.options] == [
        ("approved", "allow_once"),
        ("approved-execpolicy-amendment", "allow_always"),
        ("abort", "reject_once"),
    ]
    [answer] = [
        line["message"]["result"]
        for line in transcript.lines
        if line["dir"] == "out" and "result" in line["message"] and "outcome" in line["message"]["result"]
    ]
    assert answer["outcome"] == {"outcome": "selected", "optionId": "approved"}
    assert list((run.home / ".codex").glob("rules/*")) == []
    assert (run.workspace / "made.txt").read_text() == "hello"


# -- stopping ----------------------------------------------------------------------------------------


async def test_a_stop_while_the_question_waits_withdraws_it_and_the_session_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(lambda request: None)  # nobody answers
    async with real_agent(codex, tmp_path, monkeypatch, prompter) as run:
        transcript = recording(run)
        call_id = codex.scripted_shell_call(run.model, COMMAND, then="unused: the turn is stopped")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="make the file")
        assert session.turn is not None
        await prompter.asked.wait()
        assert session.cancel()
        assert await session.turn.wait() == "cancelled"
        transcript.save("shell-stopped", run)
        codex.answer(run.model, "Back again.")
        assert await session.prompt("go on").wait() == "final"
        log = run.harness.log(session.session_id)

    assert_clean(run, log, model_requests=2)
    assert prompter.withdrawn == 1
    assert not (run.workspace / "made.txt").exists()
    [failed] = payloads(log, "tool.failed", call_id)
    assert failed["errorCode"] == "cancelled"
    ends = [p["stopReason"] for p in payloads(log, "turn.completed")]
    assert ends == ["cancelled", "final"]
    assert "".join(p["text"] for p in payloads(log, "model.delta")).endswith("Back again.")


async def test_a_stop_while_the_agent_starts_leaves_a_session_that_can_be_prompted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(answering("allow"))
    async with real_agent(codex, tmp_path, monkeypatch, prompter) as run:
        stopped: list[bool] = []

        def stop_on_session_new(event: StreamEvent) -> None:
            """The stop, the moment `session/new` is written: before its answer can be read."""
            if event.direction is StreamDirection.OUTGOING and event.message.get("method") == "session/new":
                stopped.append(session.cancel())

        run.harness.agents.observers.append(stop_on_session_new)
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="hello")
        assert session.turn is not None
        assert await session.turn.wait() == "cancelled"
        assert stopped == [True]
        run.harness.agents.observers.remove(stop_on_session_new)
        codex.answer(run.model, "Started after all.")
        assert await session.prompt("hello again").wait() == "final"
        log = run.harness.log(session.session_id)

    assert_clean(run, log, model_requests=1)
    ends = [(p["stopReason"], p.get("message")) for p in payloads(log, "turn.completed")]
    assert [reason for reason, _ in ends] == ["cancelled", "final"]
    assert "".join(p["text"] for p in payloads(log, "model.delta")).endswith("Started after all.")
    [request] = run.model.requests
    assert user_texts(request)[-1] == "hello again"


# -- more turns ----------------------------------------------------------------------------------------


async def test_a_follow_up_turn_reaches_the_model_with_the_first_turns_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(answering("allow"))
    async with real_agent(codex, tmp_path, monkeypatch, prompter) as run:
        codex.shell_call(run.model, COMMAND, then="The file is made.")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="make the file")
        assert session.turn is not None
        assert await session.turn.wait() == "final"
        codex.answer(run.model, "It says hello.")
        assert await session.prompt("what is in it?").wait() == "final"
        log = run.harness.log(session.session_id)

    assert_clean(run, log, model_requests=3)
    assert [p["stopReason"] for p in payloads(log, "turn.completed")] == ["final", "final"]
    last = run.model.requests[-1]
    assert "make the file" in user_texts(last) and user_texts(last)[-1] == "what is in it?"
    kinds = [item.get("type") for item in input_items(last)]
    assert "function_call" in kinds and "function_call_output" in kinds
    said = [item for item in input_items(last) if item.get("role") == "assistant"]
    assert "The file is made." in json.dumps(said)
    assert "".join(p["text"] for p in payloads(log, "model.delta")).endswith("It says hello.")


async def test_a_session_reopened_after_a_restart_goes_on_in_the_same_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(answering("allow"))
    async with real_agent(codex, tmp_path, monkeypatch, prompter) as run:
        # The run before the restart: its own engine and agents on the same logs directory,
        # all ended (the agent's process too) before `run.harness`, the restarted program, reopens.
        env = {**os.environ, **run.agent.env}
        async with Harness(run.sessions_dir, prompter, env=env, start_timeout=120.0) as before:
            codex.answer(run.model, "First answer.")
            session = await before.agents.start(run.agent.config, run.workspace, prompt="first question")
            assert session.turn is not None
            assert await session.turn.wait() == "final"
            session_id = session.session_id

        codex.answer(run.model, "Second answer.")
        reopened = await run.harness.agents.reopen(run.agent.config, session_id)
        assert await reopened.prompt("second question").wait() == "final"
        log = run.harness.log(session_id)

    assert before.validator.problems == []
    assert_clean(run, log, model_requests=2)
    methods = run.harness.validator.methods
    assert methods["session/load"] == 1 and methods["session/new"] == 0  # Codex loads its own session
    assert [p["stopReason"] for p in payloads(log, "turn.completed")] == ["final", "final"]
    text = "".join(p["text"] for p in payloads(log, "model.delta"))
    assert text.startswith("First answer.") and text.endswith("Second answer.")
    last = run.model.requests[-1]
    assert "first question" in user_texts(last) and user_texts(last)[-1] == "second question"
    assert "First answer." in json.dumps(
        [item for item in input_items(last) if item.get("role") == "assistant"]
    )
