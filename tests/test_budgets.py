"""Budgets: a tree that spends its budget is stopped (only it), its next turn is refused until
the budget is raised, a model call that could cross it is not made, a child gets no more than
what is left, and a budget outlives the process. The model is a real loopback server reporting
usage, priced at a dollar per million tokens so every figure below is counted by hand."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from fake_model_server import VENDORS, Stream, asked, openai_stream, vendor_stream
from support_engine import make_engine
from support_providers import (  # noqa: F401 - fake_model_server: the `server` fixture
    FAKE_KEY,
    FAST,
    agent_tui,
    clean_env,
    fake_model_server,
    project,
    settings_for,
)

from agent_tui.costs.budgets import (
    MAX_TOKENS,
    BudgetLimit,
    BudgetSpend,
    budget_state,
    over_sentence,
)
from agent_tui.costs.prices import Price, PriceTable
from agent_tui.costs.wording import usd_text
from agent_tui.engine.budgets import BudgetExceeded
from agent_tui.engine.engine import SessionEngine
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.providers.config import DEFAULT_KEY_ENV, ConfigError, load_config, resolve_settings
from agent_tui.providers.factory import build_provider
from agent_tui.runtime.subagents import SubAgents
from agent_tui.store import JsonlEventLog

pytestmark = pytest.mark.anyio

DOLLAR_PER_MILLION = Price(input=1.0, output=1.0)
PRICES = PriceTable(
    {
        "test-model": DOLLAR_PER_MILLION,
        "gpt-4.1-mini": DOLLAR_PER_MILLION,
        "claude-sonnet-4-5": DOLLAR_PER_MILLION,
    }
)
BIG = (40, 24_960, 0)  # 25,000 tokens a call: $0.025 (mostly output: the prompt estimate stays small)
SMALL = (10, 5, 0)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# -- helpers -----------------------------------------------------------------------------------
def spawn(name: str, prompt: str, budget: float | None = None, call_id: str | None = None) -> Any:
    args: dict[str, Any] = {"agentName": name, "prompt": prompt}
    if budget is not None:
        args["budgetUsd"] = budget
    return (call_id or f"spawn_{name}", "spawn_agent", [json.dumps(args)])


def list_dir(call_id: str = "ls") -> Any:
    return (call_id, "list_dir", ['{"path": "."}'])


def engine_on(
    tmp_path: Path,
    url: str,
    *,
    max_output: int = 1024,
    model: str = "test-model",
    prices: PriceTable = PRICES,
    vendor: str = "openai",
) -> SessionEngine:
    settings = settings_for(vendor, url, model=model, max_output=max_output)
    provider = build_provider(settings, {DEFAULT_KEY_ENV[vendor]: FAKE_KEY}, policy=FAST)
    engine = make_engine(tmp_path, provider, prices=prices)
    SubAgents(engine)
    return engine


async def close(engine: SessionEngine) -> None:
    await engine.provider.aclose()  # type: ignore[attr-defined]
    engine.store.close()


def log(tmp_path: Path, session_id: str) -> list[Event]:
    return list(JsonlEventLog(tmp_path / "sessions" / f"{session_id}.jsonl").replay("strict"))


def ends(events: list[Event]) -> list[tuple[str, str | None, str | None]]:
    return [
        (e.payload["stopReason"], e.payload.get("errorCode"), e.payload.get("message"))
        for e in events
        if e.type == "turn.completed"
    ]


def all_logs(tmp_path: Path) -> list[Event]:
    events: list[Event] = []
    for path in sorted((tmp_path / "sessions").glob("*.jsonl")):
        events += JsonlEventLog(path).replay("strict")
    return events


async def wait_all(engine: SessionEngine) -> None:
    while True:
        running = [i.turn for i in engine.sessions() if i.turn is not None and not i.turn.done.is_set()]
        if not running:
            return
        for turn in running:
            await turn.wait()


# -- the arithmetic every layer shares ---------------------------------------------------------
class TestBudgetState:
    def test_ok_near_from_eighty_percent_over_at_the_limit(self) -> None:
        assert budget_state(1.99, 0, 2.5, None) == "ok"
        assert budget_state(2.0, 0, 2.5, None) == "near"
        assert budget_state(2.5, 0, 2.5, None) == "over"
        assert budget_state(0.0, 850, None, 1000) == "near"
        assert budget_state(0.1, 1000, 2.5, 1000) == "over"  # either limit counts
        assert budget_state(99.0, 99, None, None) == "ok"

    def test_a_nonsense_limit_from_a_log_never_raises(self) -> None:
        assert budget_state(0.0, 0, 0.0, None) == "over"

    def test_the_sentence_says_what_was_spent_and_allowed(self) -> None:
        assert over_sentence(BudgetSpend(2.51, 10), BudgetLimit(usd=2.5)) == "spent $2.51 of a $2.50 budget"
        assert (
            over_sentence(BudgetSpend(0.0, 1200), BudgetLimit(tokens=1000))
            == "spent 1,200 tokens of a 1,000-token budget"
        )
        assert over_sentence(BudgetSpend(1.0, 10), BudgetLimit(usd=2.5)) is None
        assert [usd_text(x) for x in (0.05, 0.0042, 0.015, 12.5)] == [
            "$0.05",
            "$0.0042",
            "$0.015",
            "$12.50",
        ]

    def test_a_logs_budget_is_read_without_raising(self) -> None:
        assert BudgetLimit.of({"usd": 2.5, "tokens": 10}) == BudgetLimit(2.5, 10)
        assert BudgetLimit.of({"usd": 0, "tokens": -3}) is None
        assert BudgetLimit.of({"usd": "x", "tokens": 7}) == BudgetLimit(tokens=7)
        assert BudgetLimit.of(None) is None

    def test_a_budget_is_positive(self) -> None:
        with pytest.raises(ValueError, match="positive"):
            BudgetLimit(usd=-1.0)
        with pytest.raises(ValueError, match="positive"):
            BudgetLimit(tokens=0)


# -- stopping a tree -----------------------------------------------------------------------------
@pytest.mark.parametrize("vendor", VENDORS)
async def test_a_tree_over_its_budget_is_stopped_and_its_sibling_goes_on(
    tmp_path: Path, server: Any, vendor: str
) -> None:
    sibling_may_answer = threading.Event()
    server.route(
        asked("lead task"),
        Stream(
            vendor_stream(
                vendor,
                calls=[
                    spawn("spender", "spend task", 0.04),
                    spawn("sibling", "sibling task"),
                    ("wait", "wait_agent", ["{}"]),
                ],
                usage=SMALL,
            )
        ),
        Stream(vendor_stream(vendor, ["all done"], usage=SMALL)),
    )
    server.route(
        asked("spend task"),
        Stream(vendor_stream(vendor, calls=[spawn("helper", "helper task")], usage=BIG)),
        Stream(vendor_stream(vendor, calls=[list_dir()], usage=BIG)),  # $0.05 now: over its $0.04
    )
    server.route(asked("helper task"), Stream(vendor_stream(vendor, ["thinking"]), hold_after=1))
    server.route(
        asked("sibling task"),
        Stream(vendor_stream(vendor, ["sibling done"], usage=SMALL), gate=sibling_may_answer),
    )
    url = server.openai_url if vendor == "openai" else server.anthropic_url
    engine = engine_on(tmp_path, url, vendor=vendor)
    sibling_running_at_stop: list[bool] = []

    def on_event(event: Event) -> None:
        if event.type == "turn.completed" and engine.session(event.session_id).agent_name == "spender":
            sibling = next(i for i in engine.sessions() if i.agent_name == "sibling")
            sibling_running_at_stop.append(sibling.live_turn is not None)
            sibling_may_answer.set()

    engine.subscribe(on_event)
    try:
        async with engine:
            lead = await engine.create_session(project(tmp_path), agent_name="lead", model="test-model")
            await engine.start_turn(lead, "lead task").wait()
            await wait_all(engine)
            ids = {info.agent_name: info.id for info in engine.sessions()}
    finally:
        await close(engine)
    spent = "budget exceeded: spender and its sub-agents spent $0.05 of a $0.04 budget"
    assert ends(log(tmp_path, ids["spender"])) == [("error", "budget_exceeded", spent)]
    assert ends(log(tmp_path, ids["helper"])) == [("error", "budget_exceeded", spent)]
    assert ends(log(tmp_path, ids["sibling"])) == [("final", None, None)]
    assert ends(log(tmp_path, ids["lead"])) == [("final", None, None)]
    assert sibling_running_at_stop == [True]
    told = {
        e.payload["agentName"]: e.payload["text"]
        for e in log(tmp_path, ids["lead"])
        if e.type == "subagent.delivered"
    }
    assert told["spender"] == f"failed: budget_exceeded ({spent})"  # the lead's model learns why
    assert log(tmp_path, ids["spender"])[0].payload["budget"] == {"usd": 0.04}
    # the call the spender's model asked for as its budget ran out never ran, and says why
    (unrun,) = [e.payload for e in log(tmp_path, ids["spender"]) if e.type == "tool.failed"]
    assert (unrun["toolCallId"], unrun["errorCode"]) == ("ls", "budget_exceeded")
    assert chain_violations(all_logs(tmp_path)) == []


@pytest.mark.parametrize("vendor", VENDORS)
async def test_the_next_turn_is_refused_until_the_budget_is_raised_and_it_outlives_the_process(
    tmp_path: Path, server: Any, vendor: str
) -> None:
    server.script(
        Stream(vendor_stream(vendor, calls=[list_dir("a")], usage=BIG)),
        Stream(vendor_stream(vendor, calls=[list_dir("b")], usage=BIG)),
        Stream(vendor_stream(vendor, ["more done"], usage=SMALL)),
    )
    url = server.openai_url if vendor == "openai" else server.anthropic_url
    spent = "budget exceeded: spent $0.05 of a $0.04 budget"
    engine = engine_on(tmp_path, url, vendor=vendor)
    try:
        async with engine:
            sid = await engine.create_session(project(tmp_path), model="test-model", budget={"usd": 0.04})
            await engine.start_turn(sid, "go").wait()
            assert ends(log(tmp_path, sid)) == [("error", "budget_exceeded", spent)]
            with pytest.raises(BudgetExceeded, match=spent.replace("$", r"\$")):
                engine.start_turn(sid, "more")
    finally:
        await close(engine)
    assert len(server.requests) == 2

    again = engine_on(tmp_path, url, vendor=vendor)  # a new process reads the log
    try:
        async with again:
            await again.open_session(sid)
            assert again.budgets.index.tree_spend(sid).usd == pytest.approx(0.05)
            assert again.budgets.refusal(sid) == spent
            with pytest.raises(BudgetExceeded):
                again.start_turn(sid, "more")
            await again.set_budget(sid, BudgetLimit(usd=1.0), by="test")
            assert again.budgets.refusal(sid) is None
            await again.start_turn(sid, "more").wait()
    finally:
        await close(again)
    events = log(tmp_path, sid)
    assert ends(events)[-1] == ("final", None, None)
    budget_event = next(e for e in events if e.type == "session.budget")
    assert (budget_event.turn_id, budget_event.payload) == (None, {"usd": 1.0, "by": "test"})
    assert chain_violations(events) == []

    third = engine_on(tmp_path, url, vendor=vendor)
    try:
        async with third:
            await third.open_session(sid)
            assert third.budgets.index.budget(sid) == BudgetLimit(usd=1.0)
    finally:
        await close(third)


async def test_a_budget_lowered_below_the_spend_stops_the_running_turn(tmp_path: Path, server: Any) -> None:
    release = threading.Event()
    server.script(
        Stream(openai_stream(calls=[list_dir("a")], usage=BIG)),
        Stream(openai_stream(["late"], usage=SMALL), gate=release),
    )
    engine = engine_on(tmp_path, server.openai_url)

    def on_event(event: Event) -> None:
        if event.type == "context.built" and event.payload["step"] == 2:
            lowered.set()  # the second call is on its way (its answer waits for `release`)

    lowered = anyio.Event()
    engine.subscribe(on_event)
    try:
        async with engine:
            sid = await engine.create_session(project(tmp_path), model="test-model", budget={"usd": 1.0})
            handle = engine.start_turn(sid, "go")
            await lowered.wait()
            event = await engine.set_budget(sid, BudgetLimit(usd=0.02), by="test")
            release.set()
            await handle.wait()
    finally:
        await close(engine)
    events = log(tmp_path, sid)
    assert event.turn_id == handle.turn_id  # changed during the turn: it belongs to it
    assert ends(events) == [("error", "budget_exceeded", "budget exceeded: spent $0.025 of a $0.02 budget")]
    assert chain_violations(events) == []


# -- the preflight -------------------------------------------------------------------------------
async def test_a_call_that_could_cross_the_budget_is_not_made(tmp_path: Path, server: Any) -> None:
    engine = engine_on(tmp_path, server.openai_url, max_output=50_000)  # up to $0.05 of output
    try:
        async with engine:
            sid = await engine.create_session(project(tmp_path), model="test-model", budget={"usd": 0.03})
            await engine.start_turn(sid, "go").wait()
    finally:
        await close(engine)
    assert server.requests == []
    ((stop, code, message),) = ends(log(tmp_path, sid))
    assert (stop, code) == ("error", "budget_exceeded")
    assert message is not None
    assert message.startswith("budget exceeded: the next model call could cost up to $0.05")
    assert message.endswith("and up to 50,000 output tokens), more than the $0.03 left of a $0.03 budget")


async def test_a_token_budget_is_checked_before_the_call_too(tmp_path: Path, server: Any) -> None:
    engine = engine_on(tmp_path, server.openai_url, max_output=10)
    try:
        async with engine:
            sid = await engine.create_session(project(tmp_path), model="test-model", budget={"tokens": 100})
            await engine.start_turn(sid, "go").wait()
    finally:
        await close(engine)
    assert server.requests == []
    ((_, code, message),) = ends(log(tmp_path, sid))
    assert code == "budget_exceeded"
    assert message is not None and "more than the 100 left of a 100-token budget" in message


async def test_an_unknown_price_is_said_once_and_the_token_budget_still_holds(
    tmp_path: Path, server: Any
) -> None:
    server.script(
        Stream(openai_stream(["one"], usage=SMALL)),
        Stream(openai_stream(["two"], usage=SMALL)),
    )
    engine = engine_on(
        tmp_path, server.openai_url, model="mystery-model", max_output=10, prices=PriceTable({})
    )
    said: list[str] = []
    engine.budgets.notice = said.append
    try:
        async with engine:
            sid = await engine.create_session(
                project(tmp_path), model="mystery-model", budget={"usd": 0.01, "tokens": 1_000_000}
            )
            await engine.start_turn(sid, "go").wait()
            await engine.start_turn(sid, "again").wait()
            spend = engine.budgets.index.tree_spend(sid)
    finally:
        await close(engine)
    assert [end[0] for end in ends(log(tmp_path, sid))] == ["final", "final"]
    assert len(said) == 1 and "price of model mystery-model is unknown" in said[0]
    assert (spend.tokens, spend.unpriced) == (30, True)


# -- a child's budget ----------------------------------------------------------------------------
async def test_a_child_gets_no_more_than_what_is_left_of_its_parents_budget(
    tmp_path: Path, server: Any
) -> None:
    server.route(
        asked("lead task"),
        Stream(
            openai_stream(
                calls=[
                    spawn("greedy", "greedy task", 0.05),
                    spawn("modest", "modest task", 0.01),
                    ("wait", "wait_agent", ["{}"]),
                ],
                usage=BIG,  # $0.025 of the lead's $0.04: $0.015 left
            )
        ),
        Stream(openai_stream(["done"], usage=SMALL)),
    )
    server.route(asked("modest task"), Stream(openai_stream(["modest done"], usage=SMALL)))
    engine = engine_on(tmp_path, server.openai_url)
    try:
        async with engine:
            lead = await engine.create_session(
                project(tmp_path), agent_name="lead", model="test-model", budget={"usd": 0.04}
            )
            await engine.start_turn(lead, "lead task").wait()
            await wait_all(engine)
            names = {info.agent_name: info.id for info in engine.sessions()}
    finally:
        await close(engine)
    failed = [e.payload for e in log(tmp_path, lead) if e.type == "tool.failed"]
    assert failed == [
        {
            "toolCallId": "spawn_greedy",
            "tool": "spawn_agent",
            "errorCode": "budget_exceeded",
            "message": "cannot spawn greedy with a budget of $0.05: only $0.015 is left of this session's "
            "$0.04 budget (ask for at most that, or leave budgetUsd out to share what is left)",
        }
    ]
    assert "greedy" not in names
    assert log(tmp_path, names["modest"])[0].payload["budget"] == {"usd": 0.01}
    assert ends(log(tmp_path, names["modest"])) == [("final", None, None)]


# -- the command line ----------------------------------------------------------------------------
def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


PRICES_TOML = (
    '[prices."test-model"]\ninput = 1.0\noutput = 1.0\n[prices."gpt-4.1-mini"]\ninput = 1.0\noutput = 1.0\n'
)


def test_run_stops_at_its_budget_exits_1_and_says_what_was_spent(tmp_path: Path, server: Any) -> None:
    server.script(
        Stream(openai_stream(calls=[list_dir("a")], usage=BIG)),
        Stream(openai_stream(calls=[list_dir("b")], usage=BIG)),
    )
    config = _config(tmp_path, PRICES_TOML)
    env = clean_env(AGENT_TUI_CONFIG=str(config))
    cwd = project(tmp_path)
    model = ["--provider", "openai", "--model", "test-model", "--base-url", server.openai_url]
    done = agent_tui(
        "run", "--prompt", "look", "--cwd", str(cwd), *model, "--sessions-dir", str(tmp_path / "s"),
        "--approve", "allow", "--budget", "0.04", env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "agent-tui: budget exceeded: spent $0.05 of a $0.04 budget" in done.stderr.splitlines()
    (path,) = (tmp_path / "s").glob("*.jsonl")
    first = next(iter(JsonlEventLog(path).replay("strict")))
    assert first.payload["budget"] == {"usd": 0.04}


def test_run_takes_the_configs_budget_and_the_flags_over_it(tmp_path: Path, server: Any) -> None:
    server.script(Stream(openai_stream(["fine"], usage=SMALL)))
    config = _config(tmp_path, PRICES_TOML + "[budget]\nusd = 5.0\ntokens = 900000\n")
    env = clean_env(AGENT_TUI_CONFIG=str(config))
    model = ["--provider", "openai", "--model", "test-model", "--base-url", server.openai_url]
    done = agent_tui(
        "run", "--prompt", "hi", "--cwd", str(project(tmp_path)), *model, "--sessions-dir",
        str(tmp_path / "s"), "--budget-tokens", "500000", env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (path,) = (tmp_path / "s").glob("*.jsonl")
    first = next(iter(JsonlEventLog(path).replay("strict")))
    assert first.payload["budget"] == {"usd": 5.0, "tokens": 500000}


def test_run_says_once_that_a_dollar_budget_cannot_be_checked(tmp_path: Path, server: Any) -> None:
    server.script(
        Stream(openai_stream(calls=[list_dir("a")], usage=SMALL)),
        Stream(openai_stream(["fine"], usage=SMALL)),
    )
    model = ["--provider", "openai", "--model", "mystery", "--base-url", server.openai_url]
    done = agent_tui(
        "run", "--prompt", "hi", "--cwd", str(project(tmp_path)), *model, "--sessions-dir",
        str(tmp_path / "s"), "--budget", "1", env=clean_env(AGENT_TUI_CONFIG=str(tmp_path / "none.toml")),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "cannot be checked" in line]
    assert said == [
        "agent-tui: the price of model mystery is unknown, so a dollar budget cannot be checked for it "
        '(add it to the config as [prices."MODEL"]; a token budget still holds)'
    ]


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--budget", "-1"], "argument --budget: expected a positive number of dollars, like 2.50, got '-1'"),
        (
            ["--budget", "lots"],
            "argument --budget: expected a positive number of dollars, like 2.50, got 'lots'",
        ),
        (["--budget", "nan"], "argument --budget: expected a positive number of dollars"),
        (
            ["--budget-tokens", "1.5"],
            "argument --budget-tokens: expected a positive whole number of tokens, like 500000, got '1.5'",
        ),
        (["--budget-tokens", "0"], "argument --budget-tokens: expected a positive whole number of tokens"),
        (
            ["--budget", "inf"],
            "argument --budget: expected a positive number of dollars, like 2.50, got 'inf'",
        ),
        (["--budget", "1e999"], "argument --budget: expected a positive number of dollars"),
        (["--budget", "-0"], "argument --budget: expected a positive number of dollars"),
        (
            ["--budget-tokens", "18446744073709551616"],
            "argument --budget-tokens: expected at most 9,007,199,254,740,991 tokens, "
            "got '18446744073709551616'",
        ),
        (
            ["--budget-tokens", str(2**53)],
            f"argument --budget-tokens: expected at most 9,007,199,254,740,991 tokens, got '{2**53}'",
        ),
        (["--budget-tokens", "-5"], "argument --budget-tokens: expected a positive whole number of tokens"),
        (["--budget-tokens", "9" * 5000], "argument --budget-tokens: expected a positive whole number"),
    ],
)
def test_run_refuses_a_bad_budget(tmp_path: Path, flags: list[str], said: str) -> None:
    logs = tmp_path / "logs"
    done = agent_tui(
        "run", "--prompt", "hi", "--cwd", str(tmp_path), "--sessions-dir", str(logs), *flags, env=clean_env()
    )
    assert done.returncode == 2
    assert said in done.stderr
    assert "Traceback" not in done.stderr
    assert not logs.exists()  # refused before a session (and its log) was begun


def test_the_largest_token_budget_is_kept_exactly(tmp_path: Path, server: Any) -> None:
    server.script(Stream(openai_stream(["fine"], usage=SMALL)))
    model = ["--provider", "openai", "--model", "test-model", "--base-url", server.openai_url]
    done = agent_tui(
        "run", "--prompt", "hi", "--cwd", str(project(tmp_path)), *model, "--sessions-dir",
        str(tmp_path / "s"), "--budget-tokens", str(MAX_TOKENS), env=clean_env(AGENT_TUI_CONFIG=str(tmp_path / "none.toml")),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (path,) = (tmp_path / "s").glob("*.jsonl")
    first = next(iter(JsonlEventLog(path).replay("strict")))
    assert first.payload["budget"] == {"tokens": 2**53 - 1}


def test_an_event_json_cannot_hold_leaves_no_log(tmp_path: Path) -> None:
    """The store writes nothing, not even the file, for an event it cannot write as JSON (how
    a budget past 64 bits once left a log with no first line)."""
    path = tmp_path / "sess_x.jsonl"
    log = JsonlEventLog(path)
    event = Event(
        id="evt_x_1", session_id="sess_x", turn_id=None, sequence=1, ts="2026-01-01T00:00:00.000Z",
        type="session.created", payload={"cwd": "/", "client": "agent-tui", "budget": {"tokens": 2**64}},
    )  # fmt: skip
    with pytest.raises(TypeError):
        log.append(event)
    log.close()
    assert list(tmp_path.iterdir()) == []


def test_a_budget_goes_with_a_prompt_run(tmp_path: Path) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text("{}")
    done = agent_tui("run", str(scenario), "--sessions-dir", str(tmp_path), "--budget", "1", env=clean_env())
    assert done.returncode == 2
    assert "--budget and --budget-tokens go with --prompt" in done.stderr


# -- the config file -----------------------------------------------------------------------------
class TestConfig:
    def test_a_profiles_budget_over_the_default_limit_by_limit(self, tmp_path: Path) -> None:
        path = _config(
            tmp_path,
            '[budget]\nusd = 5\ntokens = 1000\n\n[profiles.work]\nprovider = "openai"\nmodel = "m"\n\n'
            '[profiles.work.budget]\nusd = 2.5\n\n[profiles.free]\nmodel = "m"\n',
        )
        config = load_config(path)
        work = resolve_settings(config, profile="work", env={})
        free = resolve_settings(config, profile="free", env={})
        assert work is not None and work.budget == BudgetLimit(usd=2.5, tokens=1000)
        assert free is not None and free.budget == BudgetLimit(usd=5.0, tokens=1000)

    @pytest.mark.parametrize(
        ("text", "said"),
        [
            ('[budget]\nusd = "two"\n', ":2: budget.usd: expected a positive number of dollars, got 'two'"),
            (
                "[budget]\ntokens = 0\n",
                ":2: budget.tokens: expected a positive whole number of tokens, got 0",
            ),
            ("[budget]\ndollars = 3\n", ":2: budget.dollars: unknown setting (known: usd, tokens)"),
            ("budget = 3\n", ":1: budget must be a table: [budget] usd = 2.50, tokens = 500000"),
            (
                '[profiles.a]\nmodel = "m"\n[profiles.a.budget]\nusd = -1\n',
                ":4: profiles.a.budget.usd: expected a positive number of dollars, got -1",
            ),
            (
                "[budget]\ntokens = 9223372036854775807\n",
                ":2: budget.tokens: expected at most 9,007,199,254,740,991 tokens, got 9223372036854775807",
            ),
            (
                "[budget]\ntokens = 1.5\n",
                ":2: budget.tokens: expected a positive whole number of tokens, got 1.5",
            ),
            (
                "[budget]\ntokens = true\n",
                ":2: budget.tokens: expected a positive whole number of tokens, got True",
            ),
            ("[budget]\nusd = nan\n", ":2: budget.usd: expected a positive number of dollars, got nan"),
            ("\n[budget]\nusd = inf\n", ":3: budget.usd: expected a positive number of dollars, got inf"),
            ('[budget]\nusd = "2"\n', ":2: budget.usd: expected a positive number of dollars, got '2'"),
        ],
    )
    def test_a_bad_budget_names_its_file_and_line(self, tmp_path: Path, text: str, said: str) -> None:
        path = _config(tmp_path, text)
        with pytest.raises(ConfigError) as caught:
            load_config(path)
        assert str(caught.value) == f"{path}{said}"


# -- the workbench (the dashboard's door) --------------------------------------------------------
async def test_a_new_agents_budget_is_the_forms_over_its_models_default(tmp_path: Path, server: Any) -> None:
    from agent_tui.runtime.agent_requests import AgentSpec, BudgetRefused
    from agent_tui.runtime.model_router import ModelChoice
    from agent_tui.runtime.workbench import Workbench

    server.script(Stream(openai_stream(["hi"], usage=SMALL)), Stream(openai_stream(["hi"], usage=SMALL)))
    engine = engine_on(tmp_path, server.openai_url)
    choice = ModelChoice(
        "work", "openai · test-model", build=lambda: engine.provider, model="test-model",
        budget=BudgetLimit(usd=5.0, tokens=1000),
    )  # fmt: skip
    bench = Workbench(engine, project=tmp_path, sessions_dir=tmp_path / "sessions", models=[choice])
    try:
        async with bench.serving():
            own = await bench.start_agent(AgentSpec("say hi", project(tmp_path), budget=BudgetLimit(usd=1.0)))
            default = await bench.start_agent(AgentSpec("say hi", tmp_path / "project"))
            await wait_all(engine)
            await bench.set_budget(own, BudgetLimit(tokens=50), by="dashboard")
            with pytest.raises(BudgetRefused, match="not open here"):
                await bench.set_budget("sess_nope", None)
    finally:
        await close(engine)
    assert log(tmp_path, own)[0].payload["budget"] == {"usd": 1.0, "tokens": 1000}
    assert log(tmp_path, default)[0].payload["budget"] == {"usd": 5.0, "tokens": 1000}
    assert log(tmp_path, own)[-1].payload == {"tokens": 50, "by": "dashboard"}
