"""The attached dashboard driven by Pilot against a real JetStream server: sessions under their
hosts, one approval queue for every host, each control a request to the right host's control
subject, an unreachable host and a lost bus said on screen, and a quit that stops nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import nats
import pytest
from nats.aio.client import Client
from support_bus import (
    SAMPLE,
    ControlResponder,
    as_another_host,
    ensure_stream,
    heartbeat,
    live_sample,
    log_lines,
    publish_lines,
)
from support_nats import NatsServer, nats_server
from support_workbench import wait_for
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static

from agent_tui.bus.attach import AttachedBus
from agent_tui.bus.attach_target import BusTarget
from agent_tui.bus.protocol import ControlReply, ControlRequest
from agent_tui.runtime.commands import Answer, FollowUp, NewAgent, StopAll, StopSubtree
from agent_tui.tui.attached_app import AttachedApp
from agent_tui.tui.screens.approval import ApprovalScreen
from agent_tui.tui.screens.confirm import ConfirmScreen
from agent_tui.tui.screens.new_agent import NewAgentScreen
from agent_tui.tui.widgets.session_tree import SessionTree

__all__ = ["nats_server"]

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


@dataclass
class Hosts:
    connection: Client
    build_box: ControlResponder
    laptop: ControlResponder


@pytest.fixture
async def hosts(nats_server: NatsServer) -> AsyncIterator[Hosts]:
    """Two stand-in hosts: build-box runs the sample run cut mid-way, laptop the same under
    other session ids; both heartbeat (a long TTL) and answer control requests."""
    connection = await nats.connect(nats_server.url)
    js = connection.jetstream()
    await ensure_stream(js)
    lines = log_lines(live_sample())
    await publish_lines(js, "build-box", lines)
    await publish_lines(js, "laptop", as_another_host(lines))
    await heartbeat(js, "build-box", ttl=60)
    await heartbeat(js, "laptop", ttl=60, cwd="/home/ana/shop")
    build_box = ControlResponder(connection, "build-box")
    laptop = ControlResponder(connection, "laptop")
    await build_box.start()
    await laptop.start()
    try:
        yield Hosts(connection, build_box, laptop)
    finally:
        await connection.close()


def attached_app(server: NatsServer, **options: float) -> AttachedApp:
    return AttachedApp(AttachedBus(BusTarget(server.url), control_timeout=options.get("timeout", 5.0)))


async def caught_up(pilot: Pilot, app: AttachedApp) -> None:
    bus = app.attached.bus
    await wait_for(
        pilot, lambda: bus.is_open and bus.live and len(bus.state.sessions) == 14, "both hosts' sessions"
    )
    await wait_for(
        pilot, lambda: len(bus.hosts()) == 2 and all(h.presence for h in bus.hosts()), "both heartbeats"
    )
    await wait_for(pilot, lambda: app.dashboard.session_tree.grouping is not None, "the tree grouped by host")
    await wait_for(pilot, lambda: len(tree_lines(app)) > 14, "the tree drawn with its host lines")
    # The tree takes the heartbeats in at its next redraw, which may come after the bus has them.
    await wait_for(
        pilot,
        lambda: not any("no heartbeat" in line for line in tree_lines(app)),
        "the host lines drawn with their heartbeats",
    )


def tree_lines(app: AttachedApp) -> list[str]:
    tree = app.dashboard.query_one("#tree", SessionTree)
    lines: list[str] = []

    def walk(node: object, depth: int) -> None:
        for child in node.children:  # type: ignore[attr-defined]
            lines.append("  " * depth + child.label.plain)
            walk(child, depth + 1)

    walk(tree.root, 0)
    return lines


async def test_sessions_are_listed_under_their_hosts(nats_server: NatsServer, hosts: Hosts) -> None:
    app = attached_app(nats_server)
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot, app)
        lines = tree_lines(app)
        assert lines[0] == "build-box"
        assert "laptop" in lines
        laptop_at = lines.index("laptop")
        assert all(line.startswith("  ") for line in lines[1:laptop_at])
        assert len(app.dashboard.state.pending_permissions()) == 4  # both hosts' requests, one queue
        assert "attached · nats://127.0.0.1" in app.dashboard.summary.mode


def queue_entries(app: AttachedApp) -> list[str]:
    queue = app.dashboard.queue
    return [str(queue.get_option_at_index(i).prompt) for i in range(queue.option_count)]


async def test_an_answer_goes_to_the_host_of_the_request(nats_server: NatsServer, hosts: Hosts) -> None:
    app = attached_app(nats_server)
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot, app)
        pending = app.dashboard.state.pending_permissions()
        await wait_for(
            pilot, lambda: any(" on laptop " in e for e in queue_entries(app)), "hosts in the queue"
        )
        firsts = [entry.splitlines()[0] for entry in queue_entries(app)]
        assert (
            sorted(line.split(" on ")[1].split()[0] for line in firsts) == ["build-box"] * 2 + ["laptop"] * 2
        )
        laptop_request = next(v for v in pending if v.session_id.startswith("sesl_"))
        app.dashboard.select_session(laptop_request.session_id)
        app.dashboard.open_approval(laptop_request.session_id, laptop_request.request_id)
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval dialog")
        path_line = str(app.screen.query_one("#approval-path", Static).content)
        assert path_line.startswith("asked by ") and path_line.endswith(" on laptop")
        await pilot.press("s")  # allow for this session
        request = await hosts.laptop.next_request(1)
        assert request.command == Answer(
            sessionId=laptop_request.session_id,
            requestId=laptop_request.request_id,
            decision="allow",
            remember="session",
        )
        assert request.by.dashboard == app.attached.bus.name
        assert not hosts.build_box.requests


async def test_a_refused_answer_says_who_answered_first(nats_server: NatsServer, hosts: Hosts) -> None:
    async def already(request: ControlRequest) -> ControlReply:
        return ControlReply(id=request.id, ok=False, message="already answered by phone (ana) at 22:17:31")

    hosts.build_box.reply = already
    app = attached_app(nats_server)
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot, app)
        view = next(v for v in app.dashboard.state.pending_permissions() if v.session_id.startswith("sess_"))
        app.dashboard.open_approval(view.session_id, view.request_id)
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval dialog")
        await pilot.press("n")
        await hosts.build_box.next_request(1)
        await wait_for(
            pilot, lambda: any("already answered by phone" in n.message for n in app.notices), "the notice"
        )


async def test_stop_subtree_and_stop_all_ask_the_hosts(nats_server: NatsServer, hosts: Hosts) -> None:
    app = attached_app(nats_server)
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot, app)
        state = app.dashboard.state
        running_root = next(
            sid
            for sid in state.roots()
            if sid.startswith("sess_") and state.sessions[sid].status == "running"
        )
        app.dashboard.select_session(running_root)
        await pilot.pause()
        app.dashboard.session_tree.focus()
        await pilot.press("x")
        request = await hosts.build_box.next_request(1)
        assert request.command == StopSubtree(sessionId=running_root)
        await pilot.press("X")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "stop all asks first")
        await pilot.press("y")
        assert (await hosts.build_box.next_request(2)).command == StopAll()
        assert (await hosts.laptop.next_request(1)).command == StopAll()


async def test_the_composer_steers_a_running_session_on_its_host(
    nats_server: NatsServer, hosts: Hosts
) -> None:
    app = attached_app(nats_server)
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot, app)
        state = app.dashboard.state
        running = next(
            sid
            for sid in state.sessions
            if sid.startswith("sesl_") and state.sessions[sid].status == "running"
        )
        app.dashboard.select_session(running)
        await pilot.pause()
        await pilot.press("i")
        await pilot.press(*"use the staging db")
        await pilot.press("enter")
        request = await hosts.laptop.next_request(1)
        # The host steers a running turn with a follow-up (`follow_up` is steer-or-start there).
        assert request.command == FollowUp(sessionId=running, text="use the staging db")


async def test_a_host_that_does_not_answer_is_said_and_the_retry_is_the_same_request(
    nats_server: NatsServer, hosts: Hosts
) -> None:
    hosts.build_box.silent = 1
    app = attached_app(nats_server, timeout=0.5)
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot, app)
        state = app.dashboard.state
        running_root = next(
            sid
            for sid in state.roots()
            if sid.startswith("sess_") and state.sessions[sid].status == "running"
        )
        app.dashboard.select_session(running_root)
        await pilot.pause()
        app.dashboard.session_tree.focus()
        await pilot.press("x")
        first = await hosts.build_box.next_request(1)
        await wait_for(
            pilot, lambda: any("did not answer" in n.message for n in app.notices), "the timeout said"
        )
        await pilot.press("x")
        again = await hosts.build_box.next_request(2)
        assert again.id == first.id


async def test_an_unreachable_host_is_marked_and_its_sessions_refuse_controls(
    nats_server: NatsServer, hosts: Hosts
) -> None:
    app = attached_app(nats_server)
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot, app)
        kv = await hosts.connection.jetstream().key_value("agent-tui-hosts")
        await kv.purge("laptop")  # what the server says when the heartbeat's TTL ran out (a purge marker)
        await wait_for(
            pilot,
            lambda: any(line.startswith("laptop · unreachable since") for line in tree_lines(app)),
            "laptop unreachable",
        )
        assert any("host unreachable" in line for line in tree_lines(app))
        assert not any(
            "host unreachable" in line for line in tree_lines(app)[: tree_lines(app).index("build-box") + 2]
        )
        state = app.dashboard.state
        laptop_running = next(
            sid
            for sid in state.sessions
            if sid.startswith("sesl_") and state.sessions[sid].status == "running"
        )
        app.dashboard.stop_session(laptop_running)
        await wait_for(
            pilot, lambda: any("Host laptop is unreachable" in n.message for n in app.notices), "refused"
        )
        assert not hosts.laptop.requests


async def test_a_lost_bus_is_said_then_it_catches_up(nats_server: NatsServer, hosts: Hosts) -> None:
    app = attached_app(nats_server)
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot, app)
        nats_server.stop()
        await wait_for(
            pilot, lambda: app.dashboard.summary_error.startswith("bus disconnected since"), "said", 30
        )
        nats_server.start()
        connection = await nats.connect(nats_server.url)
        await publish_lines(
            connection.jetstream(), "build-box", as_another_host(log_lines(live_sample())[:7], b"sesn_")
        )
        await connection.close()
        await wait_for(pilot, lambda: app.dashboard.summary_error == "", "the bus back", 30)
        await wait_for(
            pilot, lambda: len(app.dashboard.state.sessions) == 15, "the new session caught up", 30
        )


async def test_quitting_stops_nothing(nats_server: NatsServer, hosts: Hosts) -> None:
    app = attached_app(nats_server)
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot, app)
        assert app.dashboard.state.running_count() > 0
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running or app.attached.finished, "the app gone")
    assert app.return_code == 0
    await asyncio.sleep(0)
    assert not hosts.build_box.requests and not hosts.laptop.requests


async def test_the_new_agent_form_picks_the_host_the_selected_session_runs_on_or_another(
    nats_server: NatsServer, hosts: Hosts
) -> None:
    app = attached_app(nats_server)
    async with app.run_test(size=SIZE) as pilot:
        await caught_up(pilot, app)
        laptop_session = next(sid for sid in app.dashboard.state.roots() if sid.startswith("sesl_"))
        app.dashboard.select_session(laptop_session)
        await pilot.pause()
        app.dashboard.session_tree.focus()
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, NewAgentScreen), "the new-agent form")
        form = app.screen
        assert isinstance(form, NewAgentScreen)
        picker = form.query_one("#new-agent-host", Select)
        assert picker.value == "laptop"  # the selected session's host first
        assert "the host checks it" in str(form.query_one("#new-agent-repo", Static).content)
        directory = form.query_one("#new-agent-dir", Input)
        assert directory.value == "/home/ana/shop"  # the laptop's own, not this process's
        picker.value = "build-box"  # a host that does not say its directory
        await wait_for(pilot, lambda: directory.value == "", "the directory follows the host")
        assert directory.placeholder == "the host's own directory"
        await pilot.press(*"count the todos")
        await pilot.press("ctrl+s")
        request = await hosts.build_box.next_request(1)
        assert isinstance(request.command, NewAgent) and request.command.prompt == "count the todos"
        assert request.command.cwd == "."  # the host's own
        assert not hosts.laptop.requests


async def test_hosts_gone_with_everything_ended_are_one_finished_line_at_the_end(
    nats_server: NatsServer, hosts: Hosts
) -> None:
    """Two finished `run --bus` hosts (their whole runs in the stream, no heartbeat any more) sit
    under one line after the live hosts, their ended sessions not marked "host unreachable"; a
    host that goes silent while its sessions run keeps its own line and its marks."""
    js = hosts.connection.jetstream()
    complete = log_lines(sorted((SAMPLE / "complete").glob("*.jsonl")))
    await publish_lines(js, "box-run-1a2b", as_another_host(complete, b"sesa_"))
    await publish_lines(js, "box-run-3c4d", as_another_host(complete, b"sesb_"))
    app = attached_app(nats_server)
    async with app.run_test(size=SIZE) as pilot:
        bus = app.attached.bus
        await wait_for(
            pilot, lambda: bus.is_open and bus.live and len(bus.state.sessions) == 14 + 2 * 7, "all"
        )
        expected = ["build-box", "laptop", "finished · 2 hosts gone"]
        await wait_for(pilot, lambda: heads_of(tree_lines(app)) == expected, "the finished hosts grouped")
        lines = tree_lines(app)
        heads = heads_of(lines)
        under = lines[lines.index(heads[-1]) + 1 :]
        assert (
            sum(1 for line in under if line.startswith("  ") and not line.startswith("    ")) == 2 * 5
        )  # roots
        assert not any("host unreachable" in line or "host left" in line for line in under)
        tree = app.dashboard.session_tree
        finished = tree.root.children[-1]
        assert not finished.is_expanded  # one line, however many runs ended
        assert tree.selected_id is not None and not tree.selected_id.startswith(("sesa_", "sesb_"))
        ended = next(sid for sid in bus.state.sessions if sid.startswith("sesa_"))
        assert tree.select_session(ended)  # jumping to one of them unfolds the line
        assert tree.root.children[-1].is_expanded
        kv = await js.key_value("agent-tui-hosts")
        await kv.purge("laptop")  # silent, with sessions running: not finished
        await wait_for(
            pilot,
            lambda: any(line.startswith("laptop · unreachable since") for line in tree_lines(app)),
            "laptop",
        )
        heads = heads_of(tree_lines(app))
        assert heads[-1] == "finished · 2 hosts gone" and heads[1].startswith("laptop · unreachable")
        assert tree.root.children[-1].is_expanded  # the user's unfolding outlives a new layout
        assert any("host unreachable" in line for line in tree_lines(app))


def heads_of(lines: list[str]) -> list[str]:
    """The tree's top lines: its host lines."""
    return [line for line in lines if not line.startswith(" ")]
