"""Where an assistant message ends: one rule (`events/assistant_messages.py`), and the four readers
of a conversation (the engine's transcript, the dashboard's reducer, `replay --dump transcript`,
the headless console) cut the same logs into the same messages."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from support_events import build_event
from support_reducer import SessionLog, tokens

from agent_tui.engine.context import TranscriptBuilder
from agent_tui.events import EVENT_TYPES, Event
from agent_tui.events.assistant_messages import MESSAGE_PARTS, AssistantMessages, continues_message
from agent_tui.reducer import project_state
from agent_tui.replay.dump import transcript_lines
from agent_tui.runtime.console import EventPrinter

T = "turn_1"


def built(log: SessionLog, turn: str = T, step: int = 1) -> None:
    log.emit("context.built", turn, step=step, tokens=tokens(10), maxContextTokens=8000)


def start(log: SessionLog, prompt: str, turn: str = T) -> None:
    log.emit("turn.started", turn, promptPreview=prompt)
    log.emit("user.message", turn, content=prompt)


def run_tool(log: SessionLog, call: str, result: str, turn: str = T) -> None:
    log.request(turn, call, "shell", "read", "ls")
    log.resolve(turn, call, "allow", "policy")
    log.emit("tool.started", turn, toolCallId=call, tool="shell", argsPreview="ls")
    log.emit("tool.delta", turn, toolCallId=call, stream="stdout", text=result)
    log.emit("tool.completed", turn, toolCallId=call, tool="shell", result=result)


def ask(log: SessionLog, call: str, turn: str = T) -> None:
    log.emit("model.tool_call_requested", turn, toolCallId=call, tool="shell", args={"cmd": "ls"})


def delta_after_a_tool_call() -> list[Event]:
    log = SessionLog("sess_a")
    start(log, "list")
    built(log)
    log.emit("model.delta", T, text="I'll ")
    log.emit("model.delta", T, text="list them.")
    ask(log, "call_1")
    log.emit("model.delta", T, text=" Then I read.")  # same model call: the same message
    ask(log, "call_2")
    run_tool(log, "call_1", "a.txt\n")
    run_tool(log, "call_2", "b.txt\n")
    built(log, step=2)
    log.emit("model.delta", T, text="Two files.")
    log.emit("turn.completed", T, stopReason="final")
    return log.events


def empty_final_and_a_tool_only_call() -> list[Event]:
    log = SessionLog("sess_b")
    start(log, "check")
    built(log)
    ask(log, "call_1")  # a call that said nothing: no text of its own
    run_tool(log, "call_1", "ok\n")
    built(log, step=2)
    log.emit("model.delta", T, text="")  # a final answer without text: the empty delta
    log.emit("turn.completed", T, stopReason="final")
    return log.events


def cancelled_then_steered_then_continued() -> list[Event]:
    log = SessionLog("sess_c")
    start(log, "long job")
    built(log)
    log.emit("model.delta", T, text="Working on it")
    log.emit("model.delta", T, text=" slowly")
    log.emit("turn.completed", T, stopReason="cancelled", message="stopped by the user")
    start(log, "again", "turn_2")
    built(log, "turn_2")
    log.emit("model.delta", "turn_2", text="Part one.")
    log.emit("user.message", "turn_2", content="faster", steered=True)
    built(log, "turn_2", step=2)
    log.emit("model.retry", "turn_2", attempt=1, delayMs=10, reason="rate limited")
    log.emit("model.delta", "turn_2", text="Part two.")
    log.emit(
        "subagent.delivered", "turn_2", childSessionId="sess_x", agentName="x", status="completed", text="hi"
    )
    built(log, "turn_2", step=3)
    log.emit("model.delta", "turn_2", text="All done.")
    log.emit("turn.completed", "turn_2", stopReason="final")
    return log.events


EXPECTED = {
    "delta_after_a_tool_call": ["I'll list them. Then I read.", "Two files."],
    "empty_final_and_a_tool_only_call": [""],
    "cancelled_then_steered_then_continued": ["Working on it slowly", "Part one.", "Part two.", "All done."],
}
LOGS: dict[str, Callable[[], list[Event]]] = {
    "delta_after_a_tool_call": delta_after_a_tool_call,
    "empty_final_and_a_tool_only_call": empty_final_and_a_tool_only_call,
    "cancelled_then_steered_then_continued": cancelled_then_steered_then_continued,
}


def engine_texts(events: list[Event]) -> list[str]:
    builder = TranscriptBuilder()
    for event in events:
        builder.apply(event)
    # A message that only asked for tools has no text of its own (it carries the calls).
    return [m.text for m in builder.messages if m.role == "assistant" and (m.text or not m.tool_calls)]


def reducer_texts(events: list[Event]) -> list[str]:
    state = project_state(events)
    return [
        entry.text
        for session in state.sessions.values()
        for turn in session.turns
        for entry in turn.transcript
        if entry.role == "assistant"
    ]


def dump_texts(events: list[Event]) -> list[str]:
    return [line["text"] for line in transcript_lines(events) if line["role"] == "assistant"]


def console_lines(events: list[Event]) -> list[str]:
    out = io.StringIO()
    printer = EventPrinter(out, quiet=False, names=lambda sid: (sid,))
    for event in events:
        printer(event)
    return out.getvalue().splitlines()


def console_texts(events: list[Event]) -> list[str]:
    return [line.split(" says: ", 1)[1] for line in console_lines(events) if " says: " in line]


@pytest.mark.parametrize("name", sorted(LOGS))
def test_the_four_readers_cut_the_same_messages(name: str) -> None:
    events = LOGS[name]()
    expected = EXPECTED[name]
    assert engine_texts(events) == expected
    assert reducer_texts(events) == expected
    assert dump_texts(events) == expected
    # The console prints what was said, on one line: blank messages are not printed.
    assert console_texts(events) == [" ".join(text.split()) for text in expected if text.strip()]


def test_the_console_says_a_call_once_then_what_it_asked_for() -> None:
    lines = console_lines(delta_after_a_tool_call())
    says = next(n for n, line in enumerate(lines) if "says: I'll list them. Then I read." in line)
    assert lines[says + 1 : says + 3] == ["[sess_a] wants shell {'cmd': 'ls'}"] * 2
    assert "permission allow" in lines[says + 3]


def test_interleaved_sessions_never_end_each_others_messages() -> None:
    a, b = SessionLog("sess_a"), SessionLog("sess_b")
    for log in (a, b):
        start(log, "go")
        built(log)
    a.emit("model.delta", T, text="A1 ")
    b.emit("model.delta", T, text="B1 ")
    a.emit("model.delta", T, text="A2")
    b.emit("model.delta", T, text="B2")
    a.emit("turn.completed", T, stopReason="final")
    b.emit("turn.completed", T, stopReason="final")
    # live order: the two sessions' events interleaved
    events = [e for pair in zip(a.events, b.events, strict=True) for e in pair]
    assert sorted(reducer_texts(events)) == ["A1 A2", "B1 B2"]
    assert sorted(console_texts(events)) == ["A1 A2", "B1 B2"]
    fold = AssistantMessages()
    ended = [m.text for e in events if (m := fold.feed(e)) is not None]
    assert ended == ["A1 A2", "B1 B2"] and fold.finish() == []


def test_the_rule_itself() -> None:
    assert continues_message("model.delta") and continues_message("model.tool_call_requested")
    for kind in ("permission.requested", "tool.started", "tool.completed", "context.built", "user.message",
                 "turn.completed", "turn.started", "model.retry", "source.record", "context.compacted"):  # fmt: skip
        assert not continues_message(kind), kind
    fold = AssistantMessages()
    log = SessionLog("sess_a")
    start(log, "go")
    built(log)
    ask(log, "call_1")
    for event in log.events:
        assert fold.feed(event) is None
    [open_message] = fold.finish()
    assert (open_message.said, open_message.text, len(open_message.calls)) == (False, "", 1)


ENDING_EVENTS = [(kind, True) for kind in sorted(set(EVENT_TYPES) - MESSAGE_PARTS)] + [
    ("session.created", False),
    ("source.record", False),  # the two types that may come outside a turn
]


@pytest.mark.parametrize(("kind", "in_turn"), ENDING_EVENTS)
def test_every_other_event_type_ends_the_message_in_each_reader(kind: str, in_turn: bool) -> None:
    """The reducer closes the message in each handler (not in one check, to keep the fold fast):
    this holds every handler, the engine's transcript and the dump to the rule, type by type."""
    events = [
        build_event(1, "session.created", parentSessionId=None),
        build_event(2, "turn.started"),
        build_event(3, "context.built"),
        build_event(4, "model.delta", text="before"),
        build_event(5, kind, turn_id=T if in_turn else None),
        build_event(6, "model.delta", text="after"),
    ]
    assert reducer_texts(events) == ["before", "after"]
    assert dump_texts(events) == ["before", "after"]
    fold = AssistantMessages()
    assert [m.text for e in events if (m := fold.feed(e)) is not None] == ["before"]
    # A compaction replaces what the model sees with its summary: only what came after is left.
    assert engine_texts(events) == (["after"] if kind == "context.compacted" else ["before", "after"])
