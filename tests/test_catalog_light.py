"""A list handed over without its turns' texts and tool calls (`Catalog.lightened`, what the
child pickles) and made whole again one session at a time (`Catalog.whole`): the tree, the
filter, the summary, the chart and the approvals read the same from it as from the full list,
and a session made whole is the one the full fold gave, even from a log grown since it was
listed.

Real logs on disk.
"""

from __future__ import annotations

import pickle
from pathlib import Path

from replay_logs import SessionLog, turn_events

from agent_tui.replay import Catalog, read_catalog
from agent_tui.tui.formatting import call_of
from agent_tui.tui.session_filter import visible_sessions


def _logs(directory: Path) -> list[Path]:
    """A session waiting on an approval, one of two whole turns (texts, tool output), and its
    sub-agent whose tool failed."""
    directory.mkdir(parents=True, exist_ok=True)
    asking = SessionLog("sess_ask")
    asking.created(0, name="asker")
    events = turn_events(1, "tool")
    asked = next(k for k, (kind, _payload) in enumerate(events) if kind == "permission.resolved")
    for kind, payload in events[: asked + 1]:  # the policy said "ask": the user has not answered
        asking.add(kind, "turn_1", payload, 1)
    done = SessionLog("sess_done")
    done.created(0, name="doer")
    for turn in (1, 2):
        for kind, payload in turn_events(turn, "tool"):
            done.add(kind, f"turn_{turn}", payload, turn * 10)
    kid = SessionLog("sess_kid")
    kid.created(5, parent="sess_done", name="kid")
    for kind, payload in turn_events(1, "failed"):
        kid.add(kind, "turn_1", payload, 12)
    return [log.write(directory) for log in (asking, done, kid)]


def _light(paths: list[Path]) -> Catalog:
    """The list as the parent unpickles it from the child."""
    catalog: Catalog = pickle.loads(pickle.dumps(read_catalog(paths).lightened()))
    return catalog


def test_the_light_list_shows_what_the_full_one_shows(tmp_path: Path) -> None:
    paths = _logs(tmp_path)
    full, light = read_catalog(paths), _light(paths)
    assert light.light == {"sess_ask", "sess_done", "sess_kid"}
    assert light.state != full.state
    for sid, whole in full.state.sessions.items():
        view = light.state.sessions[sid]
        assert (view.status, view.phase, view.running, view.display_name) == (
            whole.status,
            whole.phase,
            whole.running,
            whole.display_name,
        )
        assert (view.pending, view.spend, view.event_count, view.last_sequence) == (
            whole.pending,
            whole.spend,
            whole.event_count,
            whole.last_sequence,
        )
        assert [
            (t.turn_id, t.prompt_preview, t.end_message, t.started_ts, t.ended_ts, t.usage, t.phase)
            for t in view.turns
        ] == [
            (t.turn_id, t.prompt_preview, t.end_message, t.started_ts, t.ended_ts, t.usage, t.phase)
            for t in whole.turns
        ]
        assert all(turn.text == "" and not turn.transcript for turn in view.turns)
    assert any(turn.transcript for view in full.state.sessions.values() for turn in view.turns)
    assert light.state.sessions["sess_done"].turns[-1].tool_calls == {}
    for wanted in ("all", "needs-me", "running", "failed"):
        for text in ("", "prompt 2", "kid"):
            assert visible_sessions(light.state, text, wanted) == visible_sessions(full.state, text, wanted)
    assert light.state.roots() == full.state.roots() and light.state.total_spend() == full.state.total_spend()
    # The approval waiting: its call kept, with what the approval shows of it (not its output).
    asked = light.state.pending_permissions()
    assert [r.request_id for r in asked] == [r.request_id for r in full.state.pending_permissions()]
    assert asked
    for request in asked:
        call, whole_call = call_of(light.state, request), call_of(full.state, request)
        assert call is not None and whole_call is not None
        assert (call.tool, call.args, call.args_preview, call.status, call.risk) == (
            whole_call.tool,
            whole_call.args,
            whole_call.args_preview,
            whole_call.status,
            whole_call.risk,
        )
    for sid in sorted(light.light):
        light.whole(sid)
    assert light.state == full.state and not light.light


def test_a_session_is_made_whole_as_its_log_was_listed(tmp_path: Path) -> None:
    paths = _logs(tmp_path)
    full, light = read_catalog(paths), _light(paths)
    listed = light.state.sessions["sess_done"]
    # The log grows after it was listed (a third turn): the list shows it as it was read.
    more = SessionLog("sess_done", sequence=len(paths[1].read_bytes().splitlines()))
    for kind, payload in turn_events(3, "plain"):
        more.add(kind, "turn_3", payload, 40)
    with open(paths[1], "ab") as handle:
        handle.write(b"".join(line + b"\n" for line in more.lines))
    light.whole("sess_done")
    assert light.state.sessions["sess_done"] is listed  # the same view (its added spend stays)
    assert listed == full.state.sessions["sess_done"]
    assert [turn.turn_id for turn in listed.turns] == ["turn_2"]
    assert listed.turns[-1].transcript == full.state.sessions["sess_done"].turns[-1].transcript
    light.whole("sess_done")  # once made whole, never read again
    light.whole("sess_nobody")
    assert light.light == {"sess_ask", "sess_kid"}


def test_a_list_read_in_this_process_is_whole_already(tmp_path: Path) -> None:
    paths = _logs(tmp_path)
    catalog = read_catalog(paths)
    assert not catalog.light
    catalog.whole("sess_done")  # nothing to do
    assert catalog.state == read_catalog(paths).state
