"""Budgets over the bus: `agent-tui serve` on a real model (a loopback server) and a real
nats-server; an attached dashboard's controls (`BusCommands`, what the attached run calls)
start an agent with a budget, see its follow-up refused once the budget is spent, raise the
budget, and the agent goes on."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_model_server import Stream, openai_stream
from support_bus_host import Heard, control, host_env, reader, start_agent_tui, wait_for_line
from support_nats import NatsServer, nats_server
from support_providers import fake_model_server  # noqa: F401 - the `server` fixture

from agent_tui.bus.protocol import Caller, host_events
from agent_tui.bus.remote import BusCommands
from agent_tui.costs.budgets import BudgetLimit
from agent_tui.replay.sources import replay_all
from agent_tui.runtime.agent_requests import AgentSpec
from agent_tui.runtime.commands import FollowUp, NewAgent, SetBudget

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio

PRICES_TOML = (
    '[prices."test-model"]\ninput = 1.0\noutput = 1.0\n[prices."gpt-4.1-mini"]\ninput = 1.0\noutput = 1.0\n'
)
CONTROL_WAIT_S = 60.0
"""A control reply's bound: generous, as a loaded machine can make a host slow to answer."""
BIG = (40, 24_960, 0)  # $0.025 a call at a dollar per million tokens


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def turn_end(session_id: str, count: int, heard: Heard) -> Callable[[dict[str, Any]], bool]:
    def wanted(event: dict[str, Any]) -> bool:
        ends = [e for e in heard.events if e["type"] == "turn.completed" and e["sessionId"] == session_id]
        return len(ends) >= count

    return wanted


async def test_an_attached_dashboard_raises_a_spent_budget_and_the_agent_goes_on(
    nats_server: NatsServer, tmp_path: Path, server: Any
) -> None:
    server.script(
        Stream(openai_stream(calls=[("a", "list_dir", ['{"path": "."}'])], usage=BIG)),
        Stream(openai_stream(calls=[("b", "list_dir", ['{"path": "."}'])], usage=BIG)),  # $0.05
        Stream(openai_stream(["going on"], usage=(10, 5, 0))),
    )
    sessions = tmp_path / "served"
    model = ["--provider", "openai", "--model", "test-model", "--base-url", server.openai_url]
    serve = start_agent_tui(
        ["serve", "--bus", nats_server.url, "--sessions-dir", str(sessions), "--cwd", str(tmp_path),
         "--host", "box", *model],
        host_env(tmp_path, PRICES_TOML),
    )  # fmt: skip
    client, _ = await reader(nats_server.url)
    heard = Heard()
    try:
        wait_for_line(serve, "host box serves")
        await client.subscribe(host_events("box"), cb=heard.hear)
        await client.flush()
        commands = BusCommands(
            client, Caller(dashboard="laptop", user="ana", host="laptop-machine"), timeout=CONTROL_WAIT_S
        )

        started = await commands.send(
            "box", NewAgent.of(AgentSpec("look around", tmp_path, budget=BudgetLimit(usd=0.04)))
        )
        assert started.ok, started.message
        session_id = started.detail["sessionId"]
        first_end = await heard.first(turn_end(session_id, 1, heard))
        spent = "budget exceeded: spent $0.05 of a $0.04 budget"
        assert (first_end["payload"]["errorCode"], first_end["payload"]["message"]) == (
            "budget_exceeded",
            spent,
        )

        refused = await commands.send("box", FollowUp(sessionId=session_id, text="and more"))
        assert not refused.ok
        assert refused.message == "Budget exceeded: spent $0.05 of a $0.04 budget. Raise the budget to go on."

        raised = await commands.send("box", SetBudget(sessionId=session_id, usd=1.0))
        assert raised.ok, raised.message
        again = await commands.send("box", FollowUp(sessionId=session_id, text="and more"))
        assert again.ok, again.message
        second_end = await heard.first(turn_end(session_id, 2, heard))
        assert second_end["payload"]["stopReason"] == "final"
    finally:
        await client.close()
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
    events = [e for e in replay_all(sessions) if e.session_id == session_id]
    assert events[0].payload["budget"] == {"usd": 0.04}
    (budget,) = [e for e in events if e.type == "session.budget"]
    assert (budget.turn_id, budget.payload) == (None, {"usd": 1.0, "by": "laptop (ana@laptop-machine)"})


async def test_a_bad_budget_over_the_bus_is_refused_with_the_reason(
    nats_server: NatsServer, tmp_path: Path
) -> None:
    sessions = tmp_path / "served"
    serve = start_agent_tui(
        [
            "serve",
            "--bus",
            nats_server.url,
            "--sessions-dir",
            str(sessions),
            "--cwd",
            str(tmp_path),
            "--host",
            "box",
        ],
        host_env(tmp_path),
    )
    client, _ = await reader(nats_server.url)
    try:
        wait_for_line(serve, "host box serves")
        bad = await control(client, "box", "set_budget", request_id="b0", session_id="sess_nope", usd=-2)
        assert not bad.ok and bad.message is not None and bad.message.startswith("set_budget: usd")
        # Numbers are checked where they enter: never "could not store" once the log refuses them.
        for number, (tokens, said) in enumerate(
            [
                (2**64, "at most 9,007,199,254,740,991 tokens"),
                (2**53, "at most 9,007,199,254,740,991 tokens"),
                (-1, "a positive whole number of tokens"),
                (True, "a positive whole number of tokens"),
                (5.0, "a positive whole number of tokens"),
                ("5", "a positive whole number of tokens"),
            ]
        ):
            refused = await control(
                client, "box", "set_budget", request_id=f"t{number}", session_id="sess_nope", tokens=tokens
            )
            assert (refused.ok, refused.message) == (False, f"set_budget: tokens: expected {said}")
        for number, usd in enumerate([True, "1", 0, -0.5]):
            refused = await control(
                client, "box", "set_budget", request_id=f"u{number}", session_id="sess_nope", usd=usd
            )
            assert (refused.ok, refused.message) == (
                False,
                "set_budget: usd: expected a positive number of dollars",
            )
        new = await control(client, "box", "new_agent", request_id="n1", prompt="hi", budgetTokens=2**64)
        assert (new.ok, new.message) == (
            False,
            "new_agent: budgetTokens: expected at most 9,007,199,254,740,991 tokens",
        )
        assert not sessions.exists() or not list(sessions.glob("*.jsonl"))  # no log left headless
        unknown = await control(client, "box", "set_budget", request_id="s1", session_id="sess_nope", usd=1.0)
        assert not unknown.ok and unknown.message == "This session is not open here."
    finally:
        await client.close()
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
