"""What agents cost, end to end: a real loopback model server reports usage, the engine writes a
`model.usage` per call priced from the table (the user's `[prices]` over the shipped ones), the
turn's total lands on `turn.completed`, and the reducer, `--dump state` and `agent-tui sessions`
add it up, through sub-agents. An unknown model shows its tokens and "price unknown".
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from fake_model_server import (
    ANTHROPIC_MODEL,
    OPENAI_MODEL,
    VENDORS,
    FakeModelServer,
    Status,
    Stream,
    anthropic_stream,
    asked,
    openai_stream,
    vendor_stream,
)
from support_providers import (  # noqa: F401 - fake_model_server: the `server` fixture
    FAKE_KEY,
    agent_tui,
    clean_env,
    fake_model_server,
    play,
    project,
    prompt_run,
)
from support_reducer import SessionLog

from agent_tui.costs.prices import Price, PriceTable, shipped_prices
from agent_tui.costs.wording import usd_text
from agent_tui.engine.questions import Questions, fixed_answer
from agent_tui.engine.scenario import Scenario
from agent_tui.events.chains import chain_violations
from agent_tui.events.model import ModelUsage, Usage
from agent_tui.providers.config import DEFAULT_KEY_ENV, ConfigError, load_config
from agent_tui.reducer import project_state
from agent_tui.replay.sources import replay_all
from agent_tui.runtime.runner import ScenarioRun
from agent_tui.store import JsonlEventLog

LIST_DIR = ("call_ls1", "list_dir", ['{"path": "."}'])


def _types(events: list[Any]) -> list[str]:
    return [e.type for e in events]


def _usages(events: list[Any]) -> list[dict[str, Any]]:
    return [e.payload for e in events if e.type == "model.usage"]


# -- the price table and config.toml --------------------------------------------------------------


class TestPriceConfig:
    def test_config_prices_replace_a_shipped_model_and_add_one(self, tmp_path: Path) -> None:
        path = tmp_path / "config.toml"
        path.write_text(
            textwrap.dedent(
                """\
                [prices."claude-sonnet-4-5"]
                input = 2.0
                output = 10.0

                [prices."my-local-llama"]
                input = 0.1
                cached_input = 0.01
                cache_write = 0.2
                output = 0.3
                """
            )
        )
        table = load_config(path).price_table()
        assert table.lookup("claude-sonnet-4-5-20250929") == Price(input=2.0, output=10.0)
        assert table.lookup("my-local-llama") == Price(0.1, 0.3, cached_input=0.01, cache_write=0.2)
        # the user's price wins over the maintained one; the rest are priced as the table says
        assert table.cost_usd("claude-sonnet-4-5", 1_000_000, 0) == 2.0
        assert shipped_prices().cost_usd("claude-sonnet-4-5", 1_000_000, 0) != 2.0
        assert table.cost_usd("gpt-4.1", 1000, 10) == shipped_prices().cost_usd("gpt-4.1", 1000, 10)
        assert table.cost_usd("gpt-4.1", 1000, 10) is not None

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("prices = 3\n", ":1: prices must be a table of models"),
            ('[prices]\n"m" = 2\n', ":2: prices.m must be a table"),
            ('[prices."m"]\ninput = 1\noutput = "cheap"\n', ":3: prices.m: output must be a number"),
            ('[prices."m"]\ninput = -1\noutput = 1\n', ":2: prices.m: input must be a number"),
            (
                '[prices."m"]\ninput = 1\noutput = 1\ncache_read = 0.1\n',
                ":4: prices.m: unknown key 'cache_read'",
            ),
            ('\n[prices."m"]\ninput = 1\n', ":2: prices.m: output is missing"),
        ],
    )
    def test_a_bad_price_names_the_file_and_line(self, tmp_path: Path, text: str, expected: str) -> None:
        path = tmp_path / "config.toml"
        path.write_text(text)
        with pytest.raises(ConfigError) as caught:
            load_config(path)
        assert str(caught.value).startswith(f"{path}{expected}"), caught.value

    def test_the_shipped_prices_are_the_maintained_tables_and_nothing_of_ours(self) -> None:
        table = shipped_prices()
        assert table.prices == {} and table.maintained is not None
        for family in (
            "claude-opus-4-1",
            "claude-sonnet-4-5",
            "claude-haiku-4-5",
            "gpt-5",
            "gpt-4.1",
            "gpt-4o",
            "o3",
        ):
            assert table.cost_usd(family, 1000, 100) is not None, family

    def test_a_name_is_found_without_its_provider_prefix_or_date_but_never_loosely(self) -> None:
        table = shipped_prices()
        cost = table.cost_usd("claude-sonnet-4-5", 1000, 10)
        assert cost is not None and table.cost_usd("anthropic/claude-sonnet-4-5", 1000, 10) == cost
        assert table.cost_usd("gpt-4.1-mini-2025-04-14", 1000, 10) == table.cost_usd("gpt-4.1-mini", 1000, 10)
        assert table.cost_usd("gpt-4.1-mini-turbo", 1000, 10) is None
        assert table.cost_usd("no-such-model", 1000, 10) is None


# -- the engine against a real server -------------------------------------------------------------


class TestThroughTheServer:
    def test_openai_each_call_gets_its_usage_right_after_its_stream(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        server.script(
            Stream(openai_stream(["Looking."], [LIST_DIR], usage=(5000, 20, 0))),
            Stream(openai_stream(["It has README.md and src/."], usage=(400, 12, 256))),
        )
        result, events = play(prompt_run(tmp_path, "openai", server.openai_url, approve="allow"))
        assert result.stop_reason == "final"
        assert chain_violations(events) == []
        kinds = _types(events)
        first, second = [i for i, kind in enumerate(kinds) if kind == "model.usage"]
        # after the call's stream (its text, its tool request), before its tool runs
        assert kinds[first - 2 : first + 2] == [
            "model.delta",
            "model.tool_call_requested",
            "model.usage",
            "permission.requested",
        ]
        assert kinds[second - 1 : second + 2] == ["model.delta", "model.usage", "turn.completed"]
        # gpt-4.1-mini: $0.40 input, $0.10 cached input, $1.60 output per million tokens
        one, two = _usages(events)
        assert one == {"step": 1, "promptTokens": 5000, "completionTokens": 20, "cachedTokens": 0,
                       "costUsd": pytest.approx((5000 * 0.4 + 20 * 1.6) / 1e6)}  # fmt: skip
        assert two == {"step": 2, "promptTokens": 400, "completionTokens": 12, "cachedTokens": 256,
                       "costUsd": pytest.approx((144 * 0.4 + 256 * 0.1 + 12 * 1.6) / 1e6)}  # fmt: skip
        total = events[-1].payload["usage"]
        assert total["costUsd"] == pytest.approx(one["costUsd"] + two["costUsd"])
        spend = project_state(events).sessions[events[0].session_id].spend
        assert (spend.prompt_tokens, spend.completion_tokens, spend.cached_tokens) == (5400, 32, 256)
        assert spend.cost_usd == pytest.approx(total["costUsd"]) and spend.fully_priced

    def test_an_exported_turn_says_its_tokens_and_cost(self, server: FakeModelServer, tmp_path: Path) -> None:
        server.script(Stream(anthropic_stream(["Done."], usage=(100, 20, 300, 50))))
        _, events = play(prompt_run(tmp_path, "anthropic", server.anthropic_url))
        log = tmp_path / "sessions" / f"{events[0].session_id}.jsonl"
        done = agent_tui("export", str(log), "--format", "md", "--out", str(tmp_path / "out.md"))
        assert done.returncode == 0, done.stderr
        text = (tmp_path / "out.md").read_text()
        expected = usd_text((100 * 3 + 300 * 0.3 + 50 * 3.75 + 20 * 15) / 1e6)
        assert f"tokens: 450 in, 300 cached, 50 written to the cache, 20 out · cost {expected}" in text

    def test_anthropic_cache_writes_are_charged_at_their_price(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        # 100 uncached input, 20 output, 300 read from the cache, 50 written to it
        server.script(Stream(anthropic_stream(["Done."], usage=(100, 20, 300, 50))))
        _, events = play(prompt_run(tmp_path, "anthropic", server.anthropic_url))
        assert chain_violations(events) == []
        (used,) = _usages(events)
        # claude-sonnet-4-5: $3 input, $0.30 cache read, $3.75 cache write, $15 output per million
        expected = (100 * 3 + 300 * 0.3 + 50 * 3.75 + 20 * 15) / 1e6
        assert used == {"step": 1, "promptTokens": 450, "completionTokens": 20, "cachedTokens": 300,
                        "cacheWriteTokens": 50, "costUsd": pytest.approx(expected)}  # fmt: skip
        assert events[-1].payload["usage"] == {"promptTokens": 450, "completionTokens": 20,
            "cachedTokens": 300, "cacheWriteTokens": 50, "costUsd": pytest.approx(expected)}  # fmt: skip

    @pytest.mark.parametrize("vendor", VENDORS)
    def test_an_unknown_model_keeps_its_tokens_and_has_no_price(
        self, server: FakeModelServer, tmp_path: Path, vendor: str
    ) -> None:
        named = OPENAI_MODEL if vendor == "openai" else ANTHROPIC_MODEL
        frames = [f.replace(named.encode(), b"my-local-llama") for f in vendor_stream(vendor, ["Hi."])]
        server.script(Stream(frames))
        _, events = play(prompt_run(tmp_path, vendor, _url(server, vendor)))
        (used,) = _usages(events)
        assert (used["promptTokens"], used["completionTokens"]) == (12, 5) and "costUsd" not in used
        assert "costUsd" not in events[-1].payload["usage"]
        dump = project_state(events).to_state_dump()["sessions"][0]
        assert dump["costUsd"] is None and dump["tokens"]["unpriced"] == 17

    def test_a_turn_that_fails_mid_way_keeps_the_calls_already_made(
        self, server: FakeModelServer, tmp_path: Path
    ) -> None:
        broken = Status(500, {"error": {"message": "the model is down", "type": "server_error"}})
        server.script(
            Stream(openai_stream(["Looking."], [LIST_DIR], usage=(5000, 20, 0))), broken, broken, broken
        )
        result, events = play(prompt_run(tmp_path, "openai", server.openai_url, approve="allow"))
        assert (result.stop_reason, events[-1].payload["errorCode"]) == ("error", "provider_failure")
        assert chain_violations(events) == []
        (used,) = _usages(events)
        assert used["step"] == 1 and used["costUsd"] == pytest.approx((5000 * 0.4 + 20 * 1.6) / 1e6)
        usage = events[-1].payload["usage"]
        assert (usage["promptTokens"], usage["costUsd"]) == (5000, used["costUsd"])

    @pytest.mark.parametrize(
        ("vendor", "model"), [("openai", "gpt-4.1-mini"), ("anthropic", "claude-sonnet-4-5")]
    )
    def test_the_price_in_config_toml_prices_a_run(self, tmp_path: Path, vendor: str, model: str) -> None:
        config = tmp_path / "config.toml"
        config.write_text(f'[prices."{model}"]\ninput = 100.0\ncached_input = 10.0\noutput = 1000.0\n')
        with FakeModelServer() as server:
            server.script(Stream(vendor_stream(vendor, ["Nothing to do."], usage=(1000, 50, 200))))
            done = agent_tui(
                "run", "--prompt", "Look around", "--cwd", str(project(tmp_path)),
                "--sessions-dir", str(tmp_path / "s"), "--provider", vendor, "--model", model,
                "--base-url", _url(server, vendor),
                env=clean_env(AGENT_TUI_CONFIG=str(config), XDG_DATA_HOME=str(tmp_path / "data"),
                              **{DEFAULT_KEY_ENV[vendor]: FAKE_KEY}),
            )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        (log,) = (tmp_path / "s").glob("*.jsonl")
        events = list(JsonlEventLog(log).replay("strict"))
        expected = (1000 * 100 + 200 * 10 + 50 * 1000) / 1e6  # the config's prices, not the shipped
        assert _usages(events)[0]["costUsd"] == pytest.approx(expected)
        assert events[-1].payload["usage"]["costUsd"] == pytest.approx(expected)
        assert f"completion tokens, 200 cached, {usd_text(expected)})" in done.stdout


def _url(server: FakeModelServer, vendor: str) -> str:
    return server.openai_url if vendor == "openai" else server.anthropic_url


# -- sub-agents: the tree's total -----------------------------------------------------------------

SCRIPTED = Price(input=1000.0, output=2000.0)
"""A price for the scripted model, so a scenario's calls cost something."""


def _spawn_and_wait(child: str) -> list[dict[str, Any]]:
    return [
        {"text": [f"asking {child}"], "toolCalls": [{"tool": "spawn_agent", "args": {"agentName": child, "prompt": "go"}}]},
        {"text": ["waiting"], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
        {"text": [f"{child} is done"]},
    ]  # fmt: skip


def _three_levels(tmp_path: Path) -> Path:
    """lead → planner → coder → tester, every call priced: the sessions directory."""
    (tmp_path / "work").mkdir()
    spec = {
        "policy": {"default": "allow"},
        "maxDepth": 4,
        "sessions": [{"title": "lead", "agentName": "lead", "cwd": "work", "prompt": "ship it",
                      "steps": _spawn_and_wait("planner")}],
        "agents": {
            "planner": {"steps": _spawn_and_wait("coder")},
            "coder": {"steps": _spawn_and_wait("tester")},
            "tester": {"steps": [{"text": ["all tests pass"]}]},
        },
    }  # fmt: skip
    run = ScenarioRun(
        Scenario.model_validate(spec),
        base_dir=tmp_path,
        sessions_dir=tmp_path / "sessions",
        questions=Questions(fixed_answer("allow")),
        workspace_root=tmp_path / "scratch",
        prices=PriceTable({"scripted": SCRIPTED}),
    )

    async def go() -> None:
        async with run.engine:
            result = await run.play()
        assert result.all_ended

    anyio.run(go)
    run.close()
    return tmp_path / "sessions"


class TestSubAgents:
    def test_the_tree_total_rolls_up_three_levels_in_the_state_and_its_dump(self, tmp_path: Path) -> None:
        sessions = _three_levels(tmp_path)
        events = list(replay_all(sessions, "strict"))
        assert chain_violations(events) == []
        own: dict[str, float] = {}
        parent: dict[str, str | None] = {}
        for event in events:
            if event.type == "session.created":
                parent[event.session_id] = event.payload.get("parentSessionId")
            if event.type == "model.usage":
                p = event.payload
                assert p["costUsd"] == pytest.approx(
                    SCRIPTED.cost_usd(p["promptTokens"], p["completionTokens"])
                )
                own[event.session_id] = own.get(event.session_id, 0.0) + p["costUsd"]
        assert len(own) == 4 and all(cost > 0 for cost in own.values())

        def tree(sid: str) -> float:
            return own[sid] + sum(tree(child) for child, up in parent.items() if up == sid)

        state = project_state(events)
        for sid in own:
            assert state.sessions[sid].spend.cost_usd == pytest.approx(own[sid])
            assert state.tree_spend(sid).cost_usd == pytest.approx(tree(sid))
        (root,) = [sid for sid, up in parent.items() if up is None]
        assert tree(root) == pytest.approx(sum(own.values()))
        done = agent_tui("replay", str(sessions), "--dump", "state")
        assert done.returncode == 0, done.stderr
        dumped = {s["sessionId"]: s for s in orjson.loads(done.stdout)["sessions"]}
        for sid in own:
            assert dumped[sid]["costUsd"] == pytest.approx(own[sid], abs=1e-6)
            assert dumped[sid]["treeCostUsd"] == pytest.approx(tree(sid), abs=1e-6)
        dumped_events = [
            orjson.loads(line)
            for line in agent_tui("replay", str(sessions), "--dump", "events").stdout.splitlines()
        ]
        assert sum(1 for e in dumped_events if e["type"] == "model.usage") == sum(1 for e in events if e.type == "model.usage")  # fmt: skip

    def test_agent_tui_sessions_lists_each_cost_and_the_days_total(self, tmp_path: Path) -> None:
        sessions = _three_levels(tmp_path)
        events = list(replay_all(sessions, "strict"))
        own: dict[str, float] = {}
        for event in events:
            if event.type == "model.usage":
                own[event.session_id] = own.get(event.session_id, 0.0) + event.payload["costUsd"]
        done = agent_tui("sessions", "--sessions-dir", str(sessions), env=clean_env(TZ="UTC"))
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        for sid, cost in own.items():
            (line,) = [line for line in lines if line.split()[1:2] == [sid]]
            assert line.endswith(f"  · {usd_text(cost)}")
        (day,) = [line for line in lines if line[:4].isdigit() and "-" in line[:8]]
        assert day.endswith(usd_text(sum(own.values())))


# (uncached prompt, output, cache reads) tokens of each call of each agent, and the shipped
# prices they are worked out at by hand (dollars per million: input, cached input, output)
TREE_CALLS = {
    "lead": [(3000, 100, 1000), (500, 40, 3500)],
    "planner": [(2000, 80, 0), (400, 30, 2000)],
    "coder": [(1500, 60, 500), (300, 20, 1500)],
    "tester": [(1000, 50, 200)],
}
HAND_PRICES = {
    "openai": (0.40, 0.10, 1.60),
    "anthropic": (3.0, 0.30, 15.0),
}  # gpt-4.1-mini, claude-sonnet-4-5
BELOW = {"lead": "planner", "planner": "coder", "coder": "tester"}


def _by_hand(vendor: str, agent: str) -> float:
    fresh_price, cached_price, output_price = HAND_PRICES[vendor]
    return sum(
        (fresh * fresh_price + cached * cached_price + output * output_price) / 1e6
        for fresh, output, cached in TREE_CALLS[agent]
    )


class TestSubAgentsOnAServer:
    @pytest.mark.parametrize("vendor", VENDORS)
    def test_three_levels_of_sub_agents_roll_up_what_each_call_reported(
        self, server: FakeModelServer, tmp_path: Path, vendor: str
    ) -> None:
        prompts = {
            "lead": "What is in this project?",
            "planner": "plan it",
            "coder": "code it",
            "tester": "test it",
        }
        for agent, child in BELOW.items():
            first, last = TREE_CALLS[agent]
            spawn = json.dumps({"agentName": child, "prompt": prompts[child]})
            server.route(
                asked(prompts[agent]),
                Stream(vendor_stream(vendor, calls=[(f"spawn_{child}", "spawn_agent", [spawn]),
                                                    (f"wait_{child}", "wait_agent", ["{}"])], usage=first)),
                Stream(vendor_stream(vendor, [f"{child} is done"], usage=last)),
            )  # fmt: skip
        server.route(
            asked("test it"), Stream(vendor_stream(vendor, ["all tests pass"], usage=TREE_CALLS["tester"][0]))
        )
        result, _ = play(prompt_run(tmp_path, vendor, _url(server, vendor), approve="allow"))
        assert result.stop_reason == "final"
        events = list(replay_all(tmp_path / "sessions", "strict"))
        assert chain_violations(events) == []
        state = project_state(events)
        ids = {(view.agent_name or "lead"): sid for sid, view in state.sessions.items()}
        assert ids["lead"] == result.session_id and len(ids) == 4
        tree = {"tester": _by_hand(vendor, "tester")}
        for agent in ("coder", "planner", "lead"):
            tree[agent] = _by_hand(vendor, agent) + tree[BELOW[agent]]
        dumped = {s["sessionId"]: s for s in state.to_state_dump()["sessions"]}
        for agent, sid in ids.items():
            assert state.sessions[sid].spend.cost_usd == pytest.approx(_by_hand(vendor, agent)), agent
            assert state.tree_spend(sid).cost_usd == pytest.approx(tree[agent]), agent
            assert dumped[sid]["costUsd"] == pytest.approx(_by_hand(vendor, agent), abs=1e-6)
            assert dumped[sid]["treeCostUsd"] == pytest.approx(tree[agent], abs=1e-6)
        cached = sum(call[2] for calls in TREE_CALLS.values() for call in calls)
        assert state.tree_spend(ids["lead"]).cached_tokens == cached
        assert state.total_spend().cost_usd == pytest.approx(tree["lead"])


def test_usage_of_calls_sums_tokens_and_prices_only_when_every_call_had_one() -> None:
    calls = [
        ModelUsage(step=1, promptTokens=10, completionTokens=2, cachedTokens=4, costUsd=0.5),
        ModelUsage(step=2, promptTokens=20, completionTokens=3, cacheWriteTokens=6, costUsd=0.25),
    ]
    assert Usage.of_calls(calls) == Usage(
        promptTokens=30, completionTokens=5, cachedTokens=4, cacheWriteTokens=6, costUsd=0.75
    )
    unpriced = [*calls, ModelUsage(step=3, promptTokens=1, completionTokens=1)]
    assert Usage.of_calls(unpriced) == Usage(
        promptTokens=31, completionTokens=6, cachedTokens=4, cacheWriteTokens=6
    )
    assert Usage.of_calls([]) is None


def test_a_usage_is_written_one_way_and_a_priced_call_is_made_one_way() -> None:
    """`Usage.fields` is the one written form (unset fields left out, the log's key order); a
    model call's is the same with its step first; `ModelUsage.priced` prices it or leaves the
    cost out for a model the table does not know."""
    table = PriceTable({"m": Price(input=1.0, output=2.0, cached_input=0.5, cache_write=4.0)})
    known = ModelUsage.priced(table, 3, "m", 1_000_000, 1_000_000, 200_000, 100_000)
    assert list(known.fields()) == [
        "step",
        "promptTokens",
        "completionTokens",
        "cachedTokens",
        "cacheWriteTokens",
        "costUsd",
    ]
    assert known.costUsd == pytest.approx(0.7 + 0.1 + 0.4 + 2.0)
    unknown = ModelUsage.priced(table, 1, "not-in-the-table", 5, 7)
    assert unknown.fields() == {"step": 1, "promptTokens": 5, "completionTokens": 7}
    total = Usage.of_calls([known, unknown])
    assert total is not None and total.fields() == {
        "promptTokens": 1_000_005,
        "completionTokens": 1_000_007,
        "cachedTokens": 200_000,
        "cacheWriteTokens": 100_000,
    }
    assert ModelUsage.model_validate(known.fields()) == known  # read back from the log as written


# -- the chain rules of model.usage and session.budget -------------------------------------------


def _turn_with_calls(client: str = "agent-tui") -> SessionLog:
    log = SessionLog("sess_c", created=False)
    log.emit("session.created", None, cwd="/w", client=client)
    log.emit("turn.started", "turn_1", promptPreview="go")
    log.emit("user.message", "turn_1", content="go")
    return log


def _built(log: SessionLog, step: int) -> None:
    log.emit(
        "context.built", "turn_1", step=step, tokens={"instruction": 1, "transcript": 1, "tools": 1},
        maxContextTokens=100,
    )  # fmt: skip


class TestChains:
    def test_a_call_usage_names_the_step_of_the_latest_context(self) -> None:
        log = _turn_with_calls()
        _built(log, 1)
        log.emit("model.delta", "turn_1", text="hi")
        log.emit("model.usage", "turn_1", step=1, promptTokens=1, completionTokens=1)
        log.emit("session.budget", "turn_1", usd=2.0, by="dashboard")
        log.emit("turn.completed", "turn_1", stopReason="final")
        log.emit("session.budget", None, usd=3.0, by="dashboard")
        assert chain_violations(log.events) == []

    def test_a_usage_for_another_step_or_twice_for_one_is_a_violation(self) -> None:
        log = _turn_with_calls()
        _built(log, 1)
        log.emit("model.delta", "turn_1", text="hi")
        log.emit("model.usage", "turn_1", step=2, promptTokens=1, completionTokens=1)
        _built(log, 2)
        log.emit("model.usage", "turn_1", step=2, promptTokens=1, completionTokens=1)
        log.emit("model.usage", "turn_1", step=2, promptTokens=1, completionTokens=1)
        log.emit("turn.completed", "turn_1", stopReason="final")
        assert chain_violations(log.events) == [
            "sess_c#6 model.usage: step 2 is not the step of the latest context.built (1)",
            "sess_c#9 model.usage: step 2 after the usage of step 2",
        ]

    def test_an_imported_turn_has_no_context_only_rising_steps(self) -> None:
        log = _turn_with_calls(client="claude-code")
        log.emit("model.delta", "turn_1", text="hi")
        log.emit("model.usage", "turn_1", step=1, promptTokens=1, completionTokens=1)
        log.emit("model.usage", "turn_1", step=2, promptTokens=1, completionTokens=1)
        log.emit("model.usage", "turn_1", step=1, promptTokens=1, completionTokens=1)
        log.emit("turn.completed", "turn_1", stopReason="final")
        assert chain_violations(log.events) == ["sess_c#7 model.usage: step 1 after the usage of step 2"]

    def test_a_budget_without_a_turn_while_one_is_open_is_a_violation(self) -> None:
        log = _turn_with_calls()
        log.emit("session.budget", None, tokens=10, by="dashboard")
        assert chain_violations(log.events, complete=False) == [
            "sess_c#4 session.budget: a budget without a turnId while turn turn_1 is open"
        ]


def test_the_import_path_writes_what_the_models_write() -> None:
    """An import prices and totals calls without making models (`priced_fields`, `of_written`):
    the same payloads, key order included, as `priced(...).fields()` and `of_calls`."""
    table = PriceTable({"m": Price(input=1.0, output=2.0, cached_input=0.5, cache_write=4.0)})
    calls = [(1, "m", 1_000, 20, 300, 40), (2, "m", 7, 1, None, None), (3, "unknown-model", 5, 0, 2, None)]
    made = [ModelUsage.priced(table, *call) for call in calls]
    written = [ModelUsage.priced_fields(table, *call) for call in calls]
    assert [list(fields.items()) for fields in written] == [list(m.fields().items()) for m in made]
    assert Usage.of_written(written) == Usage.of_calls(made) and Usage.of_written([]) is None
    assert Usage.of_written(written[:2]) == Usage.of_calls(made[:2])


def test_a_table_remembers_what_a_name_found_and_an_override_is_another_table() -> None:
    sonnet = Price(input=3.0, output=15.0)
    table = PriceTable({"claude-sonnet-4-5": sonnet})
    for _ in range(2):  # the second look-up is the remembered one
        assert table.lookup("anthropic/claude-sonnet-4-5-20250929") is sonnet
        assert table.lookup("claude-sonnet-4-5-x") is None
        assert table.cost_usd("house-model", 1, 1) is None
    house = Price(input=1.0, output=1.0)
    mine = table.with_overrides({"house-model": house, "claude-sonnet-4-5": Price(input=2.0, output=2.0)})
    assert mine.lookup("house-model") is house and mine.cost_usd("house-model", 1_000_000, 0) == 1.0
    assert mine.lookup("claude-sonnet-4-5-20250929") == Price(input=2.0, output=2.0)
    assert table.lookup("house-model") is None and table.lookup("claude-sonnet-4-5") is sonnet
