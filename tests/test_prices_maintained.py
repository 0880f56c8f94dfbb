"""Prices from the maintained table (`genai-prices`): a known model costs what the library says,
the user's `[prices]` win, a model nobody knows says "price unknown", a model served through an
OpenAI-compatible endpoint of one's own is priced by its name, a cost once in a log is never priced
again, the library is imported only when a price is needed, and nothing is fetched from the network.
"""

from __future__ import annotations

import functools
import random
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import orjson
import pytest
from fake_model_server import OPENAI_MODEL, FakeModelServer, Stream, openai_stream
from genai_prices import Usage, calc_price
from support_providers import FAKE_KEY, agent_tui, clean_env, project

from agent_tui.costs.maintained import LONGEST_NAME, REMEMBERED, MaintainedPrices
from agent_tui.costs.prices import REMEMBERED_COSTS, Price, PriceTable, shipped_prices
from agent_tui.providers.config import DEFAULT_KEY_ENV, load_config
from agent_tui.store import JsonlEventLog

NOON = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
NIGHT = datetime(2026, 6, 1, 20, 0, tzinfo=UTC)  # DeepSeek's off-peak hours (16:30 to 00:30 UTC)


def library(
    model: str, prompt: int, completion: int, cached: int = 0, written: int = 0, at: datetime = NOON
) -> float:
    usage = Usage(
        input_tokens=prompt, cache_read_tokens=cached, cache_write_tokens=written, output_tokens=completion
    )
    return float(calc_price(usage, model, genai_request_timestamp=at).total_price)


class TestTheTable:
    @pytest.mark.parametrize(
        ("model", "calls"),
        [
            ("claude-sonnet-4-5", [(1000, 100, 200, 50), (300_000, 100, 0, 0)]),  # the long-prompt tier
            ("claude-sonnet-4-5-20250929", [(1000, 100, 200, 50)]),
            ("gpt-4.1-mini", [(5000, 20, 0, 0), (400, 12, 256, 0)]),
            ("gpt-4.1-mini-2025-04-14", [(400, 12, 256, 0)]),
            ("o3", [(1000, 1000, 0, 0)]),
            ("gemini-2.5-flash", [(1000, 100, 0, 0)]),
            ("deepseek-chat", [(1000, 100, 300, 0)]),
        ],
    )
    def test_a_known_model_costs_what_the_library_says(
        self, model: str, calls: list[tuple[int, int, int, int]]
    ) -> None:
        for at in (NOON, NIGHT):
            table = PriceTable({}, MaintainedPrices(clock=functools.partial(lambda moment: moment, at)))
            for prompt, completion, cached, written in calls:
                expected = library(model, prompt, completion, cached, written, at)
                assert expected > 0
                assert table.cost_usd(model, prompt, completion, cached, written) == pytest.approx(
                    expected, rel=1e-12
                )

    def test_every_model_of_the_table_costs_what_the_library_computes(self) -> None:
        """Plain token prices are read once as floats (pricing an import's calls must be cheap);
        every model, tiers and all, still costs what the library's own arithmetic says."""
        from genai_prices.data_snapshot import get_snapshot

        rng = random.Random(36)
        checked = 0
        for provider in get_snapshot().providers:
            for info in provider.models:
                prices = MaintainedPrices(clock=lambda: NOON)
                prices._found[info.id] = (provider, info)  # this vendor's, not the one its name finds first
                for prompt in (rng.randint(1, 5_000), rng.randint(150_000, 1_500_000)):
                    cached = rng.randint(0, prompt)
                    written = rng.randint(0, prompt - cached)
                    completion = rng.randint(0, 10_000)
                    usage = Usage(
                        input_tokens=prompt,
                        cache_read_tokens=cached,
                        cache_write_tokens=written,
                        output_tokens=completion,
                    )
                    try:
                        expected = float(
                            info.calc_price(usage, provider, genai_request_timestamp=NOON).total_price
                        )
                    except ValueError:  # a price the library cannot apply to tokens alone
                        continue
                    got = prices.cost_usd(info.id, prompt, completion, cached, written)
                    assert got == pytest.approx(expected, rel=1e-9, abs=1e-15), (provider.id, info.id, prompt)
                    checked += 1
        assert checked > 1000

    def test_the_numbers_are_the_vendors(self) -> None:
        """A check on the comparison itself: gpt-4.1 at $2 input, $0.50 cached, $8 output per million."""
        table = PriceTable({}, MaintainedPrices(clock=lambda: NOON))
        assert table.cost_usd("gpt-4.1", 1_000_000, 1_000_000, 500_000) == pytest.approx(
            2 * 0.5 + 0.5 * 0.5 + 8
        )

    def test_a_price_that_changed_on_a_date_and_one_that_depends_on_the_hour(self) -> None:
        at = {"when": datetime(2025, 1, 1, tzinfo=UTC)}
        table = PriceTable({}, MaintainedPrices(clock=lambda: at["when"]))
        before = table.cost_usd("o3", 1_000_000, 0)
        at["when"] = NOON
        assert table.cost_usd("o3", 1_000_000, 0) == library("o3", 1_000_000, 0) != before  # cut in June 2025
        assert library("deepseek-chat", 1_000_000, 0, at=NIGHT) != library(
            "deepseek-chat", 1_000_000, 0, at=NOON
        )

    def test_a_price_that_never_changes_is_priced_without_the_clock(self) -> None:
        """An import prices every source message: a model whose price has no date or hour in it
        is priced without asking the clock (tiers or not), one whose price changed on a date asks
        it for every call."""
        asked: list[datetime] = []

        def clock() -> datetime:
            asked.append(NOON)
            return NOON

        table = PriceTable({}, MaintainedPrices(clock=clock))
        for model in ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "gpt-4.1-mini"):
            for prompt in (1000, 300_000):
                got = table.cost_usd(model, prompt, 100, 200, 50)
                assert got == pytest.approx(library(model, prompt, 100, 200, 50), rel=1e-12)
        assert asked == []
        for _ in range(2):
            assert table.cost_usd("o3", 1000, 10) == pytest.approx(library("o3", 1000, 10), rel=1e-12)
        assert len(asked) == 2

    @pytest.mark.parametrize(
        "model",
        ["my-local-llama", "qwen2.5-coder:14b", "gpt-4.1-mini-turbo", "o3-mega", "", "a/b/", "x" * 10_000],
    )
    def test_a_model_nobody_knows_has_no_price(self, model: str) -> None:
        assert shipped_prices().cost_usd(model, 1000, 10) is None

    def test_names_an_agent_makes_up_cost_no_search_past_a_length_and_no_memory_past_a_count(self) -> None:
        prices = MaintainedPrices(clock=lambda: NOON)
        long_name = "gpt-4.1" + "-4.1" * (LONGEST_NAME // 4)
        assert prices.cost_usd(long_name, 1000, 10) is None
        for n in range(REMEMBERED + 10):
            prices.cost_usd(f"made-up-{n}", 1, 1)
        assert len(prices._found) == REMEMBERED
        assert prices.cost_usd("gpt-4.1", 1000, 10) == pytest.approx(library("gpt-4.1", 1000, 10))
        table = PriceTable({"mine": Price(1.0, 1.0)})
        for n in range(REMEMBERED + 10):
            table.lookup(f"made-up-{n}")
        assert len(table._found) == REMEMBERED and table.lookup("mine") == Price(1.0, 1.0)

    def test_a_calls_cost_is_remembered_only_while_its_price_cannot_change_and_within_a_count(self) -> None:
        """The same tokens of a model whose price never changes cost the same: remembered (at
        most `REMEMBERED_COSTS` of them); a price that changes with the clock is asked each time."""
        at = {"when": datetime(2025, 1, 1, tzinfo=UTC)}
        table = PriceTable({"mine": Price(1.0, 2.0)}, MaintainedPrices(clock=lambda: at["when"]))
        before = table.cost_usd("o3", 1_000_000, 0)
        at["when"] = NOON  # o3's price was cut in June 2025: the same tokens cost less now
        assert table.cost_usd("o3", 1_000_000, 0) == library("o3", 1_000_000, 0) != before
        for n in range(REMEMBERED_COSTS + 10):
            assert table.cost_usd("mine", n, 1) == (n * 1.0 + 2.0) / 1_000_000
        assert len(table._costs) == REMEMBERED_COSTS
        sonnet = table.cost_usd("claude-sonnet-4-5", 300_000, 100, 200, 50)
        assert sonnet == pytest.approx(library("claude-sonnet-4-5", 300_000, 100, 200, 50), rel=1e-12)
        assert table.cost_usd("claude-sonnet-4-5", 300_000, 100, 200, 50) == sonnet

    def test_a_vendor_prefix_names_the_vendor(self) -> None:
        table = PriceTable({}, MaintainedPrices(clock=lambda: NOON))
        plain = table.cost_usd("claude-sonnet-4-5", 1000, 10)
        assert plain is not None
        assert table.cost_usd("anthropic/claude-sonnet-4-5", 1000, 10) == plain
        assert table.cost_usd("deepseek/deepseek-chat", 1000, 10) == pytest.approx(
            library("deepseek-chat", 1000, 10)
        )

    def test_more_cached_tokens_than_prompt_ones_leave_no_fresh_input(self) -> None:
        """Codex's logs count so; the library refuses such a usage, we charge the cached tokens."""
        table = PriceTable({}, MaintainedPrices(clock=lambda: NOON))
        expected = library("gpt-5-codex", 3800, 100, 3800)
        assert table.cost_usd("gpt-5-codex", 3300, 100, 3800) == pytest.approx(expected, rel=1e-12)

    def test_the_users_price_wins(self, tmp_path: Path) -> None:
        config = tmp_path / "config.toml"
        config.write_text(
            '[prices."gpt-4.1"]\ninput = 100.0\noutput = 1000.0\n[prices."my-llama"]\ninput = 1\noutput = 1\n'
        )
        table = load_config(config).price_table()
        assert table.cost_usd("gpt-4.1-2025-04-14", 1_000_000, 0) == 100.0
        assert table.cost_usd("my-llama", 1_000_000, 1_000_000) == 2.0
        assert table.cost_usd("gpt-4o", 1000, 10) == shipped_prices().cost_usd("gpt-4o", 1000, 10) is not None


def run_with(
    tmp_path: Path, model: str, usage: tuple[int, int, int]
) -> tuple[subprocess.CompletedProcess[str], list]:
    """`agent-tui run` against an OpenAI-compatible server of our own that answers as `model`."""
    with FakeModelServer() as server:
        frames = [
            f.replace(OPENAI_MODEL.encode(), model.encode()) for f in openai_stream(["Done."], usage=usage)
        ]
        server.script(Stream(frames))
        done = agent_tui(
            "run", "--prompt", "Look around", "--cwd", str(project(tmp_path)),
            "--sessions-dir", str(tmp_path / "s"), "--provider", "openai", "--model", model,
            "--base-url", server.openai_url,
            env=clean_env(XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"),
                          **{DEFAULT_KEY_ENV["openai"]: FAKE_KEY}),
        )  # fmt: skip
    (log,) = (tmp_path / "s").glob("*.jsonl")
    return done, list(JsonlEventLog(log).replay("strict"))


class TestThroughTheCommand:
    @pytest.mark.parametrize("model", ["deepseek-chat", "gemini-2.5-flash"])
    def test_a_model_through_an_openai_compatible_endpoint_is_priced_by_its_name(
        self, tmp_path: Path, model: str
    ) -> None:
        before = datetime.now(UTC)
        done, events = run_with(tmp_path, model, (1000, 50, 200))
        after = datetime.now(UTC)
        assert done.returncode == 0, done.stdout + done.stderr
        (used,) = [e.payload for e in events if e.type == "model.usage"]
        # the chat API counts the cached tokens inside the prompt's: 1000 in all, 200 of them cached
        assert (used["promptTokens"], used["cachedTokens"]) == (1000, 200)
        assert any(
            used["costUsd"] == pytest.approx(library(model, 1000, 50, 200, at=when), rel=1e-12)
            for when in (before, after)
        )
        assert "price unknown" not in done.stdout

    def test_a_model_nobody_knows_says_price_unknown(self, tmp_path: Path) -> None:
        done, events = run_with(tmp_path, "house-model-7b", (1000, 50, 0))
        assert done.returncode == 0, done.stdout + done.stderr
        (used,) = [e.payload for e in events if e.type == "model.usage"]
        assert "costUsd" not in used
        assert "price unknown" in done.stdout

    def test_a_recorded_cost_is_replayed_as_recorded(self, tmp_path: Path) -> None:
        """A log's cost is what was paid then: replay, the listing and the dump never reprice it."""
        done, events = run_with(tmp_path, "gpt-4.1", (1000, 50, 0))
        assert done.returncode == 0, done.stdout + done.stderr
        (used,) = [e.payload for e in events if e.type == "model.usage"]
        assert used["costUsd"] == pytest.approx(shipped_prices().cost_usd("gpt-4.1", 1000, 50))
        (log,) = (tmp_path / "s").glob("*.jsonl")
        lines = []
        for line in log.read_bytes().splitlines():  # as if the price had been another then
            event = orjson.loads(line)
            if event["type"] == "model.usage":
                event["payload"]["costUsd"] = 12.5
            if event["type"] == "turn.completed":
                event["payload"]["usage"]["costUsd"] = 12.5
            lines.append(orjson.dumps(event))
        log.write_bytes(b"\n".join(lines) + b"\n")
        dump = agent_tui(
            "replay", str(log), "--dump", "state", env=clean_env(XDG_DATA_HOME=str(tmp_path / "data"))
        )
        assert dump.returncode == 0, dump.stderr
        (session,) = orjson.loads(dump.stdout)["sessions"]
        assert session["costUsd"] == 12.5 and session["treeCostUsd"] == 12.5
        listing = agent_tui(
            "sessions",
            "--sessions-dir",
            str(tmp_path / "s"),
            env=clean_env(XDG_DATA_HOME=str(tmp_path / "data")),
        )
        assert listing.returncode == 0, listing.stderr
        assert "$12.50" in listing.stdout


NO_NETWORK = textwrap.dedent(
    """\
    import socket, sys, threading

    tried = []

    def refuse(*args, **kwargs):
        tried.append(args)
        raise OSError("network use refused by the test")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse

    from agent_tui.providers.config import load_config
    table = load_config(None).price_table()
    assert "genai_prices" not in sys.modules, "imported before a price was needed"
    print(table.cost_usd("claude-sonnet-4-5", 1000, 100), table.cost_usd("no-such-model", 1, 1))
    assert "genai_prices" in sys.modules
    assert not [t.name for t in threading.enumerate() if t.name.startswith("genai_prices")], "an updater runs"
    assert tried == [], tried
    """
)


def test_prices_are_read_lazily_and_never_fetched(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", NO_NETWORK],
        capture_output=True,
        text=True,
        env=clean_env(XDG_CONFIG_HOME=str(tmp_path)),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    cost, unknown = done.stdout.split()
    assert Decimal(cost) > 0 and unknown == "None"
