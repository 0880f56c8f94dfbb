"""The event store: append-only JSONL logs, one per session (imports only `events`)."""

from agent_tui.store.errors import (
    EventLogDecodeError,
    EventLogError,
    EventLogSequenceError,
    EventLogTornTailError,
    EventLogWriteError,
    SessionLockedError,
)
from agent_tui.store.index import LineIndex, TornLine
from agent_tui.store.jsonl import (
    EventStore,
    JsonlEventLog,
    JsonlFileEventStore,
    ReplayMode,
    TailRepair,
    foreign_session,
    iter_lines,
)

__all__ = [
    "EventLogDecodeError",
    "EventLogError",
    "EventLogSequenceError",
    "EventLogTornTailError",
    "EventLogWriteError",
    "EventStore",
    "JsonlEventLog",
    "JsonlFileEventStore",
    "LineIndex",
    "ReplayMode",
    "SessionLockedError",
    "TailRepair",
    "TornLine",
    "foreign_session",
    "iter_lines",
]
