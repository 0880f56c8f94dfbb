"""What imported Claude Code and Codex sessions cost, against figures worked out by hand.

Each Claude Code message's usage (cache reads and cache writes included) and each growth of a
Codex rollout's token totals is one `model.usage`, priced from the shipped table by the model
the source names; the turn's total is their sum, and the reducer rolls a sub-agent into its
parent's tree. A source that names no model keeps its tokens and has no price.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support_importers import events_of

from agent_tui.costs.prices import Price, PriceTable
from agent_tui.events.chains import chain_violations
from agent_tui.importers import ClaudeCodeImporter, import_path
from agent_tui.reducer import project_state

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE_V20 = FIXTURES / "claude_code" / "v2.0-agent-files"
CODEX_MID = FIXTURES / "codex" / "mid-0.39"
CODEX_MULTI = FIXTURES / "codex" / "multi-agent-0.58"

# claude-sonnet-4-5 ($3 input, $3.75 cache write, $0.30 cache read, $15 output per million):
# every message of the fixture reads 4 uncached, writes 120, reads 900 and says 60 tokens.
CLAUDE_CALL = (4 * 3 + 120 * 3.75 + 900 * 0.3 + 60 * 15) / 1e6  # $0.001632


class TestClaudeCode:
    def test_each_message_is_a_priced_call_and_the_sub_agent_rolls_into_the_tree(
        self, tmp_path: Path
    ) -> None:
        import_path(CLAUDE_V20, tmp_path)
        events = events_of(tmp_path)
        assert chain_violations(events) == []
        state = project_state(events)
        (root,) = state.roots()
        (child,) = state.children(root)
        # four messages in the main log (one split over three lines), two in the agent's
        assert state.sessions[root].spend.cost_usd == pytest.approx(4 * CLAUDE_CALL)
        assert state.sessions[child].spend.cost_usd == pytest.approx(2 * CLAUDE_CALL)
        tree = state.tree_spend(root)
        assert tree.cost_usd == pytest.approx(6 * CLAUDE_CALL) and tree.fully_priced
        assert (tree.prompt_tokens, tree.cached_tokens, tree.cache_write_tokens) == (
            6 * 1024,
            6 * 900,
            6 * 120,
        )
        dump = {s["sessionId"]: s for s in state.to_state_dump()["sessions"]}
        assert dump[root]["treeCostUsd"] == pytest.approx(6 * CLAUDE_CALL, abs=1e-6)

    def test_the_table_given_is_the_one_that_prices(self) -> None:
        line = (
            b'{"type":"user","sessionId":"s1","cwd":"/w","uuid":"u1","timestamp":"2026-11-30T10:00:00Z",'
            b'"message":{"role":"user","content":"hi"}}'
        )
        answer = (
            b'{"type":"assistant","sessionId":"s1","uuid":"u2","timestamp":"2026-11-30T10:00:01Z",'
            b'"message":{"id":"msg_1","model":"house-model","role":"assistant",'
            b'"content":[{"type":"text","text":"hello"}],'
            b'"usage":{"input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":10}}}'
        )
        importer = ClaudeCodeImporter("x.jsonl", prices=PriceTable({"house-model": Price(2.0, 8.0, 0.5)}))
        events = importer.feed(1, line) + importer.feed(2, answer) + importer.finish()
        (used,) = [e.payload for e in events if e.type == "model.usage"]
        assert used["costUsd"] == pytest.approx((100 * 2 + 1000 * 0.5 + 10 * 8) / 1e6)
        unknown = ClaudeCodeImporter("x.jsonl")  # the shipped table does not know house-model
        events = unknown.feed(1, line) + unknown.feed(2, answer) + unknown.finish()
        (used,) = [e.payload for e in events if e.type == "model.usage"]
        assert "costUsd" not in used and used["promptTokens"] == 1100

    def test_a_message_seen_again_after_another_counts_once(self) -> None:
        def answer(n: int, message_id: str) -> bytes:
            return (
                b'{"type":"assistant","sessionId":"s1","uuid":"u%d","timestamp":"2026-11-30T10:00:0%dZ",'
                b'"message":{"id":"%s","model":"claude-sonnet-4-5","role":"assistant",'
                b'"content":[{"type":"text","text":"part"}],'
                b'"usage":{"input_tokens":10,"output_tokens":1}}}' % (n, n, message_id.encode())
            )

        prompt = (
            b'{"type":"user","sessionId":"s1","cwd":"/w","uuid":"u0","timestamp":"2026-11-30T10:00:00Z",'
            b'"message":{"role":"user","content":"hi"}}'
        )
        importer = ClaudeCodeImporter("x.jsonl")
        events = importer.feed(1, prompt)
        for n, message_id in enumerate(("msg_a", "msg_b", "msg_a"), start=1):
            events += importer.feed(n + 1, answer(n, message_id))
        events += importer.finish()
        assert [e.payload["step"] for e in events if e.type == "model.usage"] == [1, 2]
        (end,) = [e.payload for e in events if e.type == "turn.completed"]
        assert (end["usage"]["promptTokens"], end["usage"]["completionTokens"]) == (20, 2)


class TestCodex:
    def test_each_growth_of_the_totals_is_a_priced_call(self, tmp_path: Path) -> None:
        import_path(CODEX_MID, tmp_path)
        events = events_of(tmp_path)
        assert chain_violations(events) == []
        calls = [(e.turn_id, e.payload) for e in events if e.type == "model.usage"]
        # gpt-5-codex: $1.25 input, $0.125 cached input, $10 output per million; Codex counts
        # cached input inside input. First turn: totals 5200/3000/180, then 11800/8200/420.
        first = (2200 * 1.25 + 3000 * 0.125 + 180 * 10) / 1e6  # $0.004925
        second = (1400 * 1.25 + 5200 * 0.125 + 240 * 10) / 1e6  # $0.0048
        assert [
            (p["step"], p["promptTokens"], p["cachedTokens"], p["completionTokens"]) for _, p in calls[:2]
        ] == [
            (1, 5200, 3000, 180),
            (2, 6600, 5200, 240),
        ]
        assert [p["costUsd"] for _, p in calls[:2]] == [pytest.approx(first), pytest.approx(second)]
        ends = [e.payload for e in events if e.type == "turn.completed"]
        assert ends[0]["usage"]["costUsd"] == pytest.approx(first + second)
        assert "usage" not in ends[1]  # the interrupted turn used nothing
        total = project_state(events).total_spend()
        assert total.cost_usd == pytest.approx(sum(p["costUsd"] for _, p in calls))

    def test_a_spawned_agent_without_a_model_keeps_its_tokens_unpriced(self, tmp_path: Path) -> None:
        import_path(CODEX_MULTI, tmp_path)
        state = project_state(events_of(tmp_path))
        (root,) = state.roots()
        (child,) = state.children(root)
        # the parent (gpt-5.1-codex, priced as gpt-5): 9000 input, 4000 of it cached, 300 output
        assert state.sessions[root].spend.cost_usd == pytest.approx(
            (5000 * 1.25 + 4000 * 0.125 + 300 * 10) / 1e6
        )
        kid = state.sessions[child].spend
        assert (kid.tokens, kid.unpriced_tokens, kid.known_cost_usd) == (2160, 2160, None)
        tree = state.tree_spend(root)
        assert tree.cost_usd == state.sessions[root].spend.cost_usd and not tree.fully_priced
