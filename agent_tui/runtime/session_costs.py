"""What stored sessions spent, read from their usage lines only (for `agent-tui sessions`).

Invariants:
- a log's spend is the reducer's (`SessionView.spend`): only its `model.usage` and
  `turn.completed` lines are decoded and folded, the same fold the dashboard runs, so a log
  with both counts each token once and an old log with only turn totals still counts;
- other lines are skipped by a byte test before any decoding, so listing many long logs stays
  a read of their bytes; a line that does not decode is skipped (the listing already says when
  a log is unreadable);
- a log that is not a plain file by now (swapped for a FIFO in a shared sessions dir after the
  listing read it) is left out, never waited on.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from agent_tui.events import event_from_json
from agent_tui.private_files import open_plain
from agent_tui.reducer import NO_SPEND, DashboardState, Spend, apply_event

__all__ = ["stored_spend"]

_USAGE_LINES = (b'"type":"model.usage"', b'"type":"turn.completed"')


def stored_spend(paths: Iterable[Path]) -> dict[str, Spend]:
    """Each log's session id (its file name) → what its model calls spent."""
    spent: dict[str, Spend] = {}
    for path in paths:
        state = DashboardState()
        try:
            with open_plain(path) as handle:  # swapped for a FIFO since it was listed: not waited on
                for line in handle:
                    if _USAGE_LINES[0] in line or _USAGE_LINES[1] in line:
                        _fold_line(state, line)
        except OSError:
            continue
        session = state.sessions.get(path.stem)
        spent[path.stem] = session.spend if session is not None else NO_SPEND
    return spent


def _fold_line(state: DashboardState, line: bytes) -> None:
    try:
        event = event_from_json(line)
    except ValueError:  # a torn or foreign line: the listing says when a log is unreadable
        return
    if event.type in ("model.usage", "turn.completed"):
        apply_event(state, event)
