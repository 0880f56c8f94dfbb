"""Reading a foreign log line by line without copying each line: `SourceLines(handle)`.

Invariants:
- iterating yields `(line number, line)` for every complete line (one that ends in `\\n`), in
  order, numbered from 1 (or from `first_number`); the line keeps its newline and is a
  `memoryview` over the block of the file it lies in (orjson decodes a memoryview as it decodes
  bytes), so a line costs no copy of its own;
- a line that straddles blocks is joined whole (the only copy made) before it is yielded,
  however long it is;
- whatever follows the last newline (a final line torn by a writer that died mid-line) is never
  yielded: once the iteration ends, `tail` holds it (empty when the file ends with a newline)
  and `next_number` is its number;
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


class SourceLines:
    """The complete lines of the binary file `handle`, read from where it stands to its end.

    Args:
        handle: an open binary file (read with `read(size)`).
        first_number: the number of the first line read.
        block_size: bytes read at a time.
    """

    def __init__(self, handle: BinaryIO, first_number: int = 1, block_size: int = BLOCK_SIZE) -> None:
        self.handle = handle
        self.next_number = first_number
        self.block_size = block_size
        self.tail = b""

    def __iter__(self) -> Iterator[tuple[int, memoryview]]:
        read = self.handle.read
        size = self.block_size
        number = self.next_number
        carry: list[memoryview] = []  # the start of a line that goes on in this block
        while block := read(size):
            view = memoryview(block)
            start = 0
            if carry:  # only the line that straddles two blocks is copied, to join its parts
                first = block.find(b"\n")
                if first < 0:
                    carry.append(view)
                    continue
                start = first + 1
                carry.append(view[:start])
                yield number, memoryview(b"".join(carry))
                number += 1
                carry = []
            last = block.rfind(b"\n")
            find = block.find
            while start <= last:
                end = find(b"\n", start) + 1
                yield number, view[start:end]
                number += 1
                start = end
            if start < len(block):
                carry.append(view[start:])
        self.tail = b"".join(carry)
        self.next_number = number
