"""The engine's event listeners, and what happens when one of them breaks.

Invariants:
- every listener hears every stored event, of every session, in store order, after the event
  is stored (never before);
- a listener that raises is a bug in a viewer, not in the turn: it is detached, the failure is
  logged (the listener, the event, the error), and the turn and the other listeners carry on
  as if nothing happened.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from agent_tui.events import Event

EventListener = Callable[[Event], None]

log = logging.getLogger("agent_tui.engine")


class Listeners:
    """The subscribed listeners, called in subscription order."""

    __slots__ = ("_called", "registered")

    def __init__(self) -> None:
        self.registered: list[EventListener] = []  # changed only by `add` and its remover
        self._called: tuple[EventListener, ...] = ()  # `registered` as of its last change

    def add(self, listener: EventListener) -> Callable[[], None]:
        self.registered.append(listener)
        self._called = tuple(self.registered)

        def remove() -> None:
            self._detach(listener)

        return remove

    def _detach(self, listener: EventListener) -> None:
        if listener in self.registered:
            self.registered.remove(listener)
            self._called = tuple(self.registered)

    def tell(self, event: Event) -> None:
        """Call every listener with `event`; detach (and log) any that raises.

        The listeners called are those registered when the event came (a listener that
        subscribes or unsubscribes meanwhile changes the next event's): a tuple kept beside the
        list, not a copy made per event."""
        for listener in self._called:
            try:
                listener(event)
            except Exception as error:
                self._detach(listener)
                name = getattr(listener, "__qualname__", repr(listener))
                said = f"failed on {event.type} #{event.sequence} of {event.session_id}"
                log.error("listener %s %s and was detached: %r", name, said, error, exc_info=error)
