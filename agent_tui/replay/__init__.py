"""Reading recorded sessions: finding logs, dumping them, and (in the dashboard) scrubbing them.

The names below are what the replay scrubber uses: the lazy `Timeline` over many logs and the
`TimelineView` of one position in it, the bar's cells, filters, the list of many logs from their heads and tails (`Catalog`, read by a `CatalogChild`) and the
timelines kept for it (`TimelineCache`), what its sessions' earlier turns spent (`ListSpend`), `g`'s targets and follow mode.
The CLI's `--dump` views and log sources are imported from their modules (`replay.dump`,
`replay.sources`), which the dashboard never needs.

The names load lazily, each from its module when first asked for: `agent-tui search` reads
`replay.sources` without the scrubber's timelines and the reducer they fold with.
"""

from typing import TYPE_CHECKING

from agent_tui.events.lazy_names import lazy_names

if TYPE_CHECKING:
    from agent_tui.replay.bar import Cell, bar_cells
    from agent_tui.replay.cache import TimelineCache
    from agent_tui.replay.catalog import Catalog, CatalogEntry, ListSpend, overlay, read_catalog
    from agent_tui.replay.catalog_child import LIST_FROM, CatalogChild, start_listing
    from agent_tui.replay.filters import Filter, matching
    from agent_tui.replay.follow import Follower
    from agent_tui.replay.goto import GotoError, goto_position
    from agent_tui.replay.kinds import Mark
    from agent_tui.replay.preview import preview_end
    from agent_tui.replay.timeline import INDEX_BATCH, PollResult, Timeline
    from agent_tui.replay.torn import torn_tail_notices
    from agent_tui.replay.view import FULL_TURNS, Snapshot, TimelineView, end_snapshot

__getattr__, __dir__ = lazy_names(__name__, __file__)

__all__ = [
    "FULL_TURNS",
    "INDEX_BATCH",
    "LIST_FROM",
    "Catalog",
    "CatalogChild",
    "CatalogEntry",
    "Cell",
    "Filter",
    "Follower",
    "GotoError",
    "ListSpend",
    "Mark",
    "PollResult",
    "Snapshot",
    "Timeline",
    "TimelineCache",
    "TimelineView",
    "bar_cells",
    "end_snapshot",
    "goto_position",
    "matching",
    "overlay",
    "preview_end",
    "read_catalog",
    "start_listing",
    "torn_tail_notices",
]
