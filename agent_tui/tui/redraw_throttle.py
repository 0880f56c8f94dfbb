"""`RedrawThrottle`: when the screen redraws a run's state, whoever calls, at most once a period.

A run (`LiveRun`, `AttachedRun`) holds one and tells it every change; the app's timer asks it
whether to redraw (`dirty`) and says when it did (`dirty = False`).

Invariants:
- `dirty` is True when a redraw was asked for (`dirty = True`, or a change that asks: a tool
  call now waits for the user's answer), or when changes came since the last redraw and that
  redraw is a period old; so there is one redraw a period, whoever calls: under load the change
  itself (it runs at every event), when changes stop the app's timer (at its next tick);
- while changes keep the loop busy that timer comes late (it waits its turn behind every
  running turn), so once a redraw is due `changed` calls the redraw itself (`every`): the screen
  keeps its rate under any load; but only once the event loop has turned since the last redraw
  (the loop paints what a redraw changed): changes that keep the loop busy past a period (a backlog
  of a stream's messages handled in one go) redraw once, not once a period for a screen that
  cannot paint meanwhile;
- `slower(seconds)` lengthens the period (never shortens it) until `slower(None)`: a run catching
  up with a long history (an attached dashboard reading a stream) redraws less often while
  nobody can read the rows flying by, and every redraw it spares is folding time (the app's
  once-a-second redraw of passing time waits meanwhile too: these redraws show it);
- `now()` redraws at once, whatever the period (a stored history's whole list, drawn before
  its logs' ends are read);
- a redraw that raises is not raised into the caller (an engine would drop its listener): the
  throttle stops redrawing from changes and asks for a redraw, so the app's timer redraws and
  meets (and reports) the error.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class RedrawThrottle:
    """One run's redraw pacing (see the module docstring)."""

    def __init__(self) -> None:
        self._redraw: Callable[[], None] | None = None
        self._seconds = 0.0
        self._slower = 0.0  # a longer period asked for meanwhile (`slower`)
        self._redrawn_at = float("-inf")  # when the screen last showed the state
        self._changed = False  # changes came since
        self._asked = True  # someone asked for a redraw (the first one, to begin with)
        self._turned = True  # the event loop turned since the last redraw (so it could paint it)

    @property
    def dirty(self) -> bool:
        """Whether the screen should redraw now (see the module docstring)."""
        if self._asked:
            return True
        return self._changed and time.monotonic() - self._redrawn_at >= self._period

    @dirty.setter
    def dirty(self, dirty: bool) -> None:
        """`True` asks for a redraw; `False` says the screen now shows the state."""
        if dirty:
            self._asked = True
        else:
            self._asked = self._changed = False
            self._redrawn_at = time.monotonic()

    def every(self, seconds: float, redraw: Callable[[], None]) -> None:
        """Have `changed` call `redraw` (which shows the state if `dirty`, and clears it) when
        changes keep coming and the last redraw is `seconds` old."""
        self._seconds = seconds
        self._redraw = redraw

    def slower(self, seconds: float | None) -> None:
        """Redraw at most every `seconds` (if longer than the period) until `slower(None)`."""
        self._slower = seconds or 0.0

    @property
    def _period(self) -> float:
        """The period in force: the longer of `every`'s and `slower`'s."""
        return max(self._seconds, self._slower)

    @property
    def slowed(self) -> bool:
        """Whether `slower` is in force."""
        return self._slower > 0

    def changed(self, *, ask: bool = False) -> None:
        """The state changed; `ask`: the change is one to show at once (a question for the user)."""
        self._changed = True
        if ask:
            self._asked = True
        if self._turned and time.monotonic() - self._redrawn_at >= self._period:
            self._call_redraw()

    def now(self) -> None:
        """Redraw at once, whatever the period (a stored history's whole list, before its
        logs' ends are read)."""
        self._asked = True
        self._call_redraw()

    def _call_redraw(self) -> None:
        if self._redraw is None:
            return
        try:
            self._redraw()
        except Exception:
            self._redraw = None
            self._asked = True
        try:
            asyncio.get_running_loop().call_soon(self._turn)
        except RuntimeError:  # no loop (a test calling it directly): nothing can hold it up
            return
        self._turned = False

    def _turn(self) -> None:
        self._turned = True
