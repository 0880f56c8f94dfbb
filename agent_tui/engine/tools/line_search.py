"""Finding the lines of a text that match a pattern, in time linear in the text: the `grep` engine.

Invariants:
- a pattern is compiled by RE2 (`google-re2`, module `re2`), never by Python's `re`, and there
  is no fallback to `re`: a search takes time linear in the text whatever the pattern, and RE2
  lets go of the GIL while it searches, so the event loop keeps running beside it. RE2 never
  writes to the terminal (`log_errors=False`), and no compiled pattern outlives its search (the
  module's cache of compiled patterns is emptied);
- a pattern RE2 cannot take (a back-reference, a look-around, an atomic group, ...), one longer
  than `MAX_PATTERN_CHARS` or one compiling to more than `MAX_PROGRAM_SIZE` instructions is a
  `PatternError` whose one-sentence message says what is not supported and that the syntax is
  RE2's. The size cap bounds what RE2's slow path (when its DFA gives up) costs a byte;
- a line matches exactly when the pattern matches somewhere in that line alone: without its
  line end (trailing `\\r`s and the `\\n`), as UTF-8 with each invalid byte read as U+FFFD. So
  `^` and `$` are the line's start and end. A line longer than `LINE_CAP` bytes is searched, and
  shown, in its first `LINE_CAP` bytes; the rest of it is skipped;
- only the text before the first NUL byte is searched (the rest is binary), and at most the
  size given is read;
- the text is read `CHUNK` bytes at a time and one RE2 call never covers more than one span of
  at most `CHUNK` bytes of whole lines, or one line. `checkpoint()` runs before each read and
  each span, so a caller can stop the search (by raising from it) between any two calls;
- the result is the same as searching each line on its own (tests/test_line_search.py checks
  it): most text is searched a span at a time in multi-line mode, and each line that pattern
  finds is checked on its own; a span where that could differ (a `\\r` left after taking out
  the `\\r\\n`s, or a pattern with `\\A`, `\\z` or a flag group that turns off `m`) is searched
  line by line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import IO, Any

import re2

__all__ = ["LinePattern", "PatternError", "matching_lines"]

CHUNK = 256 * 1024
LINE_CAP = 1 << 20  # at least CHUNK: a line that starts inside a read is shorter than the cap
MAX_PATTERN_CHARS = 4096
MAX_PROGRAM_SIZE = 1000

SYNTAX_NOTE = "grep patterns are RE2 syntax: like Python's re, without back-references or look-arounds"

# Where a pattern's meaning on one line differs from its meaning on a span of lines in
# multi-line mode: `\A`/`\z` (start/end of the text) and a flag group that clears `m`. This
# fixed pattern has no nested repetition (linear in the pattern); a false hit only costs speed.
_NOT_PER_SPAN = re.compile(r"\\[Az]|\(\?[A-Za-z]*-[A-Za-z]*m")


class PatternError(Exception):
    """A pattern the search cannot take; `message` is one sentence for the model."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _options(*, per_span: bool) -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every bad pattern to stderr, over the dashboard
    options.never_capture = True  # only whether and where a line matches is needed
    if per_span:
        options.never_nl = True  # a match never crosses a line end
    return options


def _shown(source: str) -> str:
    return repr(source if len(source) <= 80 else source[:80] + "…")


_GROUPS_NOT_SUPPORTED = (
    ("(?=", "look-ahead ((?=…) is not supported"),
    ("(?!", "look-ahead ((?!…) is not supported"),
    ("(?<=", "look-behind ((?<=…) is not supported"),
    ("(?<!", "look-behind ((?<!…) is not supported"),
    ("(?P=", "named back-references ((?P=name)) are not supported"),
    ("(?>", "atomic groups ((?>…)) are not supported"),
    ("(?#", "comments ((?#…)) are not supported"),
    ("(?(", "conditionals ((?(…)…)) are not supported"),
)


def _construct_not_supported(source: str) -> str | None:
    """The first construct of Python's re or PCRE in `source` that RE2 lacks, said for the
    model; None if there is none (a plain syntax error). One pass over the pattern."""
    index, in_class = 0, False
    while index < len(source):
        char = source[index]
        if char == "\\":
            escape = source[index : index + 2]
            after = source[index + 2 : index + 3]
            numbered = escape[1:].isdigit() and escape != "\\0"
            named = escape in ("\\k", "\\g") and after != "" and after in "<{'"
            if not in_class and (numbered or named):
                return f"back-references ({escape}…) are not supported"
            if not in_class and escape == "\\Z":
                return "\\Z is not supported (end of line is $ or \\z)"
            index += 2
        elif in_class:
            in_class = char != "]"
            index += 1
        elif char == "[":
            index += 1
            index += source.startswith("^", index)
            index += source.startswith("]", index)  # a leading `]` is a member, not the end
            in_class = True
        else:
            for opening, said in _GROUPS_NOT_SUPPORTED:
                if source.startswith(opening, index):
                    return said
            if char in "*+?}" and source.startswith("+", index + 1):
                return f"possessive repetition ({source[index : index + 2]}) is not supported"
            index += 1
    return None


def _unsupported(source: str, reason: str) -> str:
    """Why RE2 refused `source` (its `reason`), said for someone used to Python's re."""
    if (construct := _construct_not_supported(source)) is not None:
        return construct
    if reason.startswith("invalid repetition size"):
        return f"{reason} (a count goes up to 1000)"
    if reason.startswith("pattern too large"):
        return "it is too large to search"
    return reason


@dataclass(frozen=True, slots=True)
class LinePattern:
    """A compiled pattern: `line` searches one line; `span` (None when it could differ from
    `line` on a span of lines) searches many lines at once in multi-line mode."""

    source: str
    line: Any
    span: Any | None

    @classmethod
    def compile(cls, source: str) -> LinePattern:
        """Compile `source` with RE2, or raise `PatternError` saying why not."""
        try:
            return cls._compile(source)
        finally:
            # `re2.compile` keeps the last 128 patterns, each with up to 8 MiB of automaton
            # built while searching: a model sending pattern after pattern would pile that
            # up. Ours live only as long as their grep call.
            re2.purge()

    @classmethod
    def _compile(cls, source: str) -> LinePattern:
        if len(source) > MAX_PATTERN_CHARS:
            raise PatternError(
                f"invalid pattern {_shown(source)}: it is {len(source):,} characters long, "
                f"over the {MAX_PATTERN_CHARS:,} a pattern may have"
            )
        try:
            encoded = source.encode("utf-8")
        except UnicodeEncodeError as error:
            raise PatternError(
                f"invalid pattern {_shown(source)}: character {error.start + 1} is not valid "
                "Unicode (a lone surrogate)"
            ) from None
        try:
            line = re2.compile(encoded, _options(per_span=False))
        except re2.error as error:
            reason = error.args[0] if error.args else ""
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            raise PatternError(
                f"invalid pattern {_shown(source)}: {_unsupported(source, str(reason))}; {SYNTAX_NOTE}"
            ) from None
        if line.programsize > MAX_PROGRAM_SIZE:
            raise PatternError(
                f"invalid pattern {_shown(source)}: it compiles to {line.programsize:,} steps, over "
                f"the {MAX_PROGRAM_SIZE:,} a grep may use; use smaller repetition counts or fewer "
                "alternatives"
            )
        span = None
        if not _NOT_PER_SPAN.search(source):
            try:
                span = re2.compile(b"(?m)" + encoded, _options(per_span=True))
            except re2.error:
                span = None  # searched line by line: slower, the same answer
        return cls(source, line, span)

    def matches_line(self, line: bytes) -> bool:
        """Whether the pattern matches in `line` (valid UTF-8, without its line end)."""
        return self.line.search(line) is not None


def _valid_utf8(data: bytes) -> bytes:
    """`data` with each invalid UTF-8 byte as U+FFFD (the same lines, the same line ends)."""
    if data.isascii():
        return data
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace").encode("utf-8")
    return data


def _line_matches(pattern: LinePattern, raw: bytes) -> str | None:
    """The text of `raw` (one line, with or without its line end) if the pattern matches it."""
    text = raw.decode("utf-8", "replace").rstrip("\r\n")
    return text if pattern.matches_line(text.encode("utf-8")) else None


def _search_span(pattern: LinePattern, span: bytes, before: int) -> Iterator[tuple[int, str]]:
    """The matching lines of `span` (whole lines joined by `\\n`, none after the last one);
    `before` lines came before it."""
    regex = pattern.span
    if regex is not None:
        span = _valid_utf8(span)
        if b"\r" in span:
            span = span.replace(b"\r\n", b"\n")
    if regex is None or b"\r" in span:
        for number, raw in enumerate(span.split(b"\n"), start=before + 1):
            text = _line_matches(pattern, raw)
            if text is not None:
                yield number, text
        return
    position = 0
    counted = 0  # span[:counted] is whole lines, `lines` of them
    lines = before
    while position <= len(span):
        found = regex.search(span, position)
        if found is None:
            return
        start = span.rfind(b"\n", position, found.start()) + 1 or position
        end = span.find(b"\n", found.start())
        if end == -1:
            end = len(span)
        lines += span.count(b"\n", counted, start)
        counted = start
        line = span[start:end]
        if pattern.matches_line(line):
            yield lines + 1, line.decode("utf-8")
        position = end + 1


def _spans(window: bytes) -> Iterator[bytes]:
    """`window` (whole lines) in pieces of at most CHUNK bytes of whole lines, or one line."""
    start = 0
    while True:
        if len(window) - start <= CHUNK:
            yield window[start:]
            return
        cut = window.rfind(b"\n", start, start + CHUNK)
        if cut == -1:
            cut = window.find(b"\n", start + CHUNK)
            if cut == -1:
                yield window[start:]
                return
        yield window[start:cut]
        start = cut + 1


def _chunks(stream: IO[bytes], checkpoint: Callable[[], None], size: int | None) -> Iterator[bytes]:
    """The chunks of `stream`, up to `size` bytes and before its first NUL byte (`checkpoint`
    is called before every read)."""
    left = size
    while True:
        checkpoint()
        want = CHUNK if left is None else min(CHUNK, left)
        data = stream.read(want) if want > 0 else b""
        left = None if left is None else left - len(data)
        nul = data.find(b"\x00")
        if nul != -1:
            data, left = data[:nul], 0
        if not data:
            return
        yield data


def matching_lines(
    stream: IO[bytes], pattern: LinePattern, checkpoint: Callable[[], None], size: int | None = None
) -> Generator[tuple[int, str], None, None]:
    """(line number from 1, line text) of each line of `stream` that `pattern` matches, in order.

    At most `size` bytes are read (the file's size when it was opened: a file that keeps
    growing cannot keep the search going), and only the text before the first NUL byte: the
    rest is binary (a sparse file's hole is read one chunk into, not to its end).
    `checkpoint` is called before every read and every RE2 call; whatever it raises ends the
    search. Closing the iterator early (the output budget is spent) reads no further.
    """
    chunks = _chunks(stream, checkpoint, size)
    before = 0  # lines wholly before `pending`
    pending = b""  # the start of a line whose end is not read yet (shorter than LINE_CAP)
    while True:
        data = next(chunks, b"")
        buffer = pending + data if pending else data
        if not data:  # the end: what is pending is the last line, without a line end
            if buffer:
                checkpoint()
                yield from _search_span(pattern, buffer, before)
            return
        first_end = buffer.find(b"\n")
        if first_end == -1 and len(buffer) < LINE_CAP:
            pending = buffer
            continue
        if first_end == -1 or first_end > LINE_CAP:
            # A line longer than LINE_CAP: search its head, skip the rest of it.
            checkpoint()
            text = _line_matches(pattern, buffer[:LINE_CAP])
            if text is not None:
                yield before + 1, text
            before += 1
            while first_end == -1:
                more = next(chunks, b"")
                if not more:
                    return
                buffer, first_end = more, more.find(b"\n")
            buffer = buffer[first_end + 1 :]
        last_end = buffer.rfind(b"\n")
        if last_end == -1:  # (only after a long line's end)
            pending = buffer
            continue
        pending = buffer[last_end + 1 :]
        for span in _spans(buffer[:last_end]):
            checkpoint()
            yield from _search_span(pattern, span, before)
            before += span.count(b"\n") + 1
