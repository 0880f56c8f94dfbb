"""What the attached dashboard looks like (snapshots) with two hosts on a real JetStream server,
one of them unreachable: its line says since when, its sessions are marked.

    .venv/bin/python -m pytest tests/test_bus_attach_looks.py --snapshot-update   # accept new looks
"""

from __future__ import annotations

import asyncio
import fcntl
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import nats
import pytest
from support_bus import as_another_host, ensure_stream, heartbeat, live_sample, log_lines, publish_lines
from support_nats import NatsServer
from support_tui import snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import settle, wait_for
from textual.pilot import Pilot
from textual.widgets import Input, Static, TextArea

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusTarget
from agent_tui.bus.protocol import PRESENCE_BUCKET
from agent_tui.events import event_from_json
from agent_tui.reducer import epoch_ms
from agent_tui.tui.attached_app import AttachedApp
from agent_tui.tui.screens.new_agent import NewAgentScreen
from agent_tui.tui.widgets.session_tree import SessionTree

LOOKS_PORT = 24222
"""A fixed port, so the summary bar's URL is the same in every picture (ephemeral ports, which
the other tests' servers take, start far above it)."""


FORM_PORT = LOOKS_PORT + 1
"""The new-agent form's picture's own (it may be taken at the same time as another picture)."""


@pytest.fixture
def looks_server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[NatsServer]:
    port = FORM_PORT if "new_agent_form" in request.node.name else LOOKS_PORT
    # Pictures on one port are taken one at a time, whichever test workers take them.
    with open(Path(tempfile.gettempdir()) / f"agent-tui-looks-port-{port}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        server = NatsServer(store=tmp_path / "nats-store", port=port)
        server.start()
        try:
            asyncio.run(_two_hosts(server.url))
            yield server
        finally:
            server.stop()


async def _two_hosts(url: str) -> None:
    connection = await nats.connect(url)
    js = connection.jetstream()
    await ensure_stream(js)
    lines = log_lines(live_sample())
    await publish_lines(js, "build-box", lines)
    await publish_lines(js, "laptop", as_another_host(lines))
    await heartbeat(js, "build-box", ttl=120, cwd="/srv/build-box/shop")
    await heartbeat(js, "laptop", ttl=120)
    await connection.close()


def _newest_ms() -> int:
    lines = log_lines(live_sample())
    return max(epoch_ms(event_from_json(line).ts) or 0 for line in lines)


def _scene(server: NatsServer) -> tuple[AttachedApp, Callable[[Pilot], object]]:
    newest = _newest_ms()
    app = AttachedApp(
        AttachedBus(BusTarget(server.url)),
        clock=lambda: newest,
        time_text=lambda _moment: datetime.fromtimestamp(newest / 1000).strftime("%H:%M:%S"),
    )

    async def laptop_goes_quiet(pilot: Pilot) -> None:
        bus = app.attached.bus
        await wait_for(
            pilot, lambda: bus.is_open and bus.live and len(bus.state.sessions) == 14, "both hosts", 30
        )
        await wait_for(
            pilot, lambda: all(h.presence for h in bus.hosts()) and len(bus.hosts()) == 2, "heartbeats", 30
        )
        connection = await nats.connect(server.url)
        kv = await connection.jetstream().key_value(PRESENCE_BUCKET)
        await kv.purge("laptop")  # the server's marker when the heartbeat's TTL ran out
        await connection.close()
        await wait_for(pilot, lambda: not bus.host("laptop").reachable, "laptop unreachable", 30)
        tree = app.dashboard.query_one("#tree", SessionTree)
        await wait_for(
            pilot,
            lambda: any("unreachable since" in str(node.label) for node in tree.root.children),
            "the tree says so",
            30,
        )
        app.dashboard.select_session(next(iter(sorted(bus.state.sessions))))
        await pilot.pause()

    return app, laptop_goes_quiet


def test_two_hosts_one_unreachable_80x24(snap_compare: Callable[..., bool], looks_server: NatsServer) -> None:
    app, before = _scene(looks_server)
    assert snap_compare(app, terminal_size=(80, 24), run_before=before)


def test_two_hosts_one_unreachable_120x40(
    snap_compare: Callable[..., bool], looks_server: NatsServer
) -> None:
    app, before = _scene(looks_server)
    assert snap_compare(app, terminal_size=(120, 40), run_before=before)


def test_the_new_agent_form_offers_the_picked_hosts_own_directory_100x30(
    snap_compare: Callable[..., bool], looks_server: NatsServer
) -> None:
    """Not this process's directory, which means nothing on another machine: build-box's own
    (`serve --cwd`, as its presence says it)."""
    app = AttachedApp(AttachedBus(BusTarget(looks_server.url)))

    async def open_the_form(pilot: Pilot) -> None:
        bus = app.attached.bus
        await wait_for(
            pilot, lambda: bus.is_open and bus.live and len(bus.state.sessions) == 14, "both hosts", 30
        )
        await wait_for(pilot, lambda: len(app.attached.agent_hosts()[0]) == 2, "both hosts present", 30)
        app.dashboard.select_session(next(s for s in sorted(bus.state.sessions) if s.startswith("sess_")))
        await settle(pilot)  # the session's transcript drawn and scrolled behind the form
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)
        app.dashboard.session_tree.focus()
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, NewAgentScreen), "the new-agent form", 30)
        form = app.screen
        await wait_for(
            pilot, lambda: "host checks it" in str(form.query_one("#new-agent-repo", Static).content), ""
        )
        for box in form.query(Input):
            box.cursor_blink = False  # a blink is not a look
        form.query_one(TextArea).cursor_blink = False
        await settle(pilot)

    assert snap_compare(app, terminal_size=(100, 30), run_before=open_the_form)
