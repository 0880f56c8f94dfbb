"""`ControlRights`: whether this dashboard's credentials may publish on hosts' control subjects.

A NATS server does not tell a client what it may do; it says what it refused, after the fact:
a publish on a subject the user may not publish on is dropped, and the client hears
`permissions violation for publish to "SUBJECT"` through its error callback (the request
itself then waits for a reply that never comes). A watch-only user (docs/remote.md) is such a
dashboard: it reads everything and may act on nothing.

Invariants:
- `probe` publishes one empty message on the control subject of the dashboard's own name
  (a held name: no host listens there) and flushes; the server answers a refused publish before
  the flush's pong, so once `probe` returns `read_only` is known, before any control is asked;
- every refusal the client hears later (`heard`) that names a control subject marks that host
  (`refused`): credentials that allow some hosts only are told apart, host by host;
- of the server's words only the subject is kept, and only when it is a control subject; other
  errors are not this module's business (`heard` returns False for them);
- `changed` is called once for each new refusal.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from nats.aio.client import Client

from agent_tui.bus.protocol import SUBJECT_PREFIX, control_subject

_REFUSED_PUBLISH = re.compile(r"permissions violation for publish to \"?([^\"'\s]+)", re.IGNORECASE)
READ_ONLY = (
    "This dashboard is read-only: its credentials may not publish on the hosts' control subjects "
    "(it shows everything and can answer, stop or start nothing)."
)


class ControlRights:
    """What the server refused this dashboard's connection (see the module docstring).

    Args:
        own_name: the dashboard's name on the bus (its own control subject is the probe).
        changed: called after each new refusal.
    """

    def __init__(self, own_name: str, changed: Callable[[], None]) -> None:
        self._probe_subject = control_subject(own_name)
        self._changed = changed
        self._refused: set[str] = set()  # control subjects, lower case (as the client gives them)

    async def probe(self, connection: Client) -> None:
        """Find out whether control subjects may be published on (`read_only` after it)."""
        await connection.publish(self._probe_subject, b"")
        await connection.flush()

    def heard(self, error: Exception) -> bool:
        """An error the client reported: True when it was a refused publish on a control subject."""
        match = _REFUSED_PUBLISH.search(str(error))
        if match is None:
            return False
        subject = match.group(1).lower()
        parts = subject.split(".")
        if len(parts) != 3 or parts[0] != SUBJECT_PREFIX or parts[2] != "control":
            return False
        if subject not in self._refused:
            self._refused.add(subject)
            self._changed()
        return True

    @property
    def read_only(self) -> bool:
        """Whether no control subject may be published on (the probe was refused)."""
        return self._probe_subject.lower() in self._refused

    def refusal(self, host: str | None) -> str | None:
        """Why a control request (to `host`, or to any host) would be refused; None: it may go."""
        if self.read_only:
            return READ_ONLY
        if host is not None and control_subject(host).lower() in self._refused:
            return f"This dashboard may not control host {host}: its credentials may not publish on {control_subject(host)}."
        return None
