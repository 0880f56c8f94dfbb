"""`AcpSessions`: the Claude Code and Codex sessions this host drives through ACP, by their own ids.

A Codex or Claude Code run that agent-tui drives through ACP (`agent-tui --agent codex`) writes
its CLI's transcript too (a Codex rollout whose `session_meta.id`, a Claude Code transcript whose
file name, is the agent's ACP `sessionId`). That transcript is not a second session run in a
terminal: the terminal follower and the listing leave it out, and the CLI's hooks for it are
not asked here (the ACP permission request is the question).

The one owner of the fact is our logs: an ACP session's log records the agent's session id in the
`source.record` of `session/new` (and `session/load`), format `acp`, in its first turn
(`acp/client.py`). `AcpSessions` is a cache of it, named by its source: the ids read from the
heads of the stored logs (`recorded_acp_sessions`, read once), plus those the engine's events
record while this host runs (`heard`, an engine listener); a test holds the two equal.

Invariants:
- an id is taken only from a `source.record` of format `acp` whose type is `session/new` or
  `session/load` and whose `data.sessionId` is a non-empty string;
- a stored log is read at its head only (its first `HEAD_LINES` lines, at most `HEAD_BYTES`),
  and only the line that holds the record is parsed; a log that cannot be read adds nothing;
- ids are only added (a session's log is never unwritten): a transcript left out stays out.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import orjson

from agent_tui.events import Event
from agent_tui.importers.ids import session_id_for

ACP_FORMAT = "acp"
"""The `format` of the records the ACP client keeps (`acp.mapping.RECORD_FORMAT`)."""
ACP_RECORDS = frozenset({"session/new", "session/load"})
HEAD_LINES = 16
"""How many first lines of a stored log its `session/new` record is looked for in (it is the
first turn's fourth line: `session.created`, `turn.started`, `user.message`, the record)."""
HEAD_BYTES = 256 * 1024
"""The most of a stored log read for them (a long first prompt)."""
FIRST_READ = 8 * 1024
"""The first read of a log's head (most heads are whole in it)."""
_MARK = b'"recordType":"session/'


def agent_session_of(event_type: str, payload: object) -> str | None:
    """The agent's own session id an event records (a `session/new` or `session/load` record of
    the ACP client), else None."""
    if event_type != "source.record" or not isinstance(payload, dict):
        return None
    if payload.get("format") != ACP_FORMAT or payload.get("recordType") not in ACP_RECORDS:
        return None
    data = payload.get("data")
    found = data.get("sessionId") if isinstance(data, dict) else None
    return found if isinstance(found, str) and found else None


def recorded_acp_session(path: Path) -> str | None:
    """The agent session id the stored log at `path` recorded in its head (None: none)."""
    try:
        data = _head(path)
    except OSError:
        return None
    at = data.find(_MARK)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        if end < 0:
            return None  # cut by the bound, or still being written
        found = _recorded_in(data[start:end])
        if found is not None:
            return found
        at = data.find(_MARK, end)
    return None


def _head(path: Path) -> bytes:
    """The first `HEAD_LINES` whole lines of the file (fewer when `HEAD_BYTES` come first, or the
    record's line is whole before)."""
    with open(path, "rb") as handle:
        data = handle.read(FIRST_READ)
        while len(data) < HEAD_BYTES and data.count(b"\n") < HEAD_LINES:
            at = data.find(_MARK)
            if at >= 0 and data.find(b"\n", at) >= 0:
                break
            more = handle.read(min(len(data), HEAD_BYTES - len(data)))
            if not more:
                break
            data += more
    return data


def _recorded_in(line: bytes) -> str | None:
    try:
        event = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return None
    return agent_session_of(event["type"], event.get("payload"))


def recorded_acp_sessions(directory: Path | None) -> frozenset[str]:
    """The agent session ids the logs of `directory` recorded (see `recorded_acp_session`)."""
    if directory is None:
        return frozenset()
    try:
        with os.scandir(directory) as entries:
            paths = [Path(e.path) for e in entries if e.name.endswith(".jsonl") and e.is_file()]
    except OSError:
        return frozenset()
    return frozenset(filter(None, map(recorded_acp_session, paths)))


def our_ids(agent_ids: Iterable[str]) -> frozenset[str]:
    """Our session ids of the CLI sessions `agent_ids` as a transcript of theirs is imported."""
    return frozenset(session_id_for(agent_id) for agent_id in agent_ids)


class AcpSessions:
    """The agent session ids of this host's ACP sessions (see the module docstring).

    Args:
        stored: the ids the stored logs recorded (`recorded_acp_sessions`).
    """

    def __init__(self, stored: Iterable[str] = ()) -> None:
        self._ids: set[str] = set()
        self._ours: set[str] = set()
        self.learn(stored)

    def __contains__(self, agent_id: object) -> bool:
        return agent_id in self._ids

    def ids(self) -> frozenset[str]:
        return frozenset(self._ids)

    def holds(self, session_id: str) -> bool:
        """Whether our session `session_id` is a transcript's copy of an ACP session of this host."""
        return session_id in self._ours

    def learn(self, agent_ids: Iterable[str]) -> None:
        """Add the ids read from stored logs."""
        for agent_id in agent_ids:
            self._ids.add(agent_id)
            self._ours.add(session_id_for(agent_id))

    def heard(self, event: Event) -> None:
        """An engine listener: learn the id a stored event records."""
        found = agent_session_of(event.type, event.payload)
        if found is not None:
            self.learn((found,))
