"""The words an export uses for a session, a turn, a decision and a call's end, said once for the
Markdown and the HTML (which differ only in markup).

Invariants:
- times are UTC, as the log stores them (`2026-11-29 22:17:03 UTC`, then `22:17:05` within the
  same day), so the same logs give the same words on any machine;
- only what the log holds is said: a duration needs both ends, usage shows only the counts it has.
"""

from __future__ import annotations

from datetime import datetime

from agent_tui.costs.wording import usd_text
from agent_tui.events import counted, is_ours
from agent_tui.export.document import Decision, ExportedSession, ExportedTurn, ToolCall

__all__ = ["call_facts", "decision_text", "session_facts", "turn_facts", "utc", "write_note"]

_WHO = {"user": "you", "policy": "policy", "system": "system"}
_VERB = {"allow": "allowed", "deny": "denied", "ask": "asked"}
_USAGE = (
    ("promptTokens", "in"),
    ("cachedTokens", "cached"),
    ("cacheWriteTokens", "written to the cache"),
    ("completionTokens", "out"),
)


def _moment(ts: str) -> datetime | None:
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def utc(ts: str, *, clock_only: bool = False) -> str:
    """`2026-11-29 22:17:03 UTC`, or with `clock_only` `22:17:03`."""
    moment = _moment(ts)
    if moment is None:
        return ts
    return moment.strftime("%H:%M:%S" if clock_only else "%Y-%m-%d %H:%M:%S UTC")


def _duration(start: str, end: str | None) -> str | None:
    begun, ended = _moment(start), _moment(end) if end else None
    if begun is None or ended is None:
        return None
    seconds = max(0, int((ended - begun).total_seconds()))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def session_facts(session: ExportedSession) -> list[str]:
    facts = [session.session_id, session.cwd]
    if session.branch:
        facts.append(f"branch {session.branch}")
    model = " ".join(part for part in (session.provider, session.model) if part)
    if model:
        facts.append(model)
    if not is_ours(session.client):
        facts.append(f"imported from {session.client}")
    facts.append(f"created {utc(session.created_ts)}")
    facts.append(counted(len(session.turns), "turn"))
    return facts


def turn_facts(turn: ExportedTurn) -> str:
    facts = [utc(turn.started_ts)]
    took = _duration(turn.started_ts, turn.ended_ts)
    if turn.stop_reason is None:
        facts.append("never completed in this log")
    else:
        ending = turn.stop_reason + (f" ({turn.error_code})" if turn.error_code else "")
        facts.append(f"took {took} · {ending}" if took else ending)
    usage = turn.usage or {}
    counts = [f"{usage[key]:,} {label}" for key, label in _USAGE if isinstance(usage.get(key), int)]
    if counts:
        facts.append("tokens: " + ", ".join(counts))
    cost = usage.get("costUsd")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        facts.append(f"cost {usd_text(cost)}")
    return " · ".join(facts)


def decision_text(decision: Decision) -> str:
    """`asked by policy 22:17:05`, `allowed by you for the session 22:17:09`, …"""
    words = f"{_VERB.get(decision.decision, decision.decision)} by {_WHO.get(decision.actor, decision.actor)}"
    if decision.remember and decision.remember != "once":
        words += " (always)" if decision.remember == "always" else f" (for the {decision.remember})"
    if decision.reason:
        words += f": {decision.reason}"
    return f"{words} {utc(decision.ts, clock_only=True)}"


def call_facts(call: ToolCall) -> list[str]:
    """A call's risk, each decision on it, and how it ended."""
    return [fact for fact in (call.risk, *map(decision_text, call.decisions), _outcome(call)) if fact]


def _outcome(call: ToolCall) -> str:
    if call.status == "completed":
        end = f"exit {call.exit_code}" if call.exit_code is not None else "done"
        return end + (" (output cut)" if call.truncated else "")
    if call.status == "failed":
        return "failed"
    return "never ran" if call.status == "requested" else "still running at the end of the log"


def write_note(call: ToolCall) -> str | None:
    """What a `write_file`'s diff cannot show: the file's content before it."""
    if call.tool == "write_file" and call.diff is not None:
        return "the whole new content (the log does not hold the file as it was before)"
    return None


def shown_output(call: ToolCall) -> str | None:
    """The text shown under a call: its error, else its result (a file write's is its diff)."""
    if call.error:
        return call.error
    return call.result if call.result and call.tool not in ("write_file", "edit_file") else None
