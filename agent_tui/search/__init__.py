"""Search across sessions: a word index (SQLite FTS5) over the text of a directory of logs.

`SearchIndex.open(index_path(DIR))` opens the index of the logs in DIR (made, or made again, as
needed); `sync(files)` reads what the logs gained since (only that); `search("words prefix*
\\"a phrase\\"")` answers with hits grouped by log, each naming its session, turn and event so
that the scrubber can open there. The index also keeps what each log spent (`logs_spend`), for
the lists that show a session read from its last turn only. `excerpt` picks the line of a hit to show and where it
matched (pass it through `agent_tui.events.visible` before printing it).

The logs stay the source of truth: the index can be deleted at any time.
"""

from agent_tui.search.excerpt import excerpt
from agent_tui.search.index import Hit, Progress, SearchError, SearchIndex, SearchResults
from agent_tui.search.location import index_path
from agent_tui.search.query import QueryError, parse_query
from agent_tui.search.spent import logs_spend

__all__ = [
    "Hit",
    "Progress",
    "QueryError",
    "SearchError",
    "SearchIndex",
    "SearchResults",
    "excerpt",
    "index_path",
    "logs_spend",
    "parse_query",
]
