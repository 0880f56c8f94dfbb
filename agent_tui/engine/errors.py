"""Errors the engine raises to its caller (provider failures never are: they end the turn)."""

from __future__ import annotations


class EventStoreFailure(RuntimeError):
    """The store refused an append. The original error is `__cause__`; no sequence was used."""

    def __init__(self, session_id: str, sequence: int, event_type: str) -> None:
        super().__init__(f"could not store {event_type} #{sequence} of session {session_id}")
        self.sequence = sequence


class TurnConflict(RuntimeError):
    """A turn is already running on this session; nothing was written."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id} already has a running turn")


class UnknownSession(KeyError):
    """No session with this id in memory or in the store."""

    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.session_id = session_id

    def __str__(self) -> str:
        return f"unknown session {self.session_id}"
