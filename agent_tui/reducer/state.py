"""The reducer: stored events → dashboard state, one fold shared by the live view and replay.

Invariants this module guarantees:
- `project_state(events)` is pure from the caller's view: no clocks, no randomness, no I/O, it
  reads nothing but the events, so the same events give equal states (`==`). The live dashboard
  (`apply_event` on each event as it is stored) and the replay scrubber (`project_state` over the
  log, or `apply_event` from a `copy()` checkpoint) therefore show the same thing by construction;
- `apply_event(state, event)` mutates `state` in place and returns it (replay folds millions of
  events, so it allocates as little as it can); `DashboardState.copy()` gives an independent deep
  copy, and reducing a prefix, copying, then reducing the rest equals reducing everything at once;
- it never raises on a valid event, whatever the order: a session whose `session.created` was
  not seen, a turn event without `turn.started`, a tool event without its request are all
  tolerated (their views are created lazily with what is known); unknown event types are counted
  and otherwise ignored;
- a turn's phase is `agent_tui.events.turn_vocabulary.phase_for` of its latest phase event, and
  a session's status is the `ENDINGS` row of its last turn's stop reason: the same tables the
  registry's frames use;
- the session tree (`roots`, `children`, `agent_path`) does not depend on the order in which
  sessions' logs were read: siblings and roots are ordered by (created ts, session id);
- bounded memory per view: turn text keeps its last 8,000 characters, tool output its last 2,000,
  tool results their first 2,000, a turn's messages their last 200 entries;
- time comes only from event timestamps: a turn starts at its first event's `ts` (its
  `turn.started`), ends at its `turn.completed`'s, and its approval wait sums, per request the
  user was asked, the time from the `ask` to the answer. Timestamps are kept as the strings the log
  holds and parsed only when an answer ends a wait or a caller asks for a duration, so the fold
  of deltas pays nothing for them.

Views are read-only outside this module. Values taken from event payloads (tool `args` dicts,
texts) are shared, not copied; `PermissionView`, `DeliveryView`, `Message` and `Usage` are
immutable; and `copy()` shares finished turns between the copies (copy-on-write: a handler that
must write to a finished turn, for a tolerated late event, clones it first), so a checkpoint costs
in proportion to the sessions and the running turns, not to the whole history.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, NamedTuple, get_args

from agent_tui.events import Event
from agent_tui.events.lineage import path_to_root
from agent_tui.events.model import Actor, Decision
from agent_tui.events.transcript_text import context_tokens_total
from agent_tui.events.turn_vocabulary import ENDINGS, Phase, phase_for

SessionStatus = Literal["idle", "running", "completed", "cancelled", "failed"]
ToolStatus = Literal["requested", "asking", "running", "completed", "failed", "denied"]
Role = Literal["user", "assistant", "tool", "subagent", "note"]

TEXT_CHARS = 8_000
"""A turn keeps the last this-many characters of its assistant text."""
OUTPUT_CHARS = 2_000
"""A tool call keeps the last this-many characters of its streamed output."""
RESULT_CHARS = 2_000
"""A tool result (and a delivery's text) keeps its first this-many characters."""
MAX_MESSAGES = 200
"""A turn keeps its last this-many messages."""


class Message(NamedTuple):
    """One entry of a turn's conversation.

    `role` is `user` (with `steered` set for input absorbed mid-turn), `assistant` (one per model
    call that streamed text: its deltas joined), `tool` (a tool's result, or its failure message;
    `ref` is the tool call id), `subagent` (a child's delivery; `ref` is the child session id) or
    `note` (what an imported log kept that our vocabulary cannot say, or a model retry; `ref` is
    its record type; a thinking block shows only its size).
    """

    role: Role
    text: str
    steered: bool = False
    ref: str | None = None


class Usage(NamedTuple):
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True, slots=True)
class PermissionView:
    """An approval waiting for the user: a tool call the policy answered with `ask`.

    `reason` is the policy's reason/warning from that `ask`; `risk_reason` says why the call has
    its risk (from `permission.requested`); `order` is the dashboard-wide arrival number (1 for the
    first `ask` the state saw), which orders the approval queue; `asked_ts` is the `ts` of that
    `ask` (how long the request has waited is measured from it).
    """

    session_id: str
    turn_id: str
    request_id: str
    tool_call_id: str
    tool: str
    risk: str | None
    args_preview: str
    reason: str | None
    policy: str | None
    sequence: int
    order: int
    risk_reason: str | None = None
    asked_ts: str = ""


@dataclass(frozen=True, slots=True)
class DeliveryView:
    """A child's result as its parent's turn took it in (`subagent.delivered`)."""

    child_session_id: str
    agent_name: str
    status: Literal["completed", "failed"]
    text: str
    turn_id: str
    sequence: int


@dataclass(slots=True)
class ToolCallView:
    """One tool call, from the model's request to its result.

    `status` moves requested → asking (the policy asked the user) → running (allowed, or
    `tool.started`) → completed | failed; a denied call ends `denied`. `decisions` is every
    `permission.resolved` in order as (decision, actor); `answer_reason` is the reason the last
    non-`ask` answer gave (e.g. that `--approve` answered for the user).
    """

    call_id: str
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    args_preview: str = ""
    risk: str | None = None
    risk_reason: str | None = None
    status: ToolStatus = "requested"
    decisions: list[tuple[str, str]] = field(default_factory=list)
    request_id: str | None = None
    exit_code: int | None = None
    error_code: str | None = None
    message: str | None = None
    result: str | None = None
    truncated: bool = False
    answer_reason: str | None = None
    # Output parts: a list while the call runs; once it ended, the kept output as one string
    # (see `_seal_output`).
    _out_parts: list[str] | str = field(default_factory=list, repr=False)
    _out_len: int = field(default=0, repr=False)

    @property
    def output(self) -> str:
        """The last 2,000 characters of the streamed output, stdout and stderr as interleaved."""
        parts = self._out_parts
        text = parts if type(parts) is str else "".join(parts)
        return text[-OUTPUT_CHARS:] if len(text) > OUTPUT_CHARS else text

    def _copy(self) -> ToolCallView:
        new = _new(ToolCallView)
        new.call_id = self.call_id
        new.tool = self.tool
        new.args = self.args
        new.args_preview = self.args_preview
        new.risk = self.risk
        new.risk_reason = self.risk_reason
        new.status = self.status
        new.decisions = self.decisions[:]
        new.request_id = self.request_id
        new.exit_code = self.exit_code
        new.error_code = self.error_code
        new.message = self.message
        new.result = self.result
        new.truncated = self.truncated
        new.answer_reason = self.answer_reason
        new._out_parts = self._out_parts[:]
        new._out_len = self._out_len
        return new


@dataclass(slots=True)
class TurnView:
    """One turn: its phase, steps, context size, text, messages and tool calls.

    `step`/`tokens`/`max_context_tokens` come from the last `context.built` (tokens is its total),
    `steps` counts them; `stop_reason` is None while the turn has not completed. `started_ts` is
    the `ts` of the turn's first event, `ended_ts` that of its `turn.completed`;
    `approval_wait_ms` is the time its answered requests waited for the user.
    """

    turn_id: str
    prompt_preview: str = ""
    phase: Phase = "start"
    stop_reason: str | None = None
    error_code: str | None = None
    step: int | None = None
    steps: int = 0
    tokens: int | None = None
    max_context_tokens: int | None = None
    compactions: int = 0
    tool_calls: dict[str, ToolCallView] = field(default_factory=dict)
    usage: Usage | None = None
    started_sequence: int = 0
    ended_sequence: int | None = None
    started_ts: str = ""
    ended_ts: str | None = None
    approval_wait_ms: int = 0
    # The model call being streamed keeps its deltas as a list (`_open`, None between calls); a
    # delta is one list append. When the call ends its text joins `_text_head` (the earlier calls'
    # text, cut to TEXT_CHARS) and becomes one assistant entry of `_closed`.
    # `_closed` holds the entries flat, four items each (role, text, steered, ref; at most
    # MAX_MESSAGES entries), in a tuple replaced on each entry: copies share it, and a full replay
    # keeps hundreds of thousands of entries without as many objects for the garbage collector to
    # count and scan. Entries become `Message`s when `messages` is read.
    _text_head: str = field(default="", repr=False)
    _closed: tuple[Any, ...] = field(default=(), repr=False)
    _open: list[str] | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        """The turn's assistant text, every delta joined, cut to its last 8,000 characters."""
        text = self._text_head
        if self._open is not None:
            text += "".join(self._open)
        return text[-TEXT_CHARS:] if len(text) > TEXT_CHARS else text

    @property
    def messages(self) -> list[Message]:
        """The turn's conversation in order, its last 200 entries (a new list on each read)."""
        closed = self._closed
        out = [_tuple_new(Message, closed[k : k + 4]) for k in range(0, len(closed), 4)]
        if self._open is not None:
            out.append(Message("assistant", "".join(self._open)))
            if len(out) > MAX_MESSAGES:
                del out[0]
        return out

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None

    @property
    def duration_ms(self) -> int | None:
        """From the turn's start to its `turn.completed` (None while it runs)."""
        if self.ended_ts is None:
            return None
        return ms_between(self.started_ts, self.ended_ts)

    def _copy(self) -> TurnView:
        new = _new(TurnView)
        new.turn_id = self.turn_id
        new.prompt_preview = self.prompt_preview
        new.phase = self.phase
        new.stop_reason = self.stop_reason
        new.error_code = self.error_code
        new.step = self.step
        new.steps = self.steps
        new.tokens = self.tokens
        new.max_context_tokens = self.max_context_tokens
        new.compactions = self.compactions
        new.tool_calls = {key: call._copy() for key, call in self.tool_calls.items()}
        new.usage = self.usage
        new.started_sequence = self.started_sequence
        new.ended_sequence = self.ended_sequence
        new.started_ts = self.started_ts
        new.ended_ts = self.ended_ts
        new.approval_wait_ms = self.approval_wait_ms
        new._text_head = self._text_head
        new._closed = self._closed
        new._open = None if self._open is None else self._open[:]
        return new


@dataclass(slots=True)
class SessionView:
    """One session: its header, its turns, its deliveries and its pending approvals.

    `created_seen` is False for a session known only from later events (a log read from the
    middle); its header fields are then None. `created_ts` is the ts of its first event seen.
    `model` and `worktree_path`/`worktree_branch` are what `session.created` recorded, if anything.
    """

    session_id: str
    parent_session_id: str | None = None
    agent_name: str | None = None
    title: str | None = None
    cwd: str | None = None
    client: str | None = None
    created_ts: str = ""
    created_seen: bool = False
    model: str | None = None
    worktree_path: str | None = None
    worktree_branch: str | None = None
    turns: list[TurnView] = field(default_factory=list)
    last_sequence: int = 0
    event_count: int = 0
    deliveries: list[DeliveryView] = field(default_factory=list)
    pending: dict[str, PermissionView] = field(default_factory=dict)
    source_records: int = 0  # `source.record`s of an imported log (counted in the header)

    @property
    def status(self) -> SessionStatus:
        """idle (no turn yet), running, or how the last turn ended."""
        turns = self.turns
        if not turns:
            return "idle"
        stop = turns[-1].stop_reason
        if stop is None:
            return "running"
        ending = ENDINGS.get(stop)
        return ending.run_state if ending is not None else "failed"

    @property
    def phase(self) -> Phase | None:
        """The current (or last) turn's phase; None before the first turn."""
        return self.turns[-1].phase if self.turns else None

    @property
    def display_name(self) -> str:
        """agentName, else title, else the session id."""
        return self.agent_name or self.title or self.session_id

    def _copy(self) -> SessionView:
        new = _new(SessionView)
        new.session_id = self.session_id
        new.parent_session_id = self.parent_session_id
        new.agent_name = self.agent_name
        new.title = self.title
        new.cwd = self.cwd
        new.client = self.client
        new.created_ts = self.created_ts
        new.created_seen = self.created_seen
        new.model = self.model
        new.worktree_path = self.worktree_path
        new.worktree_branch = self.worktree_branch
        # A finished turn is shared, not copied: every handler clones a finished turn before
        # writing to it, and the delta fast path writes only to a turn with an open model call.
        new.turns = [
            turn if turn.stop_reason is not None and turn._open is None else turn._copy()
            for turn in self.turns
        ]
        new.last_sequence = self.last_sequence
        new.event_count = self.event_count
        new.deliveries = self.deliveries[:]
        new.pending = self.pending.copy()
        new.source_records = self.source_records
        return new


@dataclass(slots=True)
class DashboardState:
    """Everything the dashboard shows, as a fold of the event logs.

    `sessions` is in first-seen order; `asked_count` is the global arrival counter of `ask`
    resolutions. Equality compares every session, turn and tool call.
    """

    sessions: dict[str, SessionView] = field(default_factory=dict)
    event_count: int = 0
    asked_count: int = 0
    # Derived indexes, kept in step with `sessions` by the handlers (so not compared):
    # parent id → child ids in tree order, and every pending approval in arrival order.
    _children: dict[str, list[str]] = field(default_factory=dict, compare=False, repr=False)
    _pending: dict[tuple[str, str], PermissionView] = field(default_factory=dict, compare=False, repr=False)

    def children(self, session_id: str) -> list[str]:
        """Ids of the sessions whose parentSessionId is `session_id`, oldest first."""
        return list(self._children.get(session_id, ()))

    def roots(self) -> list[str]:
        """Ids of the sessions with no parent, or a parent this state has not seen, oldest first."""
        sessions = self.sessions
        found = [
            s for s in sessions.values() if s.parent_session_id is None or s.parent_session_id not in sessions
        ]
        found.sort(key=_tree_order)
        return [s.session_id for s in found]

    def agent_path(self, session_id: str) -> tuple[str, ...]:
        """Names from the root down to `session_id` (agentName, else title, else id).

        An ancestor known only by id (its log not read) appears as its id; a parent cycle in a
        corrupt log stops the walk instead of looping.
        """
        sessions = self.sessions

        def parent_of(sid: str) -> str | None:
            session = sessions.get(sid)
            return session.parent_session_id if session is not None else None

        def label_of(sid: str) -> str:
            session = sessions.get(sid)
            return session.display_name if session is not None else sid

        return path_to_root(session_id, parent_of, label_of)

    def pending_permissions(self) -> list[PermissionView]:
        """Every approval waiting for the user, across sessions, in the order they were asked."""
        pending = list(self._pending.values())
        pending.sort(key=_asked_order)
        return pending

    def running_count(self) -> int:
        """How many sessions have a turn that started and has not completed."""
        return sum(1 for s in self.sessions.values() if s.turns and s.turns[-1].stop_reason is None)

    def to_state_dump(self) -> dict[str, Any]:
        """The `replay --dump state` object (its shape: README.md): sessions by id, turns in order."""
        return {
            "sessions": [
                {
                    "sessionId": s.session_id,
                    "parentSessionId": s.parent_session_id,
                    "agentName": s.agent_name,
                    "cwd": s.cwd,
                    "status": s.status,
                    "turns": [_turn_dump(t) for t in s.turns],
                }
                for s in sorted(self.sessions.values(), key=_by_id)
            ]
        }

    def copy(self) -> DashboardState:
        """An independent copy: applying events to either never changes the other.

        Finished turns and payload values are shared (see the module docstring); everything the
        reducer may still write to is copied.
        """
        new = _new(DashboardState)
        new.sessions = {key: s._copy() for key, s in self.sessions.items()}
        new.event_count = self.event_count
        new.asked_count = self.asked_count
        new._children = {key: ids[:] for key, ids in self._children.items()}
        new._pending = self._pending.copy()
        return new


_new = object.__new__
_tuple_new = tuple.__new__  # builds a Message without NamedTuple's Python-level __new__
# One shared tuple per valid (decision, actor): `decisions` entries of a long replay then add no
# objects for the garbage collector to count.
_PAIRS = {
    (decision, actor): (decision, actor) for decision in get_args(Decision) for actor in get_args(Actor)
}


def _turn_dump(turn: TurnView) -> dict[str, Any]:
    return {
        "turnId": turn.turn_id,
        "stopReason": turn.stop_reason,
        "startedAt": turn.started_ts or None,
        "endedAt": turn.ended_ts,
        "durationMs": turn.duration_ms,
    }


def epoch_ms(ts: str) -> int | None:
    """An event `ts` (`2026-11-29T22:17:03.120Z`) in milliseconds since the epoch; None if unreadable."""
    try:
        return int(datetime.fromisoformat(ts).timestamp() * 1000)
    except (ValueError, TypeError):
        return None


def ms_between(start_ts: str, end_ts: str) -> int | None:
    """Milliseconds from one event `ts` to another (never negative); None if either is unreadable."""
    start, end = epoch_ms(start_ts), epoch_ms(end_ts)
    if start is None or end is None:
        return None
    return max(0, end - start)


def _tree_order(session: SessionView) -> tuple[str, str]:
    return (session.created_ts, session.session_id)


def _by_id(session: SessionView) -> str:
    return session.session_id


def _asked_order(view: PermissionView) -> int:
    return view.order


# -- the fold ----------------------------------------------------------------------------------


def project_state(events: Iterable[Event]) -> DashboardState:
    """Fold events (of any number of sessions, each session's in sequence order) into a new state.

    Pure from the caller's view: same events → equal state. Sessions' logs may come in any order
    relative to each other (a child's before its parent's).

    Args:
        events: stored events.

    Returns:
        A fresh `DashboardState`.
    """
    # One fold for live and replay: replay runs the live dashboard's `apply_event` on each event.
    # (An unrolled copy of it was measured no faster end to end, so there is none.)
    state = DashboardState()
    for event in events:
        apply_event(state, event)
    return state


def apply_event(state: DashboardState, event: Event) -> DashboardState:
    """Fold one more event into `state`, in place; returns the same object.

    Args:
        state: the state to update (mutated).
        event: the next stored event.

    Returns:
        `state`.
    """
    state.event_count += 1
    try:  # subscripts rather than .get(): cheaper on the path taken a million times
        session = state.sessions[event.session_id]
    except KeyError:
        session = _new_session(state, event)
    session.event_count += 1
    session.last_sequence = event.sequence
    kind = event.type
    # Fast paths for the two commonest events: a delta continuing the model call being streamed,
    # and output of a known tool call of the running turn (what `_on_model_delta` and
    # `_on_tool_delta` do in that case, without their call).
    if kind == "model.delta":
        turns = session.turns
        if turns:
            turn = turns[-1]
            current = turn._open
            if current is not None and turn.turn_id == event.turn_id:
                current.append(event.payload["text"])
                return state
    elif kind == "tool.delta":
        turns = session.turns
        if turns:
            turn = turns[-1]
            if turn.stop_reason is None and turn.turn_id == event.turn_id:
                payload = event.payload
                call = turn.tool_calls.get(payload["toolCallId"])
                if call is not None:
                    _add_output(call, payload["text"])
                    return state
    try:
        handler = _HANDLERS[kind]
    except KeyError:  # a type this reducer does not know: counted, otherwise ignored
        return state
    handler(state, session, event)
    return state


def _new_session(state: DashboardState, event: Event) -> SessionView:
    session = SessionView(event.session_id, created_ts=event.ts)
    state.sessions[event.session_id] = session
    return session


def _turn_for(state: DashboardState, session: SessionView, event: Event) -> TurnView:
    """The turn `event` belongs to, writable: nearly always the session's last, unfinished one."""
    turns = session.turns
    if turns:
        turn = turns[-1]
        if turn.stop_reason is None and turn.turn_id == event.turn_id:
            return turn
    return _turn_of(state, session, event)


def _turn_of(state: DashboardState, session: SessionView, event: Event) -> TurnView:
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
    return _open_turn(state, session, turn_id, event.sequence, event.ts)


def _writable(turns: list[TurnView], index: int) -> TurnView:
    turn = turns[index]
    if turn.stop_reason is not None:
        turn = turns[index] = turn._copy()
    return turn


def _open_turn(state: DashboardState, session: SessionView, turn_id: str, sequence: int, ts: str) -> TurnView:
    # A session runs one turn at a time: approvals still pending from an earlier turn (a process
    # that died while asking) can never be answered, so they leave the queue.
    if session.pending:
        _drop_pending(state, session, None)
    turn = _new_turn(turn_id, sequence, ts)
    session.turns.append(turn)
    return turn


# The views the fold creates most often, built field by field: the same as
# `TurnView(turn_id, started_sequence=sequence, started_ts=ts)` and `ToolCallView(call_id, tool)` (a test holds
# them to it) without the generated `__init__` and its default factories.


def _new_turn(turn_id: str, sequence: int, ts: str) -> TurnView:
    turn = _new(TurnView)
    turn.turn_id = turn_id
    turn.prompt_preview = ""
    turn.phase = "start"
    turn.stop_reason = None
    turn.error_code = None
    turn.step = None
    turn.steps = 0
    turn.tokens = None
    turn.max_context_tokens = None
    turn.compactions = 0
    turn.tool_calls = {}
    turn.usage = None
    turn.started_sequence = sequence
    turn.ended_sequence = None
    turn.started_ts = ts
    turn.ended_ts = None
    turn.approval_wait_ms = 0
    turn._text_head = ""
    turn._closed = ()
    turn._open = None
    return turn


def _new_call(call_id: str, tool: str) -> ToolCallView:
    call = _new(ToolCallView)
    call.call_id = call_id
    call.tool = tool
    call.args = {}
    call.args_preview = ""
    call.risk = None
    call.risk_reason = None
    call.status = "requested"
    call.decisions = []
    call.request_id = None
    call.exit_code = None
    call.error_code = None
    call.message = None
    call.result = None
    call.truncated = False
    call.answer_reason = None
    call._out_parts = []
    call._out_len = 0
    return call


def _drop_pending(state: DashboardState, session: SessionView, turn_id: str | None) -> None:
    pending = session.pending
    gone = [rid for rid, view in pending.items() if turn_id is None or view.turn_id == turn_id]
    for request_id in gone:
        del pending[request_id]
        state._pending.pop((session.session_id, request_id), None)


def _tool_call(turn: TurnView, call_id: str, tool: str) -> ToolCallView:
    """The call `call_id` of `turn`, created if new; learns its tool name if it had none.

    Handlers look the call up themselves first and come here only when it is missing or has no
    tool name yet."""
    call = turn.tool_calls.get(call_id)
    if call is None:
        call = turn.tool_calls[call_id] = _new_call(call_id, tool)
    elif tool and not call.tool:
        call.tool = tool
    return call


_CLOSED_ITEMS = 4 * MAX_MESSAGES  # `TurnView._closed` never holds more (4 items per entry)


def _close_assistant(turn: TurnView) -> None:
    parts = turn._open
    if parts is not None:
        text = "".join(parts)
        closed = turn._closed
        if len(closed) == _CLOSED_ITEMS:
            closed = closed[4:]
        turn._closed = closed + ("assistant", text, False, None)
        head = turn._text_head + text
        turn._text_head = head[-TEXT_CHARS:] if len(head) > TEXT_CHARS else head
        turn._open = None


def _add_message(turn: TurnView, role: str, text: str, steered: bool, ref: str | None) -> None:
    if turn._open is not None:
        _close_assistant(turn)
    closed = turn._closed
    if len(closed) == _CLOSED_ITEMS:
        closed = closed[4:]
    turn._closed = closed + (role, text, steered, ref)


# -- one small handler per event type ----------------------------------------------------------
# Each takes (state, session, event) and finds its turn with `_turn_for`.


def _on_session_created(state: DashboardState, session: SessionView, event: Event) -> None:
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
    parent = payload.get("parentSessionId")
    if parent == session.session_id:  # a self-parent would make the tree infinite
        parent = None
    _link_parent(state, session, parent)


def _link_parent(state: DashboardState, session: SessionView, parent: str | None) -> None:
    session_id = session.session_id
    old = session.parent_session_id
    if old is not None:
        siblings = state._children.get(old)
        if siblings is not None and session_id in siblings:
            siblings.remove(session_id)
            if not siblings:
                del state._children[old]
    session.parent_session_id = parent
    if parent is not None:
        sessions = state.sessions
        insort(
            state._children.setdefault(parent, []),
            session_id,
            key=lambda sid: (sessions[sid].created_ts, sid),
        )


def _on_turn_started(state: DashboardState, session: SessionView, event: Event) -> None:
    turns = session.turns
    turn_id = event.turn_id
    if turn_id is not None and (not turns or turns[-1].turn_id != turn_id):
        turn = _open_turn(state, session, turn_id, event.sequence, event.ts)  # what `_turn_of` would do
    else:
        turn = _turn_of(state, session, event)
    turn.prompt_preview = event.payload["promptPreview"]


def _on_user_message(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    payload = event.payload
    _add_message(turn, "user", payload["content"], bool(payload.get("steered")), None)


def _on_context_built(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    if turn._open is not None:
        _close_assistant(turn)
    payload = event.payload
    tokens = payload["tokens"]
    turn.step = payload["step"]
    turn.steps += 1
    turn.tokens = context_tokens_total(tokens)
    turn.max_context_tokens = payload["maxContextTokens"]
    turn.phase = phase_for(event) or turn.phase


def _on_context_compacted(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    turn.compactions += 1
    turn.phase = phase_for(event) or turn.phase


def _on_model_delta(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    current = turn._open
    if current is None:
        turn._open = [event.payload["text"]]
    else:
        current.append(event.payload["text"])


def _on_tool_call_requested(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    payload = event.payload
    call = turn.tool_calls.get(payload["toolCallId"])
    if call is None or not call.tool:
        call = _tool_call(turn, payload["toolCallId"], payload["tool"])
    call.args = payload["args"]


def _on_permission_requested(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    payload = event.payload
    call = turn.tool_calls.get(payload["toolCallId"])
    if call is None or not call.tool:
        call = _tool_call(turn, payload["toolCallId"], payload["tool"])
    call.request_id = payload["requestId"]
    call.risk = payload["risk"]
    call.risk_reason = payload.get("reason")
    call.args_preview = payload["argsPreview"]


def _on_permission_resolved(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    payload = event.payload
    call = turn.tool_calls.get(payload["toolCallId"])
    if call is None:
        call = _tool_call(turn, payload["toolCallId"], "")
    decision = payload["decision"]
    request_id = payload["requestId"]
    pair = (decision, payload["actor"])
    call.decisions.append(_PAIRS.get(pair, pair))
    if call.request_id is None:
        call.request_id = request_id
    if decision == "ask":
        call.status = "asking"
        state.asked_count += 1
        view = PermissionView(
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
        )
        key = (session.session_id, request_id)
        session.pending.pop(request_id, None)  # a repeated ask goes to the back of the queue
        state._pending.pop(key, None)
        session.pending[request_id] = view
        state._pending[key] = view
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
    if status == "requested" or status == "asking":
        call.status = "running" if decision == "allow" else "denied"


def _on_tool_started(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    payload = event.payload
    call = turn.tool_calls.get(payload["toolCallId"])
    if call is None or not call.tool:
        call = _tool_call(turn, payload["toolCallId"], payload["tool"])
    call.args_preview = payload["argsPreview"]
    status = call.status
    if status != "completed" and status != "failed":
        call.status = "running"


def _on_tool_delta(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    payload = event.payload
    call = turn.tool_calls.get(payload["toolCallId"])
    if call is None:
        call = _tool_call(turn, payload["toolCallId"], "")
        call.status = "running"
    _add_output(call, payload["text"])


def _add_output(call: ToolCallView, text: str) -> None:
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


def _settle_call(state: DashboardState, session: SessionView, call: ToolCallView) -> None:
    # The chain answers an ask before the tool ends; if a log skipped that, free the queue anyway.
    request_id = call.request_id
    if request_id is not None and session.pending.pop(request_id, None) is not None:
        state._pending.pop((session.session_id, request_id), None)


def _on_tool_completed(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    payload = event.payload
    call = turn.tool_calls.get(payload["toolCallId"])
    if call is None or not call.tool:
        call = _tool_call(turn, payload["toolCallId"], payload["tool"])
    result = payload["result"]
    if len(result) > RESULT_CHARS:
        result = result[:RESULT_CHARS]
    call.status = "completed"
    call.result = result
    call.exit_code = payload.get("exitCode")
    call.truncated = bool(payload.get("truncated"))
    _seal_output(call)
    if session.pending:
        _settle_call(state, session, call)
    _add_message(turn, "tool", result, False, call.call_id)


def _on_tool_failed(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    payload = event.payload
    call = _tool_call(turn, payload["toolCallId"], payload["tool"])
    code = payload["errorCode"]
    call.status = "denied" if code == "permission_denied" else "failed"
    call.error_code = code
    call.message = payload["message"]
    _seal_output(call)
    if session.pending:
        _settle_call(state, session, call)
    _add_message(turn, "tool", payload["message"], False, call.call_id)


def _on_subagent_delivered(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    payload = event.payload
    text = payload["text"]
    if len(text) > RESULT_CHARS:
        text = text[:RESULT_CHARS]
    child = payload["childSessionId"]
    session.deliveries.append(
        DeliveryView(child, payload["agentName"], payload["status"], text, turn.turn_id, event.sequence)
    )
    _add_message(turn, "subagent", text, False, child)


def _on_turn_completed(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    if turn._open is not None:
        _close_assistant(turn)
    payload = event.payload
    turn.stop_reason = payload["stopReason"]
    turn.error_code = payload.get("errorCode")
    usage = payload.get("usage")
    if usage is not None:
        turn.usage = _tuple_new(Usage, (usage["promptTokens"], usage["completionTokens"]))
    turn.ended_sequence = event.sequence
    turn.ended_ts = event.ts
    turn.phase = phase_for(event) or turn.phase
    if session.pending:
        _drop_pending(state, session, turn.turn_id)


THINKING_RECORDS = frozenset({"thinking", "redacted_thinking", "reasoning"})


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
    if event.turn_id is None:  # session-level (between an imported log's turns): counted only
        return
    turn = _turn_for(state, session, event)
    record_type = event.payload["recordType"]
    if record_type in THINKING_RECORDS:
        text = f"thinking… ({_thinking_size(event.payload['data']):,} characters)"
    else:
        text = f"{event.payload['format']} {record_type}"
    _add_message(turn, "note", text, False, record_type)


def _on_model_retry(state: DashboardState, session: SessionView, event: Event) -> None:
    turn = _turn_for(state, session, event)
    payload = event.payload
    text = f"retrying the model call (attempt {payload['attempt']}, after {payload['delayMs']} ms): {payload['reason']}"
    _add_message(turn, "note", text, False, "model.retry")


_Handler = Callable[[DashboardState, SessionView, Event], None]

_HANDLERS: dict[str, _Handler] = {
    "session.created": _on_session_created,
    "turn.started": _on_turn_started,
    "user.message": _on_user_message,
    "context.built": _on_context_built,
    "context.compacted": _on_context_compacted,
    "model.delta": _on_model_delta,
    "model.tool_call_requested": _on_tool_call_requested,
    "permission.requested": _on_permission_requested,
    "permission.resolved": _on_permission_resolved,
    "tool.started": _on_tool_started,
    "tool.delta": _on_tool_delta,
    "tool.completed": _on_tool_completed,
    "tool.failed": _on_tool_failed,
    "subagent.delivered": _on_subagent_delivered,
    "turn.completed": _on_turn_completed,
    "source.record": _on_source_record,
    "model.retry": _on_model_retry,
}
