"""What the dashboard shows: the views the reducer's fold builds, and their read-only questions.

Invariants this module guarantees:
- views are read-only outside the reducer. `PermissionView`, `DeliveryView`, `TranscriptEntry`
  and `Spend` (`TurnUsage`) are immutable; values taken from event payloads (tool `args` dicts, texts) are
  shared, not copied;
- bounded memory per view: turn text keeps its last 8,000 characters (`TEXT_CHARS`), tool output
  its last 2,000 (`OUTPUT_CHARS`), tool results and deliveries their first 2,000
  (`RESULT_CHARS`), a turn's transcript its last 200 entries (`MAX_TRANSCRIPT_ENTRIES`);
- `DashboardState.copy()` is independent of the original (folding events into either never
  changes the other) and equal to it. It shares finished turns between the copies (copy-on-write:
  the fold clones a finished turn before writing to it), so a checkpoint costs in proportion to
  the sessions and the running turns, not to the whole history. The copies are generated from
  the dataclass fields (`field_copy`), so a new field is copied without a line written for it;
- equality (`==`) compares every session, turn and tool call; the derived indexes of
  `DashboardState` (children, pending approvals) are kept out of it;
- the session tree (`roots`, `children`, `agent_path`) does not depend on the order in which
  sessions' logs were read: siblings and roots are ordered by (created ts, session id).
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from functools import reduce
from operator import attrgetter
from typing import Any, Literal, NamedTuple

from agent_tui.events.session_tree import SessionTree, session_label
from agent_tui.events.turn_vocabulary import ENDINGS, DeliveryStatus, Phase, RunState
from agent_tui.reducer.collector import collector_paused
from agent_tui.reducer.field_copy import compiled_copy
from agent_tui.reducer.spend import NO_SPEND, Spend
from agent_tui.reducer.timestamps import ms_between

SessionStatus = RunState
"""A session's status: its last turn's run state (`idle` before its first turn)."""
ToolStatus = Literal["requested", "asking", "running", "completed", "failed", "denied"]
TranscriptRole = Literal["user", "assistant", "tool", "subagent", "note"]

TEXT_CHARS = 8_000
"""A turn keeps the last this-many characters of its assistant text."""
OUTPUT_CHARS = 2_000
"""A tool call keeps the last this-many characters of its streamed output."""
RESULT_CHARS = 2_000
"""A tool result (and a delivery's text) keeps its first this-many characters."""
MAX_TRANSCRIPT_ENTRIES = 200
"""A turn keeps its last this-many transcript entries."""


class TranscriptEntry(NamedTuple):
    """One entry of a turn's transcript, as the dashboard shows it.

    `role` is `user` (with `steered` set for input absorbed mid-turn), `assistant` (one per model
    call that streamed text: its deltas joined), `tool` (a tool's result, or its failure message;
    `ref` is the tool call id), `subagent` (a child's delivery; `ref` is the child session id) or
    `note` (what an imported log kept that our vocabulary cannot say, or a model retry; `ref` is
    its record type; a thinking block shows only its size).
    """

    role: TranscriptRole
    text: str
    steered: bool = False
    ref: str | None = None


TurnUsage = Spend
"""What a turn's model calls used: the sum of its `model.usage`s while it runs, what its
`turn.completed` reported once it ended (when it reported usage)."""


class PermissionView(NamedTuple):
    """An approval waiting for the user: a tool call the policy answered with `ask`.

    `reason` is the policy's reason/warning from that `ask`; `risk_reason` says why the call has
    its risk (from `permission.requested`); `order` is the dashboard-wide arrival number (1 for the
    first `ask` the state saw), which orders the approval queue; `asked_ts` is the `ts` of that
    `ask` (how long the request has waited is measured from it).

    A named tuple rather than a frozen dataclass: the fold builds one per `ask`, and a frozen
    dataclass's `__init__` costs ten times a tuple's.
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
    status: DeliveryStatus
    text: str
    turn_id: str
    sequence: int


class OptionView(NamedTuple):
    """One of an external (ACP) agent's own options for its question (`permission.requested.options`)."""

    option_id: str
    name: str
    kind: str  # allow_once | allow_always | reject_once | reject_always


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
    options: tuple[OptionView, ...] = ()  # an ACP agent's own options for its last question
    # Output parts: a list while the call runs; once it ended, the kept output as one string
    # (see `tool_events.seal_output`).
    _out_parts: list[str] | str = field(default_factory=list, repr=False)
    _out_len: int = field(default=0, repr=False)

    @property
    def output(self) -> str:
        """The last 2,000 characters of the streamed output, stdout and stderr as interleaved."""
        parts = self._out_parts
        text = parts if type(parts) is str else "".join(parts)
        return text[-OUTPUT_CHARS:] if len(text) > OUTPUT_CHARS else text


@dataclass(slots=True)
class TurnView:
    """One turn: its phase, steps, context size, text, transcript and tool calls.

    `phase` is the `to` of the turn's latest phase frame: projected from its events
    (`events.frames.transition_for`), or, once `phase_live`, sent live by the engine's sink (the
    local dashboard). `step`/`tokens`/`max_context_tokens`
    come from the last `context.built` (tokens is its total), `steps` counts them; `stop_reason`
    is None while the turn has not completed, and `end_message` is what its `turn.completed` said
    of the end, if anything (a provider's error, an ACP agent's exit status and stderr tail).
    `started_ts` is the `ts` of the turn's first event,
    `ended_ts` that of its `turn.completed`; `approval_wait_ms` is the time its answered requests
    waited for the user.
    """

    turn_id: str
    prompt_preview: str = ""
    phase: Phase = "start"
    phase_live: bool = False
    stop_reason: str | None = None
    error_code: str | None = None
    end_message: str | None = None
    step: int | None = None
    steps: int = 0
    tokens: int | None = None
    max_context_tokens: int | None = None
    compactions: int = 0
    tool_calls: dict[str, ToolCallView] = field(default_factory=dict)
    usage: TurnUsage | None = None
    started_sequence: int = 0
    ended_sequence: int | None = None
    started_ts: str = ""
    ended_ts: str | None = None
    approval_wait_ms: int = 0
    # The model call being streamed keeps its deltas as a list (`_open`, None between calls); a
    # delta is one list append. When the call ends its text joins `_text_head` (the earlier calls'
    # text, cut to TEXT_CHARS) and becomes one assistant entry of `_closed`.
    # `_closed` holds the entries flat, four items each (role, text, steered, ref; at most
    # MAX_TRANSCRIPT_ENTRIES entries), in a tuple replaced on each entry: copies share it, and a
    # full replay keeps hundreds of thousands of entries without as many objects for the garbage
    # collector to count and scan. Entries become `TranscriptEntry`s when `transcript` is read.
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
    def transcript(self) -> list[TranscriptEntry]:
        """The turn's transcript in order, its last 200 entries (a new list on each read)."""
        closed = self._closed
        out = [new_named_tuple(TranscriptEntry, closed[k : k + 4]) for k in range(0, len(closed), 4)]
        if self._open is not None:
            out.append(TranscriptEntry("assistant", "".join(self._open)))
            if len(out) > MAX_TRANSCRIPT_ENTRIES:
                del out[0]
        return out

    def drop_texts(self, keep_calls: Container[str]) -> None:
        """Leave out this turn's texts (its transcript and assistant text) and its tool calls but
        `keep_calls` (ids), whose output goes too: what a list that never shows them keeps."""
        self._text_head = ""
        self._closed = ()
        if self._open is not None:
            self._open = []
        calls: dict[str, ToolCallView] = {}
        for call_id, call in self.tool_calls.items():
            if call_id in keep_calls:
                call.result = None
                call._out_parts = []
                call._out_len = 0
                calls[call_id] = call
        self.tool_calls = calls

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None

    @property
    def duration_ms(self) -> int | None:
        """From the turn's start to its `turn.completed` (None while it runs)."""
        if self.ended_ts is None:
            return None
        return ms_between(self.started_ts, self.ended_ts)


@dataclass(frozen=True, slots=True)
class PlanEntryView:
    """One entry of the plan an ACP agent reported (`plan`): what, how far, how important."""

    content: str
    status: str  # pending | in_progress | completed
    priority: str  # high | medium | low


@dataclass(frozen=True, slots=True)
class AgentModeView:
    """One mode an ACP agent offers (`session/new`'s `modes`): its id and the name it shows."""

    mode_id: str
    name: str


@dataclass(slots=True)
class SessionView:
    """One session: its header, its turns, its deliveries and its pending approvals.

    `created_seen` is False for a session known only from later events (a log read from the
    middle); its header fields are then None. `created_ts` is the ts of its first event seen.
    `model` and `worktree_path`/`worktree_branch` are what `session.created` recorded, if anything.
    `spend` is what its own model calls used (not its children's: `DashboardState.tree_spend`);
    `budget_usd`/`budget_tokens` the latest budget its log recorded (None: none).
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
    spend: Spend = NO_SPEND
    budget_usd: float | None = None
    budget_tokens: int | None = None
    plan: tuple[PlanEntryView, ...] = ()  # an ACP agent's latest `plan` (none after `plan_removed`)
    plan_text: str | None = None  # its latest plan sent as text (`plan_update`, markdown)
    mode: str | None = None  # its current mode's id (`session/new`'s modes, `current_mode_update`)
    modes: tuple[AgentModeView, ...] = ()  # the modes it offers (`session/new`)

    @property
    def mode_name(self) -> str | None:
        """The current mode's name as the agent shows it (its id when it did not name it)."""
        if self.mode is None:
            return None
        return next((mode.name for mode in self.modes if mode.mode_id == self.mode), self.mode)

    @property
    def running(self) -> bool:
        """Whether the session's last turn started and has not completed: the one test of
        "is it running" the dashboard asks (`status`, `running_count` and the screens)."""
        turns = self.turns
        return bool(turns) and turns[-1].stop_reason is None

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
        return session_label(self.agent_name, self.title, self.session_id)


@dataclass(slots=True)
class DashboardState:
    """Everything the dashboard shows, as a fold of the event logs.

    `sessions` is in first-seen order; `asked_count` is the global arrival counter of `ask`
    resolutions; `spend_by_day` what all sessions spent per UTC day (`YYYY-MM-DD`, the day each
    model call ended), in first-seen order. Equality compares every session, turn and tool call.
    """

    sessions: dict[str, SessionView] = field(default_factory=dict)
    event_count: int = 0
    asked_count: int = 0
    spend_by_day: dict[str, Spend] = field(default_factory=dict)
    # Derived indexes, kept in step with `sessions` by the fold (so not compared): the session
    # tree (children in tree order), and every pending approval in arrival order.
    _tree: SessionTree = field(default_factory=SessionTree, compare=False, repr=False)
    _pending: dict[tuple[str, str], PermissionView] = field(default_factory=dict, compare=False, repr=False)

    def children(self, session_id: str) -> list[str]:
        """Ids of the sessions whose parentSessionId is `session_id`, oldest first."""
        return self._tree.children(session_id)

    def descendants(self, session_id: str) -> list[str]:
        """Ids of every session below `session_id` (not itself), parents before their children."""
        return self._tree.descendants(session_id)

    def roots(self) -> list[str]:
        """Ids of the sessions with no parent, or a parent this state has not seen, oldest first."""
        sessions = self.sessions
        found = [sessions[sid] for sid in self._tree.roots(sessions)]
        found.sort(key=tree_order)
        return [s.session_id for s in found]

    def agent_path(self, session_id: str) -> tuple[str, ...]:
        """Names from the root down to `session_id` (agentName, else title, else id).

        An ancestor known only by id (its log not read) appears as its id; a parent cycle in a
        corrupt log stops the walk instead of looping.
        """
        sessions = self.sessions

        def label_of(sid: str) -> str:
            session = sessions.get(sid)
            return session.display_name if session is not None else sid

        return self._tree.path(session_id, label_of)

    def pending_permissions(self) -> list[PermissionView]:
        """Every approval waiting for the user, across sessions, in the order they were asked."""
        pending = list(self._pending.values())
        pending.sort(key=attrgetter("order"))
        return pending

    def tree_spend(self, session_id: str) -> Spend:
        """What `session_id` and every session below it spent (its subtree's total)."""
        sessions = self.sessions
        return self._tree.total(
            session_id, lambda sid: sessions[sid].spend if sid in sessions else NO_SPEND, Spend.plus
        )

    def total_spend(self) -> Spend:
        """What every session of this state spent."""
        return reduce(Spend.plus, (session.spend for session in self.sessions.values()), NO_SPEND)

    def forget(self, session_ids: list[str]) -> None:
        """Leave these sessions out (their views, their pending approvals, their place under a
        parent): the state a fold of the logs still shown gives. For the copy of a session shown
        twice (a terminal follower let go of an ACP session's transcript); what they spent stays in
        `spend_by_day`."""
        gone = set(session_ids)
        for session_id in gone:
            self.sessions.pop(session_id, None)
            self._tree.link(session_id, None)
        for key in [key for key in self._pending if key[0] in gone]:
            del self._pending[key]

    def running_count(self) -> int:
        """How many sessions have a turn that started and has not completed."""
        return sum(1 for s in self.sessions.values() if s.running)

    def to_state_dump(self) -> dict[str, Any]:
        """The `replay --dump state` object (its shape: README.md): sessions by id, turns in order.

        Built with the collector paused: on a big state its full passes over everything the fold
        built would cost ten times the building of these few dicts.
        """
        with collector_paused():
            return self._state_dump()

    def _state_dump(self) -> dict[str, Any]:
        return {
            "sessions": [
                {
                    "sessionId": s.session_id,
                    "parentSessionId": s.parent_session_id,
                    "agentName": s.agent_name,
                    "cwd": s.cwd,
                    "status": s.status,
                    **_spend_dump(s.spend, "costUsd", "tokens"),
                    **_spend_dump(self.tree_spend(s.session_id), "treeCostUsd", "treeTokens"),
                    "budget": _budget_dump(s),
                    **_agent_reports_dump(s),
                    "turns": [_turn_dump(t) for t in s.turns],
                }
                for s in sorted(self.sessions.values(), key=attrgetter("session_id"))
            ]
        }

    def copy(self) -> DashboardState:
        """An independent copy: folding events into either never changes the other.

        Finished turns and payload values are shared (see the module docstring); everything the
        fold may still write to is copied.
        """
        return _copy_state(self)


new_named_tuple = tuple.__new__
"""`new_named_tuple(cls, values)`: a NamedTuple of `values` without its Python-level `__new__`."""


def tree_order(session: SessionView) -> tuple[str, str]:
    """Where a session stands among its siblings (and the roots): oldest first."""
    return (session.created_ts, session.session_id)


def _agent_reports_dump(session: SessionView) -> dict[str, Any]:
    """An ACP agent's plan and mode, for sessions whose agent reported one (others: nothing)."""
    dump: dict[str, Any] = {}
    if session.plan or session.plan_text is not None:
        dump["plan"] = [
            {"content": entry.content, "status": entry.status, "priority": entry.priority}
            for entry in session.plan
        ]
        if session.plan_text is not None:
            dump["planText"] = session.plan_text
    if session.mode is not None:
        dump["mode"] = session.mode
    return dump


def _turn_dump(turn: TurnView) -> dict[str, Any]:
    dump: dict[str, Any] = {
        "turnId": turn.turn_id,
        "stopReason": turn.stop_reason,
        "startedAt": turn.started_ts or None,
        "endedAt": turn.ended_ts,
        "durationMs": turn.duration_ms,
    }
    if turn.usage is not None:
        dump.update(_spend_dump(turn.usage, "costUsd", "tokens"))
    if turn.tool_calls:
        dump["toolCalls"] = [_tool_call_dump(call) for call in turn.tool_calls.values()]
    return dump


def _tool_call_dump(call: ToolCallView) -> dict[str, Any]:
    """A call in the state dump: its status, and its final permission decision and who made it
    (`user`, `policy` or `system`; both null before a decision)."""
    decision = decided_by = None
    for answer, actor in reversed(call.decisions):
        if answer != "ask":
            decision, decided_by = answer, actor
            break
    return {
        "toolCallId": call.call_id,
        "tool": call.tool,
        "status": call.status,
        "decision": decision,
        "decidedBy": decided_by,
    }


def dump_usd(amount: float | None) -> float | None:
    """Dollars as a dump shows them: to a millionth (sums of float prices end in noise)."""
    return None if amount is None else round(amount, 6)


def _budget_dump(session: SessionView) -> dict[str, Any] | None:
    """The session's budget as its log last recorded it (null: none)."""
    if session.budget_usd is None and session.budget_tokens is None:
        return None
    return {"usd": session.budget_usd, "tokens": session.budget_tokens}


def _spend_dump(spend: Spend, cost_key: str, tokens_key: str) -> dict[str, Any]:
    """A spend's dump fields: its known cost (null when nothing had a price), its tokens, and how
    many tokens had no price when some had none."""
    tokens: dict[str, int] = {"prompt": spend.prompt_tokens, "completion": spend.completion_tokens}
    if spend.cached_tokens:
        tokens["cached"] = spend.cached_tokens
    if spend.cache_write_tokens:
        tokens["cacheWrite"] = spend.cache_write_tokens
    if spend.unpriced_tokens:
        tokens["unpriced"] = spend.unpriced_tokens
    return {cost_key: dump_usd(spend.known_cost_usd), tokens_key: tokens}


# -- copies: what each may still be written to is the copy's own; the rest is shared -----------


def _own_parts(parts: list[str] | str | None) -> list[str] | str | None:
    return parts[:] if parts is not None else None


copy_tool_call = compiled_copy(
    ToolCallView,
    fresh={"decisions": list.copy, "_out_parts": _own_parts},
    shared=("args",),  # a payload value: never written to
)


def _own_tool_calls(calls: dict[str, ToolCallView]) -> dict[str, ToolCallView]:
    return {key: copy_tool_call(call) for key, call in calls.items()}


copy_turn = compiled_copy(TurnView, fresh={"tool_calls": _own_tool_calls, "_open": _own_parts})
"""An independent copy of a turn (the fold's copy-on-write of a finished turn)."""


def _own_turns(turns: list[TurnView]) -> list[TurnView]:
    # A finished turn is shared, not copied: the fold clones a finished turn before writing to
    # it, and the delta fast path writes only to a turn with an open model call.
    return [
        turn if turn.stop_reason is not None and turn._open is None else copy_turn(turn) for turn in turns
    ]


copy_session = compiled_copy(
    SessionView, fresh={"turns": _own_turns, "deliveries": list.copy, "pending": dict.copy}
)


def _own_sessions(sessions: dict[str, SessionView]) -> dict[str, SessionView]:
    return {key: copy_session(session) for key, session in sessions.items()}


_copy_state = compiled_copy(
    DashboardState,
    fresh={
        "sessions": _own_sessions,
        "_tree": SessionTree.copy,
        "_pending": dict.copy,
        "spend_by_day": dict.copy,
    },
)
