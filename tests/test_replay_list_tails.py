"""The list of many logs read from each log's head once, then from its tail: held to a brute force.

Generated histories (hypothesis): a few sessions of whole and cut turns, with corrupt lines,
another session's line, a delta whose text says `turn.started`, times that go back, a torn end.
The brute force decodes every line of every log, takes each one's head and the lines from its
last `turn.started` on, and folds them by time; the list (its heads read once, then their tails
from where the heads end, the last turn start found by a byte search) must fold to the same
state and marks, also when the logs grew between the two reads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from replay_logs import SessionLog, turn_events
from support_workbench import wait_for

from agent_tui.events import Event
from agent_tui.reducer import DashboardState, SessionView, apply_event
from agent_tui.replay import read_catalog
from agent_tui.replay.catalog import MAX_TAIL_BYTES
from agent_tui.replay.logfile import decode_line
from agent_tui.tui.replay_app import ReplayApp
from agent_tui.tui.screens import replay_feed
from agent_tui.tui.screens.replay_view import LIST_FROM

SHAPES = ("tool", "plain", "failed", "denied", "compress")

_turn = st.tuples(st.sampled_from(SHAPES), st.integers(min_value=1, max_value=20))
_log = st.fixed_dictionaries(
    {
        "turns": st.lists(_turn, min_size=0, max_size=3),
        "junk": st.lists(
            st.tuples(
                st.integers(min_value=0, max_value=60), st.sampled_from(("corrupt", "foreign", "trap"))
            ),
            max_size=2,
        ),
        "back": st.booleans(),  # a line's time goes back
        "torn": st.booleans(),
        "grown": st.integers(min_value=0, max_value=2),  # turns appended between the two reads
    }
)


def _write(directory: Path, k: int, spec: dict, *, grown: bool) -> Path:
    sid = f"sess_{k:02d}"
    log = SessionLog(sid)
    log.created(k, name=f"agent-{k}", parent="sess_00" if k and k % 2 else None)
    millis = 100
    turns = list(spec["turns"]) + ([("plain", 99)] * spec["grown"] if grown else [])
    for number, (shape, cut) in enumerate(turns, 1):
        for kind, payload in turn_events(number, shape)[:cut]:
            millis += 7
            log.add(
                kind, f"turn_{number}", payload, millis - (300 if spec["back"] and millis % 3 == 0 else 0)
            )
    lines = log.lines
    last = orjson.loads(lines[-1])
    for at, what in spec["junk"]:
        if what == "corrupt":
            junk = b"not json, turn.started"
        elif what == "foreign":
            junk = orjson.dumps(
                {
                    "v": 1,
                    "id": "evt_x",
                    "sessionId": "sess_other",
                    "turnId": "turn_1",
                    "sequence": 3,
                    "ts": "2026-11-18T11:06:40.029Z",
                    "type": "model.delta",
                    "payload": {"text": "x"},
                }
            )
        else:  # a delta whose text names a turn start
            junk = orjson.dumps({**last, "type": "model.delta", "payload": {"text": "turn.started"}})
        lines.insert(min(max(1, at), len(lines)), junk)
    path = log.write(directory)
    if spec["torn"]:
        with open(path, "ab") as handle:
            handle.write(b'{"v":1,"id":"evt_torn","sessionId":"' + sid.encode() + b'","seq')
    return path


def _brute_force(paths: list[Path]) -> tuple[DashboardState, dict[str, str]]:
    """Every line decoded; each log's head and its lines from the last turn start on, by time."""
    picked: list[Event] = []
    marks: dict[str, str] = {}
    for path in paths:
        sid = path.stem
        data = path.read_bytes()
        lines = data.split(b"\n")
        torn = lines.pop()
        head = decode_line(lines[0]) if lines else "empty"
        if torn:
            marks[sid] = "✗ torn tail"
        if not isinstance(head, Event) or head.type != "session.created" or head.session_id != sid:
            if data:
                marks.setdefault(sid, "✗ corrupt tail")
            continue
        decoded = [decode_line(line) for line in lines[1:]]
        starts = [
            k for k, event in enumerate(decoded) if isinstance(event, Event) and event.type == "turn.started"
        ]
        tail = decoded[starts[-1] if starts else 0 :]
        if any(isinstance(event, str) for event in tail):
            marks.setdefault(sid, "✗ corrupt tail")
        picked += [head, *(e for e in tail if isinstance(e, Event) and e.session_id == sid)]
    picked.sort(key=lambda event: event.ts)
    state = DashboardState()
    for event in picked:
        apply_event(state, event)
    for path in paths:
        if path.stem not in state.sessions:
            state.sessions[path.stem] = SessionView(path.stem, title=path.name)
    return state, marks


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=st.lists(_log, min_size=1, max_size=4))
def test_the_list_read_from_heads_then_tails_is_the_brute_force_fold(
    tmp_path: Path, specs: list[dict]
) -> None:
    directory = tmp_path / "logs"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    paths = [_write(directory, k, spec, grown=False) for k, spec in enumerate(specs)]
    # Logs shorter and longer than the first look at their ends (the last turn start found in
    # it, or further back), all within how far a tail looks.
    assert all(path.stat().st_size < MAX_TAIL_BYTES for path in paths)

    heads = read_catalog(paths, tails=False)
    catalog = heads.with_tails()
    state, marks = _brute_force(paths)
    assert catalog.state == state
    assert catalog.state.event_count == state.event_count
    assert catalog.marks() == marks
    assert catalog.complete and not heads.complete

    # The logs grow between the two reads: the tails are read where they end now, the heads
    # are not read again, and the list is the one read afresh.
    paths = [_write(directory, k, spec, grown=True) for k, spec in enumerate(specs)]
    grown = heads.with_tails()
    again = read_catalog(paths)
    assert grown.state == again.state == _brute_force(paths)[0]
    assert grown.entries == again.entries


@pytest.mark.anyio
@pytest.mark.parametrize("before_paint", [True, False], ids=["heads-before-paint", "heads-in-a-thread"])
async def test_the_replay_lists_the_heads_then_completes_the_list_from_the_tails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before_paint: bool
) -> None:
    spec = {"turns": [("tool", 20), ("denied", 20), ("plain", 4)], "junk": [], "back": False, "torn": False}
    paths = [_write(tmp_path, k, {**spec, "grown": 0}, grown=False) for k in range(LIST_FROM + 6)]
    if not before_paint:
        monkeypatch.setattr(replay_feed, "HEADS_BEFORE_PAINT", LIST_FROM)
    app = ReplayApp(paths)
    async with app.run_test(size=(120, 40)) as pilot:
        feed = app.replay.feed
        if before_paint:  # listed as the screen mounted: its first paint is the list
            assert feed.listed and feed.catalog is not None
        await wait_for(pilot, lambda: feed.catalog is not None and feed.catalog.complete, "the tails")
        assert feed.catalog is not None
        listed = feed.catalog.state.sessions
        expected = read_catalog(paths).state.sessions
        assert {sid: (s.display_name, s.status, s.phase, len(s.turns)) for sid, s in listed.items()} == {
            sid: (s.display_name, s.status, s.phase, len(s.turns)) for sid, s in expected.items()
        }
        assert {s.status for s in listed.values()} == {"running"}  # each cut in its last turn
