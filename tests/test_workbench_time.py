"""Time on the dashboard: turn start, end, duration and approval wait come from event
timestamps, so the live fold, the replay fold and `--dump state` agree.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from support_providers import agent_tui
from support_workbench import NOW, Log, at, recorded_project

from agent_tui.reducer import DashboardState, apply_event, project_state
from agent_tui.tui.timing import format_clock, format_duration, turn_timing


def a_turn_with_a_wait() -> Log:
    log = Log("sess_timed", at(9, 0, 0), cwd="/p", agentName="timed")
    log.start("turn_1", "Do it", after=1)  # 09:00:01
    log.step("turn_1", 1, "Writing.")
    log.tool("turn_1", "call_1", "write_file", {"path": "a", "content": "b"}, "write", "a", ask=95)
    log.end("turn_1", after=3.5)
    return log


class TestTurnTimes:
    def test_start_end_duration_and_approval_wait_come_from_the_timestamps(self) -> None:
        log = a_turn_with_a_wait()
        turn = project_state(log.events).sessions["sess_timed"].turns[0]
        assert turn.started_ts == "2026-11-30T09:00:01.000Z"
        assert turn.ended_ts == log.events[-1].ts
        assert turn.approval_wait_ms == 95_000
        assert turn.duration_ms == 1000 + 400 + 95_000 + 500 + 3_500

    def test_live_and_replay_folds_agree(self) -> None:
        events = sorted(recorded_project(Path("/home/x")), key=lambda e: (e.session_id, e.sequence))
        live = DashboardState()
        for event in events:
            apply_event(live, event)
        assert live == project_state(events)
        assert live.to_state_dump() == project_state(events).to_state_dump()

    def test_a_request_still_waiting_counts_towards_the_turn_up_to_now(self) -> None:
        state = project_state(recorded_project(Path("/home/x")))
        login = next(s for s in state.sessions.values() if s.display_name == "fix-login")
        turn = login.turns[0]
        (waiting,) = login.pending.values()
        text = turn_timing(turn, int(NOW.timestamp() * 1000), waiting.asked_ts)
        assert text.startswith("started 14:10:01 · running 9m59s · ")
        assert text.endswith("waiting for approval")

    def test_the_state_dump_has_started_ended_and_duration(self) -> None:
        dump = project_state(a_turn_with_a_wait().events).to_state_dump()
        (turn,) = dump["sessions"][0]["turns"]
        assert turn == {
            "turnId": "turn_1",
            "stopReason": "final",
            "startedAt": "2026-11-30T09:00:01.000Z",
            "endedAt": "2026-11-30T09:01:41.400Z",
            "durationMs": 100_400,
            "costUsd": None,  # the scripted model has no price
            "tokens": {"completion": 180, "prompt": 2100, "unpriced": 2280},
            "toolCalls": [
                {
                    "toolCallId": "call_1",
                    "tool": "write_file",
                    "status": "completed",
                    "decision": "allow",
                    "decidedBy": "user",
                }
            ],
        }


class TestWords:
    def test_durations(self) -> None:
        cases = {
            0: "0s",
            999: "0s",
            42_000: "42s",
            185_000: "3m05s",
            7_380_000: "2h03m",
            200 * 3_600_000: "8d08h",
        }
        assert {ms: format_duration(ms) for ms in cases} == cases
        assert format_duration(None) == "?"

    def test_clock_times_name_the_day_when_it_is_not_today(self, monkeypatch) -> None:
        import time

        monkeypatch.setenv("TZ", "UTC")
        time.tzset()
        try:
            now = int(NOW.timestamp() * 1000)
            assert format_clock("2026-11-30T08:05:09.000Z", now) == "08:05:09"
            assert format_clock("2026-11-28T08:05:09.000Z", now) == "Nov 28 08:05"
            assert format_clock("not a time", now) == "?"
        finally:
            monkeypatch.undo()
            time.tzset()


def test_dump_state_of_a_real_run_carries_the_times(tmp_path: Path) -> None:
    scenario = tmp_path / "s.json"
    (tmp_path / "ws").mkdir()
    scenario.write_bytes(
        orjson.dumps(
            {"sessions": [{"prompt": "hi", "cwd": "ws", "steps": [{"text": ["a", "b"], "delayMs": 20}]}]}
        )
    )
    assert agent_tui("run", str(scenario), "--sessions-dir", str(tmp_path / "out"), "-q").returncode == 0
    dump = agent_tui("replay", str(tmp_path / "out"), "--dump", "state")
    assert dump.returncode == 0, dump.stderr
    (turn,) = orjson.loads(dump.stdout)["sessions"][0]["turns"]
    assert turn["startedAt"] <= turn["endedAt"]
    assert turn["durationMs"] >= 20  # the scripted model waited 20 ms between its two chunks
