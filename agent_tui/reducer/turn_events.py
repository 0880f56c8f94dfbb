"""How the events of a session and its turns change the views (everything but tool calls).

One small handler per event type, each `(state, session, event) -> None`, collected in
`TURN_HANDLERS`. Invariants:
- a turn's phase is only ever the `to` of a phase frame: the frame its phase event projects
  to (`events.frames.transition_for`, the projection the registry's frames come from), until
  the engine's sink sends one for the turn (the local dashboard); from then on only the sink
  moves it. A session's status follows from its last turn's stop reason (`SessionView.status`);
- a handler tolerates what a log read from the middle lacks: it never raises on a valid event,
  whatever came before it (see `turn_writes.turn_for`);
- time comes only from event timestamps: a turn starts at its first event's `ts`, ends at its
  `turn.completed`'s; timestamps are kept as the log's strings, never parsed here;
- `session.created` links the session into the tree at its place in (created ts, session id)
  order; a session that names itself as its parent is a root.
"""

from __future__ import annotations

from typing import Any

from agent_tui.events import Event
from agent_tui.events.frames import Frame, Transition
from agent_tui.events.transcript_text import context_tokens_total
from agent_tui.events.turn_vocabulary import PHASE_OF_EVENT
from agent_tui.reducer.agent_reports import fold_agent_report
from agent_tui.reducer.spend_events import record_budget, settle_turn_usage
from agent_tui.reducer.turn_writes import (
    Handler,
    add_entry,
    close_assistant,
    close_last,
    drop_pending,
    open_turn,
    turn_for,
    turn_of,
)
from agent_tui.reducer.views import (
    RESULT_CHARS,
    DashboardState,
    DeliveryView,
    SessionView,
    TurnView,
    copy_turn,
    tree_order,
)


def _on_session_created(state: DashboardState, session: SessionView, event: Event) -> None:
    close_last(session)  # (a repeated one, in a corrupt log)
    payload = event.payload
    session.cwd = payload["cwd"]
    session.client = payload["client"]
    session.agent_name = payload.get("agentName")
    session.title = payload.get("title")
    session.created_ts = event.ts
    session.created_seen = True
    session.model = payload.get("model")
    worktree = payload.get("worktree")
    if worktree is not None:
        session.worktree_path = worktree["path"]
        session.worktree_branch = worktree["branch"]
    if "budget" in payload:
        record_budget(session, payload["budget"])
    parent = payload.get("parentSessionId")
    if parent == session.session_id:  # a self-parent would make the tree infinite
        parent = None
    _link_parent(state, session, parent)


def _link_parent(state: DashboardState, session: SessionView, parent: str | None) -> None:
    session.parent_session_id = parent
    state._tree.link(session.session_id, parent, tree_order(session))


def _on_turn_started(state: DashboardState, session: SessionView, event: Event) -> None:
    close_last(session)  # a new turn ends the message being streamed
    turns = session.turns
    turn_id = event.turn_id
    if turn_id is not None and (not turns or turns[-1].turn_id != turn_id):
        turn = open_turn(state, session, turn_id, event.sequence, event.ts)  # what `turn_of` would do
    else:
        turn = turn_of(state, session, event)
    turn.prompt_preview = event.payload["promptPreview"]
    _project_phase(turn, event)


def _on_user_message(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    payload = event.payload
    add_entry(turn, "user", payload["content"], bool(payload.get("steered")), None)


def _on_context_built(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    close_assistant(turn)
    payload = event.payload
    turn.step = payload["step"]
    turn.steps += 1
    turn.tokens = context_tokens_total(payload["tokens"])
    turn.max_context_tokens = payload["maxContextTokens"]
    _project_phase(turn, event)


def _on_context_compacted(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    close_assistant(turn)
    turn.compactions += 1
    _project_phase(turn, event)


def _project_phase(turn: TurnView, event: Event) -> None:
    """The `to` of the phase frame a phase event projects to, unless the sink speaks for this
    turn. Read off the table the projection reads (`transition_for(event).to` is
    `PHASE_OF_EVENT[event.type]`) rather than by building the frame, which would cost the fold
    a tenth of its time; tests/test_phase_frames.py holds the two equal."""
    if not turn.phase_live:
        turn.phase = PHASE_OF_EVENT[event.type]


def apply_frame(state: DashboardState, frame: Frame) -> None:
    """A phase frame sent live by the engine's sink: the turn's phase, from now on only the
    sink's. Its turn is the session's last (its events were folded first: the engine tells
    listeners, then the registry, which sends frames only for the turn it runs)."""
    body = frame.body
    session = state.sessions.get(frame.session_id)
    turns = session.turns if session is not None else None
    if turns and isinstance(body, Transition) and turns[-1].turn_id == body.turn_id:
        turn = turns[-1]
        if turn.stop_reason is not None:  # a finished turn may be shared with copies
            turn = turns[-1] = copy_turn(turn)
        turn.phase = body.to
        turn.phase_live = True


def _on_model_delta(state: DashboardState, session: SessionView, event: Event) -> None:
    # The fold appends a delta of the call being streamed itself (its fast path): this is the
    # first delta of a model call, or one for a turn that is not the session's running one.
    turn = turn_for(state, session, event)
    current = turn._open
    if current is None:
        turn._open = [event.payload["text"]]
    else:
        current.append(event.payload["text"])


def _on_subagent_delivered(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    payload = event.payload
    text = payload["text"]
    if len(text) > RESULT_CHARS:
        text = text[:RESULT_CHARS]
    child = payload["childSessionId"]
    session.deliveries.append(
        DeliveryView(child, payload["agentName"], payload["status"], text, turn.turn_id, event.sequence)
    )
    add_entry(turn, "subagent", text, False, child)


def _on_turn_completed(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    close_assistant(turn)
    payload = event.payload
    turn.stop_reason = payload["stopReason"]
    turn.error_code = payload.get("errorCode")
    turn.end_message = payload.get("message")
    usage = payload.get("usage")
    if usage is not None:
        settle_turn_usage(state, session, turn, usage, event.ts)
    turn.ended_sequence = event.sequence
    turn.ended_ts = event.ts
    _project_phase(turn, event)
    if session.pending:  # its questions can no longer be answered
        drop_pending(state, session, turn.turn_id)


THINKING_RECORDS = frozenset({"thinking", "redacted_thinking", "reasoning"})
"""The `source.record` types that are a model's thinking: shown as their size only."""


def _thinking_size(data: dict[str, Any]) -> int:
    """Characters of a thinking/reasoning record's text (Claude Code and Codex shapes)."""
    text = data.get("thinking", data.get("text"))
    if isinstance(text, str):
        return len(text)
    parts = data.get("summary")
    if not isinstance(parts, list):
        return 0
    return sum(len(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


def _on_source_record(state: DashboardState, session: SessionView, event: Event) -> None:
    session.source_records += 1
    if event.payload["format"] == "acp":  # an ACP agent's plan or mode, if it is one
        fold_agent_report(session, event.payload["recordType"], event.payload["data"])
    if event.turn_id is None:  # session-level (between an imported log's turns): counted only
        close_last(session)
        return
    turn = turn_for(state, session, event)
    record_type = event.payload["recordType"]
    if record_type in THINKING_RECORDS:
        text = f"thinking… ({_thinking_size(event.payload['data']):,} characters)"
    else:
        text = f"{event.payload['format']} {record_type}"
    add_entry(turn, "note", text, False, record_type)


def _on_model_retry(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    payload = event.payload
    text = f"retrying the model call (attempt {payload['attempt']}, after {payload['delayMs']} ms): {payload['reason']}"
    add_entry(turn, "note", text, False, "model.retry")


def _on_turn_rewound(state: DashboardState, session: SessionView, event: Event) -> None:
    """A rewind (between turns): a note at the end of the session's last turn, naming the turn
    and what was put back."""
    if not session.turns:
        return
    payload = event.payload
    number = next(
        (i for i, turn in enumerate(session.turns, 1) if turn.turn_id == payload["rewoundTurnId"]), None
    )
    which = f"turn {number}" if number is not None else payload["rewoundTurnId"]
    files = payload["files"]
    done = ", ".join(f"{item['action']} {item['path']}" for item in files[:6])
    more = f" and {len(files) - 6} more" if len(files) > 6 else ""
    text = f"rewound {which}: " + (done + more if files else "no file had changed")
    if payload.get("incomplete"):
        text += f" (not undone: {payload['incomplete']})"
    add_entry(turn_of(state, session, event), "note", text, False, "turn.rewound")


TURN_HANDLERS: dict[str, Handler] = {
    "session.created": _on_session_created,
    "turn.started": _on_turn_started,
    "user.message": _on_user_message,
    "context.built": _on_context_built,
    "context.compacted": _on_context_compacted,
    "model.delta": _on_model_delta,
    "subagent.delivered": _on_subagent_delivered,
    "turn.completed": _on_turn_completed,
    "source.record": _on_source_record,
    "model.retry": _on_model_retry,
    "turn.rewound": _on_turn_rewound,
}
