"""The timeline's order across session logs: by timestamp, then causal, then stable.

Each line gets the key `(ts, rank, file_id)`:
- `ts`, the event's timestamp (UTC ISO-8601 strings compare in time order); a corrupt line takes
  the timestamp of the line before it in its file, so it stays where it was written;
- `rank` is 0, except for a child session's `session.created`, which ranks by the child's depth
  below a root: within one millisecond a child appears after every event of its parent (so after
  the spawn call that made it), a grandchild after its parent;
- `file_id`, the file's place in session-id order, keeps ties between unrelated sessions stable.

`Merger` merges the files' lines by that key while reading them in batches, and never reorders
the lines of one file. When it reads a child's first line it reads the parent's file once more
before merging on: the parent wrote its spawn call before the child existed, so a follower that
happened to read the parent's file a moment earlier still puts the spawn call first.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Sequence

from agent_tui.events.session_tree import path_to_root
from agent_tui.replay.logfile import READ_BYTES, Entry, LogFile

Key = tuple[str, int, int]
"""(ts, rank, file_id): see the module docstring."""

START_KEY: Key = ("", 0, -1)
"""Sorts before every line."""

_MIN_BUDGET = 16 * 1024


class Merger:
    """The k-way merge of the files' unread lines.

    Args:
        files: the timeline's files (the list may grow; files are read from their read cursor).
    """

    def __init__(self, files: Sequence[LogFile]) -> None:
        self._files = files
        self._heap: list[Key] = []  # one key per queued file: its next line's
        self._buffers: dict[int, deque[Entry]] = {}
        self._queued: set[int] = set()  # files with an entry in the heap
        self._by_session: dict[str, LogFile] = {}

    def reset(self) -> None:
        """Drop what was read ahead (the files' cursors were moved, or a file was reset)."""
        self._heap.clear()
        self._buffers.clear()
        self._queued.clear()
        self._by_session = {file.session_id: file for file in self._files if file.session_id is not None}

    def _budget(self) -> int:
        # Many files: read less of each at a time, so read-ahead stays a few MiB in all.
        return max(_MIN_BUDGET, READ_BYTES * 8 // max(8, len(self._files)))

    def depth(self, file: LogFile) -> int:
        """How far below a root the session of `file` is: its ancestors whose files were read,
        up to a cycle (0 for a root or an unknown parent)."""
        by_session = self._by_session
        start = file.session_id or ""

        def parent_of(session_id: str) -> str | None:
            parent = file.parent_id if session_id == start else by_session[session_id].parent_id
            return parent if parent in by_session else None

        return len(path_to_root(start, parent_of, str)) - 1

    def key(self, file: LogFile, entry: Entry) -> Key:
        event = entry[4]
        if event is not None and event.type == "session.created" and file.parent_id is not None:
            return (entry[3], self.depth(file), file.file_id)
        return (entry[3], 0, file.file_id)

    def _read(self, file: LogFile) -> list[Entry]:
        """Read more of `file` into its buffer."""
        entries = file.read_entries(self._budget())
        if entries:
            if file.session_id is not None and file.session_id not in self._by_session:
                self._by_session[file.session_id] = file
            self._buffers.setdefault(file.file_id, deque()).extend(entries)
        return entries

    def _queue(self, file: LogFile) -> None:
        buffer = self._buffers.get(file.file_id)
        if buffer and file.file_id not in self._queued:
            self._queued.add(file.file_id)
            heapq.heappush(self._heap, self.key(file, buffer[0]))

    def _top_up_parent(self, file: LogFile, entries: list[Entry]) -> None:
        # A child's first line was just read: read its parent's file once more (see above).
        if entries and entries[0][0] == 0 and file.parent_id is not None:
            parent = self._by_session.get(file.parent_id)
            if parent is not None and parent is not file and self._read(parent):
                self._queue(parent)

    def _load(self, file: LogFile) -> bool:
        entries = self._read(file)
        self._queue(file)
        self._top_up_parent(file, entries)
        return bool(entries)

    def _fill(self) -> None:
        # Read every idle file first and queue them after, so that each child's rank is computed
        # knowing its parent's file.
        read = [(file, self._read(file)) for file in self._files if not self._buffers.get(file.file_id)]
        for file, _entries in read:
            self._queue(file)
        for file, entries in read:
            self._top_up_parent(file, entries)

    def peek(self) -> Key | None:
        """The key of the next line in merge order (reading the files if nothing is buffered)."""
        if not self._heap:
            self._fill()
        return self._heap[0] if self._heap else None

    def pull(self, limit: int, *, look_again: bool = True) -> list[tuple[LogFile, list[Entry]]]:
        """Up to about `limit` lines in merge order, as runs of consecutive lines of one file;
        [] when every file has been read to its end. Without `look_again`, only what the files
        held when they were last looked at (`peek`) is merged: a follower takes what arrives
        meanwhile at its next poll, rather than chasing the writers."""
        heap = self._heap
        if not heap and look_again:
            self._fill()
        runs: list[tuple[LogFile, list[Entry]]] = []
        files = self._files
        buffers = self._buffers
        taken = 0
        while heap and taken < limit:
            file_id = heap[0][2]
            file = files[file_id]
            buffer = buffers[file_id]
            stale = True  # its heap item names a line already taken
            if len(heap) == 1:  # one file left: its lines need no keys
                run = [buffer.popleft() for _ in range(min(len(buffer), limit - taken))]
            else:
                run = [buffer.popleft()]
                while buffer and taken + len(run) < limit:
                    head = buffer[0]
                    event = head[4]
                    if event is None or event.type != "session.created":
                        heapq.heapreplace(heap, (head[3], 0, file_id))
                    else:
                        heapq.heapreplace(heap, self.key(file, head))
                    stale = False
                    if heap[0][2] != file_id:
                        break  # another file is next
                    run.append(buffer.popleft())
                    stale = True
            runs.append((file, run))
            taken += len(run)
            if not buffer and not file.caught_up:
                # More of it was on disk at the last read: read on, or the merge order would
                # break. (Lines appended since are new arrivals: the next pull takes them.)
                self._load(file)  # still queued: this refills the buffer without a push
            if stale:
                self._settle(file, buffer)
        return runs

    def _settle(self, file: LogFile, buffer: deque[Entry]) -> None:
        """Make the heap item of `file` match its buffer again (it is nearly always on top)."""
        heap = self._heap
        file_id = file.file_id
        at = 0 if heap[0][2] == file_id else next(i for i, item in enumerate(heap) if item[2] == file_id)
        if buffer:
            item = self.key(file, buffer[0])
            if at == 0:
                heapq.heapreplace(heap, item)
                return
            heap[at] = item
        else:
            self._queued.discard(file_id)
            if at == 0:
                heapq.heappop(heap)
                return
            heap[at] = heap[-1]
            heap.pop()
        heapq.heapify(heap)
