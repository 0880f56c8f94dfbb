"""Untrusted text made safe to print: control characters shown, never obeyed.

A log holds what models and tools wrote; a line of it printed raw could move the cursor, retitle
the window or hide what follows (ESC sequences, a bare carriage return, a backspace). Search
results are such lines, so they pass through `visible` before they reach a terminal or a widget.

Invariants:
- every C0 control (U+0000–U+001F) except tab and newline, DEL (U+007F) and every C1 control
  (U+0080–U+009F) is replaced by a visible escape (`\\x1b`, `\\r`, `\\x9b`); the result holds
  none of them;
- so are the bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069,
  written `\\u202e`), which would make a line read in another order than it is stored;
- nothing else changes: printable text, tab and newline come out as they went in;
- a backslash is left alone, so the output is for people to read, not to be decoded back.
"""

from __future__ import annotations

_NAMED = {"\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v", "\0": "\\0"}
_CONTROLS = {
    code: _NAMED.get(chr(code), f"\\x{code:02x}")
    for code in (*range(0x00, 0x20), *range(0x7F, 0xA0))
    if chr(code) not in "\t\n"
}
_CONTROLS.update(
    {
        code: f"\\u{code:04x}"
        for code in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
    }
)


def visible(text: str) -> str:
    """`text` with its control characters (but tab and newline) written as escapes."""
    return text.translate(_CONTROLS)
