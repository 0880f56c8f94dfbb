"""The workbench running ACP agents beside our own: `AgentSpec(acp=NAME)` through
`AcpWorkbenchAgents`, against `agent-tui acp --scenario` as a real subprocess over stdio.

No dashboard here (tests/test_acp_dashboard.py drives the same through the UI): starting,
following up, stopping, closing, a worktree, reopening a stored ACP session, and the refusals
(an unknown agent, a follow-up while a turn runs, an agent that is gone).
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from acp_support import EventWatch, QueuePrompter, WireValidator, server_config
from support_workbench import git, make_project, scripted_models

from agent_tui.acp.agent_process import AgentProcess
from agent_tui.acp.config import AcpAgentConfig
from agent_tui.acp.workbench_agents import AcpWorkbenchAgents
from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.engine.questions import Questions
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.runtime.workbench import AgentSpec, AgentStartError, SendRefused, Sent, Workbench

pytestmark = pytest.mark.anyio


def served(tmp_path: Path, *scripts: list[dict[str, Any]]) -> AcpAgentConfig:
    """`agent-tui acp` playing one script per new session it is asked for, named `served`."""
    path = tmp_path / "scenario.json"
    sessions = [{"prompt": "(from the client)", "steps": steps} for steps in scripts]
    path.write_text(json.dumps({"sessions": sessions}))
    return replace(server_config(path, tmp_path / "served"), name="served")


class Bench:
    """A workbench on `tmp_path/project` with `served` as its one ACP agent."""

    def __init__(self, tmp_path: Path, agent: AcpAgentConfig, prompter: Any, *, models: bool = True) -> None:
        self.project = tmp_path / "project"
        self.project.mkdir(exist_ok=True)
        self.validator = WireValidator()
        self.watch = EventWatch()
        self.workbench = Workbench.for_project(
            project=self.project,
            sessions_dir=tmp_path / "sessions",
            models=scripted_models(ScriptedProvider()) if models else [],
            questions=Questions(prompter.ask),
            external=AcpWorkbenchAgents({agent.name: agent}, observers=[self.validator]),
        )
        self.workbench.engine.subscribe(self.watch)

    def log(self, session_id: str) -> list[Event]:
        return list(self.workbench.engine.store.replay(session_id))

    async def turn_end(self, session_id: str, count: int = 1) -> list[str]:
        """Wait for the session's `count`-th `turn.completed`; every stop reason so far."""
        await self.watch.wait_for(
            lambda e: (
                e.session_id == session_id
                and e.type == "turn.completed"
                and sum(
                    1 for x in self.watch.events if x.session_id == session_id and x.type == "turn.completed"
                )
                >= count
            )
        )
        return [
            e.payload["stopReason"]
            for e in self.watch.events
            if e.session_id == session_id and e.type == "turn.completed"
        ]


ANSWER = [{"text": ["Hello", " from", " the served engine."]}, {"text": ["Second answer."]}]


async def test_an_acp_agent_starts_answers_and_takes_a_follow_up(tmp_path: Path) -> None:
    bench = Bench(tmp_path, served(tmp_path, ANSWER), QueuePrompter(lambda r: None))
    workbench = bench.workbench
    async with workbench.serving():
        assert workbench.external_agents()[0][0] == "served"
        sid = await workbench.start_agent(AgentSpec("Say hello", bench.project, acp="served"))
        assert await bench.turn_end(sid) == ["final"]
        assert workbench.send(sid, "And again?") == Sent("started")
        assert await bench.turn_end(sid, 2) == ["final", "final"]
        log = bench.log(sid)
    assert chain_violations(log) == []
    assert bench.validator.problems == []
    created = log[0].payload
    assert (created["client"], created["agentName"]) == ("served", "served")
    texts = [e.payload["text"] for e in log if e.type == "model.delta"]
    assert "".join(texts) == "Hello from the served engine.Second answer."
    assert [e.payload["content"] for e in log if e.type == "user.message"] == ["Say hello", "And again?"]


async def test_a_follow_up_while_the_turn_runs_is_refused_and_stop_sends_cancel(tmp_path: Path) -> None:
    slow = [{"text": [f"chunk {n} " for n in range(60)], "delayMs": 200}]
    bench = Bench(tmp_path, served(tmp_path, slow), QueuePrompter(lambda r: None))
    workbench = bench.workbench
    async with workbench.serving():
        sid = await workbench.start_agent(AgentSpec("Stream", bench.project, acp="served", name="streamer"))
        await bench.watch.wait_for(lambda e: e.session_id == sid and e.type == "model.delta")
        refused = workbench.send(sid, "faster please")
        assert isinstance(refused, SendRefused) and "stop it (x)" in refused.reason
        assert workbench.engine.stop_subtree(sid) == 1
        assert await bench.turn_end(sid) == ["cancelled"]
    assert bench.validator.methods["session/cancel"] == 1
    assert bench.log(sid)[0].payload["agentName"] == "streamer"


async def test_a_dead_agent_refuses_follow_ups_with_its_reason(tmp_path: Path) -> None:
    ask = [
        {"text": ["Writing."], "toolCalls": [{"tool": "write_file", "args": {"path": "x", "content": "x"}}]}
    ]
    prompter = QueuePrompter(lambda r: None)
    bench = Bench(tmp_path, served(tmp_path, ask), prompter)
    workbench = bench.workbench
    async with workbench.serving():
        sid = await workbench.start_agent(AgentSpec("Write", bench.project, acp="served"))
        await prompter.asked.wait()
        session = workbench.external.session(sid)  # type: ignore[union-attr]
        assert session.process is not None and session.process.process is not None
        os.kill(session.process.process.pid, signal.SIGKILL)
        assert await bench.turn_end(sid) == ["error"]
        refused = workbench.send(sid, "Still there?")
    assert isinstance(refused, SendRefused)
    assert "served was killed by SIGKILL" in refused.reason and "Start it again with n" in refused.reason
    assert prompter.withdrawn == 1


async def test_an_unknown_agent_is_refused_naming_the_configured_ones(tmp_path: Path) -> None:
    bench = Bench(tmp_path, served(tmp_path, ANSWER), QueuePrompter(lambda r: None))
    async with bench.workbench.serving():
        with pytest.raises(AgentStartError, match=r"no ACP agent named 'nope' \(configured: served\)"):
            await bench.workbench.start_agent(AgentSpec("hi", bench.project, acp="nope"))
    assert not list((tmp_path / "sessions").glob("*.jsonl"))


async def test_an_agent_program_that_cannot_start_raises_the_one_start_error(tmp_path: Path) -> None:
    # The dashboard catches the workbench's `AgentStartError`; the program's own start raises it too.
    missing = tmp_path / "no-such-agent"
    process = AgentProcess(AcpAgentConfig(name="gone", command=str(missing)), tmp_path)
    with pytest.raises(AgentStartError, match=r"no-such-agent: command not found"):
        await process.start()


async def test_without_models_only_acp_agents_start(tmp_path: Path) -> None:
    bench = Bench(tmp_path, served(tmp_path, ANSWER), QueuePrompter(lambda r: None), models=False)
    async with bench.workbench.serving():
        with pytest.raises(AgentStartError, match="no model is configured"):
            await bench.workbench.start_agent(AgentSpec("hi", bench.project))
        sid = await bench.workbench.start_agent(AgentSpec("hi", bench.project, acp="served"))
        assert await bench.turn_end(sid) == ["final"]


async def test_an_acp_agent_in_its_own_worktree_records_it_and_close_ends_the_agent(tmp_path: Path) -> None:
    repo = make_project(tmp_path)
    bench = Bench(tmp_path, served(tmp_path, ANSWER), QueuePrompter(lambda r: None))
    workbench = bench.workbench
    async with workbench.serving():
        sid = await workbench.start_agent(AgentSpec("Say hello", repo, acp="served", own_worktree=True))
        assert await bench.turn_end(sid) == ["final"]
        worktree = workbench.facts(sid).worktree_path  # (its session.created records it)
        assert worktree is not None and worktree.is_dir()
        session = workbench.external.session(sid)  # type: ignore[union-attr]
        assert session.cwd == worktree.resolve()
        process = session.process
        assert await workbench.dispose(sid, remove=worktree) is None
        assert process is not None and process.exited.is_set()
        assert not workbench.external.owns(sid)  # type: ignore[union-attr]
    created = bench.log(sid)[0].payload
    assert created["worktree"]["path"] == str(worktree)
    assert not worktree.exists()
    assert created["worktree"]["branch"] in git(repo, "branch", "--list", created["worktree"]["branch"])


async def test_a_stored_acp_session_is_reopened_by_its_agent(tmp_path: Path) -> None:
    agent = served(tmp_path, ANSWER, ANSWER)
    bench = Bench(tmp_path, agent, QueuePrompter(lambda r: None))
    async with bench.workbench.serving():
        sid = await bench.workbench.start_agent(AgentSpec("Say hello", bench.project, acp="served"))
        assert await bench.turn_end(sid) == ["final"]
    bench.workbench.close_store()

    again = Bench(tmp_path, agent, QueuePrompter(lambda r: None))
    async with again.workbench.serving():
        assert await again.workbench.hydrate(lambda event: None) == []
        assert again.workbench.external.owns(sid)  # type: ignore[union-attr]
        assert again.workbench.send(sid, "Do you remember?") == Sent("started")
        assert await again.turn_end(sid) == ["final"]
        log = again.log(sid)
    again.workbench.close_store()
    assert chain_violations(log) == []
    loaded = [e.payload["recordType"] for e in log if e.type == "source.record"]
    assert loaded[-1] == "session/load"  # the served engine reloaded its own session from its log

    # Without the agent in the config, the session is shown but not continued, saying why.
    other = Bench(tmp_path, replace(agent, name="renamed"), QueuePrompter(lambda r: None))
    async with other.workbench.serving():
        assert await other.workbench.hydrate(lambda event: None) == []
        refused = other.workbench.send(sid, "Hello?")
    other.workbench.close_store()
    assert isinstance(refused, SendRefused)
    assert "run by served, which is not an ACP agent of the config file" in refused.reason


async def test_allowing_from_the_queue_answers_the_agents_own_option(tmp_path: Path) -> None:
    write: list[dict[str, Any]] = [
        {
            "text": ["Writing."],
            "toolCalls": [{"tool": "write_file", "args": {"path": "n.txt", "content": "n"}}],
        },
        {"text": ["Done."]},
    ]
    prompter = QueuePrompter(lambda r: PermissionAnswer("allow"))
    bench = Bench(tmp_path, served(tmp_path, write), prompter)
    async with bench.workbench.serving():
        sid = await bench.workbench.start_agent(AgentSpec("Write", bench.project, acp="served"))
        assert await bench.turn_end(sid) == ["final"]
    assert (bench.project / "n.txt").read_text() == "n"
    [request] = prompter.requests
    assert [option.name for option in request.options] == [  # type: ignore[attr-defined]
        "Allow once",
        "Allow for this session",
        "Deny",
        "Deny for this session",
    ]
