"""What the engine knows of each session, kept in step with the session's stored events.

Invariants:
- `SessionInfo.track(event)` is called for every event of the session, live or replayed from
  its log, in sequence order; so a hydrated session knows exactly what a live one knew (last
  sequence, transcript, the open turn and its open tool calls);
- the open tool calls (`open_calls`: what was asked, how far each got) are owned here and only
  here, derived from the stored events: the turn loop, the tool runner and the ACP recorder read
  them after each commit and never keep a copy, so a call is open exactly while the log says so;
- the cwd is fixed for the session's life.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agent_tui.engine.commit_gate import CommitGate
from agent_tui.engine.context import TranscriptBuilder
from agent_tui.events import Event
from agent_tui.events.model import CALL_PROGRESS_TYPES
from agent_tui.events.session_tree import session_label
from agent_tui.store import TailRepair

if TYPE_CHECKING:
    from agent_tui.engine.permissions import PermissionEngine
    from agent_tui.engine.tools.router import ToolRouter
    from agent_tui.engine.turn_handle import TurnHandle


CallStage = Literal["requested", "asking", "running"]


@dataclass(eq=False)
class OpenCall:
    """A tool call the model asked for that has no result yet, as its stored events tell it.

    `stage` is `asking` between the policy's `ask` and the final answer, `running` after
    `tool.started` (and after the answer to a question asked while it runs), else `requested`;
    `request_id` is its latest permission request's, once made; `decision` is the final answer
    (`allow` or `deny`), None before one.
    """

    call_id: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    stage: CallStage = "requested"
    request_id: str | None = None
    decision: str | None = None
    started: bool = False


@dataclass(frozen=True)
class Delivery:
    """A child's result waiting in its parent's mailbox."""

    child_session_id: str
    agent_name: str
    status: str  # completed | failed
    text: str


@dataclass(eq=False)
class SessionInfo:
    """One session: identity, where it works, and the state its log implies."""

    id: str
    cwd: Path
    client: str
    parent_id: str | None = None
    agent_name: str | None = None
    title: str | None = None
    last_sequence: int = 0
    transcript: TranscriptBuilder = field(default_factory=TranscriptBuilder)
    open_turn: str | None = None  # a turn started in the log and not completed
    open_calls: dict[str, OpenCall] = field(default_factory=dict)  # by call id, of `open_turn`
    close_code: str = "unknown"  # errorCode used when `open_turn` is closed later
    turn: TurnHandle | None = None  # the current turn, or the last one until the next starts
    mailbox: deque[Delivery] = field(default_factory=deque)
    permissions: PermissionEngine | None = None  # a per-agent policy, if any
    router: ToolRouter | None = None  # its tree's tools (the engine's and its MCP servers'), if any
    commit_gate: CommitGate = field(default_factory=CommitGate)
    event_id_prefix: str = ""  # `evt_<session id without "sess_">_`, the sequence follows

    def __post_init__(self) -> None:
        self.event_id_prefix = f"evt_{self.id.removeprefix('sess_')}_"

    @property
    def live_turn(self) -> TurnHandle | None:
        """The turn that is running now (its state machine is not terminal), if any."""
        turn = self.turn
        return turn if turn is not None and not turn.fsm.is_terminal else None

    @property
    def unfinished_turn(self) -> TurnHandle | None:
        """The turn that has not finished every write yet: running, or ending (its state
        machine may be terminal while its last events are stored), if any. What a caller
        waits for before it may close the store or start what needs the turn gone."""
        turn = self.turn
        return turn if turn is not None and not turn.done.is_set() else None

    @property
    def label(self) -> str:
        """How the session is named in agent paths."""
        return session_label(self.agent_name, self.title, self.id)

    def track(self, event: Event) -> None:
        """Keep what the engine must know across turns in step with the stored events."""
        self.last_sequence = event.sequence
        self.transcript.apply(event)
        kind = event.type
        if kind == "turn.started":
            self.open_turn = event.turn_id
            self.open_calls.clear()
            self.close_code = "unknown"
        elif kind == "model.tool_call_requested":
            payload = event.payload
            call_id = payload["toolCallId"]
            self.open_calls[call_id] = OpenCall(call_id, payload["tool"], payload.get("args") or {})
        elif kind in CALL_PROGRESS_TYPES:
            call = self.open_calls.get(event.payload["toolCallId"])
            if call is None:
                return
            if kind == "permission.requested":
                call.request_id = event.payload["requestId"]
            elif kind == "permission.resolved":
                decision = event.payload["decision"]
                if decision == "ask":
                    call.stage = "asking"
                else:
                    call.stage = "running" if call.started else "requested"
                    call.decision = decision
            elif kind == "tool.started":
                call.stage = "running"
                call.started = True
            elif kind != "tool.delta":  # tool.completed, tool.failed: the call is answered
                del self.open_calls[call.call_id]
        elif kind == "turn.completed":
            self.open_turn = None
            self.open_calls.clear()


@dataclass(frozen=True)
class Hydration:
    """What reopening a session from its log found."""

    session_id: str
    events: int
    repair: TailRepair | None
    closed_turn: str | None
    answers_note: str | None = None  # why the log's "for this session" answers were not restored

    def describe(self) -> str:
        parts = [f"reopened {self.session_id} from {self.events} events"]
        if self.repair is not None:
            parts.append(self.repair.describe())
        if self.closed_turn is not None:
            parts.append(f"closed interrupted turn {self.closed_turn}")
        if self.answers_note is not None:
            parts.append(self.answers_note)
        return "; ".join(parts)
