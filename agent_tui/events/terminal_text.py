"""Untrusted text made safe to show on a terminal: control characters become visible markers.

A model's words, a tool's output, a log replayed or imported, a file name, a session's title: any
of them may hold bytes a terminal obeys rather than shows (`ESC ] 0 ; … BEL` sets the window
title, `ESC [ 2 J` wipes the screen, OSC 52 writes the clipboard, a bare carriage return writes
over the line before it, a bidi override reorders the letters of a command in an approval
dialog). Every place that shows such text passes it through `visible` (or `visible_runs`, which
says which pieces are markers, so a view can style them); the log itself keeps the bytes as they
were.

Invariants:
- `visible(text)` holds no C0 control but tab and newline, no DEL, no C1 control
  (U+0080–U+009F), no bidi embedding, override or isolate (U+202A–U+202E, U+2066–U+2069) and no
  lone surrogate (which no terminal encoding can carry).
- It is a faithful rendering: every other character stays as it was, in order, and each unsafe
  character becomes exactly one marker, `marker(character)`: a C0 control its Unicode control
  picture (ESC `␛`, carriage return `␍`, NUL `␀`, …), DEL `␡`, the rest their escape
  (`\\x9b`, `\\u202e`, `\\udc80`). The one exception: CR LF, a line ending, is shown as the newline
  it ends with.
- Text with nothing unsafe in it comes back as the same object, and finding that out is cheap
  (its UTF-8 bytes are checked with `bytes.translate` and a find, not a regular expression).
- `visible_json(data)` is the same guard for JSON bytes (`--dump`): the unsafe characters that
  JSON allows raw inside a string (DEL, C1, bidi) become `\\u` escapes, so the bytes decode to the
  same value and show nothing a terminal obeys. (orjson escapes C0 itself.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_UNSAFE = re.compile("\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""What `visible` replaces: CR LF (a line ending) and each unsafe character."""

_JSON_UNSAFE = re.compile(b"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")
"""The unsafe characters JSON may carry raw (DEL, C1, bidi), as their UTF-8 bytes."""
_MULTIBYTE_UNSAFE = tuple(
    map(re.compile, (b"\xc2[\x80-\x9f]", b"\xe2\x80[\xaa-\xae]", b"\xe2\x81[\xa6-\xa9]"))
)
"""C1 and bidi controls as their UTF-8 bytes (one pattern each: a literal prefix is found fast)."""

_SINGLE_BYTE_UNSAFE = bytes([*range(0x09), *range(0x0B, 0x20), 0x7F])
"""The unsafe characters that are one byte in UTF-8 (C0 but tab and newline, DEL)."""

_NAMED = {"\x7f": "\u2421"}  # DEL: ␡


def is_unsafe(character: str) -> bool:
    """Whether a terminal may obey `character` rather than show it (tab and newline are safe)."""
    return character not in "\t\n" and _UNSAFE.fullmatch(character) is not None


def marker(character: str) -> str:
    """The visible stand-in for one unsafe character (see the module's contract)."""
    code = ord(character)
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␀ … ␟, ␛ for ESC
    if character in _NAMED:
        return _NAMED[character]
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def visible_runs(text: str) -> Iterator[tuple[str, bool]]:
    """`text` as runs of (piece, is_marker): the safe pieces as they are, each marker alone.

    Joined, the pieces are `visible(text)`; no piece is empty.
    """
    start = 0
    for found in _UNSAFE.finditer(text):
        if found.start() > start:
            yield text[start : found.start()], False
        character = found.group()
        if character == "\r\n":
            yield "\n", False
        else:
            yield marker(character), True
        start = found.end()
    if start < len(text):
        yield text[start:], False


def _is_clean(text: str) -> bool:
    """Whether `text` holds nothing unsafe, CR LF included (the fast check before the search)."""
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return False
    if len(data.translate(None, _SINGLE_BYTE_UNSAFE)) != len(data):
        return False
    return _no_multibyte_unsafe(data)


def _no_multibyte_unsafe(data: bytes) -> bool:
    """No C1 or bidi control in UTF-8 `data` (their first bytes are 0xC2 and 0xE2)."""
    if data.isascii() or (b"\xc2" not in data and b"\xe2" not in data):
        return True
    return not any(pattern.search(data) for pattern in _MULTIBYTE_UNSAFE)


def visible(text: str) -> str:
    """`text` with every unsafe character shown as its marker (CR LF as a newline)."""
    if _is_clean(text):
        return text
    return "".join(piece for piece, _ in visible_runs(text))


def visible_json(data: bytes) -> bytes:
    """JSON bytes with DEL, C1 and bidi controls written as `\\u` escapes (same decoded value).

    Valid only for JSON (UTF-8) whose C0 controls are escaped already, as orjson writes it; these
    characters can stand only inside a string there, where an escape means the same character.
    """
    if b"\x7f" not in data and _no_multibyte_unsafe(data):
        return data
    return _JSON_UNSAFE.sub(lambda found: f"\\u{ord(found.group().decode()):04x}".encode(), data)


def one_line(text: str, limit: int) -> str:
    """`text` on one line (whitespace runs collapsed), cut to `limit` characters with `…` (its
    control codes are left as they are: `visible` is the sink's)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
