"""The engine's listeners: who hears an event when listeners come and go while it is told.

The listeners called for an event are those registered when it came; a listener added or removed
meanwhile (by a listener, or by a failure) changes the next event's, never this one's.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support_events import build_session

from agent_tui.engine.listeners import Listeners
from agent_tui.events import Event


def told(listeners: Listeners, events: list[Event]) -> None:
    for event in events:
        listeners.tell(event)


class TestWhoHearsAnEvent:
    def test_a_listener_removed_while_an_event_is_told_hears_that_event_but_not_the_next(self) -> None:
        listeners = Listeners()
        heard: list[tuple[str, int]] = []
        removers: dict[str, Callable[[], None]] = {}

        def first(event: Event) -> None:
            heard.append(("first", event.sequence))
            removers["second"]()  # the second one goes, while event #1 is being told

        def second(event: Event) -> None:
            heard.append(("second", event.sequence))

        removers["first"] = listeners.add(first)
        removers["second"] = listeners.add(second)
        told(listeners, build_session(2))
        assert heard == [("first", 1), ("second", 1), ("first", 2)]
        assert listeners.registered == [first]

    def test_a_listener_added_while_an_event_is_told_hears_from_the_next_event(self) -> None:
        listeners = Listeners()
        heard: list[tuple[str, int]] = []

        def late(event: Event) -> None:
            heard.append(("late", event.sequence))

        def adder(event: Event) -> None:
            heard.append(("adder", event.sequence))
            if event.sequence == 1:
                listeners.add(late)

        listeners.add(adder)
        told(listeners, build_session(3))
        assert heard == [("adder", 1), ("adder", 2), ("late", 2), ("adder", 3), ("late", 3)]

    def test_a_broken_listener_is_detached_once_and_its_remover_is_harmless_after(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        listeners = Listeners()
        heard: list[int] = []

        def broken(event: Event) -> None:
            raise ValueError("a viewer's bug")

        remove = listeners.add(broken)
        listeners.add(lambda event: heard.append(event.sequence))
        told(listeners, build_session(3))
        remove()  # detached already: nothing else goes
        told(listeners, build_session(4)[3:])
        assert heard == [1, 2, 3, 4]
        assert len(listeners.registered) == 1
        assert len([r for r in caplog.records if r.name == "agent_tui.engine"]) == 1
