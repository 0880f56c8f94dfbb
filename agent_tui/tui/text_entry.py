"""Whether the focus is in a text box: there, printable keys type, so they are no commands.

Textual leaves out of the footer the letter keys a focused text box would type, but not every
printable key (it does not know `slash` is `/`). The app and the screens ask `types` to hide
their own such commands, and to show the keys that still work in a text box instead (`f1` for
help, `ctrl+q` to quit).

A key that opens a text box moves the focus with `focus_now`: `Widget.focus` only schedules the
move, so keys already read in the same burst (a fast typist, a paste, a terminal that sends
several at once) would still go to the old focus and run as commands (`q` quitting, `x`
stopping an agent) instead of being typed.
"""

from __future__ import annotations

from textual.widget import Widget


def types(widget: Widget | None, character: str) -> bool:
    """Whether `widget` (the focused one, or None) takes `character` as text rather than as a key."""
    return widget is not None and widget.check_consume_key(character, character)


def focus_now(widget: Widget) -> None:
    """Give `widget` the focus before the next key is handled (see the module's note)."""
    widget.screen.set_focus(widget)
