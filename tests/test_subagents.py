"""Sub-agents: spawn, wait, the mailbox, depth and background limits, stopping a tree."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from support_engine import HeldPrompter, collect

from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scenario import Scenario
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.reducer import DashboardState, apply_event, project_state
from agent_tui.replay.sources import replay_all
from agent_tui.runtime.runner import ScenarioRun

# The sub-agents below run `sleep 30`. Stopping them in under half that did not wait for the
# sleeps, which is what the test checks; how quickly it stops is not asserted here, so a busy
# machine cannot fail it.
NOT_WAITED_FOR = 15.0

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def spawn(name: str, prompt: str = "go") -> dict[str, Any]:
    return {"tool": "spawn_agent", "args": {"agentName": name, "prompt": prompt}}


def make_run(tmp_path: Path, spec: dict[str, Any], prompter: Any = None) -> ScenarioRun:
    (tmp_path / "work").mkdir(exist_ok=True)
    spec = {"policy": {"default": "allow"}, **spec}
    for session in spec["sessions"]:
        session.setdefault("cwd", "work")
    return ScenarioRun(
        Scenario.model_validate(spec),
        base_dir=tmp_path,
        sessions_dir=tmp_path / "sessions",
        questions=Questions(prompter.ask if prompter else fixed_answer("allow")),
        workspace_root=tmp_path / "scratch",
    )


def events_of(tmp_path: Path) -> list:
    return list(replay_all(tmp_path / "sessions", "strict"))


def by_session(events: list) -> dict[str, list]:
    out: dict[str, list] = {}
    for event in events:
        out.setdefault(event.session_id, []).append(event)
    return out


def tool_results(events: list, tool: str) -> list[dict[str, Any]]:
    return [
        e.payload for e in events if e.type in ("tool.completed", "tool.failed") and e.payload["tool"] == tool
    ]


async def test_six_spawns_with_max_background_four_give_four_children_and_two_refusals(
    tmp_path: Path,
) -> None:
    run = make_run(
        tmp_path,
        {
            "maxBackground": 4,
            "sessions": [
                {
                    "title": "lead",
                    "prompt": "fan out",
                    "steps": [
                        {"text": ["spawning"], "toolCalls": [spawn("worker")] * 6},
                        {"text": ["waiting"], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
                        {"text": ["all done"]},
                    ],
                }
            ],
            "agents": {"worker": {"steps": [{"text": ["working ", "hard"], "delayMs": 50}]}},
        },
    )
    async with run.engine:
        result = await run.play()
    assert result.all_ended
    sessions = by_session(events_of(tmp_path))
    lead = next(evs for evs in sessions.values() if evs[0].payload.get("title") == "lead")
    spawned = tool_results(lead, "spawn_agent")
    ok = [r for r in spawned if "result" in r]
    refused = [r for r in spawned if "errorCode" in r]
    assert len(ok) == 4 and len(refused) == 2
    assert all(r["errorCode"] == "budget_exceeded" and "at most 4" in r["message"] for r in refused)
    children = {orjson.loads(r["result"])["sessionId"] for r in ok}
    assert children == {sid for sid, evs in sessions.items() if evs[0].payload.get("parentSessionId")}
    delivered = [e.payload for e in lead if e.type == "subagent.delivered"]
    assert {d["childSessionId"] for d in delivered} == children
    assert all(d["status"] == "completed" and d["text"] == "working hard" for d in delivered)
    waited = orjson.loads(tool_results(lead, "wait_agent")[0]["result"])
    assert {w["sessionId"] for w in waited} == children
    assert all(w["status"] == "completed" for w in waited)
    assert chain_violations(events_of(tmp_path)) == []


async def test_wait_agent_before_and_after_delivery(tmp_path: Path) -> None:
    run = make_run(
        tmp_path,
        {
            "sessions": [
                {
                    "title": "lead",
                    "prompt": "delegate",
                    "steps": [
                        {"text": ["start"], "toolCalls": [spawn("slow")]},
                        {
                            "text": ["wait"],
                            "toolCalls": [{"tool": "wait_agent", "args": {"agentName": "slow"}}],
                        },
                        {
                            "text": ["again"],
                            "toolCalls": [{"tool": "wait_agent", "args": {"agentName": "slow"}}],
                        },
                        {"text": ["done"]},
                    ],
                }
            ],
            "agents": {"slow": {"steps": [{"text": ["a", "b", "c"], "delayMs": 80}]}},
        },
    )
    async with run.engine:
        await run.play()
    lead = next(
        evs for evs in by_session(events_of(tmp_path)).values() if evs[0].payload.get("title") == "lead"
    )
    first, second = (orjson.loads(r["result"]) for r in tool_results(lead, "wait_agent"))
    assert first[0]["status"] == "completed" and first[0]["text"] == "abc"
    assert second == first  # a finished, delivered child still answers with its final status
    delivered = [i for i, e in enumerate(lead) if e.type == "subagent.delivered"]
    assert len(delivered) == 1


async def test_depth_limit_refuses_a_spawn_too_deep(tmp_path: Path) -> None:
    run = make_run(
        tmp_path,
        {
            "maxDepth": 2,
            "sessions": [
                {
                    "title": "root",
                    "prompt": "go",
                    "steps": [
                        {"text": ["x"], "toolCalls": [spawn("nest")]},
                        {"text": ["w"], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
                        {"text": ["done"]},
                    ],
                }
            ],
            "agents": {
                "nest": {
                    "steps": [
                        {"text": ["x"], "toolCalls": [spawn("nest")]},
                        {"text": ["w"], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
                        {"text": ["done"]},
                    ]
                }
            },
        },
    )
    async with run.engine:
        await run.play()
    sessions = by_session(events_of(tmp_path))
    assert len(sessions) == 3  # root, level 1, level 2; level 3 refused
    refusals = [r for evs in sessions.values() for r in tool_results(evs, "spawn_agent") if "errorCode" in r]
    assert len(refusals) == 1 and "at most 2 levels" in refusals[0]["message"]


async def test_children_outlive_a_finished_parent_turn_and_deliver_at_its_next_turn(tmp_path: Path) -> None:
    run = make_run(
        tmp_path,
        {
            "sessions": [
                {
                    "title": "lead",
                    "prompt": "fire and forget",
                    "steps": [
                        {"text": ["spawned"], "toolCalls": [spawn("slow")]},
                        {"text": ["my turn is over"]},
                        {"text": ["got it"]},
                    ],
                }
            ],
            "agents": {"slow": {"steps": [{"text": ["late ", "result"], "delayMs": 150}]}},
        },
    )
    async with run.engine:
        await run.play()  # waits for every turn, the child's too
        lead_id = next(s.id for s in run.engine.sessions() if s.title == "lead")
        lead_before = by_session(events_of(tmp_path))[lead_id]
        assert [e.payload["stopReason"] for e in lead_before if e.type == "turn.completed"] == ["final"]
        assert not any(e.type == "subagent.delivered" for e in lead_before)
        events = await collect(run.engine.run_turn(lead_id, "what did it say?"))
    delivered = [e.payload for e in events if e.type == "subagent.delivered"]
    assert [d["text"] for d in delivered] == ["late result"]
    assert events.index(next(e for e in events if e.type == "subagent.delivered")) < events.index(
        next(e for e in events if e.type == "context.built")
    )


TREE = {
    "maxBackground": 10,
    "maxDepth": 3,
    "sessions": [
        {
            "title": "root",
            "prompt": "build a tree",
            "steps": [
                {"text": ["fan"], "toolCalls": [spawn("l1")] * 3},
                {"text": ["wait"], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
                {"text": ["done"]},
            ],
        }
    ],
    "agents": {
        "l1": {
            "steps": [
                {"text": ["fan"], "toolCalls": [spawn("l2")] * 3},
                {"text": ["wait"], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
                {"text": ["done"]},
            ]
        },
        "l2": {
            "steps": [
                {"text": ["fan"], "toolCalls": [spawn("l3")] * 2},
                {"text": ["wait"], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
                {"text": ["done"]},
            ]
        },
        "l3": {
            "steps": [
                {"text": ["sleeping"], "toolCalls": [{"tool": "shell", "args": {"cmd": "sleep 30"}}]},
                {"text": ["never"]},
            ]
        },
    },
}


async def test_stop_children_on_a_three_level_tree_of_thirty_agents(tmp_path: Path) -> None:
    run = make_run(tmp_path, TREE)
    live = DashboardState()

    def follow(event: Event) -> None:
        apply_event(live, event)

    run.subscribe(follow)
    async with run.engine, anyio.create_task_group() as group:
        group.start_soon(run.play)
        with anyio.fail_after(20):
            while (
                sum(1 for s in run.engine.sessions() if s.turn is not None) < 31
                or sum(
                    1
                    for e in live.sessions.values()
                    for t in e.turns
                    for c in t.tool_calls.values()
                    if c.tool == "shell" and c.status == "running"
                )
                < 18
            ):
                await anyio.sleep(0.02)
        family = run.engine.budgets.index
        root_id = next(s.id for s in run.engine.sessions() if family.parent_of(s.id) is None)
        started = time.monotonic()
        stopped = run.engine.registry.stop_children(root_id)
        with anyio.fail_after(5):
            while any(s.live_turn is not None and family.parent_of(s.id) for s in run.engine.sessions()):
                await anyio.sleep(0.01)
        elapsed = time.monotonic() - started
    assert stopped == 30
    assert elapsed < NOT_WAITED_FOR
    events = events_of(tmp_path)
    assert chain_violations(events) == []
    sessions = by_session(events)
    assert len(sessions) == 31
    for sid, evs in sessions.items():
        ends = [e.payload["stopReason"] for e in evs if e.type == "turn.completed"]
        if evs[0].payload.get("parentSessionId"):
            assert ends == ["cancelled"], sid
    # The reducer builds the same tree from the logs alone as it did live.
    replayed = project_state(events)
    assert replayed.to_state_dump() == live.to_state_dump()
    assert {sid: sorted(replayed.children(sid)) for sid in replayed.sessions} == {
        sid: sorted(live.children(sid)) for sid in live.sessions
    }
    root = replayed.roots()
    assert len(root) == 1 and len(replayed.children(root[0])) == 3
    assert sorted(len(replayed.children(c)) for c in replayed.children(root[0])) == [3, 3, 3]


async def test_a_stopped_childs_pending_permission_is_withdrawn(tmp_path: Path) -> None:
    prompter = HeldPrompter()
    run = make_run(
        tmp_path,
        {
            "policy": {"byRisk": {"read": "allow", "write": "ask", "execute": "allow"}},
            "sessions": [
                {
                    "title": "lead",
                    "agentName": "lead",
                    "prompt": "delegate",
                    "steps": [
                        {"text": ["x"], "toolCalls": [spawn("explorer")]},
                        {"text": ["w"], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
                        {"text": ["done"]},
                    ],
                }
            ],
            "agents": {
                "explorer": {
                    "steps": [
                        {
                            "text": ["writing"],
                            "toolCalls": [{"tool": "write_file", "args": {"path": "x.txt", "content": "x"}}],
                        },
                        {"text": ["ok"]},
                    ]
                }
            },
        },
        prompter=prompter,
    )
    async with run.engine, anyio.create_task_group() as group:
        group.start_soon(run.play)
        request = await prompter.next_request()
        assert request.agent_path == ("lead", "explorer")
        family = run.engine.budgets.index
        lead_id = next(s.id for s in run.engine.sessions() if family.parent_of(s.id) is None)
        assert run.engine.stop_subtree(lead_id) == 2
    assert prompter.withdrawn == [request.request_id]
    sessions = by_session(events_of(tmp_path))
    child = next(evs for evs in sessions.values() if evs[0].payload.get("parentSessionId"))
    resolved = [e.payload for e in child if e.type == "permission.resolved"]
    assert (resolved[-1]["decision"], resolved[-1]["actor"], resolved[-1]["reason"]) == (
        "deny",
        "system",
        "cancelled",
    )
    assert [e.payload["stopReason"] for e in child if e.type == "turn.completed"] == ["cancelled"]
    assert not (tmp_path / "scratch" / "work" / "x.txt").exists()
    assert chain_violations(events_of(tmp_path)) == []
