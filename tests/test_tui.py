"""The Textual dashboard: what a user sees (snapshots), and what their keys do (behaviour).

Snapshots read the fixture logs in `tests/sample-logs/` (fixed ids and times, see its
`regenerate.py`), so they are byte-stable. Behaviour tests drive real things: a real
`SessionEngine` running a scenario that waits on approvals, real log files in `tmp_path`.

    /tmp/venv/bin/python -m pytest tests/test_tui.py                     # check
    /tmp/venv/bin/python -m pytest tests/test_tui.py --snapshot-update   # accept new looks
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import orjson
import pytest
from rich.text import Text
from support_tui import Scene, detail_text, park_pending, snap, snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import repainted, wait_for
from textual.pilot import Pilot
from textual.widgets import Static

from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events import Event
from agent_tui.replay.sources import replay_all
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.live import LiveRun
from agent_tui.tui.replay_app import ReplayApp
from agent_tui.tui.screens.approval import ApprovalScreen
from agent_tui.tui.screens.confirm import ConfirmScreen
from agent_tui.tui.screens.replay import TICKS_PER_SECOND, ReplayScreen
from agent_tui.tui.widgets.session_tree import SessionTree

SAMPLES = Path(__file__).parent / "sample-logs"
LIVE_LOGS = SAMPLES / "live"
COMPLETE_LOGS = SAMPLES / "complete"


@pytest.fixture(autouse=True)
def _utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC: the pictures show the turns' clock times."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


# -- the app states snapshots and screenshots share -------------------------------------------


def sample_events(name: str) -> list[Event]:
    return list(replay_all(SAMPLES / name))


def dashboard_app() -> AgentTuiApp:
    """Seven sessions mid-run: lead waits on a destructive mv, a nested helper on a shell call."""
    return AgentTuiApp(events=sample_events("live"), live=False)


def replay_app() -> ReplayApp:
    """The whole fixture run in the scrubber (it opens at the end)."""
    return ReplayApp(sorted(COMPLETE_LOGS.glob("*.jsonl")))


def corrupt_logs(directory: Path) -> Path:
    """The fixture run copied to `directory` with line 10 of the lead's log not JSON; returns
    that log."""
    for path in COMPLETE_LOGS.glob("*.jsonl"):
        shutil.copy(path, directory / path.name)
    victim = directory / sorted(p.name for p in COMPLETE_LOGS.glob("*.jsonl"))[2]
    lines = victim.read_bytes().splitlines(keepends=True)
    lines[9] = b'{"v":1, this is not json\n'
    victim.write_bytes(b"".join(lines))
    return victim


def corrupt_replay_app() -> ReplayApp:
    """The fixture run with a corrupt line, from a scratch directory (removed at exit); what the
    screen shows names files, not their directory, so the picture does not depend on it."""
    directory = Path(tempfile.mkdtemp(prefix="agent-tui-corrupt-"))
    atexit.register(shutil.rmtree, directory, True)
    corrupt_logs(directory)
    return ReplayApp(sorted(directory.glob("*.jsonl")))


def indexing_replay_app() -> ReplayApp:
    """The fixture run, its indexing held after 60 of its 182 events."""
    return ReplayApp(sorted(COMPLETE_LOGS.glob("*.jsonl")), pause_indexing_after=60)


async def settle(pilot: Pilot) -> None:
    """Let workers, timers and refreshes finish (the replay loads in a thread)."""
    await pilot.pause()
    screen = pilot.app.screen_stack[0]
    if isinstance(pilot.app, ReplayApp):
        # Not `timeline`: the loading thread sets it before the screen has shown it.
        await wait_for(pilot, lambda: bool(getattr(screen, "loaded", False)), "the replay to load")
    # Then the refresh that shows it, and what that refresh asked for (the detail's scroll).
    await repainted(pilot)
    await repainted(pilot)


def press(*keys: str) -> Callable[[Pilot], Awaitable[None]]:
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await settle(pilot)

    return run_before


def arm(pilot: Pilot) -> LiveRun:
    """Make the fixture dashboard live-like: a (not started) run whose questions wait on every
    pending approval of the fixture, as the engine's would; so the approval modal has buttons and
    the stop keys act."""
    app = pilot.app
    assert isinstance(app, AgentTuiApp)
    screen = app.dashboard
    live = LiveRun(SAMPLES / "scenario.json", SAMPLES / "unused", app.post_message)
    park_pending(live, screen.state)
    screen.live = live
    return live


def armed_then(*keys: str) -> Callable[[Pilot], Awaitable[None]]:
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        arm(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await settle(pilot)

    return run_before


def filtered(query: str) -> Callable[[Pilot], Awaitable[None]]:
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("slash", *query, "enter")
        screen = pilot.app.screen_stack[0]
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.cursor.matches is not None, "the filter")
        await settle(pilot)

    return run_before


async def on_the_corrupt_line(pilot: Pilot) -> None:
    """At the corrupt line (reached with `e`), its notification dismissed."""
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, ReplayApp)
    timeline = app.replay.timeline
    assert timeline is not None
    app.clear_notifications()
    await pilot.press("home")
    for _ in timeline.marks["failure"]:
        await pilot.press("e")
        if app.replay.position == timeline.errors[0][0] + 1:
            break
    await settle(pilot)


async def held_indexing(pilot: Pilot) -> None:
    """The first look at the end while indexing is held at 60 events: the progress bar shows."""
    app = pilot.app
    assert isinstance(app, ReplayApp)
    await wait_for(
        pilot, lambda: app.replay.cursor.previewing and app.replay.scrubber.indexed == 60, "indexing"
    )
    await repainted(pilot)  # the progress bar drawn
    await repainted(pilot)


async def notices_listed(pilot: Pilot) -> None:
    """Two notices, one far wider than the screen, then `N`: both whole, newest first."""
    await settle(pilot)
    pilot.app.notify("Stopped alpha and 1 agent it spawned.", title="Stop")
    pilot.app.notify(
        "sess_7f3a9c2e.jsonl:18: a torn final line (4,212 bytes without a newline) was left out; the "
        "session's last turn never completed, so it shows as running until its writer comes back",
        severity="warning",
    )
    await pilot.press("N")
    await settle(pilot)


async def palette_searched(pilot: Pilot) -> None:
    """`ctrl+p`, then `jump` typed: once the palette's search (a worker of its own) has gathered
    every hit, however long a loaded machine takes."""
    await press("ctrl+p", *"jump")(pilot)
    palette = pilot.app.screen
    await pilot.app.workers.wait_for_complete([w for w in pilot.app.workers if w.node is palette])
    await settle(pilot)


SCENES: dict[str, Scene] = {
    "dashboard_80x24": Scene(dashboard_app, (80, 24), press()),
    "dashboard_120x40": Scene(dashboard_app, (120, 40), press()),
    "dashboard_200x50": Scene(dashboard_app, (200, 50), press()),
    "dashboard_nested_helper": Scene(dashboard_app, (100, 30), press("down", "down")),
    "approval": Scene(dashboard_app, (100, 30), armed_then("a", "enter")),
    "approval_recorded": Scene(dashboard_app, (100, 30), press("a", "down", "enter")),
    "help": Scene(dashboard_app, (100, 30), press("question_mark")),
    "stop_all_confirm": Scene(dashboard_app, (100, 30), armed_then("X")),
    "quit_confirm": Scene(dashboard_app, (100, 30), armed_then("q")),
    "command_palette": Scene(dashboard_app, (100, 30), palette_searched),
    "notices": Scene(dashboard_app, (80, 24), notices_listed),
    "replay_start": Scene(replay_app, (100, 30), press("home")),
    "replay_middle": Scene(replay_app, (100, 30), press("home", "pagedown", "right", "right")),
    "replay_end": Scene(replay_app, (100, 30), press()),
    "replay_filter": Scene(replay_app, (100, 30), filtered("tool:shell")),
    "replay_goto_typing": Scene(replay_app, (100, 30), press("g", *"22:17")),
    "replay_corrupt": Scene(corrupt_replay_app, (100, 30), on_the_corrupt_line),
    "replay_indexing": Scene(indexing_replay_app, (100, 30), held_indexing),
}
"""Also read by scripts/screenshots.py, so the README's pictures are these exact states."""


# -- snapshots ---------------------------------------------------------------------------------


class TestDashboardLooks:
    def test_80x24_stays_readable(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["dashboard_80x24"])

    def test_120x40(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["dashboard_120x40"])

    def test_200x50_puts_the_queue_in_a_third_column(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["dashboard_200x50"])

    def test_nested_sub_agent_selected(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["dashboard_nested_helper"])


class TestApprovalModalLooks:
    def test_destructive_request_shows_its_warning(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["approval"])

    def test_a_recorded_request_only_shows(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["approval_recorded"])


class TestHelpLooks:
    def test_help_screen(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["help"])


class TestStopAllLooks:
    def test_stop_all_asks_first(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["stop_all_confirm"])


class TestQuitLooks:
    def test_quit_with_agents_running_asks_first(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["quit_confirm"])


class TestCommandPaletteLooks:
    def test_palette_finds_sessions(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["command_palette"])


class TestNoticesLooks:
    def test_notices_are_listed_whole(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["notices"])


class TestReplayLooks:
    def test_at_start(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["replay_start"])

    def test_in_the_middle(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["replay_middle"])

    def test_at_end(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["replay_end"])

    def test_a_filter_marks_its_matches_on_the_bar(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["replay_filter"])

    def test_the_go_to_box_shows_what_is_typed(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["replay_goto_typing"])

    def test_a_corrupt_line_is_marked_and_named(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["replay_corrupt"])

    def test_while_indexing_a_progress_bar_shows(self, snap_compare) -> None:
        assert snap(snap_compare, SCENES["replay_indexing"])


# -- a live engine waiting on approvals --------------------------------------------------------

WAITING_SCENARIO = {
    "maxContextTokens": 8000,
    "policy": {
        "byTool": {"spawn_agent": "allow", "wait_agent": "allow"},
        "byRisk": {"read": "allow", "write": "ask", "execute": "ask", "network": "ask", "destructive": "ask"},
    },
    "sessions": [
        {
            "title": "alpha",
            "agentName": "alpha",
            "cwd": "ws",
            "prompt": "Delegate a write.",
            "steps": [
                {
                    "text": ["Spawning."],
                    "toolCalls": [
                        {"tool": "spawn_agent", "args": {"agentName": "child", "prompt": "Write it."}}
                    ],
                },
                {"text": ["Waiting."], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
                {"text": ["Done."]},
            ],
        },
        {
            "title": "gamma",
            "agentName": "gamma",
            "cwd": "ws",
            "startDelayMs": 50,
            "prompt": "Write a note.",
            "steps": [
                {
                    "text": ["Writing."],
                    "toolCalls": [{"tool": "write_file", "args": {"path": "note.txt", "content": "hi\n"}}],
                },
                {"text": ["Wrote it."]},
            ],
        },
    ],
    "agents": {
        "child": {
            "steps": [
                {
                    "text": ["Writing."],
                    "toolCalls": [{"tool": "write_file", "args": {"path": "child.txt", "content": "x\n"}}],
                },
                {"text": ["Child done."]},
            ]
        },
    },
}


@pytest.fixture
def waiting_app(tmp_path: Path) -> AgentTuiApp:
    """A live dashboard whose run parks on two approvals (the child's and gamma's writes)."""
    (tmp_path / "ws").mkdir()
    scenario = tmp_path / "scenario.json"
    scenario.write_bytes(orjson.dumps(WAITING_SCENARIO))
    return AgentTuiApp(
        scenario_path=scenario,
        sessions_dir=tmp_path / "sessions",
        workspace_root=tmp_path / "scratch",
    )


def live_of(app: AgentTuiApp) -> LiveRun:
    assert app.live is not None
    return app.live


def session_named(app: AgentTuiApp, name: str) -> str:
    state = live_of(app).state
    return next(sid for sid, s in state.sessions.items() if s.display_name == name)


def stop_reasons(app: AgentTuiApp) -> dict[str, str | None]:
    state = live_of(app).state
    return {s.display_name: s.turns[-1].stop_reason for s in state.sessions.values() if s.turns}


async def two_waiting(pilot: Pilot) -> None:
    app = pilot.app
    assert isinstance(app, AgentTuiApp)
    await wait_for(pilot, lambda: len(live_of(app).questions.waiting()) == 2, "two approvals")
    await wait_for(pilot, lambda: app.dashboard.queue.count == 2, "the queue to show both")


@pytest.mark.anyio
class TestApprovals:
    @pytest.mark.parametrize(
        ("key", "expected"),
        [
            ("y", PermissionAnswer("allow", "once")),
            ("s", PermissionAnswer("allow", "session")),
            ("exclamation_mark", PermissionAnswer("allow", "always")),
            ("n", PermissionAnswer("deny", "once")),
        ],
    )
    async def test_answer_reaches_the_engine(
        self, waiting_app: AgentTuiApp, key: str, expected: PermissionAnswer
    ) -> None:
        app = waiting_app
        async with app.run_test(size=(100, 30)) as pilot:
            await two_waiting(pilot)
            oldest = app.dashboard.queue.first()
            assert oldest is not None
            questions = live_of(app).questions
            assert questions.request(oldest.session_id, oldest.request_id) is not None
            resolved: list[Event] = []
            live_of(app).observers.append(resolved.append)
            await pilot.press("a", "enter")
            assert isinstance(app.screen, ApprovalScreen)
            assert app.screen.key == (oldest.session_id, oldest.request_id)
            await pilot.press(key)

            def answered() -> dict | None:
                return next(
                    (
                        e.payload
                        for e in resolved
                        if e.type == "permission.resolved" and e.payload["requestId"] == oldest.request_id
                    ),
                    None,
                )

            await wait_for(pilot, lambda: answered() is not None, "the answer")
            payload = answered()
            assert payload is not None
            assert (payload["decision"], payload["actor"], payload["remember"]) == (
                expected.decision,
                "user",
                expected.remember,
            )
            await wait_for(pilot, lambda: app.dashboard.queue.count == 1, "the entry to leave")
            await pilot.press("q")

    async def test_a_twice_answers_one_request_after_another(self, waiting_app: AgentTuiApp) -> None:
        # The toast says "a, then a or enter": `a` goes to the queue, `a` again opens the
        # highlighted request; after an answer the same two keys reach the next one.
        app = waiting_app
        async with app.run_test(size=(100, 30)) as pilot:
            await two_waiting(pilot)
            questions = live_of(app).questions
            await pilot.press("a")
            assert app.dashboard.queue.has_focus and not isinstance(app.screen, ApprovalScreen)
            for remaining in (1, 0):
                oldest = app.dashboard.queue.first()
                assert oldest is not None
                await pilot.press("a")
                assert isinstance(app.screen, ApprovalScreen)
                assert app.screen.key == (oldest.session_id, oldest.request_id)
                await pilot.press("y")

                def landed(r: int = remaining) -> bool:
                    return len(questions.waiting()) == r and app.dashboard.queue.count == r

                await wait_for(
                    pilot,
                    landed,
                    "the answer to land and the queue to show it",
                )
            await pilot.press("q")

    async def test_escape_closes_without_answering(self, waiting_app: AgentTuiApp) -> None:
        app = waiting_app
        async with app.run_test(size=(100, 30)) as pilot:
            await two_waiting(pilot)
            await pilot.press("a", "enter")
            assert isinstance(app.screen, ApprovalScreen)
            await pilot.press("escape")
            assert not isinstance(app.screen, ApprovalScreen)
            assert len(live_of(app).questions.waiting()) == 2
            await pilot.press("q")

    async def test_a_withdrawn_request_leaves_the_queue_and_closes_its_modal(
        self, waiting_app: AgentTuiApp
    ) -> None:
        app = waiting_app
        async with app.run_test(size=(100, 30)) as pilot:
            await two_waiting(pilot)
            await pilot.press("a", "enter")
            modal = app.screen
            assert isinstance(modal, ApprovalScreen)
            session_id = modal.view.session_id
            run = live_of(app).run
            assert run is not None
            assert run.engine.cancel_turn(session_id)
            await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen), "the modal to close")
            keys = {(v.session_id, v.request_id) for v in live_of(app).state.pending_permissions()}
            assert modal.key not in keys
            assert app.dashboard.queue.count == 1
            assert any("withdrawn" in n.message for n in app.notices)
            await pilot.press("q")


@pytest.mark.anyio
class TestStop:
    async def test_x_stops_the_selected_agent_and_what_it_spawned(self, waiting_app: AgentTuiApp) -> None:
        app = waiting_app
        async with app.run_test(size=(100, 30)) as pilot:
            await two_waiting(pilot)
            alpha = session_named(app, "alpha")
            app.dashboard.select_session(alpha)
            await pilot.pause()
            await pilot.press("x")
            await wait_for(
                pilot,
                lambda: (
                    stop_reasons(app).get("alpha") == "cancelled"
                    and stop_reasons(app).get("child") == "cancelled"
                ),
                "alpha and its child to end",
            )
            assert stop_reasons(app)["gamma"] is None  # still waiting on its approval
            assert [r.agent_path for r in live_of(app).questions.waiting()] == [("gamma",)]
            assert any(n.message == "Stopped alpha and 1 agent it spawned." for n in app.notices)
            await pilot.press("q")

    async def test_quit_ends_every_running_turn_in_the_log(
        self, waiting_app: AgentTuiApp, tmp_path: Path
    ) -> None:
        app = waiting_app
        async with app.run_test(size=(100, 30)) as pilot:
            await two_waiting(pilot)
            await pilot.press("q")  # agents run and requests wait: it asks first, as X does
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
            question = str(app.screen.query_one("#confirm-question", Static).render())
            assert question.startswith("3 agents are running and 2 requests are waiting.")
            await pilot.press("n")  # staying stops nothing
            assert not isinstance(app.screen, ConfirmScreen) and app.is_running
            assert stop_reasons(app)["alpha"] is None
            await pilot.press("q", "y")
            await pilot.pause()
        ends = {}
        for path in (tmp_path / "sessions").glob("*.jsonl"):
            events = [orjson.loads(line) for line in path.read_bytes().splitlines()]
            name = events[0]["payload"]["agentName"]
            ends[name] = [e["payload"]["stopReason"] for e in events if e["type"] == "turn.completed"]
        assert ends == {"alpha": ["cancelled"], "child": ["cancelled"], "gamma": ["cancelled"]}


def cursor_spans(tree: SessionTree) -> str:
    """The styles of the tree's cursor row label (a `Text`: the tree builds its labels so)."""
    node = tree.cursor_node
    assert node is not None and isinstance(node.label, Text)
    return str(node.label.spans)


@pytest.mark.anyio
class TestThemes:
    async def test_a_theme_change_recolours_the_tree(self) -> None:
        app = dashboard_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            tree = app.dashboard.session_tree
            before = tree.get_component_rich_style("session-tree--running", partial=True)
            label_before = cursor_spans(tree)
            app.theme = "textual-light"
            await settle(pilot)
            await repainted(pilot, tree)
            after = tree.get_component_rich_style("session-tree--running", partial=True)
            assert after.color != before.color
            assert cursor_spans(tree) != label_before


# -- replay ------------------------------------------------------------------------------------


@pytest.mark.anyio
class TestReplayKeys:
    async def test_keys_move_the_cursor_and_the_detail_follows(self) -> None:
        app = replay_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            total = screen.timeline.total if screen.timeline else 0
            assert total > 150 and screen.position == total
            await pilot.press("home")
            assert screen.position == 0
            await pilot.press("right", "right", "right", "right")
            assert screen.position == 4
            before = detail_text(app)
            await pilot.press("pagedown")
            assert screen.position == 104
            assert detail_text(app) != before
            await pilot.press("shift+left", "left")
            assert screen.position == 3
            await pilot.press("end")
            assert screen.position == total
            await pilot.press("right")
            assert screen.position == total

    async def test_space_plays_forward_at_a_steady_rate(self) -> None:
        app = replay_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            await pilot.press("home", "space")
            assert screen.playing and screen._play_timer is not None
            screen._play_timer.pause()  # its ticks by hand: counted, not timed
            start = screen.position
            for _ in range(TICKS_PER_SECOND):  # one second's ticks: 20 events at 20/s
                screen._tick()
            assert screen.position - start == 20
            await pilot.press("plus")  # faster: whole events per tick, the fraction carried over
            for _ in range(TICKS_PER_SECOND):
                screen._tick()
            assert screen.position - start == 20 + screen.speed
            await pilot.press("space")
            assert not screen.playing

    async def test_a_corrupt_line_is_reported_and_the_replay_goes_past_it(self, tmp_path: Path) -> None:
        victim = corrupt_logs(tmp_path)
        lines = victim.read_bytes().splitlines()
        app = ReplayApp(sorted(tmp_path.glob("*.jsonl")))
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            assert len(screen.cursor.errors) == 1
            assert screen.cursor.errors[0].startswith(f"{victim}:10: not JSON")
            assert screen.summary_error.startswith(f"{victim.name}:10:")
            # The replay goes on past it: every other line of that log is on screen.
            session_id = victim.stem
            assert screen.state.sessions[session_id].last_sequence == len(lines)
            # It is a failure mark: `e` reaches it, and the scrubber names the file and line.
            timeline = screen.timeline
            assert timeline is not None
            index = timeline.errors[0][0]
            await pilot.press("home")
            for _ in timeline.marks["failure"]:
                await pilot.press("e")
                if screen.position == index + 1:
                    break
            assert screen.position == index + 1
            assert str(screen.scrubber.label).startswith(f"✗ {victim.name}:10: not JSON")

    async def test_follow_picks_up_appended_lines_and_new_logs(self, tmp_path: Path) -> None:
        logs = sorted(COMPLETE_LOGS.glob("*.jsonl"))
        first, second = logs[0], logs[1]
        lines = first.read_bytes().splitlines(keepends=True)
        grown = tmp_path / first.name
        grown.write_bytes(b"".join(lines[:5]))
        app = ReplayApp([grown], follow=True, watch_dir=tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            assert screen.position == 5
            with grown.open("ab") as handle:
                handle.write(b"".join(lines[5:]))
            await wait_for(pilot, lambda: screen.position == len(lines), "the appended lines")
            shutil.copy(second, tmp_path / second.name)
            expected = len(lines) + len(second.read_bytes().splitlines())
            await wait_for(pilot, lambda: screen.position == expected, "the new log")
            assert second.stem in screen.state.sessions


@pytest.mark.parametrize(
    ("stopped", "was_running", "sentence"),
    [
        (1, True, "Stopped lead."),
        (3, True, "Stopped lead and 2 agents it spawned."),
        (1, False, "Stopped 1 agent lead spawned."),
    ],
)
def test_a_stop_says_what_it_stopped(stopped: int, was_running: bool, sentence: str) -> None:
    from agent_tui.tui.screens.dashboard import stopped_sentence

    assert stopped_sentence("lead", stopped, was_running) == sentence
