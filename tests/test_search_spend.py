"""The search index keeps what each log spent as it reads it: the reducer's fold over the whole
log, kept between syncs (a grown log folds only its new lines, a rewritten one starts over)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from replay_logs import SessionLog
from test_costs import _three_levels

from agent_tui.reducer import NO_SPEND, Spend, project_state
from agent_tui.replay.sources import replay_files
from agent_tui.search import SearchIndex
from agent_tui.search.spend import LogSpend

DAY_MS = 86_400_000


def _usage(prompt: int, completion: int, cost: float | None) -> dict[str, Any]:
    usage: dict[str, Any] = {"promptTokens": prompt, "completionTokens": completion}
    if cost is not None:
        usage["costUsd"] = cost
    return usage


def _turn(log: SessionLog, turn: int, millis: int, calls: list[dict[str, Any]], total: bool) -> int:
    tid = f"turn_{turn}"
    log.add("turn.started", tid, {"promptPreview": "go"}, millis)
    for step, call in enumerate(calls, 1):
        log.add("model.usage", tid, {"step": step, **call}, millis + step)
    end: dict[str, Any] = {"stopReason": "final"}
    if total:
        end["usage"] = _usage(
            sum(c["promptTokens"] for c in calls),
            sum(c["completionTokens"] for c in calls),
            sum(c.get("costUsd", 0.0) for c in calls),
        )
    log.add("turn.completed", tid, end, millis + len(calls) + 1)
    return millis + len(calls) + 2


def _started(sid: str = "sess_a") -> SessionLog:
    log = SessionLog(sid)
    log.add("session.created", None, {"cwd": "/w", "client": "tests"}, 0)
    return log


def _whole(path: Path) -> tuple[Spend, dict[str, Spend]]:
    """The reducer's fold over the whole log: the session's spend, and its days'."""
    state = project_state(replay_files([path]))
    session = state.sessions[path.stem]
    return session.spend, state.spend_by_day


def _indexed(index: SearchIndex, path: Path) -> tuple[Spend, dict[str, Spend]]:
    found = index.spend()[path.stem]
    return found.spend, dict(found.by_day)


def _same(got: tuple[Spend, dict[str, Spend]], want: tuple[Spend, dict[str, Spend]]) -> None:
    for mine, theirs in [(got[0], want[0]), *((got[1][d], s) for d, s in want[1].items())]:
        assert mine._replace(cost_usd=0.0) == theirs._replace(cost_usd=0.0)
        assert mine.cost_usd == pytest.approx(theirs.cost_usd, abs=1e-9)
    assert set(got[1]) == set(want[1])


def test_a_log_that_grows_between_two_syncs_adds_only_its_new_spend(tmp_path: Path) -> None:
    log = _started()
    millis = _turn(log, 1, 1, [_usage(100, 10, 0.1)], total=True)
    log.add("turn.started", "turn_2", {"promptPreview": "go"}, millis)
    log.add("model.usage", "turn_2", {"step": 1, **_usage(200, 20, 0.2)}, millis + 1)  # open at the sync
    path = log.write(tmp_path)
    with SearchIndex.open(tmp_path / "index.sqlite3") as index:
        index.sync([path])
        first = index.spend()["sess_a"].spend
        assert (first.tokens, first.cost_usd) == (330, pytest.approx(0.3))
        size = path.stat().st_size
        log.add("model.usage", "turn_2", {"step": 2, **_usage(300, 30, 0.3)}, millis + 2)
        total = {"stopReason": "final", "usage": _usage(500, 50, 0.5)}
        log.add("turn.completed", "turn_2", total, millis + 3)
        log.add("session.budget", None, {"usd": 2.0, "by": "ana"}, DAY_MS)
        log.write(tmp_path)
        report = index.sync([path])
        assert report.reindexed == []
        assert report.bytes == path.stat().st_size - size  # only the new lines were read
        found = index.spend()["sess_a"]
        assert found.budget == (2.0, None)
        _same(_indexed(index, path), _whole(path))
        assert found.spend._replace(cost_usd=0.0) == Spend(600, 60)


def test_a_truncated_log_is_read_again_from_its_start(tmp_path: Path) -> None:
    log = _started()
    millis = _turn(log, 1, 1, [_usage(100, 10, 0.1)], total=True)
    _turn(log, 2, millis, [_usage(200, 20, 0.2), _usage(50, 5, None)], total=False)
    path = log.write(tmp_path)
    with SearchIndex.open(tmp_path / "index.sqlite3") as index:
        index.sync([path])
        _same(_indexed(index, path), _whole(path))
        shorter = _started()
        _turn(shorter, 1, 1, [_usage(7, 1, 0.01)], total=True)
        shorter.write(tmp_path)
        report = index.sync([path])
        assert report.reindexed == [path]
        assert index.spend()["sess_a"].spend._replace(cost_usd=0.0) == Spend(7, 1)
        _same(_indexed(index, path), _whole(path))


_CALL = st.builds(
    _usage,
    st.integers(0, 5000),
    st.integers(0, 500),
    st.one_of(st.none(), st.floats(0, 2, allow_nan=False).map(lambda x: round(x, 6))),
)
_TURN = st.tuples(st.lists(_CALL, max_size=4), st.booleans(), st.booleans())  # calls, total, next day


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.lists(_TURN, min_size=1, max_size=6), cut=st.integers(0, 60))
def test_the_index_folds_what_the_reducer_folds(tmp_path: Path, turns: list[Any], cut: int) -> None:
    """Whatever the usage, and wherever a sync falls in the log (inside a turn too), the index's
    spend of the log is the reducer's over the whole log, in all and per day."""
    log = _started(f"sess_{abs(hash((str(turns), cut))) % 10**9}")
    millis = 1
    for number, (calls, total, next_day) in enumerate(turns, 1):
        millis = _turn(log, number, millis + (DAY_MS if next_day else 0), calls, total)
    directory = Path(
        tempfile.mkdtemp(prefix=f"{log.session_id}-", dir=tmp_path)
    )  # hypothesis replays an example
    whole = list(log.lines)
    log.lines = whole[: min(cut, len(whole))]
    path = log.write(directory)
    with SearchIndex.open(directory / "index.sqlite3") as index:
        index.sync([path])
        log.lines = whole
        log.write(directory)
        index.sync([path])
        _same(_indexed(index, path), _whole(path))


def test_for_a_real_engine_run_the_index_folds_what_the_reducer_folds(tmp_path: Path) -> None:
    """lead → planner → coder → tester run by the engine, every call priced: each log's spend
    in the index is its session's in the fold of all the logs."""
    logs = sorted(_three_levels(tmp_path).glob("*.jsonl"))
    state = project_state(replay_files(logs))
    with SearchIndex.open(tmp_path / "index.sqlite3") as index:
        index.sync(logs)
        spent = index.spend()
    assert set(spent) == set(state.sessions) and len(spent) == 4
    for sid, session in state.sessions.items():
        assert spent[sid].spend.tokens == session.spend.tokens > 0, sid
        assert spent[sid].spend.cost_usd == pytest.approx(session.spend.cost_usd), sid
    total = sum((found.spend.cost_usd for found in spent.values()), 0.0)
    assert total == pytest.approx(sum(spend.cost_usd for spend in state.spend_by_day.values()))


def test_a_fold_kept_between_syncs_reads_back_as_it_was() -> None:
    spend = LogSpend()
    spend.add({"type": "turn.started", "turnId": "t", "payload": {}, "ts": "2026-01-01T00:00:00Z"})
    spend.add(
        {"type": "model.usage", "turnId": None, "payload": _usage(3, 1, None), "ts": "2026-01-01T00:00:01Z"}
    )
    spend.add(
        {"type": "session.budget", "turnId": None, "payload": {"tokens": 9}, "ts": "2026-01-01T00:00:02Z"}
    )
    again = LogSpend.loads(spend.dumps())
    assert again == spend
    assert again.open_turns == {"t": Spend(3, 1, unpriced_tokens=4)}
    assert LogSpend.loads(None).as_earlier().spend == NO_SPEND
