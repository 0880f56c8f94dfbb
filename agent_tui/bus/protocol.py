"""The bus's contract: subjects, message ids, names, and the control messages.

Everything a host and an attached dashboard must agree on is here, and nothing else is: both
sides import these names and never spell a subject or a header themselves.

Invariants:
- every event of session S on host H is published on `events_subject(H, S)`
  (`agent-tui.<host>.<token>.events`, the token being `subject_token(S)`), in S's sequence order,
  with the header `Nats-Msg-Id: <sessionId>:<sequence>` (`message_id`), so a republish after a
  disconnect is dropped by the stream's duplicate window instead of stored twice;
- the message body is the event's JSONL line exactly as the host's log holds it (the log stays
  the truth; the stream is a copy);
- a host's actions are requested on `control_subject(H)`; a `ControlRequest` carries an `id`
  that the host treats as the request's identity (a repeat gets the first reply again), and
  every request is answered by one `ControlReply`;
- a name (a host's, a dashboard's) is a valid subject token: `valid_name` says so, `name_from`
  makes one from any text (a hostname);
- a session id that is not a safe token (imported logs name sessions as their source did) is
  carried by a stable digest of it; the event's own `sessionId` stays the real one.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

STREAM = "AGENT_TUI_EVENTS"
"""The JetStream stream that holds every host's events."""

SUBJECT_PREFIX = "agent-tui"
ALL_EVENTS = f"{SUBJECT_PREFIX}.*.*.events"
"""The subjects of `STREAM`: every session of every host."""

MSG_ID_HEADER = "Nats-Msg-Id"
DUPLICATE_WINDOW_S = 600.0
"""How long the stream remembers a message id (at least two minutes; ten, to ride out an
outage a person notices and fixes)."""

PRESENCE_BUCKET = "agent-tui-hosts"
"""The KV bucket where each host heartbeats: key = host name, value = a `Presence`."""

NAMES_BUCKET = "agent-tui-names"
"""The KV bucket that holds each process's name while it runs (dashboards included): a second
process asking for a name in use is refused with the holder's `NameClaim`."""

DEFAULT_PRESENCE_TTL_S = 15.0
DEFAULT_HEARTBEAT_S = 5.0
DEFAULT_CONTROL_TIMEOUT_S = 5.0

_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NOT_TOKEN = re.compile(r"[^A-Za-z0-9_-]")


def valid_name(name: str) -> bool:
    """Whether a host's or a dashboard's name is a valid subject token (letters, digits, `-`, `_`,
    at most 64)."""
    return _TOKEN.fullmatch(name) is not None


def name_from(text: str) -> str:
    """A valid name made from any text (a hostname): other characters become `-`."""
    name = _NOT_TOKEN.sub("-", text).strip("-")[:64]
    return name or "host"


def subject_token(session_id: str) -> str:
    """The subject token that stands for a session id: the id itself when it is a safe token,
    else `x` and a digest of it (stable, so every publisher and reader agrees)."""
    if _TOKEN.fullmatch(session_id) and not session_id.startswith("x-"):
        return session_id
    return "x-" + hashlib.sha256(session_id.encode()).hexdigest()[:32]


def events_subject(host: str, session_id: str) -> str:
    return f"{SUBJECT_PREFIX}.{host}.{subject_token(session_id)}.events"


def host_events(host: str) -> str:
    """The subjects of every session of one host."""
    return f"{SUBJECT_PREFIX}.{host}.*.events"


def control_subject(host: str) -> str:
    return f"{SUBJECT_PREFIX}.{host}.control"


def message_id(session_id: str, sequence: int) -> str:
    return f"{session_id}:{sequence}"


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Caller(_Message):
    """Who sent a control request: recorded with what the host commits for it (`by`)."""

    dashboard: str
    user: str
    host: str


ControlAction = Literal[
    "answer",  # a permission request: decision + remember (once/session/always)
    "stop",  # the session's running turn
    "stop_subtree",  # the session and everything it spawned
    "stop_all",
    "steer",  # text into the running turn
    "follow_up",  # a new turn with text
    "new_agent",  # start an agent on this host
    "close",  # close a session
    "sessions",  # what the host runs now (for a dashboard that attaches)
]


class ControlRequest(_Message):
    id: str = Field(min_length=1, max_length=128)
    action: ControlAction
    by: Caller
    session_id: str | None = Field(default=None, alias="sessionId")
    args: dict[str, Any] = Field(default_factory=dict)
    """The action's own arguments (`requestId`, `decision`, `remember` for an answer; `text`
    for steer and follow-up; the agent's spec for new_agent)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class ControlReply(_Message):
    id: str
    ok: bool
    message: str | None = None
    """Why not, in words a person reads ("already answered by laptop (ana) at 14:02:07")."""
    detail: dict[str, Any] = Field(default_factory=dict)


class Presence(_Message):
    """What a host says of itself in `PRESENCE_BUCKET`, every heartbeat."""

    host: str
    pid: int
    machine: str
    user: str
    started_at: str = Field(alias="startedAt")
    version: str
    sessions_dir: str = Field(alias="sessionsDir")

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class NameClaim(_Message):
    """Who holds a name on the bus."""

    name: str
    kind: Literal["host", "dashboard", "run"]
    pid: int
    machine: str
    user: str
    since: str
