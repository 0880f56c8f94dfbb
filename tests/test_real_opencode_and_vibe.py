"""opencode and Mistral Vibe, the real agents (`opencode acp`, `vibe-acp`, pinned in
`tests/real-agents.toml`), supervised by us: both speak Chat Completions to their model and
both mark a call running before they ask about it.

Each test starts the agent in an isolated home against the fake model (`real_agent_<name>`),
drives it through `AcpAgents` as the dashboard does, and checks what the issue promises: every
shell command it runs is asked first with the real command and our risk, a deny is a denial,
stop works at any moment, a follow-up turn and a reopened session carry the history. Every log
keeps our chains and every wire message fits the ACP schema. With `AGENT_TUI_RECORD_TRANSCRIPTS`
set, the allow, deny and stop-while-asked runs are saved under
`tests/fixtures/acp-transcripts/<name>/`.

opencode marks its bash call `in_progress` (with the command) before it asks, and its first
`tool_call` carries only `rawInput.cwd`; the exit code is `rawOutput.metadata.exit`. Vibe's
first `tool_call` is already `in_progress` (with the command) before it asks, its permission
request names the call by id only, and its result reports no exit code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import real_agent_opencode
import real_agent_vibe
from acp.connection import StreamDirection, StreamEvent
from acp_support import Harness, QueuePrompter
from support_real_agents import RealRun, real_agent
from support_transcripts import Transcript

from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.safety.shell_risk import classify_shell

pytestmark = [pytest.mark.anyio, pytest.mark.real_agents]

EXIT_CODE = {"opencode": 0, "vibe": None}
"""The exit code each reports for a command that succeeded (Vibe reports none: never made up)."""


@pytest.fixture(params=[real_agent_opencode, real_agent_vibe], ids=lambda module: module.NAME)
def adapter(request: pytest.FixtureRequest) -> Any:
    return request.param


COMMAND = "printf hello > made.txt; echo done"


def payloads(log: list[Event], kind: str) -> list[dict[str, Any]]:
    return [event.payload for event in log if event.type == kind]


def index_of(log: list[Event], kind: str, **fields: Any) -> int:
    return next(
        n
        for n, event in enumerate(log)
        if event.type == kind and all(event.payload.get(k) == v for k, v in fields.items())
    )


def checked(run: RealRun, log: list[Event]) -> None:
    """What holds in every test: our chains, and every wire message fits the schema."""
    checked_harness(run.harness, log)


def checked_harness(harness: Harness, log: list[Event]) -> None:
    assert chain_violations(log) == []
    assert [p for p in harness.validator.problems if not is_thinking_category(p)] == []


def is_thinking_category(problem: str) -> bool:
    """Vibe's one message that breaks the ACP schema: the result of `session/new` (and of
    `session/load`) lists its thinking option with `category: "thinking"`, a category ACP does
    not define (`mode`, `model`, `model_config`, `thought_level` or an object); the SDK reads
    it as no category."""
    return (
        problem.startswith(("session/new result: does not survive", "session/load result: does not survive"))
        and "'category': 'thinking'" in problem
    )


def scrub_paths(run: RealRun, tmp_path: Path) -> dict[Path, str]:
    return {run.workspace: "/work/ws", run.home: "/work/home", tmp_path: "/work/tmp"}


def answering(decision: str) -> QueuePrompter:
    return QueuePrompter(lambda request: PermissionAnswer(decision))  # type: ignore[arg-type]


async def test_a_shell_command_is_asked_with_its_command_and_runs_once_allowed(
    adapter: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = answering("allow")
    transcript = Transcript()
    async with real_agent(adapter, tmp_path, monkeypatch, prompter) as run:
        run.harness.agents.observers.append(transcript)
        adapter.shell_call(run.model, COMMAND, then="The file is made.")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="Make the file")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = run.harness.log(session.session_id)
    transcript.save(adapter.NAME, "allowed", scrub_paths(run, tmp_path))
    checked(run, log)
    [question] = prompter.requests
    assert COMMAND in question.args_preview
    assert question.risk == classify_shell(COMMAND)
    assert (run.workspace / "made.txt").read_text() == "hello"
    [requested] = payloads(log, "model.tool_call_requested")
    assert COMMAND in json.dumps(requested["args"])
    call = requested["toolCallId"]
    allowed = index_of(log, "permission.resolved", toolCallId=call, actor="user", decision="allow")
    resolved = payloads(log, "permission.resolved")
    assert [
        p for p in resolved if p["decision"] == "allow" and p["actor"] != "user"
    ] == []  # only the user allowed it
    assert index_of(log, "tool.started", toolCallId=call) > allowed
    [done] = payloads(log, "tool.completed")
    assert done["result"] == "done\n"
    assert done.get("exitCode") == EXIT_CODE[adapter.NAME]
    assert "".join(p["text"] for p in payloads(log, "model.delta")) == "The file is made."


async def test_a_denied_shell_command_is_a_denial_and_does_not_run(
    adapter: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = answering("deny")
    transcript = Transcript()
    async with real_agent(adapter, tmp_path, monkeypatch, prompter) as run:
        run.harness.agents.observers.append(transcript)
        adapter.shell_call(run.model, COMMAND, then="I was not allowed.")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="Make the file")
        ending = await session.turn.wait()  # type: ignore[union-attr]
        log = run.harness.log(session.session_id)
    transcript.save(adapter.NAME, "denied", scrub_paths(run, tmp_path))
    checked(run, log)
    assert ending in ("final", "cancelled")  # the turn ends as the agent ended it
    [question] = prompter.requests
    assert COMMAND in question.args_preview
    assert not (run.workspace / "made.txt").exists()
    [requested] = payloads(log, "model.tool_call_requested")
    call = requested["toolCallId"]
    [answer] = [p for p in payloads(log, "permission.resolved") if p["actor"] == "user"]
    assert (answer["toolCallId"], answer["decision"]) == (call, "deny")
    assert [p for p in payloads(log, "permission.resolved") if p["decision"] == "allow"] == []
    [failed] = payloads(log, "tool.failed")
    assert (failed["toolCallId"], failed["errorCode"]) == (call, "permission_denied")
    assert payloads(log, "tool.started") == []


async def test_stop_while_the_question_waits_withdraws_it_and_the_session_goes_on(
    adapter: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompter = QueuePrompter(lambda request: None)  # nobody answers
    transcript = Transcript()
    async with real_agent(adapter, tmp_path, monkeypatch, prompter) as run:
        run.harness.agents.observers.append(transcript)
        adapter.shell_call(run.model, COMMAND, then="unused")
        session = await run.harness.agents.start(run.agent.config, run.workspace, prompt="Make the file")
        await prompter.asked.wait()
        assert session.cancel() is True
        assert await session.turn.wait() == "cancelled"  # type: ignore[union-attr]
        adapter.answer(run.model, "Still here.")
        assert await session.prompt("Are you there?").wait() == "final"
        log = run.harness.log(session.session_id)
    transcript.save(adapter.NAME, "stopped-while-asked", scrub_paths(run, tmp_path))
    checked(run, log)
    assert prompter.withdrawn == 1
    assert not (run.workspace / "made.txt").exists()
    assert [p["stopReason"] for p in payloads(log, "turn.completed")] == ["cancelled", "final"]
    assert "Still here." in "".join(p["text"] for p in payloads(log, "model.delta"))
    assert payloads(log, "tool.started") == []


async def test_stop_during_start_up_then_a_new_prompt_works(
    adapter: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with real_agent(adapter, tmp_path, monkeypatch, answering("deny")) as run:
        sessions: list[Any] = []

        def stop_at_session_new(event: StreamEvent) -> None:
            """Stop the first turn the moment we ask for a session: the agent has not answered yet."""
            if event.direction is StreamDirection.OUTGOING and event.message.get("method") == "session/new":
                if len(sessions) == 1 and sessions[0].cancel():  # the first start only
                    sessions.append("stopped")

        run.harness.agents.observers.append(stop_at_session_new)
        session = await run.harness.agents.start(run.agent.config, run.workspace)
        sessions.append(session)
        assert await session.prompt("Hello").wait() == "cancelled"
        assert sessions[1:] == ["stopped"]
        adapter.answer(run.model, "Hello again.")
        assert await session.prompt("Hello again").wait() == "final"
        log = run.harness.log(session.session_id)
    checked(run, log)
    assert [p["stopReason"] for p in payloads(log, "turn.completed")] == ["cancelled", "final"]
    assert "".join(p["text"] for p in payloads(log, "model.delta")) == "Hello again."


async def test_a_follow_up_turn_reaches_the_model_with_the_first_turns_history(
    adapter: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with real_agent(adapter, tmp_path, monkeypatch, answering("deny")) as run:
        adapter.answer(run.model, "The answer is 42.")
        session = await run.harness.agents.start(
            run.agent.config, run.workspace, prompt="What is the answer?"
        )
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        adapter.answer(run.model, "You asked about the answer.")
        assert await session.prompt("What did I ask?").wait() == "final"
        log = run.harness.log(session.session_id)
    checked(run, log)
    [*_, last] = [r for r in run.model.requests if not adapter.is_title_request(r)]
    said = json.dumps(last.body["messages"])
    assert "What is the answer?" in said and "The answer is 42." in said and "What did I ask?" in said
    assert [p["text"] for p in payloads(log, "model.delta")] == [
        "The answer is 42.",
        "You asked about the answer.",
    ]


async def test_a_session_reopened_after_a_restart_loads_the_agents_session_and_continues_the_log(
    adapter: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with real_agent(adapter, tmp_path, monkeypatch, answering("deny")) as run:
        # The first run: an engine and agents of their own on the same logs, ended before the second.
        async with Harness(run.sessions_dir, answering("deny"), env=run.harness.agents.env) as first:
            adapter.answer(run.model, "The answer is 42.")
            session = await first.agents.start(run.agent.config, run.workspace, prompt="What is the answer?")
            assert await session.turn.wait() == "final"  # type: ignore[union-attr]
            session_id = session.session_id
        before = first.log(session_id)
        checked_harness(first, before)
        adapter.answer(run.model, "You asked about the answer.")
        again = await run.harness.agents.reopen(run.agent.config, session_id)
        assert await again.prompt("What did I ask?").wait() == "final"
        log = run.harness.log(session_id)
    checked(run, log)
    validator = run.harness.validator
    assert validator.methods["session/load"] == 1 and validator.methods["session/new"] == 0
    assert log[: len(before)] == before and len(log) > len(before)
    assert [p["text"] for p in payloads(log, "model.delta")] == [
        "The answer is 42.",
        "You asked about the answer.",
    ]
    [*_, last] = [r for r in run.model.requests if not adapter.is_title_request(r)]
    said = json.dumps(last.body["messages"])
    assert "What is the answer?" in said and "What did I ask?" in said
