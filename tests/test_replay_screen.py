"""The replay screen as a user drives it: jumps, go to, filters, keys while indexing, following.

Real logs (the fixture run, copies in `tmp_path`) and, for following, a real `agent-tui run`
subprocess writing into a directory that does not exist yet when the scrubber opens.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from replay_logs import SessionLog
from test_tui import COMPLETE_LOGS, SAMPLES, replay_app, settle, wait_for
from textual.widgets import Static

from agent_tui.reducer import project_state
from agent_tui.replay.sources import replay_all
from agent_tui.tui.replay_app import ReplayApp


def label(app: ReplayApp) -> str:
    return str(app.replay.scrubber.label)


@pytest.mark.anyio
class TestJumps:
    async def test_brackets_go_from_turn_start_to_turn_start(self) -> None:
        app = replay_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            timeline = screen.timeline
            assert timeline is not None
            starts = [index + 1 for index in timeline.marks["turn"]]
            await pilot.press("home")
            for expected in starts[:3]:
                await pilot.press("right_square_bracket")
                assert screen.position == expected
                assert label(app).startswith("turn.started")
            await pilot.press("left_square_bracket")
            assert screen.position == starts[1]

    async def test_home_and_end_scroll_the_detail_when_it_has_focus(self) -> None:
        app = replay_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            end = screen.position
            screen.detail.focus()
            await pilot.pause()
            assert screen.detail.max_scroll_y > 0
            await pilot.press("home")
            await wait_for(pilot, lambda: screen.detail.scroll_y == 0, "the detail's top")
            assert screen.position == end  # the timeline stayed
            await pilot.press("end")
            await wait_for(pilot, lambda: screen.detail.scroll_y == screen.detail.max_scroll_y, "its bottom")
            screen.session_tree.focus()
            await pilot.press("home")
            assert screen.position == 0

    async def test_e_and_p_reach_failures_and_approvals(self) -> None:
        app = replay_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            timeline = screen.timeline
            assert timeline is not None
            await pilot.press("home", "e")
            assert screen.position == timeline.marks["failure"][0] + 1
            assert label(app).startswith("turn.completed")  # release-notes failed
            await pilot.press("p")
            assert screen.position == timeline.marks["approval"][0] + 1
            assert label(app).startswith("permission.resolved")
            await pilot.press("E")
            assert screen.position == timeline.marks["failure"][0] + 1
            await pilot.press("E")  # none earlier: the cursor stays, a note says so
            assert screen.position == timeline.marks["failure"][0] + 1
            assert any("No earlier failure" in n.message for n in app.notices)

    async def test_g_goes_to_a_sequence_a_time_and_a_position(self) -> None:
        app = replay_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            lead = screen.session_tree.selected_id
            assert lead is not None
            await pilot.press("g", *"12", "enter")
            event = screen.cursor.view.event if screen.cursor.view is not None else None
            assert event is not None and (event.session_id, event.sequence) == (lead, 12)
            await pilot.press("g", *"#40", "enter")
            assert screen.position == 40
            await pilot.press("g", *"22:17:05", "enter")
            event = screen.cursor.view.event if screen.cursor.view is not None else None
            assert event is not None and event.ts >= "2026-11-29T22:17:05"
            before = screen.position
            await pilot.press("g", *"nonsense", "enter")
            assert screen.position == before
            assert any("not a time" in n.message for n in app.notices)


@pytest.mark.anyio
class TestFilter:
    async def test_a_filter_keeps_the_cursor_on_matching_events(self) -> None:
        app = replay_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            await pilot.press("home", "slash", *"tool:shell", "enter")
            await wait_for(pilot, lambda: screen.cursor.matches is not None, "the filter")
            matches = screen.cursor.matches
            assert matches is not None and len(matches) > 2
            assert screen.position == matches[0] + 1  # the nearest match to the start
            await pilot.press("right", "right")
            assert screen.position == matches[2] + 1
            assert "shell" in str(
                screen.cursor.view.event.payload if screen.cursor.view and screen.cursor.view.event else ""
            )
            await pilot.press("left")
            assert screen.position == matches[1] + 1
            await pilot.press("escape")
            assert screen.cursor.matches is None
            await pilot.press("right")
            assert screen.position == matches[1] + 2

    async def test_at_the_start_the_detail_says_no_event_happened_yet(self) -> None:
        app = replay_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            await pilot.press("home")
            header = app.replay.query_one("#detail-header")
            await wait_for(pilot, lambda: "No event yet" in str(header.render()), "the start's words")
            assert "Waiting" not in str(header.render())

    async def test_typing_in_the_prompt_does_not_move_the_cursor(self) -> None:
        app = replay_app()
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            before = screen.position
            await pilot.press("slash", "a", "left", "space", "home", "escape")
            assert screen.position == before and screen.cursor.filter is None

    @pytest.mark.parametrize("key", ["g", "slash"])
    @pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
    async def test_what_is_typed_in_the_prompt_shows(self, key: str, size: tuple[int, int]) -> None:
        app = replay_app()
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await pilot.press(key, *"12:3")
            prompt = app.replay.prompt
            assert prompt.has_focus and prompt.content_region.height == 1
            assert "12:3" in prompt.render_line(0).text


@pytest.mark.anyio
class TestWhileIndexing:
    async def test_keys_work_before_indexing_ends(self) -> None:
        app = ReplayApp(sorted(COMPLETE_LOGS.glob("*.jsonl")), pause_indexing_after=60)
        async with app.run_test(size=(100, 30)) as pilot:
            screen = app.replay
            await wait_for(pilot, lambda: screen.scrubber.indexed == 60, "indexing to hold")
            assert screen.cursor.previewing and not screen.loaded
            await pilot.press("home", "right", "right")
            assert screen.position == 2
            await pilot.press("pagedown")
            assert screen.position == 60  # only what is indexed is reachable
            screen.resume_indexing()
            await wait_for(pilot, lambda: screen.loaded, "indexing to end")
            assert screen.position == 60 and not screen.cursor.at_end
            await pilot.press("end")
            assert screen.position == 182


@pytest.mark.anyio
class TestOpening:
    async def test_from_start_opens_at_the_first_event(self) -> None:
        app = ReplayApp(sorted(COMPLETE_LOGS.glob("*.jsonl")), start_at_end=False)
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            assert screen.position == 0 and label(app) == "start"
            await pilot.press("right")
            assert screen.position == 1 and label(app).startswith("session.created")

    async def test_an_unreadable_log_is_named_with_its_reason(self, tmp_path: Path) -> None:
        good = [Path(shutil.copy(path, tmp_path)) for path in sorted(COMPLETE_LOGS.glob("*.jsonl"))]
        unreadable = tmp_path / "sess_unreadable.jsonl"
        unreadable.mkdir()  # fails to read like a file without permission, even for root
        app = ReplayApp([*good, unreadable])
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            assert f"{unreadable}: Is a directory" in screen.cursor.errors
            assert any("Is a directory" in n.message for n in app.notices)
            assert screen.position == 182  # the other logs replay


@pytest.mark.anyio
class TestFollow:
    async def test_away_from_the_end_new_events_are_counted_not_followed(self, tmp_path: Path) -> None:
        logs = sorted(COMPLETE_LOGS.glob("*.jsonl"))
        lines = logs[0].read_bytes().splitlines(keepends=True)
        grown = tmp_path / logs[0].name
        grown.write_bytes(b"".join(lines[:3]))
        app = ReplayApp([grown], follow=True, watch_dir=tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            await pilot.press("left")
            assert screen.position == 2
            with grown.open("ab") as handle:
                handle.write(b"".join(lines[3:]))
            await wait_for(
                pilot, lambda: screen.cursor.new_events == len(lines) - 3, "the new events to be counted"
            )
            assert screen.position == 2 and "+4 new" in str(screen.scrubber.render())
            await pilot.press("end")
            assert screen.position == len(lines) and screen.cursor.new_events == 0

    async def test_a_followed_log_cut_short_is_said_and_indexed_again(self, tmp_path: Path) -> None:
        lines = sorted(COMPLETE_LOGS.glob("*.jsonl"))[0].read_bytes().splitlines(keepends=True)
        log = tmp_path / "sess_cut.jsonl"
        log.write_bytes(b"".join(lines))
        app = ReplayApp([log], follow=True, watch_dir=tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            log.write_bytes(b"".join(lines[:3]))
            await wait_for(
                pilot,
                lambda: any(f"{log}: truncated" in n.message for n in app.notices),
                "the notice that the log was truncated",
            )
            await wait_for(pilot, lambda: screen.position == 3, "the log indexed again")

    async def test_an_empty_missing_directory_waits_then_shows_a_real_run(self, tmp_path: Path) -> None:
        sessions = tmp_path / "sessions"  # does not exist yet
        app = ReplayApp([], follow=True, watch_dir=sessions)
        async with app.run_test(size=(100, 30)) as pilot:
            screen = app.replay
            await wait_for(pilot, lambda: screen.loaded, "the empty timeline")
            assert "waiting for logs in" in label(app)
            run = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "agent_tui",
                    "run",
                    str(SAMPLES / "scenario.json"),
                    "--sessions-dir",
                    str(sessions),
                    "--approve",
                    "allow",
                    "--workspace",
                    str(tmp_path / "workspace"),
                    "-q",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            try:
                await wait_for(pilot, lambda: run.poll() is not None, "the run to end", seconds=60)
            finally:
                if run.poll() is None:
                    run.kill()
            output = run.stdout.read().decode() if run.stdout else ""
            assert run.returncode == 0, output
            final = project_state(replay_all(sessions))
            await wait_for(
                pilot,
                lambda: screen.state.event_count == final.event_count and screen.cursor.at_end,
                "the run's final state on screen",
                seconds=10,
            )
            assert screen.state.to_state_dump() == final.to_state_dump()
            assert screen.position == final.event_count
            assert len(screen.source.files) == len(final.sessions)
            counts = screen.query_one("#summary-counts", Static)
            assert f"{final.event_count:,} events" in str(counts.content)


class TestCommandLine:
    def test_only_follow_waits_for_a_directory_that_has_no_logs(self, tmp_path: Path) -> None:
        from agent_tui.cli import EXIT_USAGE, awaited_dir, main

        missing = tmp_path / "not-yet"
        assert awaited_dir(missing) and awaited_dir(tmp_path)
        assert not awaited_dir(tmp_path / "sess_x.jsonl")  # a missing log is a mistake, not a wait
        (tmp_path / "sess_x.jsonl").write_bytes(b"")
        assert not awaited_dir(tmp_path)
        assert main(["replay", str(missing)]) == EXIT_USAGE  # without --follow: an error, as before


@pytest.mark.anyio
class TestRecordedTime:
    async def test_a_turn_running_at_the_cursor_shows_how_long_it_had_run_then(self, tmp_path: Path) -> None:
        log = SessionLog("sess_clock")
        log.created(0)
        log.add("turn.started", "turn_1", {"promptPreview": "count"}, 1_000)
        log.add("user.message", "turn_1", {"content": "count"}, 1_000)
        log.add("model.delta", "turn_1", {"text": "one"}, 46_000)
        log.add("model.delta", "turn_1", {"text": " two"}, 76_000)
        log.write(tmp_path)
        app = ReplayApp([tmp_path / "sess_clock.jsonl"])
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay

            def header() -> str:
                return "\n".join(str(w.content) for w in screen.query("#detail Static").results(Static))

            await wait_for(pilot, lambda: "1m15s" in header(), "75 s at the last event")
            await pilot.press("left")  # one event back: the first delta, 45 s in
            await wait_for(pilot, lambda: "45s" in header() and "1m15s" not in header(), "45 s")

    async def test_following_at_the_end_a_running_turn_s_time_goes_on_between_events(
        self, tmp_path: Path
    ) -> None:
        from replay_logs import BASE_MS

        log = SessionLog("sess_live")
        log.created(0)
        log.add("turn.started", "turn_1", {"promptPreview": "count"}, 1_000)
        log.add("user.message", "turn_1", {"content": "count"}, 1_000)
        log.add("model.delta", "turn_1", {"text": "one"}, 46_000)
        log.write(tmp_path)
        app = ReplayApp([tmp_path / "sess_live.jsonl"], follow=True, watch_dir=tmp_path)
        now = [BASE_MS + 61_000]
        app.clock_ms = lambda: now[0]  # type: ignore[attr-defined]
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay

            def header() -> str:
                return "\n".join(str(w.content) for w in screen.query("#detail Static").results(Static))

            await wait_for(
                pilot, lambda: "1m00s" in header(), "the clock's minute, not the last event's 45 s"
            )
            now[0] += 60_000  # no new event: the time still goes on
            await wait_for(pilot, lambda: "2m00s" in header(), "the next tick")
            await pilot.press("left")  # away from the end: the recorded time at the cursor again
            await wait_for(pilot, lambda: "2m00s" not in header(), "the cursor's time")


def crashed_log(directory: Path, *, finished: bool) -> tuple[Path, int, bytes]:
    """A log whose writer died mid-line, inside its turn or (`finished`) after it ended; returns
    the log, the torn line's number and its bytes."""
    log = SessionLog("sess_crash")
    log.created(0)
    log.add("turn.started", "turn_1", {"promptPreview": "count"}, 1_000)
    log.add("user.message", "turn_1", {"content": "count"}, 1_000)
    log.add("model.delta", "turn_1", {"text": "one"}, 2_000)
    if finished:
        log.add("turn.completed", "turn_1", {"stopReason": "final"}, 3_000)
    path = log.write(directory)
    torn = log.add("model.delta", "turn_1", {"text": " two"}, 4_000)[:41]
    with path.open("ab") as handle:
        handle.write(torn)
    return path, len(log.lines), torn


@pytest.mark.anyio
class TestTornTail:
    async def test_a_crashed_log_says_where_it_was_torn_and_that_its_turn_never_completed(
        self, tmp_path: Path
    ) -> None:
        path, line, torn = crashed_log(tmp_path, finished=False)
        app = ReplayApp([path])
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            notice = (
                f"{path}:{line}: a torn final line ({len(torn)} bytes without a newline) was left out; "
                "the log ends there: its last turn never completed"
            )
            assert screen.cursor.errors == [notice]
            assert any(n.message == notice for n in app.notices)
            assert screen.summary_error.startswith(f"{path.name}:{line}: a torn final line")
            assert screen.position == line - 1  # the complete lines all replay

    async def test_a_torn_line_after_a_finished_turn_is_only_named(self, tmp_path: Path) -> None:
        path, line, torn = crashed_log(tmp_path, finished=True)
        app = ReplayApp([path])
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            assert app.replay.cursor.errors == [
                f"{path}:{line}: a torn final line ({len(torn)} bytes without a newline) was left out"
            ]

    async def test_following_a_line_still_being_written_is_not_called_torn(self, tmp_path: Path) -> None:
        path, line, torn = crashed_log(tmp_path, finished=False)
        app = ReplayApp([path], follow=True, watch_dir=tmp_path)
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot)
            screen = app.replay
            assert screen.position == line - 1 and screen.cursor.errors == []
            whole = SessionLog("sess_crash", sequence=line - 1).add(
                "model.delta", "turn_1", {"text": " two"}, 4_000
            )
            assert whole.startswith(torn)
            with path.open("ab") as handle:  # the writer finishes its line
                handle.write(whole[len(torn) :] + b"\n")
            await wait_for(pilot, lambda: screen.position == line, "the finished line")
            assert screen.cursor.errors == [] and not any("torn" in n.message for n in app.notices)
