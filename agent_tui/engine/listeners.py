"""The engine's event listeners, and what happens when one of them breaks.

Invariants:
- every listener hears every stored event, of every session, in store order, after the event
  is stored (never before);
- a listener that raises is a bug in a viewer, not in the turn: it is detached, the failure is
  kept in `failures` (the most recent `MAX_FAILURES`) and logged, and the turn and the other
  listeners carry on as if nothing happened.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from agent_tui.events import Event

EventListener = Callable[[Event], None]
MAX_FAILURES = 20

log = logging.getLogger("agent_tui.engine")


@dataclass(frozen=True)
class ListenerFailure:
    """A listener raised while hearing an event, and was detached."""

    listener: EventListener
    error: BaseException
    session_id: str
    event_type: str
    sequence: int

    def describe(self) -> str:
        name = getattr(self.listener, "__qualname__", repr(self.listener))
        return (
            f"listener {name} failed on {self.event_type} #{self.sequence} of {self.session_id} "
            f"and was detached: {self.error!r}"
        )


class Listeners:
    """The subscribed listeners, called in subscription order."""

    __slots__ = ("failures", "registered")

    def __init__(self) -> None:
        self.registered: list[EventListener] = []  # changed only by `add` and its remover
        self.failures: deque[ListenerFailure] = deque(maxlen=MAX_FAILURES)

    def add(self, listener: EventListener) -> Callable[[], None]:
        self.registered.append(listener)

        def remove() -> None:
            if listener in self.registered:
                self.registered.remove(listener)

        return remove

    def tell(self, event: Event) -> None:
        """Call every listener with `event`; detach (and record) any that raises."""
        for listener in tuple(self.registered):
            try:
                listener(event)
            except Exception as error:
                if listener in self.registered:
                    self.registered.remove(listener)
                failure = ListenerFailure(listener, error, event.session_id, event.type, event.sequence)
                self.failures.append(failure)
                log.error("%s", failure.describe(), exc_info=error)
