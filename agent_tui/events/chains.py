"""The log's chains as a checker: every rule a session log must obey (docs/event-log.md), in one pass.

`chain_violations(events)` returns readable violations (empty when the log is well-formed); the
tests run it on real logs of generated scenarios. Rules:

- sequences start at 1 and rise by exactly one; `session.created` first and only there, with
  `turnId` null; every other event has a `turnId`;
- a turn is `turn.started, user.message, …, turn.completed`; turns do not overlap; each started
  turn ends with exactly one `turn.completed` (an unfinished last turn is reported only when
  `complete=True`); a `final` turn has at least one `model.delta` (an imported one may instead
  hold its source's answer as `source.record`s: importers never invent text);
- a tool call: `model.tool_call_requested` → [`permission.requested` → `permission.resolved`
  (`ask` by `policy`, then `allow`/`deny` by `user`/`system`) → `tool.started` only after an
  `allow` → `tool.delta`* ] → exactly one `tool.completed`/`tool.failed`; a denied call is never
  started; a call that runs or was answered may be asked about again (an external agent's
  question): a new `permission.requested` opens a new pair, and a call that was started before
  such a question may still complete; every call is answered before the next `context.built`
  and before `turn.completed`;
- imported sessions (`session.created.client` is not `agent-tui`) carry the permission pair only
  where their source recorded a decision, so there `tool.started` may follow the request
  directly; and a `source.record` that falls between their turns is session-level (turnId null);
- `turn.rewound` (files of an earlier turn put back) falls between turns, with turnId null, and
  names a turn of the session that was started before it;
- `model.usage` (what one model call used) belongs to the open turn, its steps rise within the
  turn, and in our own sessions it names the step of the turn's latest `context.built` (so it
  comes after that call's stream and before the next `context.built` or `turn.completed`);
  imported sessions have no `context.built`, their steps only rise;
- `session.budget` falls between turns (turnId null) or inside the open turn; no chain beyond;
- `withdrawn` (a terminal agent's question its CLI took back: answered in its own terminal, or
  handed back to it) ends an `ask` of an imported session only; the call then goes on as its
  source says (it may start: the answer given in the terminal is the CLI's).

`ChainCheck` checks the same rules one event at a time, for a writer that stores events it did not
word itself (the engine's `store_built`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from agent_tui.events.clients import is_ours
from agent_tui.events.model import CALL_PROGRESS_TYPES, Event


@dataclass
class _Call:
    tool: str
    decisions: list[tuple[str, str]] = field(default_factory=list)
    started: bool = False
    answered: bool = False
    late: bool = False  # asked about again while it ran


@dataclass
class _SessionCheck:
    last_sequence: int = 0
    imported: bool = False
    turn: str | None = None
    turn_events: int = 0
    deltas: int = 0
    records: int = 0
    calls: dict[str, _Call] = field(default_factory=dict)
    started: set[str] = field(default_factory=set)
    step: int | None = None  # of the open turn's latest context.built
    usage_step: int = 0  # of the open turn's latest model.usage


def chain_violations(events: Iterable[Event], *, complete: bool = True) -> list[str]:
    """Check the events of any number of sessions (each session's events in sequence order)."""
    check = ChainCheck()
    problems: list[str] = []
    for event in events:
        problems += check.check(event)
    if complete:
        problems += check.unfinished()
    return problems


class ChainCheck:
    """The chain rules checked one event at a time, for any number of sessions."""

    def __init__(self) -> None:
        self._sessions: dict[str, _SessionCheck] = {}

    def check(self, event: Event) -> list[str]:
        """The rules `event` breaks, after the events checked before it (empty: none)."""
        problems: list[str] = []

        def bad(event: Event, message: str) -> None:
            problems.append(f"{event.session_id}#{event.sequence} {event.type}: {message}")

        check = self._sessions.setdefault(event.session_id, _SessionCheck())
        if event.sequence != check.last_sequence + 1:
            bad(event, f"sequence follows {check.last_sequence}")
        check.last_sequence = event.sequence
        if not _outside_the_open_turn(check, event, bad):
            _in_the_open_turn(check, event, bad)
        return problems

    def unfinished(self) -> list[str]:
        """The sessions whose last turn never completed."""
        return [
            f"{session_id}: turn {check.turn} never completed"
            for session_id, check in self._sessions.items()
            if check.turn is not None
        ]


def _outside_the_open_turn(check: _SessionCheck, event: Event, bad: Callable[[Event, str], None]) -> bool:
    """Check an event that is not one of the open turn's (the session's start, an event with no
    turn, a turn's start, another turn's event); False for one of the open turn's."""
    kind = event.type
    payload = event.payload
    if kind == "session.created":
        if event.sequence != 1 or event.turn_id is not None:
            bad(event, "session.created must be #1 with turnId null")
        check.imported = not is_ours(payload["client"])
    elif event.turn_id is None:
        if kind == "source.record" and check.imported and check.turn is None:
            pass
        elif kind == "session.budget":
            if check.turn is not None:
                bad(event, f"a budget without a turnId while turn {check.turn} is open")
        elif kind == "turn.rewound":
            if check.turn is not None:
                bad(event, f"a rewind while turn {check.turn} is open")
            if payload["rewoundTurnId"] not in check.started:
                bad(event, f"rewinds turn {payload['rewoundTurnId']}, which this log never started")
        else:
            bad(event, "turnId is null outside session.created")
    elif kind == "turn.started":
        if check.turn is not None:
            bad(event, f"turn {check.turn} is still open")
        check.turn, check.turn_events, check.deltas, check.records = event.turn_id, 0, 0, 0
        check.step, check.usage_step = None, 0
        check.started.add(event.turn_id)
        check.calls.clear()
    elif check.turn != event.turn_id:
        bad(event, f"belongs to turn {event.turn_id}, open turn is {check.turn}")
    else:
        return False
    return True


def _in_the_open_turn(check: _SessionCheck, event: Event, bad: Callable[[Event, str], None]) -> None:
    kind = event.type
    payload = event.payload
    check.turn_events += 1
    if check.turn_events == 1 and kind != "user.message":
        bad(event, "a turn's second event must be user.message")
    if kind == "context.built":
        _unanswered(check, event, bad)
        check.step = payload["step"]
    elif kind == "model.usage":
        step = payload["step"]
        if step <= check.usage_step:
            bad(event, f"step {step} after the usage of step {check.usage_step}")
        elif not check.imported and step != check.step:
            bad(event, f"step {step} is not the step of the latest context.built ({check.step})")
        else:
            check.usage_step = step
    elif kind == "model.delta":
        check.deltas += 1
    elif kind == "source.record":
        check.records += 1
    elif kind == "model.tool_call_requested":
        if payload["toolCallId"] in check.calls:
            bad(event, "tool call id requested twice")
        check.calls[payload["toolCallId"]] = _Call(payload["tool"])
    elif kind in CALL_PROGRESS_TYPES:
        call = check.calls.get(payload.get("toolCallId", "")) if "toolCallId" in payload else None
        if call is None:
            bad(event, "for a tool call that was not requested")
        else:
            _call_progress(check, call, event, bad)
    elif kind == "turn.completed":
        _unanswered(check, event, bad)
        if payload["stopReason"] == "final" and check.deltas == 0 and not (check.imported and check.records):
            bad(event, "a final turn without model.delta")
        check.turn = None


def _call_progress(
    check: _SessionCheck, call: _Call, event: Event, bad: Callable[[Event, str], None]
) -> None:
    """Check a requested call's answer, start, output or end."""
    kind = event.type
    payload = event.payload
    if call.answered:
        bad(event, "after the call was answered")
    if kind == "permission.requested" and call.decisions:  # asked again: a new pair
        call.decisions = []
        call.late = call.late or call.started
    elif kind == "permission.resolved":
        decision, actor = payload["decision"], payload["actor"]
        if decision == "ask" and (actor != "policy" or call.decisions):
            bad(event, "`ask` must be the policy's first answer")
        if call.decisions and call.decisions[-1][0] != "ask":
            bad(event, "resolved again after a final decision")
        if decision == "withdrawn":
            if not check.imported or not call.decisions:
                bad(event, "`withdrawn` ends an `ask` of an imported session only")
            call.decisions = []  # the call goes on as its source says: the terminal answered
            return
        call.decisions.append((decision, actor))
    elif kind == "tool.started":
        if (call.decisions or not check.imported) and (
            not call.decisions or call.decisions[-1][0] != "allow"
        ):
            bad(event, "started without an allow")
        call.started = True
    elif kind == "tool.delta" and not call.started:
        bad(event, "output before tool.started")
    elif kind in ("tool.completed", "tool.failed"):
        if kind == "tool.completed" and not call.started:
            bad(event, "completed without tool.started")
        denied = bool(call.decisions) and call.decisions[-1][0] == "deny" and not call.late
        if denied and (call.started or payload.get("errorCode") not in ("permission_denied", "cancelled")):
            bad(event, "a denied call must fail with permission_denied (or cancelled)")
        call.answered = True


def _unanswered(check: _SessionCheck, event: Event, bad: Callable[[Event, str], None]) -> None:
    for call_id, call in check.calls.items():
        if not call.answered:
            bad(event, f"tool call {call_id} ({call.tool}) is unanswered")
    check.calls = {k: v for k, v in check.calls.items() if not v.answered}
