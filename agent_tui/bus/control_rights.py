"""`ControlRights`: on which hosts' control subjects this dashboard's credentials may publish.

A NATS server does not tell a client what it may do; it says what it refused, after the fact:
a publish on a subject the user may not publish on is dropped, and the client hears
`permissions violation for publish to "SUBJECT"` through its error callback (the request
itself then waits for a reply that never comes). A watch-only user (docs/remote.md) is such a
dashboard: it reads everything and may act on nothing; an operator of some hosts only may act
on those and no others.

Invariants:
- every control subject here ends with the dashboard's user (`control_subject(host, user)`);
- `probe` publishes one empty message on the control subject of the dashboard's own name
  (a held name: no host listens there) and makes a round trip (`_round_trip`); the server
  answers a refused publish before that round trip's pong, so once `probe` returns it is known whether control subjects may be
  published on in general. A refusal there does not make the dashboard read-only: it means
  "not on every host";
- each host is decided when it is first seen (`see`, `decide`): one empty message with no
  reply subject on its control subject (which a host ignores quietly), then a round trip; a
  refusal marks that host (`refused`), and the host is decided once the round trip came back;
- `read_only` holds only when the own-name probe was refused and every host decided so far was
  refused too (and at least one was): a dashboard that may control one host is not read-only;
- every refusal the client hears later (`heard`) that names a control subject marks that host:
  credentials that allow some hosts only are told apart, host by host;
- of the server's words only the subject is kept, and only when it is a control subject; other
  errors are not this module's business (`heard` returns False for them);
- `changed` is called once for each new refusal, and after each probe of hosts.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Iterable

from nats.aio.client import Client

from agent_tui.bus.protocol import caller_user, control_subject

_REFUSED_PUBLISH = re.compile(r"permissions violation for publish to \"?([^\"'\s]+)", re.IGNORECASE)
READ_ONLY = (
    "This dashboard is read-only: its credentials may not publish on the hosts' control subjects "
    "(it shows everything and can answer, stop or start nothing)."
)


class ControlRights:
    """What the server refused this dashboard's connection (see the module docstring).

    Args:
        own_name: the dashboard's name on the bus (its own control subject is the first probe).
        user: the dashboard's user on the bus (the suffix of every control subject it uses).
        changed: called after each new refusal and each probe of hosts.
    """

    def __init__(self, own_name: str, user: str, changed: Callable[[], None]) -> None:
        self.user = user
        self._probe_subject = control_subject(own_name, user)
        self._changed = changed
        self._connection: Client | None = None
        self._refused: set[str] = set()  # control subjects, lower case (as the client gives them)
        self._asked: set[str] = set()  # hosts' control subjects probed (or being probed)
        self._decided: set[str] = set()  # those whose probe came back
        self._probing: set[asyncio.Task[None]] = set()

    async def probe(self, connection: Client) -> None:
        """Find out whether control subjects may be published on in general."""
        self._connection = connection
        await connection.publish(self._probe_subject, b"")
        await _round_trip(connection)

    @property
    def everywhere(self) -> bool:
        """Whether the own-name probe went through (control subjects are allowed in general)."""
        return self._probe_subject.lower() not in self._refused

    async def decide(self, hosts: Iterable[str]) -> None:
        """Decide each of `hosts` not decided yet, and return once every probe in flight (these
        and any begun before) came back."""
        for host in hosts:
            self.see(host)
        if self._probing:
            await asyncio.wait(set(self._probing))

    async def _probe(self, host: str) -> None:
        """Probe `host` unless it was already (see the module docstring)."""
        connection = self._connection
        subject = control_subject(host, self.user)
        key = subject.lower()
        if connection is None or key in self._asked:
            return
        self._asked.add(key)
        try:
            await connection.publish(subject, b"")  # no reply subject: the host ignores it
            await _round_trip(connection)
        except Exception:
            self._asked.discard(key)  # the bus away: probed again when seen again
            return
        self._decided.add(key)
        self._changed()

    def see(self, host: str) -> None:
        """A host seen (a heartbeat, an event): decide it in the background if it is new."""
        if self._connection is None or control_subject(host, self.user).lower() in self._asked:
            return
        task = asyncio.get_running_loop().create_task(self._probe(host))
        self._probing.add(task)
        task.add_done_callback(self._probing.discard)

    async def close(self) -> None:
        for task in list(self._probing):
            task.cancel()
        with contextlib.suppress(Exception):
            if self._probing:
                await asyncio.wait(self._probing, timeout=2.0)

    def heard(self, error: Exception) -> bool:
        """An error the client reported: True when it was a refused publish on a control subject."""
        match = _REFUSED_PUBLISH.search(str(error))
        if match is None:
            return False
        subject = match.group(1).lower()
        if caller_user(subject) is None:
            return False
        if subject not in self._refused:
            self._refused.add(subject)
            self._changed()
        return True

    @property
    def read_only(self) -> bool:
        """Whether no host may be controlled: the own-name probe and every host decided so far
        were refused."""
        return not self.everywhere and bool(self._decided) and self._decided <= self._refused

    def refusal(self, host: str | None) -> str | None:
        """Why a control request (to `host`, or to any host) would be refused; None: it may go."""
        if self.read_only:
            return READ_ONLY
        subject = control_subject(host, self.user) if host is not None else None
        if subject is not None and subject.lower() in self._refused:
            return (
                f"This dashboard may not control host {host}: its credentials may not publish on {subject}."
            )
        return None


async def _round_trip(connection: Client) -> None:
    """Return once the server answered everything published before: the client writes a
    flush's PING straight away, ahead of publishes still waiting in its buffer (which it writes
    just after), so only the second flush's PONG comes after the server's answer to them."""
    await connection.flush()
    await connection.flush()
