"""Where the fold writes: the turn an event belongs to, and that turn's bounded transcript.

Invariants:
- `turn_for(state, session, event)` gives a turn the caller may write to: nearly always the
  session's last, unfinished turn; otherwise an earlier turn with the event's id (a finished one
  is cloned first, since copies of the state share finished turns), otherwise a new turn opened
  lazily for an event whose `turn.started` was not seen. It never raises;
- opening a turn drops the session's approvals still pending from an earlier turn: a session runs
  one turn at a time, so they can never be answered;
- a log of many turns folds in linear time: a `turn.started` never scans earlier turns;
- a turn's transcript keeps its last `MAX_TRANSCRIPT_ENTRIES` entries and its text its last
  `TEXT_CHARS` characters, whatever the number of events.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_tui.events import Event
from agent_tui.reducer.field_copy import compiled_new
from agent_tui.reducer.views import (
    MAX_TRANSCRIPT_ENTRIES,
    TEXT_CHARS,
    DashboardState,
    SessionView,
    TurnView,
    copy_turn,
)

Handler = Callable[[DashboardState, SessionView, Event], None]
"""What folds one event type into the state: `(state, session, event) -> None`, in place."""

new_turn = compiled_new(TurnView, ("turn_id", "started_sequence", "started_ts"))
"""`new_turn(turn_id, sequence, ts)`: `TurnView(turn_id, started_sequence=..., started_ts=...)`
without the generated `__init__` and its default factories (the fold opens one per turn)."""


def turn_for(state: DashboardState, session: SessionView, event: Event) -> TurnView:
    """The turn `event` belongs to, writable: nearly always the session's last, unfinished one."""
    turns = session.turns
    if turns:
        turn = turns[-1]
        if turn.stop_reason is None and turn.turn_id == event.turn_id:
            return turn
    return turn_of(state, session, event)


def turn_of(state: DashboardState, session: SessionView, event: Event) -> TurnView:
    """The slow path of finding an event's turn, writable.

    Taken when the event is not for the session's last, unfinished turn: look back (a finished
    turn may be shared with copies, so it is cloned before it is written) or open a turn lazily.
    """
    turn_id = event.turn_id
    turns = session.turns
    if turn_id is None:  # only session.created may have no turn; tolerate it on others
        if turns:
            return _writable(turns, len(turns) - 1)
        turn_id = ""
    # Newest first: an event for an earlier turn is rare (the closing of an interrupted turn). A
    # start opens a new turn unless it repeats the last one, so it never scans: a log of many
    # turns folds in linear time.
    oldest = max(len(turns) - 1, 0) if event.type == "turn.started" else 0
    for index in range(len(turns) - 1, oldest - 1, -1):
        if turns[index].turn_id == turn_id:
            return _writable(turns, index)
    return open_turn(state, session, turn_id, event.sequence, event.ts)


def _writable(turns: list[TurnView], index: int) -> TurnView:
    turn = turns[index]
    if turn.stop_reason is not None:
        turn = turns[index] = copy_turn(turn)
    return turn


def open_turn(state: DashboardState, session: SessionView, turn_id: str, sequence: int, ts: str) -> TurnView:
    """Append a new turn to `session` (it started at event `sequence`, time `ts`)."""
    # A session runs one turn at a time: approvals still pending from an earlier turn (a process
    # that died while asking) can never be answered, so they leave the queue.
    if session.pending:
        drop_pending(state, session, None)
    turn = new_turn(turn_id, sequence, ts)
    session.turns.append(turn)
    return turn


def drop_pending(state: DashboardState, session: SessionView, turn_id: str | None) -> None:
    """Take `session`'s pending approvals of turn `turn_id` (None: of every turn) off the queue."""
    pending = session.pending
    gone = [rid for rid, view in pending.items() if turn_id is None or view.turn_id == turn_id]
    for request_id in gone:
        del pending[request_id]
        state._pending.pop((session.session_id, request_id), None)


# -- the transcript ------------------------------------------------------------------------------

_CLOSED_ITEMS = 4 * MAX_TRANSCRIPT_ENTRIES  # `TurnView._closed` never holds more (4 items per entry)


def close_assistant(turn: TurnView) -> None:
    """End the model call being streamed (if any): its text becomes an assistant entry."""
    parts = turn._open
    if parts is not None:
        text = "".join(parts)
        turn._open = None
        add_entry(turn, "assistant", text, False, None)
        head = turn._text_head + text
        turn._text_head = head[-TEXT_CHARS:] if len(head) > TEXT_CHARS else head


def close_last(session: SessionView) -> None:
    """End the model call being streamed in the session's last turn, if any (a turn's start, a
    budget, a session-level record: every event but a delta ends the message being streamed)."""
    turns = session.turns
    if turns and turns[-1]._open is not None:
        close_assistant(turns[-1])


def add_entry(turn: TurnView, role: str, text: str, steered: bool, ref: str | None) -> None:
    """Append a transcript entry, after what the model streamed so far (which it closes)."""
    if turn._open is not None:
        close_assistant(turn)
    closed = turn._closed
    if len(closed) == _CLOSED_ITEMS:
        closed = closed[4:]
    turn._closed = closed + (role, text, steered, ref)
