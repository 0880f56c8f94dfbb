"""`SessionOrder`: what of the stream may be folded, session by session, in sequence order.

An attached dashboard reads every host's events from one stream. The stream is gap-free and
ordered as stored, but what it stores is not always each session's sequence, one after the
other: a host republishes after a disconnect (a duplicate the stream's window missed, when the
outage outlasted it), and a republish may land after later events (a gap, filled later). The
reducer wants each session's events once, in sequence order; this is the gate in front of it.

Invariants:
- `offer` returns the events that may be folded now, in order: for each session, exactly the
  next sequence (`expected`), then any held ones that follow it without a hole;
- an event whose sequence was folded already (or is held already) is a duplicate: dropped and
  counted, never returned;
- an event past the next one is held (a gap), never returned before the hole is filled; a
  session holds at most `hold_limit` events, beyond that the newest are dropped and counted
  (the session stays `open` until `reread` says they were offered again: `HoleFiller`);
- a session's first expected sequence is 1, unless `from_anywhere` (the stream was cut by its
  limits, or the read began mid-stream): then the first event seen of a session starts it;
- nothing here touches the network or the clock: it is pure bookkeeping, tested on its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_tui.events import Event

DEFAULT_HOLD_LIMIT = 100_000
"""Events held per session while a hole waits to be filled."""


@dataclass
class _Session:
    expected: int
    held: dict[int, Event] = field(default_factory=dict)
    dropped: int = 0  # events dropped at the hold limit since the last re-read


class SessionOrder:
    """The per-session sequence gate (see the module docstring).

    Args:
        from_anywhere: a session's first event seen starts it (else sequence 1 does).
        hold_limit: events held per session while a hole waits.
    """

    def __init__(self, *, from_anywhere: bool = False, hold_limit: int = DEFAULT_HOLD_LIMIT) -> None:
        self.from_anywhere = from_anywhere
        self.hold_limit = hold_limit
        self._sessions: dict[str, _Session] = {}
        self.duplicates = 0
        """Events dropped because their sequence was folded (or held) already."""
        self.overflowed = 0
        """Events dropped because their session held `hold_limit` events already."""

    def offer(self, event: Event) -> list[Event]:
        """The events that may be folded now that `event` came (possibly none)."""
        session = self._sessions.get(event.session_id)
        sequence = event.sequence
        if session is None:
            session = _Session(expected=sequence if self.from_anywhere else 1)
            self._sessions[event.session_id] = session
        if sequence == session.expected:
            ready = [event]
            session.expected += 1
            held = session.held
            while held:
                following = held.pop(session.expected, None)
                if following is None:
                    break
                ready.append(following)
                session.expected += 1
            return ready
        if sequence < session.expected or sequence in session.held:
            self.duplicates += 1
            return []
        if len(session.held) >= self.hold_limit:
            self.overflowed += 1
            session.dropped += 1
            return []
        session.held[sequence] = event
        return []

    def prime(self, session_id: str, expected: int) -> None:
        """The session's events before `expected` were folded already (a state snapshot)."""
        self._sessions[session_id] = _Session(expected=expected)

    def expected(self, session_id: str) -> int | None:
        """The next sequence `session_id` may fold (None: not seen)."""
        session = self._sessions.get(session_id)
        return session.expected if session is not None else None

    def open(self, session_id: str) -> bool:
        """Whether the session waits for events: a hole, or events dropped at the hold limit."""
        session = self._sessions.get(session_id)
        return session is not None and bool(session.held or session.dropped)

    def wants(self, session_id: str, sequence: int) -> bool:
        """Whether `offer` would take that sequence of the session (it is neither folded nor held)."""
        session = self._sessions.get(session_id)
        return session is None or (sequence >= session.expected and sequence not in session.held)

    def hole(self, session_id: str) -> tuple[int, int, int] | None:
        """`(first missing, last missing, events held after them)` of the session's hole."""
        session = self._sessions.get(session_id)
        if session is None or not session.held:
            return None
        return session.expected, min(session.held) - 1, len(session.held)

    def reread(self, session_id: str) -> None:
        """The session's events past `expected` were all offered again: none is lost any more."""
        session = self._sessions.get(session_id)
        if session is not None:
            session.dropped = 0
