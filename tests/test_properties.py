"""Property tests: for generated scenarios and policies, every log obeys the chains of the log format and the
frames the live sink sent equal the frames projected from the log afterwards."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Literal

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scenario import Scenario
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.events.model import ModelUsage, Usage
from agent_tui.reducer import project_state
from agent_tui.replay.sources import replay_all
from agent_tui.runtime.runner import ScenarioRun
from agent_tui.turns import EventSink
from agent_tui.turns.projection import frames_from_log, transition_dict

DECISIONS = st.sampled_from(["allow", "deny", "ask"])
TOOL_CALLS = st.sampled_from(
    [
        {"tool": "read_file", "args": {"path": "notes.txt"}},
        {"tool": "read_file", "args": {"path": "missing.txt"}},
        {"tool": "read_file", "args": {"path": "../outside.txt"}},
        {"tool": "list_dir", "args": {"path": "."}},
        {"tool": "grep", "args": {"pattern": "alpha"}},
        {"tool": "write_file", "args": {"path": "out.txt", "content": "x"}},
        {"tool": "edit_file", "args": {"path": "notes.txt", "old": "zzz", "new": "y"}},
        {"tool": "shell", "args": {"cmd": "echo hi; echo err >&2"}},
        {"tool": "shell", "args": {"cmd": "rm -f out.txt"}},
        {"tool": "no_such_tool", "args": {}},
        {"tool": "read_file", "args": {"wrong": 1}},
        {"tool": "spawn_agent", "args": {"agentName": "helper", "prompt": "help"}},
        {"tool": "wait_agent", "args": {}},
    ]
)
TEXT = st.lists(st.sampled_from(["a", "bc ", "def ", "ok. "]), min_size=1, max_size=3)


@st.composite
def step(draw: Any, last: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"text": draw(TEXT)}
    if not last:
        spec["toolCalls"] = draw(st.lists(TOOL_CALLS, min_size=1, max_size=3))
    extra = draw(st.sampled_from(["none", "none", "none", "fail", "cancel", "steer"]))
    if extra == "fail":
        spec["fail"] = "provider_failure"
    elif extra == "cancel":
        spec["cancelAfterChunks"] = draw(st.integers(0, 2))
    elif extra == "steer":
        spec["steer"] = "also this"
    return spec


@st.composite
def script(draw: Any) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 4))
    return [draw(step(last=index == count - 1)) for index in range(count)]


@st.composite
def scenarios(draw: Any) -> dict[str, Any]:
    sessions = [
        {"title": f"s{i}", "cwd": "work", "prompt": f"task {i}", "steps": draw(script())}
        for i in range(draw(st.integers(1, 3)))
    ]
    policy = {
        "byRisk": {risk: draw(DECISIONS) for risk in ("read", "write", "execute", "network", "destructive")}
    }
    return {
        "sessions": sessions,
        "agents": {"helper": {"steps": draw(script())}},
        "policy": policy,
        "maxSteps": draw(st.integers(2, 6)),
        "maxBackground": 2,
        "maxDepth": 2,
    }


async def run_scenario(
    spec: dict[str, Any], approve: Literal["allow", "deny"], root: Path
) -> tuple[list[dict], Path]:
    work = root / "work"
    work.mkdir(exist_ok=True)
    (work / "notes.txt").write_text("alpha\nbeta\n")
    (root / "outside.txt").write_text("secret")
    sessions = root / "sessions"
    run = ScenarioRun(
        Scenario.model_validate(spec),
        base_dir=root,
        sessions_dir=sessions,
        questions=Questions(fixed_answer(approve)),
        workspace_root=root / "scratch",
        sink=(sink := EventSink()),
    )
    live: list[dict] = []
    sink.subscribe(
        lambda frame: live.append(transition_dict(frame)) if frame.family == "transition" else None
    )
    async with run.engine:
        result = await run.play()
    run.close()
    assert result.all_ended, result
    return live, sessions


def assert_usage_adds_up(events: list[Event]) -> None:
    """Each turn's total is the sum of its calls' `model.usage` (the scripted model reports usage
    for every call it finishes), and the reducer's session totals count each call once."""
    calls: dict[str | None, list[ModelUsage]] = {}
    for event in events:
        if event.type == "model.usage":
            calls.setdefault(event.turn_id, []).append(ModelUsage.model_validate(event.payload))
        elif event.type == "turn.completed":
            total = event.payload.get("usage")
            summed = Usage.of_calls(calls.get(event.turn_id, []))
            assert total == (summed.model_dump(exclude_none=True) if summed is not None else None)
    state = project_state(events)
    for session_id, session in state.sessions.items():
        own = [
            u for e in events if e.session_id == session_id and e.type == "model.usage" for u in [e.payload]
        ]
        assert session.spend.tokens == sum(u["promptTokens"] + u["completionTokens"] for u in own)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=scenarios(), approve=st.sampled_from(["allow", "deny"]))
def test_generated_runs_obey_the_chains_and_live_frames_equal_log_frames(
    spec: dict[str, Any], approve: Literal["allow", "deny"]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        live, sessions = anyio.run(run_scenario, spec, approve, root)
        events = list(replay_all(sessions, "strict"))
        assert chain_violations(events) == []
        assert_usage_adds_up(events)
        # No tool ran without an allow, and nothing escaped the workspace.
        assert (root / "outside.txt").read_text() == "secret"
        projected = [transition_dict(frame) for frame in frames_from_log(events)]
        by_session = lambda frames: sorted(frames, key=lambda f: f["sessionId"])  # noqa: E731
        # Per session, the order is the same; across sessions, the live order interleaves.
        assert by_session(live) == by_session(projected)
