"""Untrusted text as dashboard `Content`: its control characters as markers, styled as such.

Whatever a model, a tool, a log or a file name says reaches the screen through `marked` (or, for
a plain string a widget wants, `visible` of `agent_tui.events`): no control character gets to
the terminal, where it would set the window title, write the clipboard or wipe the screen.

Invariants:
- `marked(text, style)` is `Content.styled(text, style)` for text with nothing unsafe in it, and
  otherwise the same with each unsafe character replaced by its marker (`␛`, `␍`, `\\x9b`,
  `\\u202e`; see `agent_tui.events.terminal_text`), drawn in reverse video so it cannot be
  mistaken for the same characters typed.
- Its plain text is exactly `visible(text)`: no C0 control but tab and newline, no DEL, C1
  or bidi control.
"""

from __future__ import annotations

from textual.content import Content

from agent_tui.events import visible_runs

MARKER_STYLE = "reverse"
"""How a marker stands out from the text around it."""


def marked(text: str, style: str = "") -> Content:
    """`text` in `style`, each unsafe character as its marker in reverse video."""
    parts = [
        (piece, f"{style} {MARKER_STYLE}".strip() if marker else style)
        for piece, marker in visible_runs(text)
    ]
    if len(parts) == 1 and parts[0][1] == style:
        return Content.styled(parts[0][0], style)
    return Content.assemble(*parts)
