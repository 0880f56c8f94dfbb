"""How money, tokens and budgets read on the dashboard: never a made-up cost, short forms that
still say what they are, budget marks that carry their meaning in text, and typed budgets read
back or refused with a reason."""

from __future__ import annotations

import re

import pytest

from agent_tui.reducer import Spend
from agent_tui.tui.spend_text import (
    BudgetInputError,
    budget_mark,
    budget_share,
    budget_text,
    cost_brief,
    cost_words,
    parse_tokens,
    parse_usd,
    tokens_text,
    tree_budget_state,
    tree_cost,
    usd_text,
)

PRICED = Spend(prompt_tokens=12_000, completion_tokens=300, cost_usd=0.42)
UNPRICED = Spend(prompt_tokens=12_000, completion_tokens=300, unpriced_tokens=12_300)


@pytest.mark.parametrize(
    ("usd", "text"),
    [
        (0.0, "$0.00"),
        (0.0004, "<$0.01"),
        (0.0049, "<$0.01"),
        (0.006, "$0.01"),
        (0.42, "$0.42"),
        (1.874, "$1.87"),
        (999.994, "$999.99"),
        (1234.4, "$1,234"),
    ],
)
def test_dollars_read_as_cents_until_a_thousand(usd: float, text: str) -> None:
    assert usd_text(usd) == text


@pytest.mark.parametrize(
    ("tokens", "text"),
    [(0, "0"), (950, "950"), (1_000, "1k"), (1_234, "1.2k"), (12_345, "12.3k"), (123_456, "123k"),
     (1_250_000, "1.2M"), (12_300_000, "12.3M"), (400_000_000, "400M")],
)  # fmt: skip
def test_tokens_read_in_thousands_and_millions(tokens: int, text: str) -> None:
    assert tokens_text(tokens) == text


def test_an_unknown_price_shows_tokens_and_says_so_never_a_dollar_amount() -> None:
    assert cost_brief(UNPRICED) == "12.3k tok"
    assert cost_words(UNPRICED) == "12.3k tok · price unknown"
    assert "$" not in cost_words(UNPRICED)


def test_a_spend_priced_in_part_is_at_least_its_priced_part() -> None:
    mixed = PRICED.plus(Spend(prompt_tokens=2_000, completion_tokens=100, unpriced_tokens=2_100))
    assert cost_brief(mixed) == "≥$0.42"
    assert cost_words(mixed) == "≥$0.42 · 14.4k tok, 2.1k of them price unknown"
    assert cost_words(PRICED) == "$0.42 · 12.3k tok"


def test_a_tree_line_gives_own_and_tree_totals_or_the_tree_total_when_short() -> None:
    tree = PRICED.plus(Spend(prompt_tokens=40_000, completion_tokens=2_000, cost_usd=1.45))
    cost = tree_cost(PRICED, tree)
    assert cost is not None
    assert (cost.full, cost.short) == ("$0.42 (tree $1.87)", "Σ$1.87")
    alone = tree_cost(PRICED, PRICED)
    assert alone is not None and alone.full == alone.short == "$0.42"
    assert tree_cost(Spend(), Spend()) is None


def test_a_budget_share_is_the_larger_of_its_dollars_and_its_tokens() -> None:
    assert budget_share(PRICED, None, None) is None
    assert budget_share(PRICED, 1.0, None) == pytest.approx(0.42)
    assert budget_share(PRICED, 1.0, 15_000) == pytest.approx(12_300 / 15_000)


@pytest.mark.parametrize(
    ("usd", "state", "mark"),
    [(None, "ok", None), (1.0, "ok", None), (0.52, "near", "▲ 80%"), (0.4201, "near", "▲ 99%"),
     (0.42, "over", "▲ over"), (0.1, "over", "▲ over")],
)  # fmt: skip
def test_the_budget_mark_says_near_or_over_in_words(usd: float | None, state: str, mark: str | None) -> None:
    assert tree_budget_state(PRICED, usd, None) == state
    assert budget_mark(PRICED, usd, None) == mark


def test_a_token_budget_marks_a_tree_whose_tokens_had_no_price() -> None:
    assert budget_mark(UNPRICED, 5.0, 15_000) == "▲ 82%"
    assert budget_mark(UNPRICED, 5.0, None) is None  # no dollars known: none made up


def test_a_budget_reads_as_its_limits() -> None:
    assert budget_text(2.5, None) == "$2.50"
    assert budget_text(None, 500_000) == "500k tok"
    assert budget_text(2.5, 500_000) == "$2.50 or 500k tok"
    assert budget_text(None, None) == ""


@pytest.mark.parametrize(("typed", "usd"), [("2.50", 2.5), (" $2.50 ", 2.5), ("1,200", 1200.0), ("", None)])
def test_a_typed_dollar_budget_is_read(typed: str, usd: float | None) -> None:
    assert parse_usd(typed) == usd


@pytest.mark.parametrize(
    ("typed", "tokens"),
    [
        ("500000", 500_000),
        ("500k", 500_000),
        ("1.5M", 1_500_000),
        ("500_000", 500_000),
        ("1.1k", 1_100),
        ("", None),
    ],
)
def test_a_typed_token_budget_is_read(typed: str, tokens: int | None) -> None:
    assert parse_tokens(typed) == tokens


@pytest.mark.parametrize(
    ("typed", "reason"),
    [("two", "'two' is not an amount of dollars"), ("0", "more than $0"), ("-3", "more than $0"),
     ("inf", "more than $0")],
)  # fmt: skip
def test_a_bad_dollar_budget_says_why(typed: str, reason: str) -> None:
    with pytest.raises(BudgetInputError, match=re.escape(reason)):
        parse_usd(typed)


@pytest.mark.parametrize(
    ("typed", "reason"),
    [
        ("lots", "'lots' is not a number of tokens"),
        ("0k", "at least 1 token"),
        ("1e308k", "at most"),  # past a float once scaled: was an OverflowError (found attacking)
        ("1e999999999M", "not a number of tokens"),
        ("1.5", "not a whole number of tokens"),  # was 1 token, silently
        ("nan", "not a number of tokens"),
    ],
)
def test_a_bad_token_budget_says_why(typed: str, reason: str) -> None:
    with pytest.raises(BudgetInputError, match=re.escape(reason)):
        parse_tokens(typed)
