"""Whether the focus is in a text box: there, printable keys type, so they are no commands.

Textual leaves out of the footer the letter keys a focused text box would type, but not every
printable key (it does not know `slash` is `/`). The app and the screens ask `types` to hide
their own such commands, and to show the keys that still work in a text box instead (`f1` for
help, `ctrl+q` to quit).
"""

from __future__ import annotations

from textual.widget import Widget


def types(widget: Widget | None, character: str) -> bool:
    """Whether `widget` (the focused one, or None) takes `character` as text rather than as a key."""
    return widget is not None and widget.check_consume_key(character, character)
