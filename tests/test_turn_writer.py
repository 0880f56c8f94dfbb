"""One turn's life is written in one place: the `TurnWriter` words the chain, the engine drives it.

The engine's model loop, the ACP client and the importers are drivers; a new driver written here
(a few lines that only converse) gets a whole, well-formed turn without copying any rule.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import anyio
import pytest
from support_engine import make_engine, workspace
from support_imports import PACKAGE_ROOT

from agent_tui.engine.engine import TurnDriver
from agent_tui.engine.session_info import TurnHandle
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.events.turn_vocabulary import TurnEnd
from agent_tui.events.turn_writer import CANCELLED, DONE, TURN_ENDED, Done, TurnWriter, run_now
from agent_tui.store import JsonlEventLog

pytestmark = pytest.mark.anyio

CHAIN_TYPES = {
    "turn.started",
    "user.message",
    "turn.completed",
    "model.delta",
    "model.tool_call_requested",
    "permission.requested",
    "permission.resolved",
    "tool.started",
    "tool.delta",
    "tool.completed",
    "tool.failed",
}
DRIVERS = ("engine", "acp", "importers", "runtime", "bus")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_no_driver_words_a_chain_event_itself() -> None:
    """No module of a driver passes a chain event's type to a commit: only the writer does."""
    found = []
    for part in DRIVERS:
        for path in sorted((PACKAGE_ROOT / part).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call):
                    continue
                words = [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
                if any(word in CHAIN_TYPES for word in words):
                    found.append(f"{path.relative_to(PACKAGE_ROOT)}:{node.lineno}")
    assert found == []


class _Sink:
    """A synchronous sink, as the importers' is."""

    def __init__(self) -> None:
        self.lines: list[tuple[str | None, str, dict[str, Any]]] = []

    def __call__(self, turn_id: str | None, kind: str, fields: dict[str, Any]) -> Done:
        self.lines.append((turn_id, kind, {k: v for k, v in fields.items() if v is not None}))
        return DONE


class _OpenCall:
    def __init__(self, call_id: str, stage: str = "requested", decision: str | None = None) -> None:
        self.call_id, self.tool, self.stage, self.request_id, self.decision = (
            call_id,
            "shell",
            stage,
            "p1",
            decision,
        )


def test_the_writer_runs_over_a_synchronous_sink() -> None:
    sink = _Sink()
    writer = TurnWriter(sink, "turn_1")
    run_now(writer.start("hello"))
    run_now(writer.delta(""))  # empty text is not a delta
    open_calls = [_OpenCall("c1", stage="asking"), _OpenCall("c2", decision="deny"), _OpenCall("c3")]
    run_now(writer.end(TurnEnd.final(), open_calls, TURN_ENDED))
    assert [(kind, fields.get("toolCallId"), fields.get("errorCode")) for _, kind, fields in sink.lines] == [
        ("turn.started", None, None),
        ("user.message", None, None),
        ("permission.resolved", "c1", None),  # the waiting question is withdrawn
        ("tool.failed", "c1", "cancelled"),
        ("tool.failed", "c2", "permission_denied"),
        ("tool.failed", "c3", "unknown"),
        ("model.delta", None, None),  # a final answer without text: the empty delta
        ("turn.completed", None, None),
    ]
    assert sink.lines[-2][2] == {"text": ""}


def test_a_cancel_fails_every_open_call_cancelled() -> None:
    sink = _Sink()
    writer = TurnWriter(sink, "turn_1")
    run_now(writer.end(TurnEnd.cancelled(), [_OpenCall("c1", decision="deny"), _OpenCall("c2")], CANCELLED))
    assert [fields["errorCode"] for _, kind, fields in sink.lines if kind == "tool.failed"] == [
        "cancelled"
    ] * 2
    assert sink.lines[-1][2] == {"stopReason": "cancelled"}


def test_an_importers_writer_never_invents_text() -> None:
    kept = _Sink()
    writer = TurnWriter(kept, "turn_1", keeps_source=True)
    run_now(writer.start("hi"))
    run_now(writer.record("codex", "reasoning", {"text": "thinking"}))
    run_now(writer.end(TurnEnd.final()))
    assert [kind for _, kind, _ in kept.lines] == [
        "turn.started",
        "user.message",
        "source.record",
        "turn.completed",
    ]
    assert kept.lines[-1][2] == {"stopReason": "final"}
    empty = _Sink()
    writer = TurnWriter(empty, "turn_2", keeps_source=True)
    run_now(writer.start("hi"))
    run_now(writer.end(TurnEnd.final()))  # the source shows no answer at all: it was cut off
    assert empty.lines[-1][2] == {"stopReason": "error", "errorCode": "unknown"}


class EchoDriver:
    """A new kind of turn: it only converses, and tells the writer what happened."""

    def __init__(self, said: list[str], call: bool = False) -> None:
        self.said = said
        self.call = call

    async def open_turn(self, turn: TurnHandle) -> None:
        await turn.writer.start(turn.text, turn.input_id)

    async def converse(self, turn: TurnHandle) -> TurnEnd:
        writer = turn.writer
        await writer.context_built(1, {"instruction": 0, "transcript": 1, "tools": 0}, 1000)
        if self.call:  # a call it never answers: the writer answers it at the end
            await writer.request_call("call_1", "shell", {"command": "ls"})
        for text in self.said:
            await writer.delta(text)
        return TurnEnd.final()

    async def close_turn(self, turn: TurnHandle, end: TurnEnd) -> None:
        await turn.writer.end(end, turn.session.open_calls.values(), TURN_ENDED)


@pytest.mark.parametrize(("said", "call"), [(["hello ", "there"], False), ([], False), ([], True)])
async def test_a_new_driver_gets_a_whole_turn(tmp_path: Path, said: list[str], call: bool) -> None:
    engine = make_engine(tmp_path)
    driver: TurnDriver = EchoDriver(said, call)
    async with engine:
        sid = await engine.create_session(workspace(tmp_path))
        info = engine.session(sid)
        turn = TurnHandle(info, "turn_echo", "say it", None, engine.writer_for(info, "turn_echo"))
        engine.drive(turn, driver)
        assert await turn.wait() == "final"
        assert engine.registry.state(sid) == "complete"
    log = list(JsonlEventLog(tmp_path / "sessions" / f"{sid}.jsonl").replay())
    assert chain_violations(log) == []
    deltas = [event.payload["text"] for event in log if event.type == "model.delta"]
    assert deltas == (said or [""])
    failed = [event.payload for event in log if event.type == "tool.failed"]
    assert [f["errorCode"] for f in failed] == (["unknown"] if call else [])


async def test_a_driver_that_breaks_ends_only_its_turn_in_the_log(tmp_path: Path) -> None:
    class Broken(EchoDriver):
        async def converse(self, turn: TurnHandle) -> TurnEnd:
            await turn.writer.request_call("call_1", "shell", {"command": "ls"})
            raise RuntimeError("the driver has a bug")

    engine = make_engine(tmp_path)
    async with engine:
        sid = await engine.create_session(workspace(tmp_path))
        info = engine.session(sid)
        turn = TurnHandle(info, "turn_b", "go", None, engine.writer_for(info, "turn_b"))
        engine.drive(turn, Broken([]))
        assert await turn.wait() == "error"
        assert isinstance(turn.error, RuntimeError)
        # The session is usable again at once.
        again = engine.start_turn(sid, "next")
        with anyio.fail_after(10):
            await again.done.wait()
    log: list[Event] = list(JsonlEventLog(tmp_path / "sessions" / f"{sid}.jsonl").replay())
    assert chain_violations(log) == []
    end = next(event for event in log if event.type == "turn.completed")
    assert end.payload["errorCode"] == "unknown" and "the driver has a bug" in end.payload["message"]
