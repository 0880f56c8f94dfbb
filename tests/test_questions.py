"""`Questions`: one owner of the questions waiting on a host; the first answer wins."""

from __future__ import annotations

import asyncio

import pytest

from agent_tui.engine.permissions import PermissionAnswer, PermissionRequest
from agent_tui.engine.questions import FirstAnswer, Questions, fixed_answer, no_one_to_ask

REQUEST = PermissionRequest(
    session_id="s",
    turn_id="t",
    request_id="r",
    tool_call_id="c",
    tool="shell",
    risk="destructive",
    args_preview='cmd="rm x"',
    args={"cmd": "rm x"},
    agent_path=("lead",),
    warning="careful",
)


async def asked(questions: Questions) -> asyncio.Task[PermissionAnswer]:
    task = asyncio.ensure_future(questions.ask(REQUEST))
    while not questions.waiting():
        await asyncio.sleep(0)
    return task


@pytest.mark.anyio
async def test_a_fixed_answer_answers_every_question_the_same_and_none_waits() -> None:
    questions = Questions(fixed_answer("deny", reason="--approve deny"))
    answers = [await questions.ask(REQUEST) for _ in range(2)]
    assert answers == [PermissionAnswer("deny", "once", reason="--approve deny")] * 2
    assert questions.waiting() == []
    first = questions.answer("s", "r", PermissionAnswer("allow"))
    assert first is not None and (first.actor, first.decision) == ("user", "deny")


@pytest.mark.anyio
async def test_with_no_one_to_ask_a_question_is_denied_by_system() -> None:
    answer = await Questions().ask(REQUEST)
    assert answer == await no_one_to_ask(REQUEST)
    assert (answer.decision, answer.actor) == ("deny", "system")


@pytest.mark.anyio
async def test_the_first_of_two_answers_wins_and_the_second_hears_who() -> None:
    questions = Questions(None)
    task = await asked(questions)
    assert questions.request("s", "r") == REQUEST
    by = {"dashboard": "laptop", "user": "ana", "host": "box"}
    assert questions.answer("s", "r", PermissionAnswer("allow", "session"), by=by) is None
    second = questions.answer("s", "r", PermissionAnswer("deny"))
    assert isinstance(second, FirstAnswer)
    assert (second.by, second.actor, second.decision) == (by, "user", "allow")
    assert await task == PermissionAnswer("allow", "session", by=by)
    assert questions.waiting() == [] and questions.request("s", "r") is None


@pytest.mark.anyio
async def test_an_answer_to_a_question_that_never_waited_is_refused_with_a_sentence() -> None:
    with pytest.raises(LookupError, match="no permission request r waits in session s"):
        Questions(None).answer("s", "r", PermissionAnswer("allow"))


@pytest.mark.anyio
async def test_a_cancelled_ask_withdraws_the_question() -> None:
    questions = Questions(None)
    task = await asked(questions)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert questions.waiting() == []
    first = questions.answer("s", "r", PermissionAnswer("allow"))
    assert first is not None and (first.actor, first.decision) == ("system", "deny")


@pytest.mark.anyio
async def test_a_question_nobody_answers_in_time_is_denied_by_system() -> None:
    answer = await Questions(None, ask_timeout=0.01).ask(REQUEST)
    assert (answer.decision, answer.actor) == ("deny", "system")
    assert answer.reason is not None and "--ask-timeout" in answer.reason


@pytest.mark.anyio
async def test_an_answerer_that_raises_is_a_denial_by_system() -> None:
    async def broken(request: PermissionRequest) -> PermissionAnswer:
        raise RuntimeError("the client is gone")

    answer = await Questions(broken).ask(REQUEST)
    assert (answer.decision, answer.actor) == ("deny", "system")
    assert answer.reason == "the question failed: the client is gone"
