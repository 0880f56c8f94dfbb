"""Every custom Textual message of the dashboard, in one place.

The engine reaches the UI only through these and through the reducer's state (a permission
request is a `permission.requested` event: the approval queue is the state's, and its answer
goes to `engine.questions`). The replay's indexing thread
posts `ReplayOpened` (a first look at the end, before indexing), `ReplayIndexing` (progress),
`ReplayIndexed`, over many logs `ReplayListed` and `ReplaySpendScanned`, and, while following, `ReplayAppended` and a `NoticePosted`: the screen draws at
once and never waits for the logs. The live run says when its stored sessions are reopened
(`WorkbenchReady`) and how starting an agent went (`AgentStarted`, `AgentStartFailed`, which
keeps what the user asked for).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import anyio
from textual.message import Message

from agent_tui.reducer import DashboardState, EarlierSpend
from agent_tui.replay import Catalog, CatalogEntry, Snapshot, Timeline

if TYPE_CHECKING:  # the runtime's, loaded by whoever sends these: a replay never does
    from agent_tui.ports import AgentSpec, ProjectRulesState


@dataclass
class LiveRunFinished(Message):
    """The live scenario run ended: every turn finished, or it failed with `error`."""

    summary: str
    error: str | None = None


@dataclass
class StoredSessionsListed(Message):
    """Every stored session is folded in from its log's first line: draw the whole list, then
    set `painted` (the logs' last turns are read after)."""

    painted: anyio.Event


@dataclass
class WorkbenchReady(Message):
    """The engine is open and the stored sessions are reopened (`problems`: logs that were not)."""

    problems: list[str] = field(default_factory=list)


@dataclass
class NoticePosted(Message):
    """Something the run tells the user as a notice: an MCP server of an agent's tree did not
    start, a terminal agent's transcript was skipped or could not be read, an attached
    dashboard's control request came back refused or its host did not answer (then a retry is
    the same request), the bus sent what could not be read, a followed log was truncated, replaced or unreadable."""

    text: str
    title: str = ""
    severity: Literal["information", "warning", "error"] = "warning"
    timeout: float = 10


@dataclass
class ProjectRulesWaiting(Message):
    """The project ships a rules file the user has not accepted (as it is now)."""

    state: ProjectRulesState


@dataclass
class AgentStarted(Message):
    """A new agent's session exists and its first turn has started."""

    session_id: str


@dataclass
class AgentStartFailed(Message):
    """`spec` could not be started, for `reason` (the form reopens with it)."""

    spec: AgentSpec
    reason: str


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
class ReplayOpened(Message):
    """The replay's logs are open and counted; `preview` is a first look at their end (or None)."""

    timeline: Timeline
    preview: DashboardState | None


@dataclass
class ReplayListed(Message):
    """A replay over many logs has its list: `catalog` from their heads (`complete` False) or
    from their heads and tails (True)."""

    catalog: Catalog
    complete: bool


@dataclass
class ReplaySpendScanned(Message):
    """A replay over many logs: what the logs of some listed sessions spent in all (asked of the
    search index), or why it could not be asked (`problem`)."""

    entries: list[CatalogEntry]
    spent: dict[str, EarlierSpend]
    problem: str | None = None


@dataclass
class ReplayIndexing(Message):
    """How far indexing got (posted from its thread; a newer one replaces an older one)."""

    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ReplayIndexing)


@dataclass
class ReplayIndexed(Message):
    """Indexing reached the end of every log; `end` is the state there."""

    end: Snapshot


@dataclass
class ReplayAppended(Message):
    """Following found new events (or rebuilt part of the timeline: `end.generation` says so);
    `end` is the state at the new end. A newer one replaces an older one: it says all the older
    one did."""

    end: Snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ReplayAppended)


@dataclass
class ReplayFiltered(Message):
    """A filter's matches among events `[start, end)` (event indices, in order), for the
    timeline as it was in `generation`."""

    query: str
    matches: array[int]
    generation: int
    start: int
    end: int


@dataclass
class ReplayPromptSubmitted(Message):
    """The user typed a filter (`kind` "filter") or a place to go to ("goto"); `text` is None
    when they closed the prompt instead."""

    kind: Literal["filter", "goto"]
    text: str | None


@dataclass
class SessionSelected(Message):
    """The user moved the session tree's cursor to `session_id`."""

    session_id: str
