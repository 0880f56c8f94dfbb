"""Reading a foreign log line by line without copying each line: `SourceLines(handle)`.

Invariants:
- iterating yields `(line number, line)` for every complete line (one that ends in `\\n`), in
  order, numbered from 1 (or from `first_number`); the line keeps its newline and is a
  `memoryview` over the block of the file it lies in (orjson decodes a memoryview as it decodes
  bytes), so a line costs no copy of its own;
- a line that straddles blocks is joined whole (the only copy made) before it is yielded;
- a line longer than `max_line` bytes (`MAX_LINE_BYTES`, 64 MB) is never held: its bytes are
  counted as they are read and let go, and it is yielded as `OVERLONG` with its length (without
  the newline) in `overlong`, so memory stays within about twice the cap whatever the file
  holds, and the lines after it keep their numbers;
- whatever follows the last newline (a final line torn by a writer that died mid-line, or one
  still being written) is never yielded: once the iteration ends, `tail` holds it (empty when
  the file ends with a newline) and `next_number` is its number; when it is past the cap,
  `tail` is empty and `tail_overlong` is its length (else 0);
- the lines split at `\\n` only, exactly as iterating a binary file does.

Reading blocks and slicing views is what makes it cheap: a buffered `readline` copies each line
into a bytes object of its own, which costs about half as much as decoding the line.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

BLOCK_SIZE = 1 << 16
"""Bytes read at a time: big enough that a block holds many lines, small enough to stay in the
processor's cache while its lines are decoded."""

MAX_LINE_BYTES = 64 << 20
"""The longest line held (bytes, without its newline): a longer one is only measured. Read when a
`SourceLines` is made, so a test may lower it."""

OVERLONG = memoryview(b"\x00\n")
"""What is yielded for a line past the cap (the same object each time: test it with `is`)."""


class SourceLines:
    """The complete lines of the binary file `handle`, read from where it stands to its end.

    Args:
        handle: an open binary file (read with `read(size)`).
        first_number: the number of the first line read.
        block_size: bytes read at a time (at most `max_line`).
        max_line: the longest line held (None: `MAX_LINE_BYTES`).
    """

    def __init__(
        self,
        handle: BinaryIO,
        first_number: int = 1,
        block_size: int = BLOCK_SIZE,
        max_line: int | None = None,
    ) -> None:
        self.handle = handle
        self.next_number = first_number
        self.max_line = MAX_LINE_BYTES if max_line is None else max_line
        # A line within one block is then never past the cap: only a carried one is measured.
        self.block_size = max(1, min(block_size, self.max_line))
        self.tail = b""
        self.tail_overlong = 0
        """The length of a final line without a newline that is past the cap (else 0)."""
        self.overlong = 0
        """The length of the line last yielded as `OVERLONG` (bytes, without its newline)."""

    def __iter__(self) -> Iterator[tuple[int, memoryview]]:
        read = self.handle.read
        size = self.block_size
        number = self.next_number
        carry: list[memoryview] | None = []  # the start of a line that goes on (None: past the cap)
        carried = 0  # its bytes
        while block := read(size):
            view = memoryview(block)
            start = 0
            if carried:  # only the line that straddles blocks is copied, to join it
                first = block.find(b"\n")
                if carry is not None and carried + (len(block) if first < 0 else first) > self.max_line:
                    carry = None  # skipped from here on, only measured
                if first < 0:
                    carried += len(block)
                    if carry is not None:
                        carry.append(view)
                    continue
                start = first + 1
                if carry is None:
                    self.overlong = carried + first
                    yield number, OVERLONG
                else:
                    carry.append(view[:start])
                    yield number, memoryview(b"".join(carry))
                number += 1
                carry, carried = [], 0
            last = block.rfind(b"\n")
            find = block.find
            while start <= last:
                end = find(b"\n", start) + 1
                yield number, view[start:end]
                number += 1
                start = end
            if start < len(block):
                carry = [view[start:]]
                carried = len(block) - start
        self.tail_overlong = carried if carry is None else 0
        self.tail = b"".join(carry or ())
        self.next_number = number
