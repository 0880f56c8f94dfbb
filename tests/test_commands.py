"""The one command type: every variant of `Command` has its executor branch, crosses the bus's
JSON as it is, and a command that cannot be done is refused with a sentence, never a traceback."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from support_engine import make_engine, steps, workspace

from agent_tui.bus.protocol import Caller, ControlRequest
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.runtime import commands as c
from agent_tui.runtime.command_executor import CommandExecutor

pytestmark = pytest.mark.anyio

VARIANTS: list[type[Any]] = list(typing.get_args(typing.get_args(c.Command.__value__)[0]))

EXAMPLES: dict[str, dict[str, Any]] = {
    "answer": {"sessionId": "s", "requestId": "r", "decision": "allow", "remember": "session"},
    "steer": {"sessionId": "s", "text": "go on"},
    "follow_up": {"sessionId": "s", "text": "and the tests"},
    "new_agent": {"prompt": "fix it", "cwd": "sub", "ownWorktree": True, "budgetUsd": 1.5, "budgetTokens": 9},
    "set_budget": {"sessionId": "s", "usd": 2.0, "tokens": 100},
    "accept_project_rules": {"digest": "abc"},
    "republish": {"sessionId": "s", "first": 3, "last": 9},
    "commit": {"sessionId": "s", "message": "Work"},
    "merge": {"sessionId": "s", "message": "Merge"},
    "rewind_plan": {"sessionId": "s", "turnId": "t"},
    "close": {"sessionId": "s", "worktree": "remove"},
    "rewind": {"sessionId": "s", "turnId": "t"},
}


def example(variant: type[Any]) -> c.Command:
    verb = variant.model_fields["verb"].default
    fields = EXAMPLES.get(verb, {"sessionId": "s"} if "session_id" in variant.model_fields else {})
    return c.COMMAND.validate_python({"verb": verb, **fields})


def test_the_union_has_every_verb_once() -> None:
    verbs = [variant.model_fields["verb"].default for variant in VARIANTS]
    assert len(verbs) == len(set(verbs)) >= 21


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.__name__)
def test_every_variant_has_its_executor_branch(variant: type[Any], tmp_path: Path) -> None:
    executor = CommandExecutor(make_engine(tmp_path))
    assert executor.branch(variant.model_fields["verb"].default) is not None


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.__name__)
def test_every_variant_crosses_the_bus_as_it_is(variant: type[Any]) -> None:
    command = example(variant)
    request = ControlRequest(id="r1", by=Caller(dashboard="d", user="u", host="h"), command=command)
    wire = request.model_dump_json(by_alias=True, exclude_none=True)
    assert ControlRequest.model_validate_json(wire) == request
    assert type(ControlRequest.model_validate_json(wire).command) is variant


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"verb": "set_budget", "sessionId": "s", "usd": -1}, "usd"),
        ({"verb": "set_budget", "sessionId": "s", "tokens": 5.0}, "tokens"),
        ({"verb": "new_agent", "prompt": "p", "budgetTokens": "5"}, "budgetTokens"),
        ({"verb": "answer", "sessionId": "s", "requestId": "", "decision": "allow"}, "requestId"),
        ({"verb": "answer", "sessionId": "s", "requestId": "r", "decision": "maybe"}, "decision"),
        ({"verb": "steer", "sessionId": "s", "text": "  "}, "text"),
        ({"verb": "stop", "sessionId": ""}, "sessionId"),
        ({"verb": "republish", "sessionId": "s", "first": 0}, "first"),
    ],
)
def test_a_command_is_checked_where_it_enters(fields: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError) as raised:
        c.COMMAND.validate_python(fields)
    assert raised.value.errors()[0]["loc"][1] == where


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.__name__)
async def test_a_command_a_scenario_host_cannot_do_is_refused_with_a_sentence(
    variant: type[Any], tmp_path: Path
) -> None:
    engine = make_engine(tmp_path)
    async with engine:
        reply = await CommandExecutor(engine).send(example(variant))
    if variant is c.StopAll:
        assert reply == c.Reply(ok=True, detail={"stopped": 0})
        return
    assert not reply.ok and reply.message and "\n" not in reply.message
    assert "failed" not in reply.message  # refused by a branch, not by a bug


async def test_the_engine_alone_stops_steers_and_follows_up(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    engine = make_engine(tmp_path, provider)
    async with engine:
        sid = await engine.create_session(workspace(tmp_path), agent_name="a")
        provider.assign(sid, steps({"text": ["first"]}, {"text": ["second"]}))
        executor = CommandExecutor(engine)
        await engine.start_turn(sid, "one").done.wait()
        steered = await executor.send(c.Steer(sessionId=sid, text="more"))
        assert (steered.ok, steered.message) == (
            False,
            "no turn is running in that session to steer (send a follow-up instead)",
        )
        started = await executor.send(c.FollowUp(sessionId=sid, text="again"))
        assert started == c.Reply(ok=True, detail={"how": "started"})
        assert await executor.send(c.StopSubtree(sessionId=sid)) == c.Reply(ok=True, detail={"stopped": 1})
        budget = await executor.send(
            c.SetBudget(sessionId=sid, usd=1.0), by=Caller(dashboard="d", user="u", host="h")
        )
        assert budget.ok
    stored = [e for e in engine.store.replay(sid) if e.type == "session.budget"]
    assert [e.payload for e in stored] == [{"usd": 1.0, "by": "d (u@h)"}]
