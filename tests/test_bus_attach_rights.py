"""Attached dashboards against a real nats-server that has users, permissions and TLS in its
config file (the one docs/remote.md shows): a watch-only user's dashboard reads everything and
knows at once that it is read-only, says so once, and refuses every control with that sentence;
an operator whose credentials exclude one host is refused for that host only; the dashboard's
credentials come from the config file's named variable and go over TLS, and never show."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client
from support_bus import (
    ControlResponder,
    as_another_host,
    ensure_stream,
    heartbeat,
    live_sample,
    log_lines,
    publish_lines,
    until,
)
from support_nats import NatsServer, certificates
from support_workbench import wait_for
from textual.widgets import Static

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusTarget, BusUnreachable, resolve_target
from agent_tui.bus.control_rights import READ_ONLY
from agent_tui.bus.presence import bucket
from agent_tui.bus.protocol import NAMES_BUCKET
from agent_tui.events import event_from_json
from agent_tui.runtime.commands import FollowUp, Stop
from agent_tui.tui.attached_app import AttachedApp
from agent_tui.tui.screens.approval import ApprovalScreen

pytestmark = pytest.mark.anyio

OPERATOR_PASSWORD = "op-pa55-that-must-never-show"
WATCH_PASSWORD = "w4tch-pa55-that-must-never-show"
BUILD_BOX_PASSWORD = "b0b-pa55-that-must-never-show"
# The dashboards' permissions of docs/remote.md ("Subject permissions"), as a server config
# (`test_bus_roles` runs the document's own block).
WATCHER_PUBLISH = [
    "$JS.API.INFO",
    "$JS.API.STREAM.INFO.*",
    "$JS.API.CONSUMER.CREATE.*",
    "$JS.API.CONSUMER.CREATE.*.>",
    "$JS.API.CONSUMER.INFO.*.*",
    "$JS.API.CONSUMER.DELETE.*.*",
    "$JS.API.DIRECT.GET.*",
    "$KV.agent-tui-names.*",
]


def quoted(subjects: list[str]) -> str:
    return ", ".join(f'"{subject}"' for subject in subjects)


def server_config(cert: Path, key: Path) -> str:
    return f"""
tls {{ cert_file: "{cert}", key_file: "{key}" }}
authorization {{
  users = [
    {{ user: host, password: "host-pa55", permissions: {{ publish: ">", subscribe: ">" }} }}
    {{ user: ana, password: "{OPERATOR_PASSWORD}", permissions: {{
        publish: {{ allow: ["agent-tui.*.control.ana", {quoted(WATCHER_PUBLISH)}],
                   deny: ["agent-tui.laptop.control.ana"] }}
        subscribe: {{ allow: ["_INBOX_ana.>", "agent-tui.*.notice"] }} }} }}
    {{ user: bob, password: "{BUILD_BOX_PASSWORD}", permissions: {{
        publish: {{ allow: ["agent-tui.build-box.control.bob", {quoted(WATCHER_PUBLISH)}] }}
        subscribe: {{ allow: ["_INBOX_bob.>", "agent-tui.*.notice"] }} }} }}
    {{ user: watch, password: "{WATCH_PASSWORD}", permissions: {{
        publish: {{ allow: [{quoted(WATCHER_PUBLISH)}] }}
        subscribe: {{ allow: ["agent-tui.*.notice", "_INBOX_watch.>"] }} }} }}
  ]
}}
"""


@dataclass
class Bus:
    server: NatsServer
    host: Client
    build_box: ControlResponder
    laptop: ControlResponder


@pytest.fixture
def secured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[NatsServer]:
    """The server, with TLS by a certificate authority of the test's own (trusted through
    `SSL_CERT_FILE`, as docs/remote.md says) and three users."""
    authority, cert, key = certificates(tmp_path / "certs")
    monkeypatch.setenv("SSL_CERT_FILE", str(authority))
    server = NatsServer(store=tmp_path / "store", config=server_config(cert, key))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def bus(secured: NatsServer) -> AsyncIterator[Bus]:
    """Two stand-in hosts (the `host` user) publishing the sample run, heartbeating, holding the
    names bucket as a host makes it, and answering control requests."""
    assert secured.url.startswith("tls://")
    host = await nats.connect(secured.url, user="host", password="host-pa55")
    js = host.jetstream()
    await ensure_stream(js)
    await bucket(js, NAMES_BUCKET, 60)
    await publish_lines(js, "build-box", log_lines(live_sample()))
    await heartbeat(js, "build-box", ttl=60)
    await heartbeat(js, "laptop", ttl=60)
    build_box, laptop = ControlResponder(host, "build-box"), ControlResponder(host, "laptop")
    await build_box.start()
    await laptop.start()
    try:
        yield Bus(secured, host, build_box, laptop)
    finally:
        await host.close()


def dashboard(server: NatsServer, user: str, password: str) -> AttachedBus:
    return AttachedBus(BusTarget(server.url, {"user": user, "password": password}), control_timeout=2.0)


async def test_a_watch_only_dashboard_reads_everything_and_knows_at_once_it_is_read_only(bus: Bus) -> None:
    watcher = dashboard(bus.server, "watch", WATCH_PASSWORD)
    await watcher.open()
    try:
        assert watcher.read_only  # known when `open` returns, before anything is asked
        assert watcher.control_refusal() == READ_ONLY
        assert watcher.control_refusal("build-box") == READ_ONLY
        assert not watcher.problems  # its name is held: the bucket may be written
    finally:
        await watcher.close()
    operator = dashboard(bus.server, "ana", OPERATOR_PASSWORD)
    await operator.open()
    try:
        assert not operator.read_only and operator.control_refusal("build-box") is None
        outcome = await operator.control.send("build-box", Stop(sessionId="sess_1"))
        assert outcome.answered and outcome.ok
    finally:
        await operator.close()


async def test_a_host_the_credentials_exclude_is_refused_by_name_and_the_others_are_not(bus: Bus) -> None:
    operator = dashboard(bus.server, "ana", OPERATOR_PASSWORD)
    await operator.open()
    try:
        await until(operator, lambda: operator.control_refusal("laptop") is not None, "the refusal heard")
        refusal = operator.control_refusal("laptop")
        assert refusal is not None and "may not control host laptop" in refusal
        assert "agent-tui.laptop.control" in refusal
        assert operator.control_refusal("build-box") is None and not operator.read_only
        assert not bus.laptop.requests
    finally:
        await operator.close()


async def test_an_operator_of_some_hosts_is_decided_host_by_host_and_is_not_read_only(bus: Bus) -> None:
    """Credentials that allow `agent-tui.build-box.control` only: refused on the dashboard's own
    control subject, which means "not everywhere", not "read-only"; each host is decided when it
    is first seen (the two present at `open` before it returns, a third when it heartbeats)."""
    operator = dashboard(bus.server, "bob", BUILD_BOX_PASSWORD)
    await operator.open()
    try:
        assert not operator.read_only and operator.control_refusal() is None
        assert operator.control_refusal("build-box") is None
        refusal = operator.control_refusal("laptop")
        assert refusal is not None and "may not control host laptop" in refusal
        outcome = await operator.control.send("build-box", Stop(sessionId="sess_1"))
        assert outcome.answered and outcome.ok
        assert [r.command.verb for r in bus.build_box.requests] == ["stop"]
        assert bus.build_box.probes == 1 and not bus.laptop.requests and not bus.laptop.probes
        await heartbeat(bus.host.jetstream(), "prod", ttl=60)
        await until(operator, lambda: operator.control_refusal("prod") is not None, "the new host decided")
        assert not operator.read_only
    finally:
        await operator.close()


async def test_a_watch_only_dashboard_attached_before_any_host_is_read_only_once_one_is_seen(
    secured: NatsServer,
) -> None:
    watcher = dashboard(secured, "watch", WATCH_PASSWORD)
    await watcher.open()
    try:
        assert not watcher.read_only  # no host to decide yet
        host = await nats.connect(secured.url, user="host", password="host-pa55")
        try:
            await heartbeat(host.jetstream(), "build-box", ttl=60)
            await until(watcher, lambda: watcher.read_only, "read-only once the host was decided")
            assert watcher.control_refusal("build-box") == READ_ONLY
        finally:
            await host.close()
    finally:
        await watcher.close()


async def test_a_hole_the_stream_cannot_fill_is_not_asked_of_a_host_the_dashboard_may_not_control(
    bus: Bus,
) -> None:
    lines = as_another_host(log_lines(live_sample()[:1]), b"sesx_")
    await publish_lines(bus.host.jetstream(), "shop", lines[:3] + lines[4:])
    await heartbeat(bus.host.jetstream(), "shop", ttl=60)
    shop = ControlResponder(bus.host, "shop")
    await shop.start()
    watcher = AttachedBus(
        BusTarget(bus.server.url, {"user": "watch", "password": WATCH_PASSWORD}), hole_grace=0
    )
    await watcher.open()
    try:
        await until(watcher, lambda: bool(watcher.problems), "the hole said")
        session_id = event_from_json(lines[0]).session_id
        assert watcher.problems == [
            f"session {session_id} of host shop: event 4 is not in the stream, and this dashboard is "
            f"read-only for host shop and cannot ask it to publish them again; {len(lines) - 4} later "
            "events held until the host publishes what is missing again"
        ]
        assert not shop.requests  # nothing was sent
    finally:
        await watcher.close()


async def test_the_read_only_dashboard_says_so_once_and_refuses_each_control_with_why(bus: Bus) -> None:
    app = AttachedApp(dashboard(bus.server, "watch", WATCH_PASSWORD))
    async with app.run_test(size=(120, 40)) as pilot:
        attached = app.attached
        await wait_for(
            pilot,
            lambda: attached.bus.is_open and attached.bus.live and bool(attached.state.sessions),
            "caught up",
        )
        await wait_for(pilot, lambda: "read-only" in app.dashboard.summary.mode, "the summary bar says so")
        told = [n for n in app.notices if n.title == "Read-only"]
        assert [n.message for n in told] == [READ_ONLY]
        running = next(sid for sid, s in attached.state.sessions.items() if s.status == "running")
        app.dashboard.stop_session(running)
        refused = await attached.send(FollowUp(sessionId=running, text="use the staging db"))
        assert (refused.ok, refused.message) == (False, READ_ONLY)
        await wait_for(
            pilot, lambda: any(n.message == READ_ONLY and n.title == "Stop" for n in app.notices), ""
        )
        view = attached.state.pending_permissions()[0]
        app.dashboard.open_approval(view.session_id, view.request_id)
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval dialog")
        assert isinstance(app.screen, ApprovalScreen) and not app.screen.answerable
        hint = str(app.screen.query_one("#approval-hint", Static).content)
        assert hint.startswith(READ_ONLY)
        assert len([n for n in app.notices if n.title == "Read-only"]) == 1  # said once
    assert not bus.build_box.requests and not bus.laptop.requests


async def test_credentials_from_the_config_files_variable_over_tls_and_a_wrong_one_without_it(
    bus: Bus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[bus]\nurl = "{bus.server.url}"\ncredentials_env = "BUS_LOGIN"\n')
    monkeypatch.setenv("AGENT_TUI_CONFIG", str(config))
    monkeypatch.delenv("AGENT_TUI_BUS", raising=False)
    monkeypatch.setenv("BUS_LOGIN", f"watch:{WATCH_PASSWORD}")
    target = resolve_target(None)
    assert WATCH_PASSWORD not in f"{target} {target!r}"
    watcher = AttachedBus(target)
    await watcher.open()
    try:
        assert watcher.read_only
    finally:
        await watcher.close()
    monkeypatch.setenv("BUS_LOGIN", "watch:not-the-password")
    with pytest.raises(BusUnreachable) as refused:
        await AttachedBus(resolve_target(None)).open()
    assert str(refused.value) == f"no bus at {bus.server.url}: the server refused the credentials"
    monkeypatch.delenv("SSL_CERT_FILE")  # a certificate nobody here trusts
    monkeypatch.setenv("BUS_LOGIN", f"watch:{WATCH_PASSWORD}")
    with pytest.raises(BusUnreachable) as untrusted:
        await AttachedBus(resolve_target(None)).open()
    assert str(untrusted.value).startswith(f"no bus at {bus.server.url}: ")
    assert WATCH_PASSWORD not in str(untrusted.value)
