"""The roles of docs/remote.md against a real nats-server running exactly the document's
permissions (`support_bus_roles`): a host does its whole job with them and is refused nothing;
who answered is the user the server let publish, whatever the request says; and each thing a
role must not do is refused by the server as a permissions violation."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import nats
import orjson
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import RePublish, StreamConfig
from support_bus import until
from support_bus_host import RENAMING, host_env, log_lines, start_agent_tui
from support_bus_roles import password, roles_config
from support_nats import NatsServer

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusTarget
from agent_tui.bus.protocol import (
    ALL_EVENTS,
    MSG_ID_HEADER,
    STREAM,
    Caller,
    ControlReply,
    ControlRequest,
    caller_user,
    control_subject,
    events_subject,
    host_events,
    inbox_prefix,
    valid_user,
)
from agent_tui.replay.sources import replay_all
from agent_tui.runtime.commands import Answer

pytestmark = pytest.mark.anyio


@pytest.fixture
def roles(tmp_path: Path) -> Iterator[NatsServer]:
    server = NatsServer(store=tmp_path / "store", config=roles_config(), log=tmp_path / "nats.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Peer:
    """One user's connection, its reply inboxes under `_INBOX_<user>` as agent-tui makes them,
    and what the server reported to it."""

    def __init__(self, client: Client, reported: list[str]) -> None:
        self.client = client
        self.reported = reported

    async def refused(self, attempt: Callable[[Client], Awaitable[object]]) -> str:
        """Do `attempt`, and return the server's refusal of it (the test fails without one)."""
        before = len(self.reported)
        with contextlib.suppress(Exception):  # a refused request also waits for a reply in vain
            await attempt(self.client)
        await self.client.flush()  # the refusal comes before the second round trip's pong
        await self.client.flush()
        said = self.reported[before:]
        assert any("permissions violation" in line for line in said), f"not refused: {said}"
        return said[0]


async def peer(server: NatsServer, user: str) -> Peer:
    reported: list[str] = []

    async def heard(error: Exception) -> None:
        reported.append(str(error))

    client = await nats.connect(
        server.url,
        user=user,
        password=password(user),
        inbox_prefix=inbox_prefix(user),
        error_cb=heard,
        connect_timeout=5,
    )
    return Peer(client, reported)


@pytest.fixture
async def peers(roles: NatsServer) -> AsyncIterator[dict[str, Peer]]:
    connected = {user: await peer(roles, user) for user in ("buildbox", "prod", "ana", "bob", "watch")}
    try:
        yield connected
    finally:
        for each in connected.values():
            await each.client.close()


def violations(server: NatsServer) -> list[str]:
    assert server.log is not None
    return [line for line in server.log.read_text().splitlines() if "Violation" in line]


async def test_a_host_with_the_documented_permissions_runs_and_the_answer_is_by_the_user_the_server_saw(
    roles: NatsServer, peers: dict[str, Peer], tmp_path: Path
) -> None:
    (tmp_path / "ws" / "src").mkdir(parents=True)
    (tmp_path / "ws" / "src" / "foo.py").write_text("x = 1\n")
    scenario = tmp_path / "scenario.json"
    scenario.write_bytes(orjson.dumps(RENAMING))
    sessions = tmp_path / "sessions"
    ana = peers["ana"].client
    js = ana.jetstream()
    asked: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()
    held: list[bytes] = []
    wanted = [0]
    all_held = asyncio.Event()

    async def read(message: Msg) -> None:
        held.append(message.data)
        if wanted[0] and len(held) >= wanted[0]:
            all_held.set()
        event = orjson.loads(message.data)
        if event["type"] == "permission.resolved" and event["payload"]["decision"] == "ask":
            if not asked.done():
                asked.set_result((event["sessionId"], event["payload"]["requestId"]))

    env = host_env(
        tmp_path,
        '[bus]\ncredentials_env = "BUS_LOGIN"\n',
        BUS_LOGIN=f"buildbox:{password('buildbox')}",
    )
    args = ["run", str(scenario), "--sessions-dir", str(sessions), "--approve", "ask"]
    # The stream is missing, and a hostile host (prod) makes it, with a republish of its own
    # events onto buildbox's control subject of ana: the server itself publishes them there.
    # Ana, who may not make streams, reads it from before the run starts.
    hostile = peers["prod"].client.jetstream()
    await hostile.add_stream(
        StreamConfig(
            name=STREAM,
            subjects=[ALL_EVENTS],
            republish=RePublish(src="agent-tui.prod.*.events", dest=control_subject("buildbox", "ana")),
        )
    )
    reading = await js.subscribe(host_events("buildbox"), cb=read, ordered_consumer=True, stream=STREAM)
    process = start_agent_tui([*args, "--bus", roles.url, "--host", "buildbox"], env)
    session_id, request_id = await asyncio.wait_for(asked, 60)
    forged_deny = ControlRequest(
        id="f1",
        by=Caller(dashboard="prod", user="ana", host="prod"),
        command=Answer(sessionId=session_id, requestId=request_id, decision="deny"),
    )
    await hostile.publish("agent-tui.prod.forged.events", forged_deny.model_dump_json(by_alias=True).encode())

    forged = ControlRequest(
        id="a1",
        by=Caller(dashboard="bobs-laptop", user="bob", host="bob-machine"),  # ana claims to be bob
        command=Answer(sessionId=session_id, requestId=request_id, decision="allow", remember="always"),
    )
    reply = await ana.request(
        control_subject("buildbox", "ana"), forged.model_dump_json(by_alias=True).encode(), timeout=10
    )
    answered = ControlReply.model_validate_json(reply.data)
    assert answered.ok, answered.message  # the republished "answer" was not taken for ana's
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    (resolved,) = [
        e.payload
        for e in replay_all(sessions)
        if e.type == "permission.resolved" and e.payload["decision"] != "ask"
    ]
    assert resolved["by"] == {"dashboard": "bobs-laptop", "user": "ana", "host": "bob-machine"}
    assert resolved["actor"] == "user"

    logged = log_lines(sessions)[session_id]
    wanted[0] = len(logged)
    if len(held) < len(logged):
        await asyncio.wait_for(all_held.wait(), 30)
    assert held == logged
    await reading.unsubscribe()
    assert violations(roles) == []  # neither needed anything the document does not grant


def publishing(subject: str, body: bytes = b"{}") -> Callable[[Client], Awaitable[object]]:
    async def attempt(client: Client) -> object:
        await client.publish(subject, body)
        return None

    return attempt


def asking(subject: str, body: bytes = b"{}") -> Callable[[Client], Awaitable[object]]:
    async def attempt(client: Client) -> object:
        return await client.request(subject, body, timeout=1)

    return attempt


def subscribing(subject: str) -> Callable[[Client], Awaitable[object]]:
    async def attempt(client: Client) -> object:
        return await client.subscribe(subject)

    return attempt


EVENT = orjson.dumps({"type": "session.created", "sessionId": "forged", "sequence": 1})
MUST_NOT: list[tuple[str, str, Callable[[Client], Awaitable[object]]]] = [
    # bob operates buildbox and only watches prod
    ("bob", "forge an event of prod", publishing("agent-tui.prod.forged.events", EVENT)),
    ("bob", "forge prod's presence", publishing("$KV.agent-tui-hosts.prod")),
    ("bob", "ask prod", asking(control_subject("prod", "bob"))),
    ("bob", "ask buildbox as ana", asking(control_subject("buildbox", "ana"))),
    ("bob", "purge the stream", asking(f"$JS.API.STREAM.PURGE.{STREAM}")),
    ("bob", "delete the stream", asking(f"$JS.API.STREAM.DELETE.{STREAM}")),
    ("bob", "update the stream", asking(f"$JS.API.STREAM.UPDATE.{STREAM}")),
    ("bob", "delete a message", asking(f"$JS.API.STREAM.MSG.DELETE.{STREAM}")),
    ("bob", "make a stream that republishes into prod's", asking("$JS.API.STREAM.CREATE.FORGER")),
    ("bob", "read ana's replies", subscribing("_INBOX_ana.>")),
    ("bob", "read every reply", subscribing("_INBOX.>")),
    ("bob", "forge a reply to ana", publishing("_INBOX_ana.x.y", b'{"id":"a1","ok":true}')),
    ("bob", "hear prod's requests", subscribing("agent-tui.prod.control.*")),
    # a host
    ("prod", "forge an event of buildbox", publishing("agent-tui.buildbox.forged.events", EVENT)),
    ("prod", "update the stream", asking(f"$JS.API.STREAM.UPDATE.{STREAM}")),
    ("prod", "purge the stream", asking(f"$JS.API.STREAM.PURGE.{STREAM}")),
    ("prod", "delete the stream", asking(f"$JS.API.STREAM.DELETE.{STREAM}")),
    ("prod", "delete a message", asking(f"$JS.API.STREAM.MSG.DELETE.{STREAM}")),
    ("prod", "answer a request it never got", publishing("_INBOX_ana.x.y", b'{"id":"a1","ok":true}')),
    ("prod", "hear buildbox's requests", subscribing("agent-tui.buildbox.control.*")),
    ("prod", "ask another host", asking(control_subject("buildbox", "prod"))),
    # ana operates every host, as ana only
    ("ana", "ask as bob", asking(control_subject("buildbox", "bob"))),
    ("ana", "delete the stream", asking(f"$JS.API.STREAM.DELETE.{STREAM}")),
    ("ana", "forge an event", publishing("agent-tui.buildbox.forged.events", EVENT)),
    # nobody but a host writes its state snapshot
    ("prod", "write buildbox's snapshot", publishing("$KV.agent-tui-snapshots.buildbox.head")),
    ("bob", "write a host's snapshot", publishing("$KV.agent-tui-snapshots.buildbox.head")),
    ("ana", "write a host's snapshot part", publishing("$KV.agent-tui-snapshots.prod.part-0")),
    ("ana", "make the snapshot bucket", asking("$JS.API.STREAM.CREATE.KV_agent-tui-snapshots")),
    ("watch", "write a host's snapshot", publishing("$KV.agent-tui-snapshots.buildbox.head")),
    # the watcher
    ("watch", "ask a host", asking(control_subject("buildbox", "watch"))),
    ("watch", "read ana's replies", subscribing("_INBOX_ana.>")),
]


@pytest.mark.parametrize(("user", "what", "attempt"), MUST_NOT, ids=[f"{u}: {w}" for u, w, _ in MUST_NOT])
async def test_a_role_is_refused_what_it_must_not_do(
    peers: dict[str, Peer],
    user: str,
    what: str,
    attempt: Callable[[Client], Awaitable[object]],
) -> None:
    host = peers["buildbox"].client
    js = host.jetstream()
    await js.add_stream(name=STREAM, subjects=[ALL_EVENTS])
    await js.publish("agent-tui.buildbox.s1.events", EVENT, headers={MSG_ID_HEADER: "s1:1"})

    refusal = await peers[user].refused(attempt)
    assert "permissions violation" in refusal, what
    info = await js.stream_info(STREAM)
    assert info.state.messages == 1  # nothing was purged, deleted or added
    assert info.config.subjects == [ALL_EVENTS]


def test_no_events_subject_is_a_control_subject() -> None:
    """A host hears `agent-tui.HOST.control.*`: a session called `control` must not publish
    there, and a user called `events` must not ask there."""
    assert caller_user(events_subject("buildbox", "control")) is None
    assert caller_user(control_subject("buildbox", "ana")) == "ana"
    assert not valid_user("events") and valid_user("ana")


async def test_a_stream_a_hostile_host_made_to_republish_is_said_by_the_dashboard(
    roles: NatsServer, peers: dict[str, Peer]
) -> None:
    """A host may make the stream when it is missing, with what settings it likes: a dashboard
    says when the stream is not as agent-tui makes it."""
    await (
        peers["prod"]
        .client.jetstream()
        .add_stream(
            StreamConfig(
                name=STREAM,
                subjects=[ALL_EVENTS],
                republish=RePublish(src="agent-tui.prod.*.events", dest=control_subject("buildbox", "ana")),
            )
        )
    )
    dashboard = AttachedBus(BusTarget(roles.url, {"user": "ana", "password": password("ana")}))
    await dashboard.open()
    try:

        def said() -> list[str]:
            return [problem for problem in dashboard.problems if problem.startswith("the stream")]

        await until(dashboard, lambda: bool(said()), "the stream said")
        assert said() == [
            f"the stream {STREAM} is not as agent-tui makes it (it republishes what it stores): "
            "events may show under another host than the one that sent them; ask the server's "
            "administrator to make it again"
        ]
    finally:
        await dashboard.close()
