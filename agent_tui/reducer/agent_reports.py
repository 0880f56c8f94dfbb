"""What an ACP agent reports of itself, folded from its `source.record`s: its plan and its mode.

The ACP client keeps these updates as the agent sent them (`source.record{format: acp}`, see
docs/acp.md); this fold keeps the latest of each on the session's view, for the dashboard to show.

Invariants:
- `plan` replaces the plan with its entries (an entry that is not an object with text content is
  left out); `plan_update` with text content replaces the plan's text; `plan_removed` clears both;
- the current mode is `session/new`'s (or `session/load`'s) `modes.currentModeId`, then each
  `current_mode_update`'s `currentModeId`; the modes offered are `session/new`'s
  `modes.availableModes`;
- anything of another shape is ignored (what an agent sends is not ours to trust), never an error.
"""

from __future__ import annotations

from typing import Any

from agent_tui.reducer.views import AgentModeView, PlanEntryView, SessionView


def fold_agent_report(session: SessionView, record_type: str, data: Any) -> None:
    """Fold one ACP `source.record`'s `data` into `session`'s plan and mode."""
    if not isinstance(data, dict):
        return
    if record_type == "plan":
        entries = data.get("entries")
        if isinstance(entries, list):
            session.plan = tuple(entry for entry in map(_plan_entry, entries) if entry is not None)
    elif record_type == "plan_update":
        plan = data.get("plan")
        if isinstance(plan, dict) and isinstance(plan.get("content"), str):
            session.plan_text = plan["content"]
    elif record_type == "plan_removed":
        session.plan, session.plan_text = (), None
    elif record_type == "current_mode_update":
        mode = data.get("currentModeId")
        if isinstance(mode, str):
            session.mode = mode
    elif record_type in ("session/new", "session/load"):
        _started(session, data.get("modes"))


def _plan_entry(entry: Any) -> PlanEntryView | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
        return None
    status, priority = entry.get("status"), entry.get("priority")
    return PlanEntryView(
        entry["content"],
        status if isinstance(status, str) else "pending",
        priority if isinstance(priority, str) else "medium",
    )


def _started(session: SessionView, modes: Any) -> None:
    if not isinstance(modes, dict):
        return
    current = modes.get("currentModeId")
    if isinstance(current, str):
        session.mode = current
    offered = modes.get("availableModes")
    if isinstance(offered, list):
        session.modes = tuple(
            AgentModeView(mode["id"], mode["name"] if isinstance(mode.get("name"), str) else mode["id"])
            for mode in offered
            if isinstance(mode, dict) and isinstance(mode.get("id"), str)
        )
