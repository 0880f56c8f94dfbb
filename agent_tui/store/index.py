"""A sparse line index over an append-only JSONL file.

Invariants:
- the index never parses JSON: it counts newline bytes per fixed-size block, which runs at the
  speed of `bytes.count`, so opening a log of millions of events is cheap;
- `line_span(n)` finds line `n` by bisecting the per-block counts and scanning one block, so
  random access costs one small read, not a scan from the start;
- `extend()` indexes only bytes appended since the last call (tailing a growing log);
- `torn_line()` is the one place that says where a torn final line is and how long it is (the
  store refuses to append after it and repairs it; readers report it as left out).

A dense offset array would cost 8 bytes and one Python-level step per line; the block counts cost
8 bytes per 64 KiB and one `count` call per block.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path

from agent_tui.private_files import plain_descriptor

BLOCK = 64 * 1024
_READ = 16 * BLOCK  # 1 MiB per read while indexing: small enough to stay in cache for `count`


@dataclass(frozen=True)
class TornLine:
    """Bytes after a file's last newline: its 1-based line number and its size in bytes."""

    path: Path
    line_number: int
    size: int


class LineIndex:
    """Counts of complete lines per block of a file; the file may keep growing.

    Args:
        path: the JSONL file. A missing file indexes as empty.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        # cumulative[k] = number of newlines in blocks 0..k (inclusive)
        self._cumulative = array("Q")
        self._indexed = 0  # bytes covered by complete blocks in `_cumulative`
        self._tail_newlines = 0  # newlines in the partial block after `_indexed`
        self._size = 0
        self._last_byte_newline = True
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the indexed file
        self.extend()

    @property
    def size(self) -> int:
        """Bytes of the file seen by the last `extend()`."""
        return self._size

    @property
    def line_count(self) -> int:
        """Complete lines (each ends in a newline)."""
        base = self._cumulative[-1] if self._cumulative else 0
        return base + self._tail_newlines

    @property
    def has_torn_tail(self) -> bool:
        """True when the file ends in bytes that are not followed by a newline."""
        return self._size > 0 and not self._last_byte_newline

    def torn_line(self) -> TornLine | None:
        """The torn final line of what was indexed by the last `extend()`, or None."""
        if not self.has_torn_tail:
            return None
        return TornLine(self.path, self.line_count + 1, self._size - self.complete_bytes())

    def complete_bytes(self) -> int:
        """Byte offset just past the last complete line."""
        if not self.has_torn_tail:
            return self._size
        if self.line_count == 0:
            return 0
        return self.line_span(self.line_count - 1)[1]

    def extend(self) -> int:
        """Index bytes appended since the last call. Returns how many new complete lines."""
        before = self.line_count
        try:
            fd = plain_descriptor(self.path)
        except FileNotFoundError:
            self._reset()
            return 0
        try:
            stat = os.fstat(fd)
            size = stat.st_size
            identity = (stat.st_dev, stat.st_ino)
            if size < self._size or identity != self._identity:  # truncated or replaced: start over
                self._reset()
                before = 0
            self._identity = identity
            position = self._indexed
            tail = 0
            cumulative = self._cumulative
            while position < size:
                data = os.pread(fd, min(_READ, size - position), position)
                full = len(data) - len(data) % BLOCK
                total = cumulative[-1] if cumulative else 0
                for start in range(0, full, BLOCK):
                    total += data.count(b"\n", start, start + BLOCK)
                    cumulative.append(total)
                self._indexed = position + full
                position += len(data)
                if full < len(data) or not data:
                    # A partial block is the end of what can be read now (a short read included):
                    # count it as the tail and index no further, so blocks stay aligned.
                    tail = data.count(b"\n", full)
                    size = position
                    break
            self._tail_newlines = tail
            self._size = size
            if size:
                self._last_byte_newline = os.pread(fd, 1, size - 1) == b"\n"
        finally:
            os.close(fd)
        return self.line_count - before

    def _reset(self) -> None:
        self._cumulative = array("Q")
        self._indexed = 0
        self._tail_newlines = 0
        self._size = 0
        self._last_byte_newline = True
        self._identity = None

    def _find_newline(self, fd: int, k: int) -> tuple[int, bytes, int]:
        """Find the k-th newline (1-based) of the file.

        Returns `(block_start, block, position)`: the bytes of the block that holds it and its
        position in them, so the caller can often cut the line out without another read. Counts
        from whichever end of the block is nearer.
        """
        cumulative = self._cumulative
        block = bisect_left(cumulative, k)
        before = cumulative[block - 1] if block else 0
        inside = (cumulative[block] if block < len(cumulative) else self.line_count) - before
        start = block * BLOCK
        data = os.pread(fd, min(BLOCK, self._size - start), start)
        wanted = k - before
        if wanted <= inside - wanted:
            position = -1
            for _ in range(wanted):
                position = data.find(b"\n", position + 1)
                if position < 0:
                    break
        else:
            position = len(data)
            for _ in range(inside - wanted + 1):
                position = data.rfind(b"\n", 0, position)
                if position < 0:
                    break
        if position < 0:
            raise IndexError(f"newline {k} not where the index says: {self.path} changed")
        return start, data, position

    def _line(self, fd: int, n: int) -> tuple[int, int, bytes | None]:
        """`(start, end, text)` of line `n`; `text` (without newline) is None if not yet read."""
        if n == 0:
            block_start, data, position = 0, os.pread(fd, min(BLOCK, self._size), 0), -1
        else:
            block_start, data, position = self._find_newline(fd, n)
        start = block_start + position + 1
        stop = data.find(b"\n", position + 1)
        if stop >= 0:
            return start, block_start + stop + 1, data[position + 1 : stop]
        block_start, _data, stop = self._find_newline(fd, n + 1)  # a line longer than its block
        return start, block_start + stop + 1, None

    def line_span(self, n: int) -> tuple[int, int]:
        """Byte span `[start, end)` of line `n` (0-based), the end including its newline."""
        if not 0 <= n < self.line_count:
            raise IndexError(f"line {n} out of range (0..{self.line_count - 1})")
        fd = plain_descriptor(self.path)
        try:
            start, end, _text = self._line(fd, n)
        finally:
            os.close(fd)
        return start, end

    def read_line(self, n: int) -> bytes:
        """The bytes of line `n` (0-based), without its newline."""
        if not 0 <= n < self.line_count:
            raise IndexError(f"line {n} out of range (0..{self.line_count - 1})")
        fd = plain_descriptor(self.path)
        try:
            start, end, text = self._line(fd, n)
            if text is None:
                text = os.pread(fd, end - start - 1, start)
        finally:
            os.close(fd)
        return text
