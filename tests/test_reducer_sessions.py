"""The session tree and the state dump: what the dashboard knows across sessions.

Roots, children and agent paths do not depend on the order in which the sessions' logs are read
(a child's before its parent's, or interleaved as they arrive live); siblings follow creation
time. The state dump (`replay --dump state`) has a fixed shape and the same bytes for the same
events, whatever their session order.
"""

from __future__ import annotations

import orjson
from support_reducer import SessionLog, fold, tree

from agent_tui.reducer import DashboardState, TranscriptEntry, project_state

# -- the session tree ---------------------------------------------------------------------------


def family() -> tuple[SessionLog, SessionLog, SessionLog]:
    lead = SessionLog("sess_lead", clock=0, title="lead")
    lead.emit("turn.started", "turn_l", promptPreview="split the work")
    explorer = SessionLog("sess_zz_explorer", clock=10, parent="sess_lead", agent="explorer")
    explorer.simple_turn("turn_e", "look around", "Found 3 files.")
    # Created later but with a smaller id: siblings follow creation time, not id.
    tester = SessionLog("sess_aa_tester", clock=20, parent="sess_lead", agent="tester")
    tester.simple_turn("turn_t", "run tests", "All green.")
    lead.emit(
        "subagent.delivered",
        "turn_l",
        childSessionId="sess_zz_explorer",
        agentName="explorer",
        status="completed",
        text="Found 3 files.",
    )
    lead.emit("model.delta", "turn_l", text="Both done.")
    lead.emit("turn.completed", "turn_l", stopReason="final")
    return lead, explorer, tester


class TestSessionTree:
    def test_parent_with_two_children(self) -> None:
        lead, explorer, tester = family()
        state = project_state(lead.events + explorer.events + tester.events)
        assert state.roots() == ["sess_lead"]
        assert state.children("sess_lead") == ["sess_zz_explorer", "sess_aa_tester"]
        assert state.children("sess_zz_explorer") == []
        assert state.agent_path("sess_aa_tester") == ("lead", "tester")
        delivery = state.sessions["sess_lead"].deliveries[0]
        assert (delivery.child_session_id, delivery.agent_name, delivery.status) == (
            "sess_zz_explorer",
            "explorer",
            "completed",
        )
        assert state.sessions["sess_lead"].turns[0].transcript[0] == TranscriptEntry(
            "subagent", "Found 3 files.", False, "sess_zz_explorer"
        )

    def test_child_first_replay_gives_the_same_tree(self) -> None:
        lead, explorer, tester = family()
        parent_first = project_state(lead.events + explorer.events + tester.events)
        child_first = project_state(tester.events + explorer.events + lead.events)
        assert list(child_first.sessions) == ["sess_aa_tester", "sess_zz_explorer", "sess_lead"]
        assert tree(child_first) == tree(parent_first)
        assert child_first == parent_first
        assert child_first.to_state_dump() == parent_first.to_state_dump()

    def test_interleaved_live_arrival_gives_the_same_tree(self) -> None:
        lead, explorer, tester = family()
        mixed = [e for trio in zip(tester.events, lead.events, explorer.events, strict=False) for e in trio]
        mixed += tester.events[len(mixed) // 3 :] + lead.events[len(mixed) // 3 :]
        mixed += explorer.events[len(mixed) // 3 :]
        assert sorted(e.id for e in mixed) == sorted(
            e.id for e in lead.events + explorer.events + tester.events
        )
        in_order = lead.events + explorer.events + tester.events
        assert tree(fold(mixed)) == tree(project_state(in_order))

    def test_child_before_its_parent_is_known_is_a_root_for_now(self) -> None:
        _, explorer, _ = family()
        state = project_state(explorer.events)
        assert state.roots() == ["sess_zz_explorer"]
        assert state.children("sess_lead") == ["sess_zz_explorer"]
        assert state.agent_path("sess_zz_explorer") == ("sess_lead", "explorer")


class TestAgentPath:
    def test_names_from_root_to_leaf(self) -> None:
        root = SessionLog("sess_1", title="lead")
        mid = SessionLog("sess_2", clock=5, parent="sess_1", agent="planner", title="ignored")
        leaf = SessionLog("sess_3", clock=9, parent="sess_2")  # neither name nor title
        state = project_state(leaf.events + root.events + mid.events)
        assert state.agent_path("sess_3") == ("lead", "planner", "sess_3")
        assert state.agent_path("sess_1") == ("lead",)
        assert state.agent_path("sess_unknown") == ("sess_unknown",)

    def test_a_self_parent_does_not_loop(self) -> None:
        odd = SessionLog("sess_x", parent="sess_x", agent="x")
        state = project_state(odd.events)
        assert state.roots() == ["sess_x"]
        assert state.children("sess_x") == []
        assert state.agent_path("sess_x") == ("x",)


# -- the state dump -----------------------------------------------------------------------------


class TestStateDump:
    def test_shape(self) -> None:
        lead, explorer, tester = family()
        idle = SessionLog("sess_0_idle", clock=30, cwd="/elsewhere")
        state = project_state(explorer.events + lead.events[:3] + tester.events + idle.events)
        assert state.to_state_dump() == {
            "sessions": [
                {
                    "sessionId": "sess_0_idle",
                    "parentSessionId": None,
                    "agentName": None,
                    "cwd": "/elsewhere",
                    "status": "idle",
                    "costUsd": 0.0,
                    "tokens": {"prompt": 0, "completion": 0},
                    "treeCostUsd": 0.0,
                    "treeTokens": {"prompt": 0, "completion": 0},
                    "turns": [],
                },
                {
                    "sessionId": "sess_aa_tester",
                    "parentSessionId": "sess_lead",
                    "agentName": "tester",
                    "cwd": "/work/demo",
                    "status": "completed",
                    "costUsd": 0.0,
                    "tokens": {"prompt": 0, "completion": 0},
                    "treeCostUsd": 0.0,
                    "treeTokens": {"prompt": 0, "completion": 0},
                    "turns": [
                        {
                            "turnId": "turn_t",
                            "stopReason": "final",
                            "startedAt": "2026-11-29T00:00:22.000Z",
                            "endedAt": "2026-11-29T00:00:26.000Z",
                            "durationMs": 4000,
                        }
                    ],
                },
                {
                    "sessionId": "sess_lead",
                    "parentSessionId": None,
                    "agentName": None,
                    "cwd": "/work/demo",
                    "status": "running",
                    "costUsd": 0.0,
                    "tokens": {"prompt": 0, "completion": 0},
                    "treeCostUsd": 0.0,
                    "treeTokens": {"prompt": 0, "completion": 0},
                    "turns": [
                        {
                            "turnId": "turn_l",
                            "stopReason": None,
                            "startedAt": "2026-11-29T00:00:02.000Z",
                            "endedAt": None,
                            "durationMs": None,
                        }
                    ],
                },
                {
                    "sessionId": "sess_zz_explorer",
                    "parentSessionId": "sess_lead",
                    "agentName": "explorer",
                    "cwd": "/work/demo",
                    "status": "completed",
                    "costUsd": 0.0,
                    "tokens": {"prompt": 0, "completion": 0},
                    "treeCostUsd": 0.0,
                    "treeTokens": {"prompt": 0, "completion": 0},
                    "turns": [
                        {
                            "turnId": "turn_e",
                            "stopReason": "final",
                            "startedAt": "2026-11-29T00:00:12.000Z",
                            "endedAt": "2026-11-29T00:00:16.000Z",
                            "durationMs": 4000,
                        }
                    ],
                },
            ]
        }
        first = state.to_state_dump()["sessions"][0]
        assert list(first) == [
            "sessionId",
            "parentSessionId",
            "agentName",
            "cwd",
            "status",
            "costUsd",
            "tokens",
            "treeCostUsd",
            "treeTokens",
            "turns",
        ]

    def test_same_events_same_bytes_whatever_the_session_order(self) -> None:
        lead, explorer, tester = family()

        def dump(state: DashboardState) -> bytes:
            return orjson.dumps(state.to_state_dump())

        one = dump(project_state(lead.events + explorer.events + tester.events))
        two = dump(project_state(tester.events + lead.events + explorer.events))
        three = dump(fold(lead.events + explorer.events + tester.events))
        assert one == two == three


def test_running_is_one_test_that_status_running_count_and_descendants_agree_with() -> None:
    lead = SessionLog("sess_lead", clock=0, agent="lead")
    child = SessionLog("sess_child", clock=5, parent="sess_lead", agent="child")
    grandchild = SessionLog("sess_grand", clock=6, parent="sess_child", agent="grand")
    state = project_state(lead.events + child.events + grandchild.events)
    assert [s.running for s in state.sessions.values()] == [False, False, False]  # idle: no turn
    assert state.running_count() == 0
    lead.emit("turn.started", "turn_1", promptPreview="go")
    child.simple_turn("turn_c", "work", "done")
    state = project_state(lead.events + child.events + grandchild.events)
    assert state.sessions["sess_lead"].running and state.sessions["sess_lead"].status == "running"
    assert not state.sessions["sess_child"].running and state.sessions["sess_child"].status == "completed"
    assert state.running_count() == 1
    assert state.descendants("sess_lead") == ["sess_child", "sess_grand"]
    assert state.agent_path("sess_grand") == ("lead", "child", "grand")
    lead.emit("turn.completed", "turn_1", stopReason="cancelled")
    state = project_state(lead.events + child.events + grandchild.events)
    assert not state.sessions["sess_lead"].running and state.running_count() == 0
