"""The workbench on a long history: a finished session is listed from its log's ends and read
whole by the engine only when it is used (chosen, continued, budgeted), a bounded number of them
at a time; an unfinished one is reopened (and repaired) at once; the totals, the days' and the
budgets are the whole logs' either way.

Real logs on disk (turns that spent money before the tail the list reads, a budget raised in an
earlier turn, sub-agents), a real engine with a scripted model, checked against the same
history opened the old way: every session reopened whole at start.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from replay_logs import SessionLog
from support_engine import HeldPrompter
from support_workbench import agent_script, scripted_models, wait_for

from agent_tui.costs.budgets import BudgetLimit
from agent_tui.engine.provider import ModelRequest, ProviderChunk
from agent_tui.engine.questions import Questions
from agent_tui.engine.scenario import ScriptedToolCall, Step
from agent_tui.engine.scripted import ScriptedProvider
from agent_tui.events import Event
from agent_tui.reducer import DashboardState, Spend, apply_event
from agent_tui.reducer.earlier_spend import EarlierSpend, add_earlier_spend
from agent_tui.replay.catalog import TAIL_BYTES
from agent_tui.runtime.opened_sessions import OpenedSessions
from agent_tui.runtime.workbench import SendRefused, Sent, Workbench
from agent_tui.tui.app import AgentTuiApp

COUNT = 9
CHILDREN = 3  # the last ones are sub-agents of the first ones
TURNS = 3
PAD = "x" * (TAIL_BYTES // 2)  # a turn of about half the tail read: earlier turns lie before it
DAY_MS = 86_400_000


def _history(directory: Path, count: int = COUNT) -> list[str]:
    """`count` finished sessions of `TURNS` turns that each spent money; session 1 has a budget
    raised after its first turn; the second half ran a day later."""
    directory.mkdir(parents=True, exist_ok=True)
    ids = [f"sess_{k:03d}" for k in range(count)]
    for k, sid in enumerate(ids):
        log = SessionLog(sid)
        millis = k * 100 + (DAY_MS if k >= count // 2 else 0)
        payload: dict[str, Any] = {"cwd": str(directory), "client": "agent-tui", "agentName": f"agent-{k}"}
        if k >= count - CHILDREN:
            payload["parentSessionId"] = ids[k - (count - CHILDREN)]
        if k == 1:
            payload["budget"] = {"usd": 5.0}
        log.add("session.created", None, payload, millis)
        for turn in range(1, TURNS + 1):
            millis = _turn(log, turn, millis + 1, k)
            if k == 1 and turn == 1:
                log.add("session.budget", None, {"usd": 7.5, "by": "ana"}, millis)
        log.write(directory)
    return ids


def _turn(log: SessionLog, turn: int, millis: int, k: int) -> int:
    tid = f"turn_{turn}"
    log.add("turn.started", tid, {"promptPreview": f"prompt {turn}"}, millis)
    log.add("user.message", tid, {"content": f"task {turn} of {k}"}, millis)
    log.add("model.delta", tid, {"text": PAD}, millis)
    call = {
        "step": 1,
        "promptTokens": 1000 * turn + k,
        "completionTokens": 10,
        "costUsd": 0.01 * turn + k * 0.001,
    }
    log.add("model.usage", tid, call, millis)
    total = {"promptTokens": call["promptTokens"], "completionTokens": 10, "costUsd": call["costUsd"]}
    log.add("turn.completed", tid, {"stopReason": "final", "usage": total}, millis + 1)
    return millis + 2


def _workbench(directory: Path, provider: ScriptedProvider | None = None) -> Workbench:
    return Workbench.for_project(
        project=directory,
        sessions_dir=directory,
        models=scripted_models(provider or ScriptedProvider()),
        questions=None,
    )


def _known(workbench: Workbench, session_id: str) -> tuple[Any, ...]:
    """What the engine knows of a session that a follow-up goes on from."""
    info = workbench.engine.session(session_id)
    return (
        info.id,
        info.cwd,
        info.client,
        workbench.engine.budgets.index.parent_of(session_id),
        info.label,
        info.last_sequence,
        info.open_turn,
        list(info.transcript.messages),
    )


class _Recording(ScriptedProvider):
    """The scripted model, keeping what it was asked."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.requests: list[ModelRequest] = []

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        self.requests.append(request)
        return super().stream(request)


class _Folded:
    """A dashboard state fed as the live run feeds it (events, then what earlier turns spent)."""

    def __init__(self) -> None:
        self.state = DashboardState()

    def fold(self, event: Event) -> None:
        apply_event(self.state, event)

    def earlier(self, session_id: str, found: EarlierSpend) -> None:
        add_earlier_spend(self.state, session_id, found)


async def _eager(directory: Path) -> tuple[dict[str, tuple[Any, ...]], dict[str, Any], _Folded]:
    """Every session reopened whole at start: what the engine knows, the budgets, the list."""
    workbench = _workbench(directory)
    folded = _Folded()
    async with workbench.engine:
        assert await workbench.hydrate(folded.fold, folded.earlier) == []
        known = {info.id: _known(workbench, info.id) for info in workbench.engine.sessions()}
        budgets = _budgets(workbench, list(known))
        await workbench.close()
    workbench.close_store()
    return known, budgets, folded


def _budgets(workbench: Workbench, ids: list[str]) -> dict[str, Any]:
    """Each session's budget and what its tree spent (dollars to the nano: added in another order)."""
    keeper = workbench.engine.budgets
    spent = {sid: keeper.index.tree_spend(sid) for sid in ids}
    return {sid: (keeper.index.budget(sid), round(spent[sid].usd, 9), spent[sid].tokens) for sid in ids}


def _totals(state: DashboardState) -> dict[str, Any]:
    """Each session's spend, budget and tree's spend, and each day's (dollars to the nano)."""
    return {
        "sessions": {
            sid: (_spend(view.spend), view.budget_usd, _spend(state.tree_spend(sid)))
            for sid, view in state.sessions.items()
        },
        "days": {day: _spend(spend) for day, spend in state.spend_by_day.items()},
    }


def _spend(spend: Spend) -> tuple[Any, ...]:
    return (*spend._replace(cost_usd=0.0), round(spend.cost_usd, 9))


@pytest.mark.anyio
class TestFinishedSessionsWaitUntilUsed:
    async def test_a_session_opened_on_demand_is_the_one_opened_at_start_and_the_totals_are_the_whole_logs(
        self, tmp_path: Path
    ) -> None:
        ids = _history(tmp_path)
        known, budgets, eager = await _eager(tmp_path)
        assert set(known) == set(ids)
        workbench = _workbench(tmp_path)
        lazy = _Folded()
        async with workbench.engine:
            assert await workbench.hydrate(lazy.fold, lazy.earlier, lazy=True) == []
            # Listed, not read: the engine holds none of them, yet knows every budget and spend.
            assert workbench.engine.sessions() == [] and set(workbench.listed) == set(ids)
            assert _budgets(workbench, ids) == budgets
            assert _totals(lazy.state) == _totals(eager.state)
            child = ids[-1]  # a sub-agent: its parent is read first (its depth, its deliveries)
            assert workbench.open_listed(child) is None
            parent = known[child][3]
            assert {info.id for info in workbench.engine.sessions()} == {child, parent}
            for sid in ids:
                assert workbench.open_listed(sid) is None
                assert _known(workbench, sid) == known[sid]
            assert _budgets(workbench, ids) == budgets  # read whole: counted once
            await workbench.close()
        workbench.close_store()

    async def test_a_follow_up_on_a_session_not_read_yet_goes_on_from_its_whole_transcript(
        self, tmp_path: Path
    ) -> None:
        ids = _history(tmp_path)
        provider = _Recording(agents={"agent-2": agent_script(Step(text=["on it"]))})
        workbench = _workbench(tmp_path, provider)
        async with workbench.engine:
            await workbench.hydrate(lambda event: None, lazy=True)
            assert ids[2] in workbench.listed
            assert workbench.send(ids[2], "one more thing") == Sent("started")
            assert ids[2] not in workbench.listed
            with anyio.fail_after(10):
                while workbench.is_running(ids[2]):
                    await anyio.sleep(0.01)
            await workbench.close()
        workbench.close_store()
        lines = [orjson.loads(raw) for raw in (tmp_path / f"{ids[2]}.jsonl").read_bytes().splitlines()]
        assert [line["sequence"] for line in lines] == list(range(1, len(lines) + 1))
        started = [line for line in lines if line["type"] == "turn.started"]
        assert len(started) == TURNS + 1 and lines[-1]["type"] == "turn.completed"
        assert lines[-1]["payload"]["stopReason"] == "final"
        # The model was asked with the earlier turns' prompts before the new one.
        asked = [m for m in provider.requests[-1].messages if m.role == "user"]
        assert [m.text for m in asked] == [
            *(f"task {turn} of 2" for turn in range(1, TURNS + 1)),
            "one more thing",
        ]

    async def test_a_log_written_since_it_was_listed_is_refused_not_continued(self, tmp_path: Path) -> None:
        ids = _history(tmp_path)
        workbench = _workbench(tmp_path)
        async with workbench.engine:
            await workbench.hydrate(lambda event: None, lazy=True)
            log = SessionLog(ids[0])
            log.sequence = 5 * TURNS + 1
            with (tmp_path / f"{ids[0]}.jsonl").open("ab") as out:
                out.write(log.add("session.budget", None, {"usd": 1.0, "by": "elsewhere"}, 10**9) + b"\n")
            answer = workbench.send(ids[0], "go on")
            assert isinstance(answer, SendRefused) and "after this dashboard listed it" in answer.reason
            assert workbench.engine.sessions() == []
            await workbench.close()
        workbench.close_store()

    async def test_the_engine_never_holds_more_finished_sessions_than_its_bound(self, tmp_path: Path) -> None:
        ids = _history(tmp_path, count=12)
        known, budgets_then, _eager_list = await _eager(tmp_path)
        workbench = _workbench(tmp_path)
        workbench.opened = OpenedSessions(bound=4)
        async with workbench.engine:
            await workbench.hydrate(lambda event: None, lazy=True)
            roots = [sid for sid in ids if known[sid][3] is None]
            for sid in [*roots, *reversed(roots)]:  # then again: each read again after it was let go
                assert workbench.open_listed(sid) is None
                assert len(workbench.opened) <= 4 and len(workbench.engine.sessions()) <= 4
                assert sid in workbench.opened
                assert _known(workbench, sid) == known[sid]
            # The least recently used went first: the last four chosen stay.
            assert {info.id for info in workbench.engine.sessions()} == set(roots[:4])
            assert set(workbench.listed) == set(ids) - set(roots[:4])
            assert _budgets(workbench, ids) == budgets_then
            await workbench.close()
        workbench.close_store()

    async def test_a_session_with_a_turn_waiting_for_an_answer_and_its_parent_are_never_let_go(
        self, tmp_path: Path
    ) -> None:
        ids = _history(tmp_path)
        child = ids[-1]
        parent = f"sess_{COUNT - 1 - (COUNT - CHILDREN):03d}"
        write = ScriptedToolCall(tool="write_file", args={"path": "n.txt", "content": "x"})
        provider = ScriptedProvider(
            agents={f"agent-{COUNT - 1}": agent_script(Step(text=["W."], toolCalls=[write]))}
        )
        prompter = HeldPrompter()
        workbench = Workbench.for_project(
            project=tmp_path,
            sessions_dir=tmp_path,
            models=scripted_models(provider),
            questions=Questions(prompter.ask),
            data_dir=tmp_path / "data",
        )
        workbench.opened = OpenedSessions(bound=1)
        async with workbench.engine:
            await workbench.hydrate(lambda event: None, lazy=True)
            assert workbench.send(child, "write it") == Sent("started")
            with anyio.fail_after(10):
                await prompter.asked.wait()  # held at its ask: its turn is unfinished
            for sid in ids[: COUNT - CHILDREN]:
                assert workbench.open_listed(sid) is None
            held = {info.id for info in workbench.engine.sessions()}
            assert {child, parent} <= held and len(held) == 3  # the bound's one, and the two kept
            assert workbench.is_running(child)
            await workbench.close()
        workbench.close_store()

    async def test_a_session_an_action_is_using_is_not_let_go_while_the_action_awaits(
        self, tmp_path: Path
    ) -> None:
        ids = _history(tmp_path, count=6)
        workbench = _workbench(tmp_path)
        workbench.opened = OpenedSessions(bound=0)  # each one let go as soon as another is read
        async with workbench.engine:
            await workbench.hydrate(lambda event: None, lazy=True)
            roots = [
                sid
                for sid in ids
                if not ((stored := workbench.records[sid].stored) and stored.parent_session_id)
            ]
            target, others = roots[0], roots[1:]
            engine_set_budget = workbench.engine.set_budget

            async def meanwhile_others_are_chosen(
                session_id: str, budget: BudgetLimit | None, *, by: str | None = None
            ) -> Event:
                for other in others:  # (the user moves through the tree while the budget is set)
                    assert workbench.open_listed(other) is None
                assert target not in workbench.listed  # still read, still claimed
                return await engine_set_budget(session_id, budget, by=by)

            workbench.engine.set_budget = meanwhile_others_are_chosen  # type: ignore[method-assign]
            await workbench.set_budget(target, BudgetLimit(usd=2.5))
            written = [e for e in workbench.engine.store.replay(target) if e.type == "session.budget"]
            assert [e.payload.get("usd") for e in written] == [2.5]
            assert workbench.open_listed(others[0]) is None  # the action over: it may go now
            assert target in workbench.listed
            await workbench.close()
        workbench.close_store()

    async def test_a_session_read_and_let_go_before_its_spend_lines_are_scanned_counts_once(
        self, tmp_path: Path
    ) -> None:
        ids = _history(tmp_path)
        _known_then, budgets, eager = await _eager(tmp_path)
        workbench = _workbench(tmp_path)
        workbench.opened = OpenedSessions(bound=0)  # each one let go as soon as it was read
        lazy = _Folded()
        read: list[str] = []
        async with workbench.engine:

            async def read_each_as_it_is_listed() -> None:
                while len(read) < len(ids):
                    for sid in [sid for sid in workbench.listed if sid not in read]:
                        assert workbench.open_listed(sid) is None
                        read.append(sid)
                    await anyio.sleep(0)

            async with anyio.create_task_group() as group:
                group.start_soon(read_each_as_it_is_listed)
                assert await workbench.hydrate(lazy.fold, lazy.earlier, lazy=True) == []
            # Only the one read last (and its parent) is still read: the bound is 0.
            last = read[-1]
            parent = workbench.engine.budgets.index.parent_of(last)
            assert {info.id for info in workbench.engine.sessions()} == {last, parent} - {None}
            assert _budgets(workbench, ids) == budgets
            assert _totals(lazy.state) == _totals(eager.state)
            await workbench.close()
        workbench.close_store()


@pytest.mark.anyio
class TestUnfinishedSessionsAreReopenedAtOnce:
    async def test_a_log_that_stops_inside_a_turn_is_closed_and_one_with_a_torn_line_is_cut(
        self, tmp_path: Path
    ) -> None:
        ids = _history(tmp_path, count=4)
        open_turn = tmp_path / f"{ids[0]}.jsonl"
        log = SessionLog(ids[0])
        log.sequence = 5 * TURNS + 1
        with open_turn.open("ab") as out:
            out.write(log.add("turn.started", "turn_9", {"promptPreview": "cut"}, 10**9) + b"\n")
            out.write(log.add("user.message", "turn_9", {"content": "cut"}, 10**9) + b"\n")
        torn = tmp_path / f"{ids[1]}.jsonl"
        whole = torn.read_bytes()
        torn.write_bytes(whole + b'{"v":1,"id":"evt_half')
        workbench = _workbench(tmp_path)
        async with workbench.engine:
            problems = await workbench.hydrate(lambda event: None, lazy=True)
            assert {info.id for info in workbench.engine.sessions()} == {ids[0], ids[1]}
            assert set(workbench.listed) == {ids[2], ids[3]}
            await workbench.close()
        workbench.close_store()
        assert problems == []
        last = orjson.loads(open_turn.read_bytes().splitlines()[-1])
        assert (last["type"], last["turnId"], last["payload"]["stopReason"]) == (
            "turn.completed",
            "turn_9",
            "error",
        )
        assert torn.read_bytes() == whole


@pytest.mark.anyio
class TestTheDashboard:
    async def test_choosing_a_finished_session_in_the_tree_reads_it_and_its_totals_are_the_whole_logs(
        self, tmp_path: Path
    ) -> None:
        sessions = tmp_path / "sessions"
        ids = _history(sessions)
        _known_then, _budgets_then, eager = await _eager(sessions)
        app = AgentTuiApp(sessions_dir=sessions, project=tmp_path, models=scripted_models(ScriptedProvider()))
        async with app.run_test(size=(120, 40)) as pilot:
            live = app.live
            assert live is not None
            await wait_for(pilot, lambda: live.workbench is not None and live.hydrated, "the workbench")
            workbench = live.workbench
            assert workbench is not None
            assert _totals(live.state) == _totals(eager.state)
            tree = app.dashboard.session_tree
            first = tree.selected_id  # the session on screen at start is the only one read
            assert first in ids and {info.id for info in workbench.engine.sessions()} <= {first}
            await pilot.press("down")
            await wait_for(pilot, lambda: tree.selected_id not in (first, None), "another session chosen")
            chosen = tree.selected_id
            await wait_for(pilot, lambda: chosen in workbench.opened, "the session read")
            assert chosen not in workbench.listed
            assert {info.id for info in workbench.engine.sessions()} >= {chosen}
