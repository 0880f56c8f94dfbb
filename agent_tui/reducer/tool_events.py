"""How a tool call's events change the views: the request, its approval, its run and its result.

One small handler per event type, each `(state, session, event) -> None`, collected in
`TOOL_HANDLERS`. Invariants:
- a call's view is created by whichever of its events comes first (a log read from the middle),
  and learns its tool name from the first event that carries one;
- `status` moves requested → asking → running → completed | failed | denied; an answer moves
  only a call still requested or asking, and a `tool.started` after the call completed or failed
  does not reopen it;
- the approval queue holds exactly the `ask`s not yet answered: an `ask` enters it (a repeated
  one goes to the back), its answer or the call's end takes it out, and a turn's end (or the next
  turn's start) takes out what that turn left unanswered. Each entry's `order` is the
  dashboard-wide count of `ask`s so far;
- a turn's approval wait sums, per request the user was asked, the time from the `ask` to the
  answer (from the events' timestamps);
- output is kept in bounded memory (its last `OUTPUT_CHARS`), and once the call ended as one
  string.
"""

from __future__ import annotations

from typing import get_args

from agent_tui.events import Event
from agent_tui.events.model import Actor, Resolution
from agent_tui.reducer.field_copy import compiled_new
from agent_tui.reducer.timestamps import ms_between
from agent_tui.reducer.turn_writes import Handler, add_entry, close_assistant, turn_for
from agent_tui.reducer.views import (
    OUTPUT_CHARS,
    RESULT_CHARS,
    DashboardState,
    OptionView,
    PermissionView,
    SessionView,
    ToolCallView,
    TurnView,
    new_named_tuple,
)

new_tool_call = compiled_new(ToolCallView, ("call_id", "tool"))
"""`new_tool_call(call_id, tool)`: `ToolCallView(call_id, tool)` without the generated `__init__`
and its default factories (the fold creates one per tool call)."""

# One shared tuple per valid (decision, actor): `decisions` entries of a long replay then add no
# objects for the garbage collector to count.
_PAIRS = {
    (decision, actor): (decision, actor) for decision in get_args(Resolution) for actor in get_args(Actor)
}


def _tool_call(turn: TurnView, call_id: str, tool: str) -> ToolCallView:
    """The call `call_id` of `turn`, created if new; learns its tool name if it had none."""
    call = turn.tool_calls.get(call_id)
    if call is None:
        call = turn.tool_calls[call_id] = new_tool_call(call_id, tool)
    elif tool and not call.tool:
        call.tool = tool
    return call


def _on_tool_call_requested(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    payload = event.payload
    call = _tool_call(turn, payload["toolCallId"], payload["tool"])
    call.args = payload["args"]


def _on_permission_requested(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    if turn._open is not None:  # it ends the message being streamed
        close_assistant(turn)
    payload = event.payload
    call = _tool_call(turn, payload["toolCallId"], payload["tool"])
    call.request_id = payload["requestId"]
    call.risk = payload["risk"]
    call.risk_reason = payload.get("reason")
    call.args_preview = payload["argsPreview"]
    offered = payload.get("options")
    call.options = tuple(OptionView(o["optionId"], o["name"], o["kind"]) for o in offered) if offered else ()


def _on_permission_resolved(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    if turn._open is not None:  # it ends the message being streamed
        close_assistant(turn)
    payload = event.payload
    call = _tool_call(turn, payload["toolCallId"], "")
    decision = payload["decision"]
    request_id = payload["requestId"]
    pair = (decision, payload["actor"])
    call.decisions.append(_PAIRS.get(pair, pair))
    if call.request_id is None:
        call.request_id = request_id
    if decision == "ask":
        _enqueue(state, session, turn, call, event)
        return
    if session.pending:
        answered = session.pending.pop(request_id, None)
        if answered is not None:
            state._pending.pop((session.session_id, request_id), None)
            waited = ms_between(answered.asked_ts, event.ts)
            if waited:
                turn.approval_wait_ms += waited
    call.answer_reason = payload.get("reason")
    status = call.status
    if decision == "withdrawn":  # its CLI took the question back: the call goes on as it says
        if status == "asking":
            call.status = "requested"
    elif status == "requested" or status == "asking":
        call.status = "running" if decision == "allow" else "denied"


def _enqueue(
    state: DashboardState, session: SessionView, turn: TurnView, call: ToolCallView, event: Event
) -> None:
    """The policy asked the user: the request joins the back of the approval queue."""
    payload = event.payload
    request_id = payload["requestId"]
    call.status = "asking"
    state.asked_count += 1
    view = new_named_tuple(
        PermissionView,
        (
            session.session_id,
            turn.turn_id,
            request_id,
            call.call_id,
            call.tool,
            call.risk,
            call.args_preview,
            payload.get("reason"),
            payload.get("policy"),
            event.sequence,
            state.asked_count,
            call.risk_reason,
            event.ts,
        ),
    )
    key = (session.session_id, request_id)
    session.pending.pop(request_id, None)  # a repeated ask goes to the back of the queue
    state._pending.pop(key, None)
    session.pending[request_id] = view
    state._pending[key] = view


def _on_tool_started(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    if turn._open is not None:  # it ends the message being streamed
        close_assistant(turn)
    payload = event.payload
    call = _tool_call(turn, payload["toolCallId"], payload["tool"])
    call.args_preview = payload["argsPreview"]
    status = call.status
    if status != "completed" and status != "failed":
        call.status = "running"


def _on_tool_delta(state: DashboardState, session: SessionView, event: Event) -> None:
    # The fold appends output of a known call of the running turn itself (its fast path).
    turn = turn_for(state, session, event)
    if turn._open is not None:  # it ends the message being streamed
        close_assistant(turn)
    payload = event.payload
    call = turn.tool_calls.get(payload["toolCallId"])
    if call is None:
        call = _tool_call(turn, payload["toolCallId"], "")
        call.status = "running"
    add_output(call, payload["text"])


def add_output(call: ToolCallView, text: str) -> None:
    """Append streamed output to `call`, keeping at most twice `OUTPUT_CHARS` of it."""
    # Parts are joined and cut only when they hold twice the kept length: amortized O(1).
    try:
        call._out_parts.append(text)  # type: ignore[union-attr]
    except AttributeError:  # output after the call ended (tolerated): a list again
        call._out_parts = [call._out_parts, text]  # type: ignore[list-item]
    size = call._out_len + len(text)
    if size > 2 * OUTPUT_CHARS:
        kept = "".join(call._out_parts)[-OUTPUT_CHARS:]
        call._out_parts = [kept]
        size = len(kept)
    call._out_len = size


def _seal_output(call: ToolCallView) -> None:
    # A finished call's output will not grow: keep it as one string, cut to what `output` shows
    # (cheaper to copy and read, and no list for the garbage collector to count and scan).
    parts = call._out_parts
    if type(parts) is list:
        kept = "".join(parts)
        if len(kept) > OUTPUT_CHARS:
            kept = kept[-OUTPUT_CHARS:]
        call._out_parts = kept
        call._out_len = len(kept)


def _end_call(
    state: DashboardState, session: SessionView, turn: TurnView, call: ToolCallView, text: str
) -> None:
    """What every end of a call does: seal its output, free its approval, record its result."""
    _seal_output(call)
    request_id = call.request_id
    # The chain answers an ask before the tool ends; if a log skipped that, free the queue anyway.
    if session.pending and request_id is not None and session.pending.pop(request_id, None) is not None:
        state._pending.pop((session.session_id, request_id), None)
    add_entry(turn, "tool", text, False, call.call_id)


def _on_tool_completed(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    payload = event.payload
    call = _tool_call(turn, payload["toolCallId"], payload["tool"])
    result = payload["result"]
    if len(result) > RESULT_CHARS:
        result = result[:RESULT_CHARS]
    call.status = "completed"
    call.result = result
    call.exit_code = payload.get("exitCode")
    call.truncated = bool(payload.get("truncated"))
    _end_call(state, session, turn, call, result)


def _on_tool_failed(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = turn_for(state, session, event)
    payload = event.payload
    call = _tool_call(turn, payload["toolCallId"], payload["tool"])
    code = payload["errorCode"]
    call.status = "denied" if code == "permission_denied" else "failed"
    call.error_code = code
    call.message = payload["message"]
    _end_call(state, session, turn, call, payload["message"])


TOOL_HANDLERS: dict[str, Handler] = {
    "model.tool_call_requested": _on_tool_call_requested,
    "permission.requested": _on_permission_requested,
    "permission.resolved": _on_permission_resolved,
    "tool.started": _on_tool_started,
    "tool.delta": _on_tool_delta,
    "tool.completed": _on_tool_completed,
    "tool.failed": _on_tool_failed,
}
