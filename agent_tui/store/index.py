"""A sparse line index over an append-only JSONL file.

Invariants:
- the index never parses JSON: it counts newline bytes per fixed-size block, which runs at the
  speed of `bytes.count`, so opening a log of millions of events is cheap;
- `line_span(n)` finds line `n` by bisecting the per-block counts and scanning one block, so
  random access costs one small read, not a scan from the start;
- `extend()` indexes only bytes appended since the last call (tailing a growing log).

A dense offset array would cost 8 bytes and one Python-level step per line; the block counts cost
8 bytes per 64 KiB and one `count` call per block.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left
from pathlib import Path

BLOCK = 64 * 1024
_READ = 128 * BLOCK  # 8 MiB per read while indexing


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
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            self._reset()
            return 0
        try:
            size = os.fstat(fd).st_size
            if size < self._size:  # truncated or replaced: start over
                self._reset()
                before = 0
            position = self._indexed
            tail = 0
            while position < size:
                data = os.pread(fd, min(_READ, size - position), position)
                if not data:
                    break
                full = len(data) - len(data) % BLOCK
                start = 0
                while start < full:
                    self._cumulative.append(
                        (self._cumulative[-1] if self._cumulative else 0)
                        + data.count(b"\n", start, start + BLOCK)
                    )
                    start += BLOCK
                self._indexed = position + full
                tail = data.count(b"\n", full)
                position += len(data)
            self._tail_newlines = tail if position > self._indexed else 0
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

    def _newline_offset(self, fd: int, k: int) -> int:
        """Offset of the k-th newline (1-based) in the file."""
        block = bisect_left(self._cumulative, k)
        start = block * BLOCK
        before = self._cumulative[block - 1] if block else 0
        end = min(start + BLOCK, self._size)
        data = os.pread(fd, end - start, start)
        position = -1
        for _ in range(k - before):
            position = data.find(b"\n", position + 1)
        if position < 0:
            raise IndexError(k)
        return start + position

    def line_span(self, n: int) -> tuple[int, int]:
        """Byte span `[start, end)` of line `n` (0-based), the end including its newline."""
        if not 0 <= n < self.line_count:
            raise IndexError(f"line {n} out of range (0..{self.line_count - 1})")
        fd = os.open(self.path, os.O_RDONLY)
        try:
            start = 0 if n == 0 else self._newline_offset(fd, n) + 1
            end = self._newline_offset(fd, n + 1) + 1
        finally:
            os.close(fd)
        return start, end

    def read_line(self, n: int) -> bytes:
        """The bytes of line `n` (0-based), without its newline."""
        start, end = self.line_span(n)
        fd = os.open(self.path, os.O_RDONLY)
        try:
            return os.pread(fd, end - start - 1, start)
        finally:
            os.close(fd)
