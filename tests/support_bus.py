"""A stand-in host for the attached dashboard's tests: publishes real logs' lines per the bus's
protocol, heartbeats its presence, and answers control requests.

- `publish_lines(js, host, lines)`: each JSONL line on `events_subject(host, sessionId)` with
  `Nats-Msg-Id: <sessionId>:<sequence>`, the body the line itself (as a host does after its
  append); `ensure_stream` makes the stream as a host would (a duplicate window);
- `logs_of_a_real_run(dir)`: the logs a real `agent-tui run` of the sample scenario wrote;
- `heartbeat(js, host, ttl, cwd)`: one `Presence` put into `PRESENCE_BUCKET` (made with that
  TTL), the host's own directory `cwd` in it;
- `until(bus, condition, what)`: wait for a condition of an attached dashboard, checked at each
  change it announces (never on a clock);
- `CheckedFold`: the reducer step, failing on a gap or a duplicate; `replay_dump` what
  `agent-tui replay --dump state` prints for logs, `dump_of` a state's dump as JSON reads it;
- `ControlResponder`: answers `control_subject(host)`, one reply per id (a repeat of an id gets
  the first reply again, as the protocol says), and can stay silent for the first requests to
  make a dashboard time out.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError, NotFoundError

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.protocol import (
    ALL_EVENTS,
    DUPLICATE_WINDOW_S,
    MSG_ID_HEADER,
    PRESENCE_BUCKET,
    STREAM,
    ControlReply,
    ControlRequest,
    Presence,
    events_subject,
    host_controls,
    message_id,
)
from agent_tui.events import Event
from agent_tui.reducer import DashboardState, apply_event

SAMPLE = Path(__file__).resolve().parent / "sample-logs"
SCENARIO = SAMPLE / "scenario.json"


async def ensure_stream(js: JetStreamContext) -> None:
    try:
        await js.stream_info(STREAM)
    except NotFoundError:
        await js.add_stream(name=STREAM, subjects=[ALL_EVENTS], duplicate_window=DUPLICATE_WINDOW_S)


async def publish_lines(js: JetStreamContext, host: str, lines: Iterable[bytes]) -> int:
    """Publish each line (one event) as a host does; returns how many the stream stored anew."""
    stored = 0
    pending: list[asyncio.Future[object]] = []
    for line in lines:
        fields = orjson.loads(line)
        session_id, sequence = fields["sessionId"], fields["sequence"]
        headers = {MSG_ID_HEADER: message_id(session_id, sequence)}
        pending.append(
            asyncio.ensure_future(js.publish(events_subject(host, session_id), line, headers=headers))
        )
        if len(pending) >= 256:
            stored += await _settle(pending)
    return stored + await _settle(pending)


async def _settle(pending: list[asyncio.Future[object]]) -> int:
    acks = await asyncio.gather(*pending)
    pending.clear()
    return sum(1 for ack in acks if not getattr(ack, "duplicate", False))


def log_lines(files: Iterable[Path]) -> list[bytes]:
    """Every line of the logs, file by file (each session's in sequence order)."""
    lines: list[bytes] = []
    for path in sorted(files):
        lines += [line for line in path.read_bytes().splitlines() if line.strip()]
    return lines


def logs_of_a_real_run(sessions_dir: Path, approve: str = "allow") -> list[Path]:
    """Run the sample scenario headlessly (a real `agent-tui run`) and return its logs."""
    sessions_dir.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "agent_tui", "run", str(SCENARIO), "--sessions-dir", str(sessions_dir)]
        + ["--approve", approve, "--quiet", "--workspace", str(sessions_dir.parent / "workspace")],
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
        check=False,
    )
    logs = sorted(sessions_dir.glob("*.jsonl"))
    assert logs, f"the run wrote no logs: {done.stderr.decode()[-2000:]}"
    return logs


async def heartbeat(js: JetStreamContext, host: str, ttl: float, cwd: str | None = None) -> None:
    """One heartbeat of `host` (the bucket made with `ttl` if it is not there), saying `cwd`
    as its own directory."""
    try:
        kv = await js.key_value(PRESENCE_BUCKET)
    except (BucketNotFoundError, NotFoundError):
        kv = await js.create_key_value(bucket=PRESENCE_BUCKET, ttl=ttl)
    presence = Presence(
        host=host,
        pid=os.getpid(),
        machine="test-machine",
        user="ada",
        startedAt=datetime.now(UTC).isoformat(),
        version="test",
        sessionsDir="/srv/logs",
        cwd=cwd,
    )
    await kv.put(host, presence.model_dump_json(by_alias=True).encode())


Reply = Callable[[ControlRequest], Awaitable[ControlReply]]


async def accept(request: ControlRequest) -> ControlReply:
    return ControlReply(id=request.id, ok=True, message=f"{request.command.verb} done")


@dataclass
class ControlResponder:
    """A host's control subject: records every request, answers each id once (`reply`), a repeat
    with the same reply; the first `silent` requests get no answer at all (a host that is slow
    or away)."""

    connection: Client
    host: str
    reply: Reply = accept
    silent: int = 0
    requests: list[ControlRequest] = field(default_factory=list)
    handled: dict[str, ControlReply] = field(default_factory=dict)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    probes: int = 0

    async def start(self) -> None:
        await self.connection.subscribe(host_controls(self.host), cb=self._on_request)
        await self.connection.flush()

    async def _on_request(self, message: Msg) -> None:
        if not message.data and not message.reply:
            self.probes += 1  # a dashboard deciding its rights: a host ignores it
            return
        request = ControlRequest.model_validate_json(message.data)
        self.requests.append(request)
        self.arrived.set()
        if self.silent > 0:
            self.silent -= 1
            return
        answered = self.handled.get(request.id)
        if answered is None:
            answered = self.handled[request.id] = await self.reply(request)
        await message.respond(answered.model_dump_json().encode())

    async def next_request(self, count: int) -> ControlRequest:
        """Wait until `count` requests came; the last of them."""
        async with asyncio.timeout(30):
            while len(self.requests) < count:
                self.arrived.clear()
                await self.arrived.wait()
        return self.requests[count - 1]


def as_another_host(lines: Iterable[bytes], prefix: bytes = b"sesl_") -> list[bytes]:
    """The same logs with other session ids (`sess_…` → `sesl_…`), as a second host's."""
    return [line.replace(b"sess_", prefix) for line in lines]


def live_sample() -> list[Path]:
    """The sample run cut mid-way: three requests wait, two sessions run."""
    return sorted((SAMPLE / "live").glob("*.jsonl"))


class CheckedFold:
    """The reducer step, watched: fails the test if an event of a session reaches it out of
    its sequence (a gap) or twice (a duplicate)."""

    def __init__(self) -> None:
        self.last: dict[str, int] = {}
        self.bad: list[str] = []
        self.folded = 0

    def __call__(self, state: DashboardState, event: Event) -> object:
        expected = self.last.get(event.session_id, 0) + 1
        if event.sequence != expected:
            self.bad.append(f"{event.session_id}: {event.sequence} folded where {expected} was next")
        self.last[event.session_id] = event.sequence
        self.folded += 1
        return apply_event(state, event)


def replay_dump(files: list[Path]) -> object:
    """What `agent-tui replay DIR --dump state` prints for these logs (copied into one folder)."""
    with tempfile.TemporaryDirectory() as folder:
        for path in files:
            shutil.copy(path, Path(folder) / path.name)
        done = subprocess.run(
            [sys.executable, "-m", "agent_tui", "replay", folder, "--dump", "state"],
            capture_output=True,
            check=True,
            timeout=60,
        )
    return orjson.loads(done.stdout)


def dump_of(state: DashboardState) -> object:
    return orjson.loads(orjson.dumps(state.to_state_dump()))


async def until(bus: AttachedBus, condition: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
    """Wait for `condition`, checked at each change the bus reports (every fold, every change
    of presence, connection, liveness or problems is one); fail naming `what` after `seconds`."""
    changed = asyncio.Event()
    unsubscribe = bus.listen(lambda _event: changed.set())
    try:
        async with asyncio.timeout(seconds):
            while not condition():
                changed.clear()
                await changed.wait()
    except TimeoutError:
        pytest.fail(f"never came: {what}")
    finally:
        unsubscribe()
