"""The grep engine (`agent_tui.engine.tools.line_search`): RE2 patterns, line by line, in linear time.

The engine searches many lines per RE2 call; these tests hold it to the plain definition (each
line searched on its own) on generated patterns and texts, with the chunk and the line cap made
small so that spans, long lines and the ends of reads are all met.
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_tui.engine.tools import line_search
from agent_tui.engine.tools.line_search import (
    MAX_PATTERN_CHARS,
    LinePattern,
    PatternError,
    matching_lines,
)


def nothing() -> None:
    pass


def search(pattern: str, data: bytes) -> list[tuple[int, str]]:
    return list(matching_lines(io.BytesIO(data), LinePattern.compile(pattern), nothing))


def one_line_at_a_time(pattern: LinePattern, data: bytes, cap: int) -> Iterator[tuple[int, str]]:
    """The definition: each line alone, cut to `cap` bytes, without its line end, as UTF-8."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # a final line end does not start another line
    for number, raw in enumerate(lines, start=1):
        text = raw[:cap].decode("utf-8", "replace").rstrip("\r\n")
        if pattern.line.search(text.encode("utf-8")) is not None:
            yield number, text


ATOMS = [
    "a", "b", "ab", ".", "^", "$", r"\b", r"\B", r"\s", r"\S", "[^a]", r"\w", r"\W", "a*", "b+",
    "(a|b)", "(?:a|)", ".*", "x?", "|", r"\A", r"\z", "(?i)", "(?s)", "(?-m)", "(?m)", "(?i-m:a)",
    r"\C", "é", r"\pL", r"[\r]", r"\r", r"\n", "[^b]*", "a{2}", r"\d", "[[:space:]]", r"(?U)a+",
]  # fmt: skip
TEXT_PIECES = [
    b"a",
    b"b",
    b"A",
    b"ab",
    b" ",
    b"\n",
    b"\r",
    b"\r\n",
    b"\xff",
    "é".encode(),
    b"\xc3",
    b"x",
    b"1",
]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    atoms=st.lists(st.sampled_from(ATOMS), min_size=1, max_size=4),
    pieces=st.lists(st.sampled_from(TEXT_PIECES), max_size=60),
    chunk=st.integers(min_value=1, max_value=12),
    extra=st.integers(min_value=0, max_value=8),
)
def test_many_lines_at_once_finds_what_one_line_at_a_time_does(
    monkeypatch: pytest.MonkeyPatch, atoms: list[str], pieces: list[bytes], chunk: int, extra: int
) -> None:
    cap = chunk + extra  # the engine reads at most a line cap at a time (CHUNK <= LINE_CAP)
    monkeypatch.setattr(line_search, "CHUNK", chunk)
    monkeypatch.setattr(line_search, "LINE_CAP", cap)
    try:
        pattern = LinePattern.compile("".join(atoms))
    except PatternError:
        return
    data = b"".join(pieces)
    found = list(matching_lines(io.BytesIO(data), pattern, nothing))
    assert found == list(one_line_at_a_time(pattern, data, cap))


def test_a_pattern_that_could_differ_across_lines_is_searched_line_by_line() -> None:
    assert LinePattern.compile("ab").span is not None
    for pattern in (r"\Aa", r"a\z", "(?-m)^a", "(?i-m:a$)"):
        assert LinePattern.compile(pattern).span is None, pattern
    assert search(r"\Ab", b"ab\nba\nb\n") == [(2, "ba"), (3, "b")]
    assert search(r"a\z", b"ab\nba\r\na\n") == [(2, "ba"), (3, "a")]


def test_lines_anchors_line_ends_and_numbers() -> None:
    data = b"alpha\r\nbeta\n\ngamma\r\r\nlast"
    assert search("^$", data) == [(3, "")]
    assert search("a$", data) == [(1, "alpha"), (2, "beta"), (4, "gamma")]
    assert search("^l", data) == [(5, "last")]
    assert search("", b"") == []
    assert search("", b"\n") == [(1, "")]
    assert search("x", b"x") == [(1, "x")]


def test_invalid_utf8_is_read_as_replacement_characters() -> None:
    assert search("a.b", b"a\xffb\n") == [(1, "a\ufffdb")]
    assert search("é", "café\n".encode()) == [(1, "café")]


def test_a_line_longer_than_the_cap_is_searched_in_its_head(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_search, "LINE_CAP", 12)
    monkeypatch.setattr(line_search, "CHUNK", 4)
    data = b"head" + b"x" * 30 + b"tail\nnext tail\n"
    assert search("tail", data) == [(2, "next tail")]
    assert search("^headx", data) == [(1, "headxxxxxxxx")]


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        (r"(a)\1", r"back-references (\1…) are not supported"),
        (r"(?P<word>a)(?P=word)", "named back-references ((?P=name)) are not supported"),
        (r"(?<n>a)\k<n>", r"back-references (\k…) are not supported"),
        ("foo(?=bar)", "look-ahead ((?=…) is not supported"),
        ("foo(?!bar)", "look-ahead ((?!…) is not supported"),
        ("(?<=foo)bar", "look-behind ((?<=…) is not supported"),
        ("(?<!foo)bar", "look-behind ((?<!…) is not supported"),
        ("(?>a+)b", "atomic groups ((?>…)) are not supported"),
        ("a++", "possessive repetition (++) is not supported"),
        (r"end\Z", r"\Z is not supported (end of line is $ or \z)"),
        ("(unclosed", "missing ): (unclosed"),
        ("a{1001}", "invalid repetition size: {1001} (a count goes up to 1000)"),
    ],
)
def test_what_re2_cannot_take_is_a_readable_error(pattern: str, says: str) -> None:
    with pytest.raises(PatternError) as raised:
        LinePattern.compile(pattern)
    message = raised.value.message
    assert message.startswith(f"invalid pattern {pattern!r}: {says}")
    assert "RE2 syntax" in message
    assert "\n" not in message


def test_patterns_too_big_to_search_fast_are_refused() -> None:
    with pytest.raises(PatternError, match=r"compiles to [\d,]+ steps, over the 1,000"):
        LinePattern.compile(r"(\w+\s*){200}!")
    with pytest.raises(PatternError, match=f"over the {MAX_PATTERN_CHARS:,} a pattern may have"):
        LinePattern.compile("a" * (MAX_PATTERN_CHARS + 1))
    with pytest.raises(PatternError, match="not valid Unicode"):
        LinePattern.compile("a\ud800")
    LinePattern.compile("a" * 900)  # a long literal is cheap and allowed


def test_re2_writes_nothing_to_the_terminal(capfd: pytest.CaptureFixture[str]) -> None:
    for pattern in (r"(a)\1", "(?=x)", "(", "a{5000}"):
        with pytest.raises(PatternError):
            LinePattern.compile(pattern)
    # A pattern whose DFA runs out of memory: RE2 would log "DFA out of memory" to stderr.
    text = bytes(random.Random(1).choice(b"ab") for _ in range(1 << 16))
    assert search("[ab]*a[ab]{900}!", text) == []
    captured = capfd.readouterr()
    assert (captured.out, captured.err) == ("", "")


def test_a_checkpoint_that_raises_stops_the_search_between_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_search, "CHUNK", 16)
    stream = io.BytesIO(b"match\n" * 100)
    calls = 0

    def checkpoint() -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt  # anything the caller raises ends the search

    found = []
    with pytest.raises(KeyboardInterrupt):
        for item in matching_lines(stream, LinePattern.compile("match"), checkpoint):
            found.append(item)
    assert found and len(found) < 100
    assert stream.tell() < len(b"match\n" * 100)


@pytest.mark.parametrize(
    ("pattern", "line"),
    [
        ("(a+)+$", "a" * 48 + "!"),
        ("(x+x+)+y", "x" * 48),
        ("(a|aa)+$", "a" * 48 + "!"),
        ("(.*a){25}", "a" * 24 + "b" * 24),
        ("^(([a-z])+.)+[A-Z]([a-z])+$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"),
    ],
)
def test_catastrophic_patterns_for_backtracking_find_nothing_at_once(pattern: str, line: str) -> None:
    # Python's re takes exponential time on each of these lines; RE2 reads each byte once or so.
    data = (line + "\n").encode() * 1000
    assert search(pattern, data) == []


class Endless(io.RawIOBase):
    """A stream that never ends (a file another process keeps appending to)."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        line = b"match\n" * (len(buffer) // 6)
        buffer[: len(line)] = line
        return len(line)


def test_at_most_the_size_given_is_read() -> None:
    found = list(matching_lines(io.BufferedReader(Endless()), LinePattern.compile("match"), nothing, size=60))
    assert found == [(n, "match") for n in range(1, 11)]


def test_only_the_text_before_the_first_nul_byte_is_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_search, "CHUNK", 8)
    data = b"match\nmatch\nmatch" + b"\x00" * 1000 + b"match\n"
    stream = io.BytesIO(data)
    assert list(matching_lines(stream, LinePattern.compile("match"), nothing)) == [
        (1, "match"),
        (2, "match"),
        (3, "match"),
    ]
    assert stream.tell() == 24  # up to the chunk with the first NUL, and no further


def test_no_compiled_pattern_is_kept_after_its_search() -> None:
    # re2.compile caches 128 patterns, each growing to megabytes of automaton as it searches;
    # a model sending pattern after pattern must not pile them up (the cache is re2's own).
    import re2

    for n in range(5):
        LinePattern.compile(f"(?:[ab]*a[ab]{{{n + 20}}}){{3}}!")
    with pytest.raises(PatternError):
        LinePattern.compile(r"(\w+\s*){200}!")
    assert re2._Regexp._make.cache_info().currsize == 0
