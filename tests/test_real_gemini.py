"""Gemini CLI (`gemini --acp`, pinned in real-agents.toml) supervised like one of our agents.

The real agent runs against a fake Gemini API on 127.0.0.1 (`real_agent_gemini`), in an isolated
home. Each test drives it through `AcpAgents` and checks what the issue promises: its shell
command reaches our approval queue with the real command and our shell classifier's risk; an
allow runs it and a deny is logged as the user's denial; stop works while a question waits and
while the agent starts; a follow-up turn and a reopened session carry the history. In every
test the log keeps our chains and every ACP message fits the protocol's schema.

`AGENT_TUI_RECORD_TRANSCRIPTS=1` rewrites the wire transcripts in
`tests/fixtures/acp-transcripts/gemini/`; otherwise each recording test checks that the live
wire still has the recorded shape (who sent which method, update and status, in order).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
import real_agent_gemini as gemini
from acp.connection import StreamDirection, StreamEvent
from acp_support import Harness, QueuePrompter
from fake_gemini_api import function_responses, method_of, user_texts
from fake_model_server import FakeModelServer
from support_real_agents import RealRun, real_agent, standard_config

from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.safety.shell_risk import classify_shell

pytestmark = [pytest.mark.anyio, pytest.mark.real_agents]

COMMAND = "printf hello > made.txt; echo done"
TRANSCRIPTS = Path(__file__).parent / "fixtures" / "acp-transcripts" / gemini.NAME
RECORD = os.environ.get("AGENT_TUI_RECORD_TRANSCRIPTS") == "1"


def payloads(log: list[Event], kind: str) -> list[dict[str, Any]]:
    return [event.payload for event in log if event.type == kind]


def last_end(harness: Harness, session_id: str) -> dict[str, Any]:
    """The last `turn.completed` of the session (said when a turn ended otherwise than expected)."""
    return payloads(harness.log(session_id), "turn.completed")[-1]


def types_of(log: list[Event], call_id: str) -> list[str]:
    """The event types of one tool call, in log order."""
    return [event.type for event in log if event.payload.get("toolCallId") == call_id]


class Transcript:
    """An observer that keeps the wire as `{"dir", "message"}` lines, host paths scrubbed."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def __call__(self, event: StreamEvent) -> None:
        direction = "out" if event.direction is StreamDirection.OUTGOING else "in"
        self.lines.append({"dir": direction, "message": event.message})

    def scrubbed(self, run: RealRun) -> list[dict[str, Any]]:
        text = json.dumps(self.lines)
        text = text.replace(str(run.workspace), "/work/ws").replace(str(run.home), "/work/home")
        text = re.sub(r"_\d{13}_", "_1700000000000_", text)  # call ids carry a timestamp
        for number, found in enumerate(dict.fromkeys(re.findall(r'"sessionId": "([0-9a-f-]{36})"', text))):
            text = text.replace(found, f"00000000-0000-4000-8000-{number:012d}")
        return json.loads(text)


def shape(lines: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """Who sent which method (or answered), with the update kind and a tool call's status."""
    found: list[tuple[str, ...]] = []
    for line in lines:
        message = line["message"]
        params = message.get("params") or {}
        update = params.get("update") or {}
        kind = update.get("sessionUpdate", "")
        if kind == "available_commands_update":
            continue  # sent when its command list is ready: its place among the others varies
        status = update.get("status") or (params.get("toolCall") or {}).get("status") or ""
        what = message.get("method") or ("error" if "error" in message else "result")
        found.append((line["dir"], what, kind, status))
    return found


def keep_transcript(name: str, transcript: Transcript, run: RealRun, *, check: bool = True) -> None:
    """Write the transcript (recording) or check the live wire has the recorded shape."""
    path = TRANSCRIPTS / f"{name}.jsonl"
    lines = transcript.scrubbed(run)
    if RECORD:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
        return
    if not check:
        return
    recorded = [json.loads(line) for line in path.read_text().splitlines()]
    assert shape(lines) == shape(recorded), f"{gemini.NAME}'s wire no longer matches {path.name}"


def schema_problems(problems: list[str]) -> list[str]:
    """The wire validator's problems but one known one: Gemini CLI answers `session/new` and
    `session/load` with a `models` field (the model list of ACP's withdrawn unstable model
    selection, replaced by `configOptions`), which the schema no longer has, so it does not
    survive the schema unchanged. Everything else it sends must fit."""

    def known(problem: str) -> bool:
        sent, _, kept = problem.partition(" → ")
        return (
            problem.startswith(
                ("session/new result: does not survive", "session/load result: does not survive")
            )
            and "'models': {" in sent
            and "'models'" not in kept
        )

    return [problem for problem in problems if not known(problem)]


def observe(run: RealRun, observer: Any) -> None:
    """Add a wire observer (the harness's `AcpAgents` already has the validator as its own)."""
    run.harness.agents.observers.append(observer)


def check_clean(run: RealRun, log: list[Event]) -> None:
    """Every test: the log keeps our chains, the wire fits the schema, no side request was made."""
    assert chain_violations(log) == []
    assert schema_problems(run.harness.validator.problems) == []
    assert [method_of(r) for r in run.model.requests] == ["streamGenerateContent"] * len(run.model.requests)


def allow(request: Any) -> PermissionAnswer:
    return PermissionAnswer("allow")


def deny(request: Any) -> PermissionAnswer:
    return PermissionAnswer("deny")


async def test_an_allowed_shell_command_is_asked_then_runs_and_its_result_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(allow)
    transcript = Transcript()
    async with real_agent(gemini, tmp_path, monkeypatch, prompter) as run:
        observe(run, transcript)
        gemini.shell_call(run.model, COMMAND, then="Made it.")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="make the file")
        assert await session.turn.wait() == "final", last_end(run.harness, session.session_id)  # type: ignore[union-attr]
        log = run.harness.log(session.session_id)
    check_clean(run, log)
    keep_transcript("shell-allowed", transcript, run)

    # The question reached our queue with the real command and our classifier's risk.
    [question] = prompter.requests
    assert COMMAND in question.args_preview
    assert question.risk == classify_shell(COMMAND) == "destructive"  # `>` overwrites a file
    [requested] = payloads(log, "model.tool_call_requested")
    call = requested["toolCallId"]
    assert COMMAND in json.dumps(requested["args"])
    # Asked, allowed by the user, and only then started; it ran.
    assert types_of(log, call) == [
        "model.tool_call_requested",
        "permission.requested",
        "permission.resolved",
        "permission.resolved",
        "tool.started",
        "tool.completed",
    ]
    resolved = payloads(log, "permission.resolved")
    assert (resolved[-1]["decision"], resolved[-1]["actor"]) == ("allow", "user")
    assert (run.workspace / "made.txt").read_text() == "hello"
    # Gemini CLI reports neither the output nor an exit code to its client (it hands them to its
    # model only): the result holds no made-up exit code and no raw JSON of the update.
    [completed] = payloads(log, "tool.completed")
    assert completed.get("exitCode") is None
    assert not completed["result"].lstrip().startswith(("{", "["))
    [result] = function_responses(run.model.requests[-1])
    assert "Output: done" in json.dumps(result)
    assert "".join(p["text"] for p in payloads(log, "model.delta")) == "Made it."


async def test_a_denied_shell_command_is_logged_as_the_users_denial_and_does_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(deny)
    transcript = Transcript()
    async with real_agent(gemini, tmp_path, monkeypatch, prompter) as run:
        observe(run, transcript)
        gemini.shell_call(run.model, COMMAND, then="I was not allowed.")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="make the file")
        assert await session.turn.wait() == "final", last_end(run.harness, session.session_id)  # type: ignore[union-attr]
        log = run.harness.log(session.session_id)
    check_clean(run, log)
    keep_transcript("shell-denied", transcript, run)

    [question] = prompter.requests
    assert COMMAND in question.args_preview
    [requested] = payloads(log, "model.tool_call_requested")
    call = requested["toolCallId"]
    assert types_of(log, call) == [
        "model.tool_call_requested",
        "permission.requested",
        "permission.resolved",
        "permission.resolved",
        "tool.failed",
    ]
    resolved = payloads(log, "permission.resolved")
    assert (resolved[-1]["decision"], resolved[-1]["actor"]) == ("deny", "user")
    [failed] = payloads(log, "tool.failed")
    assert failed["errorCode"] == "permission_denied"
    assert not (run.workspace / "made.txt").exists()
    [refusal] = function_responses(run.model.requests[-1])
    assert "canceled by the user" in json.dumps(refusal)
    assert "".join(p["text"] for p in payloads(log, "model.delta")) == "I was not allowed."


async def test_stop_while_the_question_waits_withdraws_it_and_the_next_prompt_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(lambda request: None)  # nobody answers
    transcript = Transcript()
    async with real_agent(gemini, tmp_path, monkeypatch, prompter) as run:
        observe(run, transcript)
        gemini.shell_call(run.model, COMMAND, then="unused")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="make the file")
        await prompter.asked.wait()
        assert session.cancel()
        assert await session.turn.wait() == "cancelled"  # type: ignore[union-attr]
        assert prompter.withdrawn == 1
        gemini.answer(run.model, "Back again.")
        assert await session.prompt("say something").wait() == "final", last_end(
            run.harness, session.session_id
        )
        log = run.harness.log(session.session_id)
    check_clean(run, log)
    keep_transcript("shell-stopped", transcript, run)

    assert not (run.workspace / "made.txt").exists()
    [requested] = payloads(log, "model.tool_call_requested")
    call_types = types_of(log, requested["toolCallId"])
    assert "tool.started" not in call_types and call_types[-1] == "tool.failed"
    ends = [p["stopReason"] for p in payloads(log, "turn.completed")]
    assert ends == ["cancelled", "final"]
    assert "".join(p["text"] for p in payloads(log, "model.delta")) == "Back again."


async def test_stop_while_the_agent_starts_then_a_new_prompt_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    initializing = anyio.Event()

    def watch(event: StreamEvent) -> None:
        if event.direction is StreamDirection.OUTGOING and event.message.get("method") == "initialize":
            initializing.set()

    prompter = QueuePrompter(allow)
    async with real_agent(gemini, tmp_path, monkeypatch, prompter) as run:
        observe(run, watch)
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="hello")
        await initializing.wait()
        assert run.harness.validator.methods["session/new"] == 0  # it has not got this far
        assert session.cancel()
        assert await session.turn.wait() == "cancelled"  # type: ignore[union-attr]
        gemini.answer(run.model, "Started at last.")
        assert await session.prompt("hello again").wait() == "final", last_end(
            run.harness, session.session_id
        )
        log = run.harness.log(session.session_id)
    check_clean(run, log)
    assert [p["stopReason"] for p in payloads(log, "turn.completed")] == ["cancelled", "final"]
    assert "".join(p["text"] for p in payloads(log, "model.delta")) == "Started at last."


async def test_a_follow_up_turn_reaches_the_model_with_the_first_turns_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with real_agent(gemini, tmp_path, monkeypatch, QueuePrompter(allow)) as run:
        gemini.answer(run.model, "The first answer.")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="first question")
        assert await session.turn.wait() == "final", last_end(run.harness, session.session_id)  # type: ignore[union-attr]
        gemini.answer(run.model, "The second answer.")
        assert await session.prompt("second question").wait() == "final", last_end(
            run.harness, session.session_id
        )
        log = run.harness.log(session.session_id)
    check_clean(run, log)
    assert run.harness.validator.methods["initialize"] == 1
    first, second = run.model.requests
    assert "first question" in user_texts(first) and "second question" not in user_texts(first)
    assert user_texts(second)[-2:] == ["first question", "second question"]
    assert "The first answer." in json.dumps(second.body["contents"])
    assert [p["text"] for p in payloads(log, "model.delta")] == ["The first answer.", "The second answer."]
    # Each turn's tokens, as the model counted them (12 in, 5 out): Gemini CLI passes them on in
    # its prompt answer's `_meta.quota.token_count`, as it has no `usage`; they are priced as ours.
    usages = [p.get("usage") or {} for p in payloads(log, "turn.completed")]
    assert [(u.get("promptTokens"), u.get("completionTokens")) for u in usages] == [(12, 5), (12, 5)]


def backdate_chats(home: Path) -> None:
    """Give Gemini CLI's saved chats the name of an earlier minute.

    It names a chat file `session-<minute>-<first 8 of the session id>.jsonl` and, on
    `session/load`, starts recording the session before it reads it: within the minute the chat
    was saved in, that fresh start is appended to the same file and erases the history, and the
    load fails with "No previous sessions found for this project." (Gemini CLI 0.61.0; a user
    who reopens a minute later never sees it). A test that reopens at once renames the file, as
    if a minute had passed.
    """
    chats = list(home.glob(".gemini/tmp/*/chats/session-*.jsonl"))
    assert chats, f"Gemini CLI saved no chat under {home / '.gemini' / 'tmp'}"
    for chat in chats:
        chat.rename(chat.with_name(re.sub(r"^session-[0-9T-]{16}-", "session-2000-01-01T00-00-", chat.name)))


async def test_a_session_reopened_after_a_restart_loads_the_agents_own_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with real_agent(gemini, tmp_path, monkeypatch, QueuePrompter(allow)) as run:
        gemini.answer(run.model, "Before the restart.")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="first question")
        assert await session.turn.wait() == "final", last_end(run.harness, session.session_id)  # type: ignore[union-attr]
        session_id = session.session_id
    check_clean(run, run.harness.log(session_id))
    backdate_chats(run.home)

    # A new process of ours: a new harness on the same logs, a new model server, the same home.
    with FakeModelServer() as model:
        agent = gemini.setup(run.home, model)
        env = {**os.environ, **agent.env}
        transcript = Transcript()
        async with Harness(run.sessions_dir, QueuePrompter(allow), env=env, start_timeout=120.0) as harness:
            harness.agents.observers.append(transcript)
            again = await harness.agents.reopen(agent.config, session_id)
            gemini.answer(model, "After the restart.")
            assert await again.prompt("second question").wait() == "final", last_end(harness, session_id)
            log = harness.log(session_id)
    # Gemini CLI replays the loaded history without waiting for it (`streamHistory` is not
    # awaited), so the replay may come after its `session/load` answer and even after our
    # `session/prompt`: the recording shows such a run (its shape varies, so it is not checked).
    keep_transcript("reopened", transcript, run, check=False)
    assert chain_violations(log) == []
    assert schema_problems(harness.validator.problems) == []
    assert harness.validator.methods["session/load"] == 1 and harness.validator.methods["session/new"] == 0
    [request] = model.requests
    assert method_of(request) == "streamGenerateContent"
    assert "first question" in user_texts(request) and user_texts(request)[-1] == "second question"
    assert "Before the restart." in json.dumps(request.body["contents"])
    assert [p["text"] for p in payloads(log, "model.delta")] == ["Before the restart.", "After the restart."]
    assert [p["stopReason"] for p in payloads(log, "turn.completed")] == ["final", "final"]


async def test_without_a_way_to_log_in_the_turn_ends_saying_how_to_log_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with real_agent(gemini, tmp_path, monkeypatch, QueuePrompter(allow)) as run:
        # A user who never chose how to log in and has no key: no `security.auth`, no
        # `GEMINI_API_KEY` and no gateway URL (with a key alone it would call Google itself).
        settings = {**gemini.SETTINGS, "security": {"folderTrust": {"enabled": False}}}
        (run.home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        config = standard_config(gemini.NAME, {}).config
        session = await run.harness.agents.start(config, run.workspace, prompt="hello")
        assert await session.turn.wait() == "error"  # type: ignore[union-attr]
        log = run.harness.log(session.session_id)
    check_clean(run, log)
    assert run.model.requests == []
    [end] = payloads(log, "turn.completed")
    assert end["errorCode"] == "provider_failure"
    assert end["message"].startswith("gemini needs you to log in first: ")
    assert "Gemini API key" in end["message"] and "is missing or not configured" in end["message"]
