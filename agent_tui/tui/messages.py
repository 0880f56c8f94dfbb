"""Every custom Textual message of the dashboard, in one place.

The engine reaches the UI only through these (and through the reducer's state): a permission
request arrives as `PermissionAsked` carrying the request (its answer goes back through
`TuiPrompter.answer`), a cancelled request as `PermissionWithdrawn`. The replay loader streams
`ReplayLoadProgress` from its thread so the screen draws before the logs are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from agent_tui.engine.permissions import PermissionRequest
from agent_tui.events import Event


@dataclass
class PermissionAsked(Message):
    """The engine waits for the user's answer to `request` (it is in the approval queue)."""

    request: PermissionRequest


@dataclass
class PermissionWithdrawn(Message):
    """The engine stopped waiting for `request` (its turn was cancelled or ended)."""

    request: PermissionRequest


@dataclass
class LiveRunFinished(Message):
    """The live scenario run ended: every turn finished, or it failed with `error`."""

    summary: str
    error: str | None = None


@dataclass
class ApprovalChosen(Message):
    """The user picked a queue entry to look at (enter on the approval queue)."""

    session_id: str
    request_id: str


@dataclass
class ScrubRequested(Message):
    """The user clicked the scrubber bar: move the replay cursor to `position`."""

    position: int


@dataclass
class ReplayLoadProgress(Message):
    """The replay loader's progress (posted from its thread worker)."""

    stage: str
    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ReplayLoadProgress)


@dataclass
class ReplayLoaded(Message):
    """The replay loader finished: the timeline is ready (`errors` name each bad file:line)."""

    errors: list[str] = field(default_factory=list)


@dataclass
class ReplayAppended(Message):
    """Follow mode read new events from the logs (`errors`: lines it could not use)."""

    events: list[Event]
    errors: list[str] = field(default_factory=list)


@dataclass
class SessionSelected(Message):
    """The user moved the session tree's cursor to `session_id`."""

    session_id: str
