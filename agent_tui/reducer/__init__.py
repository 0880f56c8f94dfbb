"""The reducer: events → dashboard state, pure, shared by the live view and the replay scrubber.

It stands on `agent_tui.events` only (never Textual, never the runtime), so the TUI and the
headless `replay --dump state` fold logs the same way.
"""

from agent_tui.reducer.state import (
    MAX_MESSAGES,
    OUTPUT_CHARS,
    RESULT_CHARS,
    TEXT_CHARS,
    DashboardState,
    DeliveryView,
    Message,
    PermissionView,
    Phase,
    Role,
    SessionStatus,
    SessionView,
    ToolCallView,
    ToolStatus,
    TurnView,
    Usage,
    apply_event,
    epoch_ms,
    project_state,
)

__all__ = [
    "MAX_MESSAGES",
    "OUTPUT_CHARS",
    "RESULT_CHARS",
    "TEXT_CHARS",
    "DashboardState",
    "DeliveryView",
    "Message",
    "PermissionView",
    "Phase",
    "Role",
    "SessionStatus",
    "SessionView",
    "ToolCallView",
    "ToolStatus",
    "TurnView",
    "Usage",
    "apply_event",
    "epoch_ms",
    "project_state",
]
