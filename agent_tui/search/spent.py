"""What the logs of one or more directories spent, asked of each directory's search index.

Invariants:
- each directory's index is brought up to date with the logs given for it first (a log of the
  index that is not among them leaves it), so the answer is the logs as they are now;
- the answer is by session id, each log's whole spend (`SearchIndex.spend`): in all, per day,
  and the latest budget it set after its head.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agent_tui.search.index import SearchIndex
from agent_tui.search.location import index_path

if TYPE_CHECKING:
    from agent_tui.reducer.earlier_spend import EarlierSpend


def logs_spend(files: Sequence[Path], data_dir: Path | None = None) -> dict[str, EarlierSpend]:
    """What each of `files` spent (`SearchIndex.spend`), from the index of each one's directory
    brought up to date first (`files` holds every log of those directories: one not among them
    leaves the index); `data_dir` as `index_path` takes it.

    Raises:
        SearchError: an index cannot be opened or written.
    """
    by_directory: dict[Path, list[Path]] = {}
    for path in files:
        by_directory.setdefault(path.parent, []).append(path)
    spent: dict[str, EarlierSpend] = {}
    for directory, logs in by_directory.items():
        with SearchIndex.open(index_path(directory, data_dir)) as index:
            index.sync(logs)
            spent.update(index.spend())
    return spent
