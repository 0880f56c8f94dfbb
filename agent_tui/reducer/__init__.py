"""The reducer: events → dashboard state, pure, shared by the live view and the replay scrubber.

It stands on `agent_tui.events` only (never Textual, never the runtime), so the TUI and the
headless `replay --dump state` fold logs the same way. Import from here: `views` holds what the
dashboard shows, `fold` the fold itself (`project_state`, `apply_event`, `fold_into`), `turn_events`,
`tool_events` and `spend_events` what each event type does, `spend` the tokens-and-dollars value
every cost total is, `earlier_spend` what a session listed from its last turn spent before it,
`timestamps` the durations read from event times, `agent_reports` an ACP agent's plan and mode.
The names load lazily, each from its module when first asked for: `agent-tui search` reads
`earlier_spend` and `spend` without the fold and the event models it checks.
"""

from typing import TYPE_CHECKING

from agent_tui.events.lazy_names import lazy_names

if TYPE_CHECKING:
    from agent_tui.reducer.attention import AttentionPolicy, Notification
    from agent_tui.reducer.collector import collector_paused
    from agent_tui.reducer.earlier_spend import EarlierSpend, add_earlier_spend, usage_events
    from agent_tui.reducer.fold import apply_event, fold_into, project_state
    from agent_tui.reducer.spend import NO_SPEND, Spend
    from agent_tui.reducer.timestamps import epoch_ms, ms_between
    from agent_tui.reducer.turn_events import apply_frame
    from agent_tui.reducer.views import (
        OUTPUT_CHARS,
        RESULT_CHARS,
        TEXT_CHARS,
        AgentModeView,
        DashboardState,
        PermissionView,
        PlanEntryView,
        SessionView,
        ToolCallView,
        TranscriptEntry,
        TurnUsage,
        TurnView,
    )

__getattr__, __dir__ = lazy_names(__name__, __file__)

__all__ = [
    "NO_SPEND",
    "OUTPUT_CHARS",
    "RESULT_CHARS",
    "TEXT_CHARS",
    "AgentModeView",
    "AttentionPolicy",
    "DashboardState",
    "EarlierSpend",
    "Notification",
    "PermissionView",
    "PlanEntryView",
    "SessionView",
    "Spend",
    "ToolCallView",
    "TranscriptEntry",
    "TurnUsage",
    "TurnView",
    "add_earlier_spend",
    "apply_event",
    "apply_frame",
    "collector_paused",
    "epoch_ms",
    "fold_into",
    "ms_between",
    "project_state",
    "usage_events",
]
