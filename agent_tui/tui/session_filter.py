"""Which sessions the tree shows: a text filter and a state filter, and the tree's day groups.

Pure functions of a `DashboardState` (no Textual): a session matches the text when its agent
name, title, cwd, worktree branch or any turn's prompt contains it (case-insensitive); it
matches the state filter by what it needs: `needs-me` (an approval waits on it), `running`,
`failed`, or `all`. The tree keeps the ancestors of every match, so a match is shown where it
lives.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timedelta

from agent_tui.reducer import DashboardState, SessionView

STATE_FILTERS = ("all", "needs-me", "running", "failed")
"""The state filter's values, in the order `S` cycles through them."""


def next_state_filter(current: str) -> str:
    index = STATE_FILTERS.index(current) if current in STATE_FILTERS else 0
    return STATE_FILTERS[(index + 1) % len(STATE_FILTERS)]


def _text_matches(session: SessionView, needle: str) -> bool:
    fields: list[str | None] = [
        session.agent_name,
        session.title,
        session.cwd,
        session.worktree_branch,
        session.session_id,
    ]
    fields += [turn.prompt_preview for turn in session.turns]
    return any(needle in field.lower() for field in fields if field)


def _state_matches(session: SessionView, wanted: str) -> bool:
    if wanted == "needs-me":
        return bool(session.pending)
    if wanted == "running":
        return session.running
    if wanted == "failed":
        return session.status == "failed"
    return True


def visible_sessions(
    state: DashboardState, text: str, wanted: str, hidden: set[str] | None = None
) -> tuple[set[str], set[str]] | None:
    """(matching sessions, their ancestors that do not match), or None when nothing is filtered.

    `hidden` sessions (closed ones) and their sub-agents are never shown.
    """
    needle = text.strip().lower()
    if not needle and wanted == "all" and not hidden:
        return None
    gone = {sid for root in hidden or () for sid in (root, *state.descendants(root))}
    matches = {
        sid
        for sid, session in state.sessions.items()
        if sid not in gone
        and (not needle or _text_matches(session, needle))
        and _state_matches(session, wanted)
    }
    ancestors: set[str] = set()
    for sid in matches:
        parent = state.sessions[sid].parent_session_id
        while parent is not None and parent in state.sessions and parent not in ancestors:
            if parent not in matches:
                ancestors.add(parent)
            parent = state.sessions[parent].parent_session_id
    return matches, ancestors


def root_of(state: DashboardState, session_id: str | None) -> str | None:
    """The root of `session_id`'s tree: itself when it has no known parent, else its farthest
    known ancestor (a parent cycle in a corrupt log stops the walk); None for an unknown session."""
    seen: set[str] = set()
    current = session_id
    while current is not None and current in state.sessions and current not in seen:
        seen.add(current)
        parent = state.sessions[current].parent_session_id
        if parent is None or parent not in state.sessions:
            return current
        current = parent
    return current if current in state.sessions else None


def day_of(ts: str) -> date | None:
    try:
        return datetime.fromisoformat(ts).astimezone().date()
    except ValueError:
        return None


def day_label(day: date | None, today: date | None) -> str:
    """`Today`, `Yesterday`, or `Mon Nov 28` (`earlier` when the day is unknown)."""
    if day is None:
        return "earlier"
    if today is not None:
        if day == today:
            return "Today"
        if day == today - timedelta(days=1):
            return "Yesterday"
    return day.strftime("%a %b %d")


def group_roots_by_day(
    state: DashboardState, roots: Iterable[str], now_ms: int | None
) -> list[tuple[str, list[str]]]:
    """Roots newest first, in runs of one local day (by when each session was created)."""
    today = datetime.fromtimestamp(now_ms / 1000).astimezone().date() if now_ms is not None else None
    ordered = sorted(roots, key=lambda sid: (state.sessions[sid].created_ts, sid), reverse=True)
    groups: list[tuple[str, list[str]]] = []
    for sid in ordered:
        label = day_label(day_of(state.sessions[sid].created_ts), today)
        if groups and groups[-1][0] == label:
            groups[-1][1].append(sid)
        else:
            groups.append((label, [sid]))
    return groups
