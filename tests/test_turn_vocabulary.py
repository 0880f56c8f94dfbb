"""`ENDINGS` is the only table of how a turn ends: every edge says its row's words, none restates it.

Three checks keep it so:
- the table itself: one row per stop reason of the log format, each consistent;
- every edge follows a changed row: each row in turn is replaced by one whose every word differs,
  and each edge that speaks of an ending (the session status of the dashboard and of `sessions`,
  the end frame, the registry's state and `wait`, the turn state machine, the dashboard's line
  under the turn, `run --prompt`'s success, the scrubber's failure mark, the ACP answer, a
  sub-agent's delivery and `wait_agent`) must say the replacement's words. An edge with its own
  mapping would still say the old ones. `EDGES` names the check of each column, so a new column
  needs its edge checked;
- no module restates it: a scan of the source for a dict keyed by stop reasons, or a comparison
  of a stop reason (or an end reason or registry state) with a literal, outside the table.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import anyio
import orjson
import pytest
from support_reducer import SessionLog
from textual.content import Content

from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scenario import Scenario
from agent_tui.events import Event
from agent_tui.events.model import StopReason
from agent_tui.events.turn_vocabulary import (
    ENDINGS,
    AcpStopReason,
    DeliveryStatus,
    Ending,
    EndReasonKind,
    EndTone,
    TerminalRunState,
    TurnEnd,
    ending_for,
)
from agent_tui.reducer import project_state
from agent_tui.replay.kinds import MARK_OF_KIND, kind_of
from agent_tui.replay.sources import replay_all
from agent_tui.runtime.prompt_run import PromptResult
from agent_tui.runtime.runner import ScenarioRun
from agent_tui.runtime.session_dirs import read_stored_session
from agent_tui.tui.formatting import END_TONE_LOOK, turn_lines
from agent_tui.turns import EventSink, TurnRegistry
from agent_tui.turns.projection import command_for, frames_from_log
from agent_tui.turns.turn_fsm import TurnFsm

ROOT = Path(__file__).resolve().parent.parent / "agent_tui"
STOP_REASONS = tuple(get_args(StopReason))


# -- the table ---------------------------------------------------------------------------------


def test_there_is_one_row_per_stop_reason_of_the_log_format() -> None:
    assert set(ENDINGS) == set(STOP_REASONS)
    assert all(ending.stop_reason == stop for stop, ending in ENDINGS.items())


def test_each_terminal_state_is_reached_and_failing_rows_are_the_failed_state() -> None:
    assert {ending.run_state for ending in ENDINGS.values()} == set(get_args(TerminalRunState))
    for ending in ENDINGS.values():
        assert ending.failed == (ending.run_state == "failed")
        assert (ending.end_line is None) == ending.answered  # a turn without its answer says why


def test_a_turn_end_carries_an_error_code_exactly_when_its_row_is_a_failure() -> None:
    for ending in ENDINGS.values():
        stop = ending.stop_reason
        if ending.failed:
            assert TurnEnd(stop, error_code="unknown").ending is ending
            with pytest.raises(ValueError, match="needs an error code"):
                TurnEnd(stop)
        else:
            assert TurnEnd(stop).ending is ending
            with pytest.raises(ValueError, match="has no error code"):
                TurnEnd(stop, error_code="unknown")


# -- every edge follows a changed row ----------------------------------------------------------


def _other(values: tuple[Any, ...], current: Any) -> Any:
    """The value after `current` in `values` (cyclically): a different word of the same kind."""
    return values[(values.index(current) + 1) % len(values)]


def swapped(ending: Ending) -> Ending:
    """`ending` with every word but its stop reason replaced by another of the same kind."""
    return Ending(
        stop_reason=ending.stop_reason,
        run_state=_other(get_args(TerminalRunState), ending.run_state),
        registry_state=_other(("complete", "interrupt", "error"), ending.registry_state),
        end_reason=_other(get_args(EndReasonKind), ending.end_reason),
        delivery=_other(get_args(DeliveryStatus), ending.delivery),
        wait_outcome=_other(("completed", "failed"), ending.wait_outcome),
        delivered_note=f"the swapped note of {ending.stop_reason}",
        end_line=f"the swapped line of {ending.stop_reason}",
        end_tone=_other((None, *get_args(EndTone)), ending.end_tone),
        answered=not ending.answered,
        acp_stop_reason=_other((None, *get_args(AcpStopReason)), ending.acp_stop_reason),
    )


@pytest.fixture(params=STOP_REASONS)
def changed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Ending:
    """One row of `ENDINGS`, replaced (for this test) by its `swapped` self."""
    row = swapped(ENDINGS[request.param])
    assert all(
        getattr(row, name) != getattr(ENDINGS[request.param], name) for name in EDGES if name != "stop_reason"
    )
    monkeypatch.setitem(ENDINGS, request.param, row)
    return row


def ended_session(ending: Ending) -> SessionLog:
    log = SessionLog("sess_end", agent="ender")
    log.emit("turn.started", "turn_1", promptPreview="go")
    log.emit("user.message", "turn_1", content="go")
    log.emit("model.delta", "turn_1", text="an answer")
    code = {"errorCode": "provider_failure"} if ending.stop_reason == "error" else {}
    log.emit("turn.completed", "turn_1", stopReason=ending.stop_reason, message="why it ended", **code)
    return log


def last(events: list[Event]) -> Event:
    assert events[-1].type == "turn.completed"
    return events[-1]


def test_the_session_status_of_the_dashboard_follows_the_row(changed: Ending) -> None:
    state = project_state(ended_session(changed).events)
    assert state.sessions["sess_end"].status == changed.run_state


def test_the_status_sessions_lists_follows_the_row(changed: Ending, tmp_path: Path) -> None:
    path = tmp_path / "sess_end.jsonl"
    path.write_bytes(b"".join(event.to_json() + b"\n" for event in ended_session(changed).events))
    assert read_stored_session(path).status == changed.run_state


def test_the_state_machine_follows_the_row(changed: Ending) -> None:
    fsm = TurnFsm()
    fsm.start()
    fsm.finish(changed.stop_reason)
    assert (fsm.state, fsm.ending) == (changed.run_state, changed)


def test_the_end_frame_follows_the_row(changed: Ending) -> None:
    frames = frames_from_log(ended_session(changed).events)
    end = frames[-1].body
    assert (end.to, end.reason) == ("end", changed.end_reason)  # type: ignore[union-attr]
    assert (end.error is not None) == changed.failed  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_the_registry_state_and_its_wait_follow_the_row(changed: Ending) -> None:
    events = ended_session(changed).events
    registry = TurnRegistry(EventSink())
    assert registry.claim("sess_end", turn_id="turn_1")
    for event in events:
        command = command_for(event)
        if command is not None:
            assert registry.transition("sess_end", command)
    assert registry.state("sess_end") == changed.registry_state
    record = registry.record("sess_end")
    assert record is not None and record.reason is not None and record.reason.kind == changed.end_reason
    assert await registry.wait("sess_end", 0) == changed.wait_outcome


def test_the_dashboards_line_under_the_turn_follows_the_row(changed: Ending) -> None:
    state = project_state(ended_session(changed).events)
    session = state.sessions["sess_end"]
    lines = [line.plain for line in turn_lines(session.turns[-1], 1, session)]
    glyph, style = END_TONE_LOOK[changed.end_tone]
    code = ": provider_failure" if changed.stop_reason == "error" else ""
    said = f"{glyph} {changed.end_line}{code}"
    assert said in lines
    line = turn_lines(session.turns[-1], 1, session)[lines.index(said)]
    assert isinstance(line, Content) and {str(span.style) for span in line.spans} == {style}
    message = turn_lines(session.turns[-1], 1, session)[lines.index("  why it ended")]
    assert {str(span.style) for span in message.spans} == {
        "$text-error" if changed.end_tone == "error" else "$text-muted"
    }


def test_whether_run_prompt_succeeded_follows_the_row(changed: Ending) -> None:
    assert PromptResult(session_id="sess_end", stop_reason=changed.stop_reason).ok == changed.answered


def test_the_scrubbers_failure_mark_follows_the_row(changed: Ending) -> None:
    mark = MARK_OF_KIND.get(kind_of(last(ended_session(changed).events)))
    assert (mark == "failure") == changed.failed


def test_the_acp_answer_follows_the_row(changed: Ending) -> None:
    # `agent-tui acp` answers a prompt with this (`acp/server.py`), or a JSON-RPC error for None.
    assert ending_for(changed.stop_reason).acp_stop_reason == changed.acp_stop_reason


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("stop", ["final"])
async def test_a_sub_agents_delivery_and_wait_agent_follow_the_row(
    stop: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = swapped(ENDINGS[stop])
    monkeypatch.setitem(ENDINGS, stop, row)
    (tmp_path / "work").mkdir()
    spec = {
        "policy": {"default": "allow"},
        "sessions": [
            {
                "title": "lead",
                "prompt": "delegate",
                "cwd": "work",
                "steps": [
                    {
                        "text": ["start"],
                        "toolCalls": [{"tool": "spawn_agent", "args": {"agentName": "kid", "prompt": "go"}}],
                    },
                    {"text": ["wait"], "toolCalls": [{"tool": "wait_agent", "args": {"agentName": "kid"}}]},
                    {"text": ["done"]},
                ],
            }
        ],
        "agents": {"kid": {"steps": [{"text": ["the kid's answer"]}]}},
    }
    run = ScenarioRun(
        Scenario.model_validate(spec),
        base_dir=tmp_path,
        sessions_dir=tmp_path / "sessions",
        questions=Questions(fixed_answer("allow")),
        workspace_root=tmp_path / "scratch",
    )
    with anyio.fail_after(60):
        async with run.engine:
            await run.play()
    events = list(replay_all(tmp_path / "sessions", "strict"))
    delivered = [e.payload for e in events if e.type == "subagent.delivered"]
    assert [(d["status"], d["text"]) for d in delivered] == [(row.delivery, row.delivered_note)]
    (answer,) = [
        orjson.loads(e.payload["result"])
        for e in events
        if e.type == "tool.completed" and e.payload["tool"] == "wait_agent"
    ]
    assert [(a["status"], a["text"]) for a in answer] == [(row.delivery, row.delivered_note)]


EDGES = {
    "stop_reason": test_there_is_one_row_per_stop_reason_of_the_log_format,
    "run_state": test_the_session_status_of_the_dashboard_follows_the_row,
    "registry_state": test_the_registry_state_and_its_wait_follow_the_row,
    "end_reason": test_the_end_frame_follows_the_row,
    "delivery": test_a_sub_agents_delivery_and_wait_agent_follow_the_row,
    "wait_outcome": test_the_registry_state_and_its_wait_follow_the_row,
    "delivered_note": test_a_sub_agents_delivery_and_wait_agent_follow_the_row,
    "end_line": test_the_dashboards_line_under_the_turn_follows_the_row,
    "end_tone": test_the_dashboards_line_under_the_turn_follows_the_row,
    "answered": test_whether_run_prompt_succeeded_follows_the_row,
    "acp_stop_reason": test_the_acp_answer_follows_the_row,
}
"""Each column of `Ending` → the test of the edge that says it."""


def test_every_column_of_the_table_has_its_edge_checked() -> None:
    assert set(EDGES) == {field.name for field in dataclasses.fields(Ending)}


# -- no module restates the table --------------------------------------------------------------

WORDS_OF_AN_ENDING = {"done", "maxSteps", "aborted", "complete", "interrupt"}
"""End reasons and registry states that are no other layer's word (so a literal is a restatement)."""

STILL_RESTATED = {
    "acp/client.py": "the ACP driver builds its ending tuples with bare stop reasons",
    "acp/recorder.py": "the ACP recorder's final-needs-a-delta and cancelled-call rules",
    "importers/builder.py": "the importers' ending and final-needs-a-delta rule",
    "events/chains.py": "the chain checker's final-needs-a-delta rule (the check the writer is tested by)",
    "events/turn_writer.py": "the writer's final-needs-a-delta rule and how an ending answers open calls",
    "engine/engine.py": "a cancelled turn stops what its session spawned (a rule of the turn's life)",
}
"""Files that still decide by a stop reason literal, each with why; they belong to the turn writer."""


def restatements(source: str) -> Iterator[str]:
    """What in `source` restates the table: a dict keyed by two stop reasons, or a comparison of
    a stop reason, end reason or registry state with a literal one."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            keys = {key.value for key in node.keys if isinstance(key, ast.Constant)}
            if len(keys & set(STOP_REASONS)) >= 2:
                yield f"line {node.lineno}: a dict keyed by stop reasons"
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            words = {
                element.value
                for side in sides
                for element in (side.elts if isinstance(side, ast.Tuple | ast.Set | ast.List) else [side])
                if isinstance(element, ast.Constant) and isinstance(element.value, str)
            }
            named = " ".join(ast.unparse(side) for side in sides).lower()
            if words & WORDS_OF_AN_ENDING or (words & set(STOP_REASONS) and "stop" in named):
                yield f"line {node.lineno}: {ast.unparse(node)}"


def source_files() -> Iterator[tuple[str, str]]:
    for path in sorted(ROOT.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name != "events/turn_vocabulary.py":
            yield name, path.read_text(encoding="utf-8")


def test_no_module_restates_how_a_turn_ends() -> None:
    found = {
        name: list(found)
        for name, source in source_files()
        if name not in STILL_RESTATED and (found := list(restatements(source)))
    }
    assert found == {}


def test_the_files_left_to_the_turn_writer_exist_and_still_need_their_exception() -> None:
    sources = dict(source_files())
    for name in STILL_RESTATED:
        assert list(restatements(sources[name])), f"{name} no longer restates: drop it from the list"


@pytest.mark.parametrize(
    "source",
    [
        'STATUS = {"final": "completed", "error": "failed"}\n',
        'ok = turn.stop_reason == "final"\n',
        'if payload["stopReason"] in ("cancelled", "error"):\n    pass\n',
        'if stop != "max_steps":\n    pass\n',
        'if reason == "maxSteps" or reason == "done":\n    pass\n',
        'done = record.state == "complete"\n',
    ],
)
def test_the_scan_catches_each_kind_of_restatement(source: str) -> None:
    assert list(restatements(source)), source


@pytest.mark.parametrize(
    "source",
    [
        'STATUS_GLYPH = {"idle": "o", "running": "*", "cancelled": "x"}\n',
        'ok = ending.answered and status == "completed"\n',
        'if kind == "error":\n    pass\n',
    ],
)
def test_the_scan_leaves_other_words_alone(source: str) -> None:
    assert list(restatements(source)) == [], source
