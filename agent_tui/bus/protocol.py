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
- a host's actions are requested on `control_subject(H, U)` (`agent-tui.<host>.control.<user>`),
  U being the sender's user on the bus: the server's permissions let each user publish on their
  own suffix only, so the host takes who asked from the subject it received the request on
  (`caller_user`), never from the request; a `ControlRequest` carries an `id` that the host
  treats as the request's identity (a repeat gets the first reply again), and every request is
  answered by one `ControlReply`;
- a bus user (`valid_user`) is a valid subject token other than `events` (so a control subject
  is never an events subject); each connection's reply subjects start `inbox_prefix(U)`
  (`_INBOX_<user>`), so a user's permissions can keep other users' replies out of its reach;
- a name (a host's, a dashboard's) is a valid subject token: `valid_name` says so, `name_from`
  makes one from any text (a hostname);
- a session id that is not a safe token (imported logs name sessions as their source did) is
  carried by a stable digest of it; the event's own `sessionId` stays the real one.

Added with the host (`agent_tui.bus.host`), for the dashboard side to rely on:
- `STREAM` is created or updated by every host at its start with `ALL_EVENTS`, a duplicate
  window of `DUPLICATE_WINDOW_S`, and the limits `DEFAULT_STREAM_MAX_AGE_S` and
  `DEFAULT_STREAM_MAX_BYTES` unless `[bus] max_age` / `max_bytes` say otherwise (the oldest
  messages go first; a host's logs keep the whole history);
- within one session the stream holds each sequence at most once (the message id); after an
  outage a republished event can land after a later one of its session, so a reader checks
  `sequence` as it folds (never trusts the stream's order alone);
- a `ControlRequest` carries one `Command` (`agent_tui.runtime.commands`) as it is, and its
  `ControlReply` is that command's `Reply` with the request's id: the union is the schema of
  both ends, and its checks (a budget's numbers, an answer's words) are the wire's;
- an `answer` is committed as `permission.resolved{actor: "user", by: {dashboard, user, host}}`;
  the first answer wins, a later one gets `ok: false`, a message "already answered by DASHBOARD
  (USER) at HH:MM:SS" and `detail` = `AlreadyAnswered` fields (`by`, `at`);
- `sessions` answers `detail = HostSessions` (every session the host has, with its
  last logged sequence, the last one the stream acknowledged and that message's stream
  sequence, its `session.created` payload, whether a turn runs, and the permission requests
  waiting for an answer): a dashboard that attaches late draws its first screen from it and
  reads each session's history from the stream behind it (`streamSequence` says where each
  session's tail is);
- `republish` (the sequences a dashboard found missing from the stream) is published again from
  the host's log, as after an outage (same subject, same message id); the reply comes once the
  stream acknowledged them, `detail = {"republished": N, "stored": M}` (M: those the stream
  stored anew, not dropped as duplicates by its window); a sequence past the end of the host's
  log is refused;
- `set_budget` is committed as `session.budget{by}`; the finishing verbs (`review`, `turns`,
  `commit`, `merge`, `discard`, `rewind_plan`, `rewind`, `closed`, `reopen`) are the host's
  workbench's own, their replies' `detail` the runtime's results as pydantic dumps them (a
  review bounded by `review_limit`);
- a repeated request id gets the first reply again, however long ago it was sent (the host
  remembers the last `REPLIES_KEPT` ids), except for the finishing reads (a review, a rewind
  plan, the turns, the closed sessions), which are read again;
- the host says how its bus link fares on `notice_subject(H)` (core NATS, a `HostNotice`): when it
  is back after an outage and how many events it republished; the same goes to its stderr;
- `Presence` also says the host's `kind` (`serve` or `run`) and `heartbeatS`/`ttlS`, so a
  dashboard knows when a silent host counts as unreachable, and a `serve` host's `cwd`, which
  a dashboard's new-agent form offers as the directory;
- the private server of one machine (`agent-tui serve` without `--bus`) is described by a
  `LocalServerInfo` in `local_server.local_server_file()` (0600, the user's runtime dir):
  `agent_tui.bus.local_server.read_local_server()` reads it; `credentials.connect_options`
  turns a `config.BusSettings` into the client's connect arguments (token, nkey, creds, TLS)
  for both sides.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_tui.runtime.commands import AlreadyAnswered as AlreadyAnswered
from agent_tui.runtime.commands import Caller, Command, Reply

if TYPE_CHECKING:
    from nats.js.api import StreamConfig

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

DEFAULT_STREAM_MAX_AGE_S = 14 * 24 * 3600.0
"""How long the stream keeps an event by default (`[bus] max_age`)."""
DEFAULT_STREAM_MAX_BYTES = 2 * 1024**3
"""How much the stream keeps by default (`[bus] max_bytes`), the oldest going first."""
REPLIES_KEPT = 4096
"""How many control replies a host keeps by request id, for a retry to get the first reply."""

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
    else `x` and a digest of it (stable, so every publisher and reader agrees). `control` is
    digested too: `agent-tui.HOST.control.events` would be a control subject."""
    if _TOKEN.fullmatch(session_id) and not session_id.startswith("x-") and session_id != "control":
        return session_id
    return "x-" + hashlib.sha256(session_id.encode()).hexdigest()[:32]


def events_subject(host: str, session_id: str) -> str:
    return f"{SUBJECT_PREFIX}.{host}.{subject_token(session_id)}.events"


def host_events(host: str) -> str:
    """The subjects of every session of one host."""
    return f"{SUBJECT_PREFIX}.{host}.*.events"


def control_subject(host: str, user: str) -> str:
    """Where `user` asks `host` for actions: the user's own suffix (see the module docstring)."""
    return f"{SUBJECT_PREFIX}.{host}.control.{user}"


def host_controls(host: str) -> str:
    """Every user's control subject of one host (what the host subscribes to)."""
    return f"{SUBJECT_PREFIX}.{host}.control.*"


def caller_user(subject: str) -> str | None:
    """The user a control request came from: its subject's last token (None: not a control
    subject)."""
    parts = subject.split(".")
    if len(parts) != 4 or parts[0] != SUBJECT_PREFIX or parts[2] != "control" or not valid_user(parts[3]):
        return None
    return parts[3]


def valid_user(user: str) -> bool:
    """Whether a bus user's name can be a control subject's suffix (and an inbox prefix's)."""
    return valid_name(user) and user != "events"


def inbox_prefix(user: str) -> str:
    """The reply subjects' prefix of a connection of `user` (`_INBOX_<user>`)."""
    return f"_INBOX_{user}"


def notice_subject(host: str) -> str:
    """Where a host says how its bus link fares (`HostNotice`, core NATS)."""
    return f"{SUBJECT_PREFIX}.{host}.notice"


def message_id(session_id: str, sequence: int) -> str:
    return f"{session_id}:{sequence}"


def sequence_of(message_id_text: str) -> tuple[str, int] | None:
    """`(sessionId, sequence)` of a message id, or None when it is not one of ours."""
    session_id, _, number = message_id_text.rpartition(":")
    if not session_id or not number.isdigit():
        return None
    return session_id, int(number)


def stream_oddities(config: StreamConfig, subject: str) -> list[str]:
    """How a stream is not as agent-tui makes it (one clause each; none: it is): a stream that
    republishes, rewrites or copies could have the server publish for another host."""
    return [
        what
        for what, present in (
            ("it republishes what it stores", config.republish is not None),
            ("it rewrites subjects", config.subject_transform is not None),
            ("it copies another stream", bool(config.sources) or config.mirror is not None),
            (f"its subjects are {config.subjects}", (config.subjects or []) != [subject]),
        )
        if present
    ]


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class ControlRequest(_Message):
    """A `Command` asked of a host by `by`; `id` is the request's identity (a repeat gets the
    first reply again)."""

    id: str = Field(min_length=1, max_length=128)
    by: Caller
    command: Command


class ControlReply(Reply):
    """The `Reply` to the request `id`."""

    id: str


class Presence(_Message):
    """What a host says of itself in `PRESENCE_BUCKET`, every heartbeat."""

    host: str
    pid: int
    machine: str
    user: str
    started_at: str = Field(alias="startedAt")
    version: str
    sessions_dir: str = Field(alias="sessionsDir")
    cwd: str | None = None
    """The host's own directory (`serve --cwd`): where a new agent works unless told otherwise,
    and what a relative directory in `new_agent` is relative to (None: a `run`, or an older host)."""
    kind: Literal["serve", "run"] = "serve"
    heartbeat_s: float = Field(default=DEFAULT_HEARTBEAT_S, alias="heartbeatS")
    ttl_s: float = Field(default=DEFAULT_PRESENCE_TTL_S, alias="ttlS")


class NameClaim(_Message):
    """Who holds a name on the bus."""

    name: str
    kind: Literal["host", "dashboard", "run"]
    pid: int
    machine: str
    user: str
    since: str


class WaitingRequest(_Message):
    """A permission request waiting on the host for an answer."""

    session_id: str = Field(alias="sessionId")
    request_id: str = Field(alias="requestId")
    tool_call_id: str = Field(alias="toolCallId")
    tool: str
    risk: str
    args_preview: str = Field(alias="argsPreview")
    warning: str | None = None
    reason: str | None = None
    agent_path: list[str] = Field(default_factory=list, alias="agentPath")


class SessionSummary(_Message):
    """One session of a host, as the `sessions` action tells it."""

    session_id: str = Field(alias="sessionId")
    subject: str
    last_sequence: int = Field(alias="lastSequence")
    """The last sequence in the host's log."""
    published_sequence: int = Field(alias="publishedSequence")
    """The last sequence the stream acknowledged (all before it are in the stream too)."""
    stream_sequence: int | None = Field(default=None, alias="streamSequence")
    """The stream sequence of that acknowledged message (None: not known in this host's run)."""
    parent_session_id: str | None = Field(default=None, alias="parentSessionId")
    created: dict[str, Any] = Field(default_factory=dict)
    """The `session.created` payload (title, agentName, cwd, ...)."""
    running: bool = False


class HostSessions(_Message):
    host: str
    sessions: list[SessionSummary]
    waiting: list[WaitingRequest] = Field(default_factory=list)


class HostNotice(_Message):
    """How a host's bus link fares. A host sends `back` once the bus is there again after an
    outage (`since`: when it went away); `away` is for a host that can tell it by other means
    (none does yet: while the bus is away nothing reaches it)."""

    host: str
    state: Literal["away", "back"]
    since: str
    republished: int = 0
    message: str
