"""Starting an ACP agent, and stopping it at any moment of its start-up; agents that need a login;
reopening a session whose agent cannot load it.

The agent is the test agent with start-up behaviours of real agents (`acp_startup_agent.py`): a
hang in `initialize` or `session/new` (for the first agent started only), an auth-required
refusal, no `session/load`. Every stop is made at a moment the test observes (a request on the
wire, an event in the log), never after a sleep.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from acp.connection import StreamDirection, StreamEvent
from acp_support import PASS_ON, Harness, QueuePrompter

from agent_tui.acp.client import AcpAgentSession, AgentFailure, cannot_load
from agent_tui.acp.config import AcpAgentConfig
from agent_tui.acp.workbench_agents import AcpWorkbenchAgents
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations

pytestmark = pytest.mark.anyio

STARTUP_AGENT = Path(__file__).with_name("acp_startup_agent.py")


def startup_agent(*flags: str) -> AcpAgentConfig:
    return AcpAgentConfig(
        "test-agent", sys.executable, (str(STARTUP_AGENT), *flags), env=(*PASS_ON, "TEST_AGENT_LOGIN")
    )


def nobody_answers() -> QueuePrompter:
    return QueuePrompter(lambda request: None)


class Sent:
    """A wire observer: `seen(method)` is set once we send a request for that method."""

    def __init__(self) -> None:
        self.flags: dict[str, anyio.Event] = {}

    def seen(self, method: str) -> anyio.Event:
        return self.flags.setdefault(method, anyio.Event())

    def __call__(self, event: StreamEvent) -> None:
        method = event.message.get("method")
        if event.direction is StreamDirection.OUTGOING and isinstance(method, str):
            self.seen(method).set()


def payloads(log: list[Event], kind: str) -> list[dict]:
    return [event.payload for event in log if event.type == kind]


async def started_with_stop_at(
    harness: Harness, config: AcpAgentConfig, cwd: Path, method: str
) -> AcpAgentSession:
    """A session whose first turn is stopped once `method` is on the wire."""
    sent = Sent()
    harness.agents.observers.append(sent)
    session = await harness.agents.start(config, cwd, prompt="first")
    await sent.seen(method).wait()
    assert session.cancel() is True
    return session


async def assert_stopped_then_prompted_again(
    harness: Harness, session: AcpAgentSession, hang: Path | None = None
) -> None:
    assert session.turn is not None
    assert await session.turn.wait() == "cancelled"
    first = session.process
    assert first is not None and first.returncode is not None  # killed and reaped
    assert session.failure is None
    if hang is not None:
        hang.unlink()  # the next agent started answers
    assert await session.prompt("second").wait() == "final"
    again = session.process
    assert again is not None and again is not first and again.returncode is None
    log = harness.log(session.session_id)
    assert chain_violations(log) == []
    ends = payloads(log, "turn.completed")
    assert [end["stopReason"] for end in ends] == ["cancelled", "final"]
    assert ends[0]["message"] == "stopped while test-agent was starting"
    assert [p["text"] for p in payloads(log, "model.delta")] == ["echo: second"]
    assert harness.validator.problems == []


@pytest.mark.parametrize(
    ("flag", "method"),
    [("--hang-initialize-while", "initialize"), ("--hang-new-session-while", "session/new")],
)
async def test_a_stop_while_the_agent_hangs_in_its_start_ends_the_turn_and_the_next_prompt_starts_it_afresh(
    tmp_path: Path, flag: str, method: str
) -> None:
    hang = tmp_path / "hang"
    hang.touch()
    config = startup_agent(flag, str(hang))
    async with Harness(tmp_path / "logs", nobody_answers()) as harness:
        session = await started_with_stop_at(harness, config, tmp_path, method)
        await assert_stopped_then_prompted_again(harness, session, hang)
        assert harness.validator.methods["initialize"] == 2


async def test_a_stop_before_the_program_even_started_starts_nothing(tmp_path: Path) -> None:
    async with Harness(tmp_path / "logs", nobody_answers()) as harness:
        session = await harness.agents.start(startup_agent(), tmp_path, prompt="first")
        assert session.cancel() is True
        assert await session.turn.wait() == "cancelled"  # type: ignore[union-attr]
        assert session.process is None
        assert await session.prompt("second").wait() == "final"
        log = harness.log(session.session_id)
    assert chain_violations(log) == []
    assert [end["stopReason"] for end in payloads(log, "turn.completed")] == ["cancelled", "final"]
    assert harness.validator.methods["initialize"] == 1


async def test_a_stop_racing_the_session_opening_ends_the_turn_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    async with Harness(tmp_path / "logs", nobody_answers()) as harness:
        holder: list[AcpAgentSession] = []

        def stop_when_opened(event: Event) -> None:
            if event.type == "source.record" and event.payload["recordType"] == "session/new" and holder:
                holder[0].cancel()

        harness.engine.subscribe(stop_when_opened)
        session = await harness.agents.start(startup_agent(), tmp_path, prompt="first")
        holder.append(session)
        assert await session.turn.wait() == "cancelled"  # type: ignore[union-attr]
        assert session.failure is None
        assert await session.prompt("second").wait() == "final"
        log = harness.log(session.session_id)
    assert chain_violations(log) == []
    assert [end["stopReason"] for end in payloads(log, "turn.completed")] == ["cancelled", "final"]
    # The first prompt never went out: the agent saw only the second.
    assert harness.validator.methods["session/prompt"] == 1
    assert [p["text"] for p in payloads(log, "model.delta")] == ["echo: second"]


async def test_an_agent_that_needs_a_login_says_how_and_the_next_prompt_tries_again(tmp_path: Path) -> None:
    login = tmp_path / "logged-in"
    env = {**os.environ, "TEST_AGENT_LOGIN": str(login)}
    async with Harness(tmp_path / "logs", nobody_answers(), env=env) as harness:
        session = await harness.agents.start(startup_agent("--needs-login"), tmp_path, prompt="first")
        assert await session.turn.wait() == "error"  # type: ignore[union-attr]
        assert session.process is not None and session.process.returncode is not None
        login.touch()  # the user logs in
        assert await session.prompt("second").wait() == "final"
        log = harness.log(session.session_id)
    assert chain_violations(log) == []
    failed, answered = payloads(log, "turn.completed")
    assert failed["errorCode"] == "provider_failure"
    assert failed["message"].startswith(
        "test-agent needs you to log in first: Log in with a browser (run `test-agent login` once); "
        "or Use an API key (set TEST_AGENT_API_KEY) (it answered: Authentication required"
    )
    assert "Traceback" not in failed["message"]
    assert answered["stopReason"] == "final"


async def test_a_session_whose_agent_cannot_load_it_is_reopened_read_only(tmp_path: Path) -> None:
    config = startup_agent("--no-load-session")
    async with Harness(tmp_path / "logs", nobody_answers()) as harness:
        session = await harness.agents.start(config, tmp_path, prompt="first")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        session_id = session.session_id
    async with Harness(tmp_path / "logs", nobody_answers()) as harness:
        workbench_agents = AcpWorkbenchAgents({"test-agent": config})
        async with workbench_agents.serve(harness.engine):
            said = await workbench_agents.reopen("test-agent", session_id)
            assert said == cannot_load("test-agent")
            again = workbench_agents.session(session_id)
            with pytest.raises(AgentFailure, match="is read-only: its log stays readable"):
                again.prompt("second")
        log = harness.log(session_id)
    assert harness.validator.methods["initialize"] == 0  # nothing was started
    assert [p["text"] for p in payloads(log, "model.delta")] == ["echo: first"]
    assert chain_violations(log) == []


async def test_an_older_log_whose_agent_turns_out_unable_to_load_it_ends_the_turn_read_only(
    tmp_path: Path,
) -> None:
    async with Harness(tmp_path / "logs", nobody_answers()) as harness:
        session = await harness.agents.start(startup_agent(), tmp_path, prompt="first")
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        session_id = session.session_id
    async with Harness(tmp_path / "logs", nobody_answers()) as harness:
        again = await harness.agents.reopen(startup_agent("--no-load-session"), session_id)
        assert again.read_only is None  # the log said it could load it
        assert await again.prompt("second").wait() == "error"
        assert again.read_only == cannot_load("test-agent")
        with pytest.raises(AgentFailure, match="read-only"):
            again.prompt("third")
        log = harness.log(session_id)
    assert chain_violations(log) == []
    [*_, end] = payloads(log, "turn.completed")
    assert end["message"].startswith(cannot_load("test-agent"))
    assert harness.validator.methods["session/new"] == 0


async def test_the_dashboard_refuses_a_follow_up_to_a_session_its_agent_cannot_load(tmp_path: Path) -> None:
    from test_acp_workbench import Bench

    from agent_tui.runtime.workbench import AgentSpec, SendRefused

    agent = startup_agent("--no-load-session")
    bench = Bench(tmp_path, agent, nobody_answers())
    async with bench.workbench.serving():
        sid = await bench.workbench.start_agent(AgentSpec("first", bench.project, acp="test-agent"))
        assert await bench.turn_end(sid) == ["final"]
    bench.workbench.close_store()

    again = Bench(tmp_path, agent, nobody_answers())
    async with again.workbench.serving():
        assert await again.workbench.hydrate(lambda event: None) == []
        refused = again.workbench.send(sid, "Do you remember?")
        log = again.log(sid)
    again.workbench.close_store()
    assert isinstance(refused, SendRefused)
    assert refused.reason == f"This session cannot be continued: {cannot_load('test-agent')}."
    assert [e.payload["stopReason"] for e in log if e.type == "turn.completed"] == ["final"]


async def test_a_stop_at_the_agents_first_update_cancels_the_turn_and_the_agent_takes_the_next(
    tmp_path: Path,
) -> None:
    async with Harness(tmp_path / "logs", nobody_answers()) as harness:
        holder: list[AcpAgentSession] = []

        def stop_at_first_word(event: Event) -> None:
            if event.type == "model.delta" and holder and event.payload["text"]:
                holder[0].cancel()

        unsubscribe = harness.engine.subscribe(stop_at_first_word)
        session = await harness.agents.start(startup_agent(), tmp_path, prompt="until cancelled")
        holder.append(session)
        assert await session.turn.wait() == "cancelled"  # type: ignore[union-attr]
        unsubscribe()
        process = session.process
        assert await session.prompt("second").wait() == "final"
        assert session.process is process  # the same agent: a stop once started does not restart it
        log = harness.log(session.session_id)
    assert chain_violations(log) == []
    ends = payloads(log, "turn.completed")
    assert [end["stopReason"] for end in ends] == ["cancelled", "final"]
    assert harness.validator.methods["session/cancel"] == 1
