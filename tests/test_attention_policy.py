"""What the dashboard tells a user who is away: what counts, gathered, spaced (a pure policy with
an injected clock), and the terminal sequence that carries it, attacked with hostile text."""

from __future__ import annotations

import re
from typing import Any

import pytest
from support_events import build_event
from support_terminal import ATTACK, assert_safe

from agent_tui.events import Event
from agent_tui.reducer import AttentionPolicy
from agent_tui.tui.attention import OSC_9, OSC_777, notification_sequence, terminal_protocol


class Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        return self.now


class Log:
    """Events of several sessions, numbered per session."""

    def __init__(self) -> None:
        self.sequences: dict[str, int] = {}

    def __call__(self, session: str, type_name: str, turn: str | None = "turn_1", **fields: Any) -> Event:
        self.sequences[session] = self.sequences.get(session, 0) + 1
        return build_event(self.sequences[session], type_name, session_id=session, turn_id=turn, **fields)

    def created(self, session: str, name: str, parent: str | None = None) -> Event:
        return self(session, "session.created", parentSessionId=parent, agentName=name, title=None)

    def asked(
        self, session: str, request: str, tool: str = "shell", risk: str = "destructive"
    ) -> list[Event]:
        return [
            self(session, "permission.requested", requestId=request, tool=tool, risk=risk),
            self(
                session,
                "permission.resolved",
                requestId=request,
                decision="ask",
                actor="policy",
                remember=None,
            ),
        ]

    def ended(self, session: str, reason: str, code: str | None = None, message: str | None = None) -> Event:
        return self(session, "turn.completed", stopReason=reason, errorCode=code, message=message)


def away_policy(clock: Clock, **kw: int) -> AttentionPolicy:
    policy = AttentionPolicy(clock, **kw)
    policy.arm()
    policy.present(False)
    return policy


def feed(policy: AttentionPolicy, *events: Event | list[Event]) -> None:
    for item in events:
        for event in item if isinstance(item, list) else [item]:
            policy.observe(event)


def test_three_requests_in_a_burst_are_one_notification_after_the_gathering() -> None:
    clock, log = Clock(), Log()
    policy = away_policy(clock)
    feed(policy, log.created("s1", "lead"), log.created("s2", "api"))
    feed(policy, log.asked("s1", "p1"))
    clock.now += 500
    feed(policy, log.asked("s2", "p2"), log.asked("s2", "p3"))
    clock.now += 1_400
    assert policy.due() is None  # the first came 1.9 s ago: still gathering
    clock.now += 100
    told = policy.due()
    assert told is not None
    assert told.body == "3 requests waiting"
    assert told.count("approval") == 3 and told.title == "agent-tui"
    assert policy.due() is None  # told once


def test_one_request_names_the_agent_its_path_and_the_tool() -> None:
    clock, log = Clock(), Log()
    policy = away_policy(clock, gather_ms=0)
    feed(policy, log.created("root", "lead"), log.created("kid", "explorer", parent="root"))
    feed(policy, log.asked("kid", "p1", tool="write_file", risk="write"))
    told = policy.due()
    assert told is not None
    assert told.body == "1 request waiting: lead › explorer asks for write_file (write)"
    assert told.payload()["events"] == [
        {"kind": "approval", "sessionId": "kid", "agent": "lead › explorer", "detail": "write_file (write)"}
    ]


def test_notifications_are_spaced_and_what_comes_between_waits_for_the_next() -> None:
    clock, log = Clock(), Log()
    policy = away_policy(clock, gather_ms=0, min_gap_ms=30_000)
    feed(policy, log.created("s1", "lead"), log.asked("s1", "p1"))
    assert policy.due() is not None
    clock.now += 1_000
    feed(policy, log.ended("s1", "error", "provider_failure", "HTTP 500"))
    feed(policy, log.created("s2", "docs"), log.ended("s2", "final"))
    clock.now += 28_999
    assert policy.due() is None  # 29.999 s after the last one
    clock.now += 1
    told = policy.due()
    assert told is not None
    assert told.body == "lead's turn failed (provider_failure: HTTP 500); docs finished"


def test_sub_agent_chatter_is_never_told_but_its_approvals_are() -> None:
    clock, log = Clock(), Log()
    policy = away_policy(clock, gather_ms=0, min_gap_ms=0)
    feed(policy, log.created("root", "lead"), log.created("kid", "helper", parent="root"))
    feed(policy, log.ended("kid", "final"), log.ended("kid", "error", "unknown"))
    feed(policy, log("kid", "model.delta", text="chatter"), log("kid", "tool.started"))
    assert policy.due() is None
    feed(policy, log.asked("kid", "p9"))
    told = policy.due()
    assert told is not None and told.count("approval") == 1


def test_nothing_is_told_while_present_before_arming_or_for_a_cancelled_turn() -> None:
    clock, log = Clock(), Log()
    policy = AttentionPolicy(clock, gather_ms=0, min_gap_ms=0)
    policy.present(False)
    feed(policy, log.created("s1", "lead"), log.asked("s1", "old"), log.ended("s1", "final"))
    assert policy.due() is None  # history: the stored sessions folded at start-up
    policy.arm()
    policy.present(True)
    feed(policy, log.asked("s1", "p1"), log.ended("s1", "error"))
    assert policy.due() is None  # the user was looking
    policy.present(False)
    feed(policy, log.ended("s1", "cancelled"), log.ended("s1", "max_steps"))
    assert policy.due() is None


def test_an_answered_or_withdrawn_request_and_coming_back_drop_what_waits() -> None:
    clock, log = Clock(), Log()
    policy = away_policy(clock)
    feed(policy, log.created("s1", "lead"), log.created("s2", "api"))
    feed(policy, log.asked("s1", "p1"), log.asked("s2", "p2"))
    # answered from elsewhere (an attached dashboard), and the other's turn stopped
    feed(policy, log("s1", "permission.resolved", requestId="p1", decision="allow", actor="user"))
    feed(policy, log.ended("s2", "cancelled"))
    clock.now += 5_000
    assert policy.due() is None
    feed(policy, log.asked("s1", "p3"))
    policy.present(True)
    policy.present(False)
    clock.now += 5_000
    assert policy.due() is None


def test_a_tree_nearing_its_budget_is_told_once_per_budget() -> None:
    clock, log = Clock(), Log()
    policy = away_policy(clock, gather_ms=0, min_gap_ms=0)

    def used(session: str, cost: float, tokens: int = 100) -> Event:
        return log(session, "model.usage", step=1, promptTokens=tokens, completionTokens=0, costUsd=cost)

    feed(
        policy,
        log("s1", "session.created", turn=None, parentSessionId=None, agentName="lead", budget={"usd": 1.0}),
    )
    feed(policy, log.created("s2", "helper", parent="s1"))
    feed(policy, used("s2", 0.5))
    assert policy.due() is None
    feed(policy, used("s2", 0.35))  # the tree: $0.85 of $1.00
    told = policy.due()
    assert told is not None and told.body == "lead: spent $0.85 of a $1.00 budget"
    feed(policy, used("s1", 0.05))
    assert policy.due() is None  # told once
    feed(policy, log("s1", "session.budget", turn=None, usd=2.0, by="ana"))
    feed(policy, used("s2", 0.8))
    told = policy.due()
    assert told is not None and told.body == "lead: spent $1.70 of a $2.00 budget"


def test_a_token_budget_nearing_is_told_too() -> None:
    clock, log = Clock(), Log()
    policy = away_policy(clock, gather_ms=0)
    feed(
        policy,
        log(
            "s1",
            "session.created",
            turn=None,
            parentSessionId=None,
            agentName="lead",
            budget={"tokens": 1000},
        ),
    )
    feed(policy, log("s1", "model.usage", step=1, promptTokens=700, completionTokens=150))
    told = policy.due()
    assert told is not None and told.body == "lead: spent 850 tokens of a 1,000-token budget"


HOSTILE = [
    ATTACK,
    "evil\x07\x1b]9;forged\x07",
    "stop\x1b\\here\x9c\x9d",
    "line\nbreak\r\nand\ttab",
    "semi;colons;in;title",
    "\u202eRLO\u2066iso",
    "lone \udc80 surrogate",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_names_and_messages_come_out_safe_and_on_one_line(text: str) -> None:
    clock, log = Clock(), Log()
    policy = away_policy(clock, gather_ms=0)
    feed(policy, log.created("s1", "lead " + text), log.asked("s1", "p1", tool="shell " + text))
    feed(policy, log.ended("s1", "error", "unknown", "failed " + text))
    told = policy.due()
    assert told is not None
    for piece in (
        told.title,
        told.body,
        *(o.agent for o in told.occurrences),
        *(o.detail for o in told.occurrences),
    ):
        assert_safe(piece, "a notification")
        assert "\n" not in piece and "\t" not in piece


def osc_parts(sequence: str) -> list[str]:
    """The one OSC sequence's fields; fails unless it is exactly one, ended by the one BEL."""
    assert sequence.startswith("\x1b]") and sequence.endswith("\x07")
    inner = sequence[2:-1]
    assert "\x1b" not in inner and "\x07" not in inner and "\x9c" not in inner and "\n" not in inner
    assert_safe(inner, "the OSC sequence's text")
    return inner.split(";")


@pytest.mark.parametrize("text", HOSTILE)
def test_the_sequence_cannot_be_broken_out_of(text: str) -> None:
    nine = osc_parts(notification_sequence("agent-tui " + text, "body " + text, OSC_9))
    assert nine[0] == "9"
    seven = osc_parts(notification_sequence("title " + text, "body " + text, OSC_777))
    assert seven[:2] == ["777", "notify"]
    title = seven[2]
    assert title.startswith("title ")  # a `;` in the title cannot move the body
    assert ";".join(seven[3:]).startswith("body ")


def test_the_sequences_as_terminals_read_them() -> None:
    assert notification_sequence("agent-tui", "2 requests waiting", OSC_777) == (
        "\x1b]777;notify;agent-tui;2 requests waiting\x07"
    )
    assert notification_sequence("agent-tui", "lead finished", OSC_9) == "\x1b]9;agent-tui: lead finished\x07"
    # ConEmu and Windows Terminal read `OSC 9 ; digit ;` as commands of their own
    assert re.fullmatch(r"\x1b\]9;[^0-9].*\x07", notification_sequence("", "4;3;progress", OSC_9))
    assert terminal_protocol({"TERM": "foot"}) == OSC_777
    assert terminal_protocol({"TERM": "rxvt-unicode-256color"}) == OSC_777
    assert terminal_protocol({"TERM": "xterm-kitty"}) == OSC_9
    assert terminal_protocol({}) == OSC_9
