"""Properties of the fold over generated logs: every way of folding gives the same views.

Hypothesis draws any interleaving of valid events of three sessions, in no particular chain
order (a tool event before its request, a turn event without its start). Folding them one by one
(the live view) equals `project_state` (the replay); reducing a prefix, copying, then reducing
the rest equals reducing everything, and the copy and its original never leak into each other.
Equal here means every view: the states, the approval queue, the session tree and the dump.
"""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support_reducer import fold, tree, ts

from agent_tui.events import Event, event_from_dict
from agent_tui.reducer import DashboardState, apply_event, project_state

SESSIONS = ("sess_a", "sess_b", "sess_c")
TURNS = ("turn_1", "turn_2", "turn_3")
CALLS = ("call_1", "call_2")
REQUESTS = ("req_1", "req_2")
small = st.integers(0, 9)
texts = st.one_of(st.text(max_size=6), st.integers(0, 9_000).map(lambda n: "x" * n))


def fixed(required: dict, optional: dict | None = None) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries(required, optional=optional or {})


PAYLOAD_STRATEGIES: dict[str, st.SearchStrategy[dict]] = {
    "session.created": fixed(
        {"cwd": st.just("/w"), "client": st.just("t")},
        {
            "parentSessionId": st.sampled_from(SESSIONS),
            "agentName": st.sampled_from(["a", "b"]),
            "title": st.just("lead"),
        },
    ),
    "turn.started": fixed({"promptPreview": st.text(max_size=4)}),
    "user.message": fixed({"content": texts}, {"steered": st.booleans()}),
    "context.built": fixed(
        {
            "step": small,
            "tokens": fixed({"instruction": small, "transcript": small, "tools": small}),
            "maxContextTokens": small,
        }
    ),
    "context.compacted": fixed(
        {"step": small, "beforeTokens": small, "afterTokens": small, "summary": st.just("s")}
    ),
    "model.delta": fixed({"text": texts}),
    "model.tool_call_requested": fixed(
        {"toolCallId": st.sampled_from(CALLS), "tool": st.just("shell"), "args": st.just({"cmd": "ls"})}
    ),
    "permission.requested": fixed(
        {
            "requestId": st.sampled_from(REQUESTS),
            "toolCallId": st.sampled_from(CALLS),
            "tool": st.just("shell"),
            "risk": st.sampled_from(["read", "destructive"]),
            "argsPreview": st.just("ls"),
        }
    ),
    "permission.resolved": fixed(
        {
            "requestId": st.sampled_from(REQUESTS),
            "toolCallId": st.sampled_from(CALLS),
            "decision": st.sampled_from(["ask", "allow", "deny"]),
            "actor": st.sampled_from(["policy", "user", "system"]),
        },
        {"reason": st.just("careful"), "policy": st.just("default")},
    ),
    "tool.started": fixed(
        {"toolCallId": st.sampled_from(CALLS), "tool": st.just("shell"), "argsPreview": st.just("ls")}
    ),
    "tool.delta": fixed(
        {
            "toolCallId": st.sampled_from(CALLS),
            "stream": st.sampled_from(["stdout", "stderr"]),
            "text": texts,
        }
    ),
    "tool.completed": fixed(
        {
            "toolCallId": st.sampled_from(CALLS),
            "tool": st.just("shell"),
            "result": texts,
            "truncated": st.booleans(),
        },
        {"exitCode": small},
    ),
    "tool.failed": fixed(
        {
            "toolCallId": st.sampled_from(CALLS),
            "tool": st.just("shell"),
            "errorCode": st.sampled_from(["permission_denied", "timeout"]),
            "message": st.just("m"),
        }
    ),
    "subagent.delivered": fixed(
        {
            "childSessionId": st.sampled_from(SESSIONS),
            "agentName": st.just("a"),
            "status": st.sampled_from(["completed", "failed"]),
            "text": texts,
        }
    ),
    "turn.completed": fixed(
        {"stopReason": st.sampled_from(["final", "cancelled", "error", "max_steps"])},
        {"errorCode": st.just("unknown"), "usage": fixed({"promptTokens": small, "completionTokens": small})},
    ),
}

# Deltas are most of a real log, so they are drawn more often.
KINDS = list(PAYLOAD_STRATEGIES) + ["model.delta"] * 4 + ["tool.delta"] * 2
raw_event = st.tuples(
    st.sampled_from(SESSIONS),
    st.one_of(st.sampled_from(TURNS), st.none()),
    st.sampled_from(KINDS).flatmap(lambda kind: st.tuples(st.just(kind), PAYLOAD_STRATEGIES[kind])),
)


@st.composite
def event_logs(draw: st.DrawFn) -> list[Event]:
    """Any interleaving of valid events of three sessions, in no particular chain order."""
    raws = draw(st.lists(raw_event, max_size=80))
    sequences = dict.fromkeys(SESSIONS, 0)
    events = []
    for session_id, turn_id, (kind, payload) in raws:
        sequences[session_id] += 1
        seq = sequences[session_id]
        events.append(
            event_from_dict(
                {
                    "v": 1,
                    "id": f"evt_{session_id}_{seq}",
                    "sessionId": session_id,
                    "turnId": None if kind == "session.created" else turn_id,
                    "sequence": seq,
                    "ts": ts(seq),
                    "type": kind,
                    "payload": payload,
                }
            )
        )
    return events


def assert_same_views(one: DashboardState, two: DashboardState) -> None:
    assert one == two
    assert one.pending_permissions() == two.pending_permissions()
    assert tree(one) == tree(two)
    assert one.to_state_dump() == two.to_state_dump()
    assert one.running_count() == two.running_count()
    for session_id, session in one.sessions.items():
        for mine, theirs in zip(session.turns, two.sessions[session_id].turns, strict=True):
            assert (mine.text, mine.transcript) == (theirs.text, theirs.transcript)
            for call_id, call in mine.tool_calls.items():
                assert call.output == theirs.tool_calls[call_id].output


PROPERTY = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(events=event_logs(), split=st.integers(0, 10_000))
def test_reducing_a_prefix_then_a_copy_then_the_rest_equals_reducing_all(
    events: list[Event], split: int
) -> None:
    cut = split % (len(events) + 1)
    whole = project_state(events)

    prefix = project_state(events[:cut])
    resumed = prefix.copy()
    for event in events[cut:]:
        apply_event(resumed, event)
    assert_same_views(resumed, whole)
    assert_same_views(prefix, project_state(events[:cut]))  # the rest did not leak back

    kept = prefix.copy()
    for event in events[cut:]:
        apply_event(prefix, event)
    assert_same_views(prefix, whole)
    assert_same_views(kept, project_state(events[:cut]))


@PROPERTY
@given(events=event_logs())
def test_apply_event_one_by_one_equals_project_state(events: list[Event]) -> None:
    folded = fold(events)
    assert_same_views(folded, project_state(events))
    assert folded.event_count == len(events)
    assert sum(s.event_count for s in folded.sessions.values()) == len(events)
    orjson.dumps(folded.to_state_dump())  # JSON-ready
    asked = [p.order for p in folded.pending_permissions()]
    assert asked == sorted(asked)


@PROPERTY
@given(events=event_logs())
def test_project_state_takes_equal_session_ids_in_other_strings_as_one_session(events: list[Event]) -> None:
    # `project_state` keeps a run of one session's events by the identity of its id string (a
    # replayed log's events share one) and counts the run once it ends: an equal id in another
    # string object is still the same session, counted the same.
    copies = []
    for event in events:
        copy = event_from_dict(event.to_dict())
        copy.session_id = "".join(list(event.session_id))  # equal, and a new object
        assert copy.session_id is not event.session_id
        copies.append(copy)
    folded = fold(events)
    assert_same_views(project_state(copies), folded)
    assert [(s.event_count, s.last_sequence) for s in project_state(copies).sessions.values()] == [
        (s.event_count, s.last_sequence) for s in folded.sessions.values()
    ]
