"""Real agents' orders, played by the scripted test agent: what our log and queue make of them.

Each scenario sends its updates in the order a real agent does (`docs/acp.md`, and the quirks
table `agent_tui/acp/quirks.py` that names these tests): a call sent before its input streamed,
a call marked `in_progress` before its question, a question naming only the call, a deny the
agent answers by ending its prompt `cancelled`, the agent's own cost. Every message is checked
against the SDK's schema, every log against our chains.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_support import Harness, QueuePrompter, script_agent_config
from support_terminal import assert_safe

from agent_tui.acp.permissions import AcpPermissionAnswer, AgentOption
from agent_tui.costs.prices import shipped_prices
from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events import Event
from agent_tui.events.chains import chain_violations
from agent_tui.reducer import DashboardState, apply_event
from agent_tui.tui.screens.approval import option_label

pytestmark = pytest.mark.anyio

RM = "rm -rf build"


def script(*steps: Any) -> str:
    return "script " + json.dumps(list(steps))


def call(call_id: str, title: str, raw_input: Any, *, status: str = "pending", kind: str = "execute") -> dict:
    """A `tool_call` as agents send it."""
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title, "kind": kind, "status": status,
            "rawInput": raw_input}  # fmt: skip


def update(call_id: str, **fields: Any) -> dict:
    """A `tool_call_update` (fields by their wire names)."""
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}


def text(value: str) -> list[dict]:
    return [{"type": "content", "content": {"type": "text", "text": value}}]


def payloads(log: list[Event], kind: str, call_id: str | None = None) -> list[dict]:
    return [
        event.payload
        for event in log
        if event.type == kind and (call_id is None or event.payload.get("toolCallId") == call_id)
    ]


def kinds_of(log: list[Event], call_id: str) -> list[str]:
    """The events of one call, `permission.resolved` as `resolved:<decision>:<actor>`."""
    kinds = []
    for event in log:
        if event.payload.get("toolCallId") != call_id:
            continue
        if event.type == "permission.resolved":
            kinds.append(f"resolved:{event.payload['decision']}:{event.payload['actor']}")
        else:
            kinds.append(event.type)
    return kinds


def said(log: list[Event]) -> str:
    return "".join(p["text"] for p in payloads(log, "model.delta"))


async def run(
    tmp_path: Path, prompt: str, decide: Any, *agent_args: str
) -> tuple[list[Event], Harness, QueuePrompter]:
    prompter = QueuePrompter(decide)
    async with Harness(tmp_path / "logs", prompter) as harness:
        session = await harness.agents.start(script_agent_config(*agent_args), tmp_path, prompt=prompt)
        await session.turn.wait()  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert harness.validator.problems == []
    assert chain_violations(log) == []
    return log, harness, prompter


ASKED_RM = {
    "toolCallId": "t1",
    "title": RM,
    "kind": "execute",
    "status": "pending",
    "rawInput": {"command": RM},
}
RAN_RM = update(
    "t1", status="completed", content=text("```console\nremoved\n```"),
    _meta={"terminal_exit": {"terminal_id": "t1", "exit_code": 0, "signal": None}},
)  # fmt: skip


@pytest.mark.parametrize("refined", [True, False], ids=["input-streamed-first", "asked-first"])
async def test_a_call_sent_before_its_input_is_requested_with_its_input(
    tmp_path: Path, refined: bool
) -> None:
    """Claude's adapter: `tool_call` titled `Terminal` with `rawInput: {}`, then (or not) the
    input, then the question with the whole call: the request carries the real command, and
    the risk is what our shell classifier says of it; the first update is kept as it came."""
    steps: list[dict[str, Any]] = [{"send": call("t1", "Terminal", {})}]
    if refined:
        steps.append({"send": update("t1", rawInput={"command": RM}, title=RM, kind="execute")})
        # Its text content describes the command; it is not output (the call has not run).
        steps.append(
            {
                "send": update(
                    "t1", rawInput={"command": RM, "description": "Remove"}, title=RM, content=text("Remove")
                )
            }
        )
    steps.append({"ask": ASKED_RM, "allowed": [{"send": RAN_RM}]})
    log, _, prompter = await run(tmp_path, script(*steps), lambda request: PermissionAnswer("allow"))

    [requested] = payloads(log, "model.tool_call_requested")
    assert requested["args"]["rawInput"] == {"command": RM} and requested["args"]["title"] == RM
    [question] = prompter.requests
    assert (question.risk, question.args_preview) == ("destructive", RM)
    [asked] = payloads(log, "permission.requested")
    assert (asked["risk"], asked["argsPreview"]) == ("destructive", RM)
    records = [p["data"] for p in payloads(log, "source.record") if p["data"].get("toolCallId") == "t1"]
    assert records[0] == {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Terminal",
                          "kind": "execute", "status": "pending", "rawInput": {}}  # fmt: skip
    assert kinds_of(log, "t1") == [
        "model.tool_call_requested", "permission.requested", "resolved:ask:policy", "resolved:allow:user",
        "tool.started", "tool.completed",
    ]  # fmt: skip
    [done] = payloads(log, "tool.completed")
    assert done["exitCode"] == 0  # `_meta.terminal_exit`


OPENCODE_RUNNING = [
    {"send": call("t1", "bash", {"cwd": "."})},  # opencode: the directory first, no command yet
    {
        "send": update(
            "t1", status="in_progress", rawInput={"command": "touch made.txt"}, title="touch made.txt"
        )
    },
]


async def test_a_call_marked_running_before_its_question_starts_only_after_the_allow(tmp_path: Path) -> None:
    """opencode and Vibe: `in_progress`, then the question. The question reaches the queue (the
    dashboard's count of approvals, from the events), nothing says the agent ran it without
    asking, and `tool.started` follows the user's allow."""
    finish = update("t1", status="completed", content=text(""),
                    rawOutput={"output": "", "metadata": {"exit": 0, "output": ""}})  # fmt: skip
    steps = [
        *OPENCODE_RUNNING,
        {"ask": {"toolCallId": "t1", "title": "touch made.txt"}, "allowed": [{"send": finish}]},
    ]
    async with Harness(tmp_path / "logs", None) as harness:
        questions = harness.engine.questions
        questions.answerer = None  # the people answer
        session = await harness.agents.start(script_agent_config(), tmp_path, prompt=script(*steps))
        await harness.watch.wait_for(
            lambda e: e.type == "permission.resolved" and e.payload["decision"] == "ask"
        )
        state = DashboardState()
        for event in harness.watch.events:
            apply_event(state, event)
        [queued] = state.pending_permissions()
        assert (queued.tool_call_id, queued.risk) == ("t1", "write")
        assert not [e for e in harness.watch.events if e.type == "tool.started"]
        while questions.request(session.session_id, queued.request_id) is None:
            await anyio.sleep(0)
        assert questions.answer(session.session_id, queued.request_id, PermissionAnswer("allow")) is None
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert harness.validator.problems == []
    assert chain_violations(log) == []
    assert kinds_of(log, "t1") == [
        "model.tool_call_requested", "permission.requested", "resolved:ask:policy", "resolved:allow:user",
        "tool.started", "tool.completed",
    ]  # fmt: skip
    [requested] = payloads(log, "model.tool_call_requested")
    assert requested["args"]["rawInput"] == {"command": "touch made.txt"}
    [done] = payloads(log, "tool.completed")
    assert (done["result"], done["exitCode"]) == ("", 0)  # opencode's `metadata.exit`
    assert said(log) == "told yes"


async def test_a_denied_call_the_agent_marked_running_never_starts(tmp_path: Path) -> None:
    steps = [
        *OPENCODE_RUNNING,
        {
            "ask": {"toolCallId": "t1"},
            "denied": [{"send": update("t1", status="failed", content=text("rejected"))}],
        },
    ]
    log, _, prompter = await run(tmp_path, script(*steps), lambda request: PermissionAnswer("deny"))
    assert len(prompter.requests) == 1
    assert kinds_of(log, "t1") == [
        "model.tool_call_requested", "permission.requested", "resolved:ask:policy", "resolved:deny:user",
        "tool.failed",
    ]  # fmt: skip
    [failed] = payloads(log, "tool.failed")
    assert failed["errorCode"] == "permission_denied"


async def test_a_call_that_shows_output_without_a_question_ran_by_the_agents_policy(tmp_path: Path) -> None:
    """Output while nothing was asked is evidence it runs: then the agent's own policy allowed it."""
    steps = [
        {"send": call("t1", "ls", {"command": "ls"}, status="in_progress")},
        {"send": update("t1", content=text("a.txt\n"))},
        {
            "send": update(
                "t1", status="completed", rawOutput={"exit_code": 0, "stdout": "a.txt\n", "stderr": ""}
            )
        },
    ]
    log, _, prompter = await run(tmp_path, script(*steps), lambda request: None)
    assert prompter.requests == []
    assert kinds_of(log, "t1") == [
        "model.tool_call_requested", "permission.requested", "resolved:allow:policy", "tool.started",
        "tool.delta", "tool.completed",
    ]  # fmt: skip
    [done] = payloads(log, "tool.completed")
    assert (done["result"], done["exitCode"]) == ("a.txt\n", 0)


async def test_a_question_that_names_only_the_call_shows_what_the_call_said(tmp_path: Path) -> None:
    """Vibe announces a call waiting for approval `in_progress`, with text that describes it, then
    asks with a tool call that carries only its id: the text is no sign that it runs, and the
    question shows the call's title and the risk of its command, as its updates said them."""
    announced = {**call("t1", "rm -rf cache", {"command": "rm -rf cache"}, status="in_progress"),
                 "content": text("rm -rf cache")}  # fmt: skip
    steps = [
        {"send": announced},
        {
            "ask": {"toolCallId": "t1"},
            "allowed": [{"send": update("t1", status="completed", content=text("ok"))}],
        },
    ]
    log, _, prompter = await run(tmp_path, script(*steps), lambda request: PermissionAnswer("allow"))
    [question] = prompter.requests
    assert (question.args_preview, question.risk) == ("rm -rf cache", "destructive")
    assert kinds_of(log, "t1") == [
        "model.tool_call_requested", "permission.requested", "resolved:ask:policy", "resolved:allow:user",
        "tool.started", "tool.completed",
    ]  # fmt: skip
    [done] = payloads(log, "tool.completed")
    assert done["result"] == "ok" and "exitCode" not in done  # none reported, none made up


CODEX_ASKS = [
    {"send": call("t1", "rm -rf x", {"command": ["bash", "-lc", "rm -rf x"]})},
    {"ask": {"toolCallId": "t1", "title": "rm -rf x", "kind": "execute"}, "denied": [{"stop": "cancelled"}],
     "allowed": [{"stop": "end_turn"}]},
]  # fmt: skip


async def test_a_deny_stays_a_denial_when_the_agent_ends_the_prompt_cancelled(tmp_path: Path) -> None:
    """Codex ends its prompt `cancelled` after a deny and says nothing more of the call: the
    call is still the user's denial, the turn ends as the agent ended it, and the state dump
    says who decided."""
    log, _, _ = await run(tmp_path, script(*CODEX_ASKS), lambda request: PermissionAnswer("deny"))
    [failed] = payloads(log, "tool.failed")
    assert failed["errorCode"] == "permission_denied"
    [answer] = [p for p in payloads(log, "permission.resolved") if p["decision"] != "ask"]
    assert (answer["decision"], answer["actor"]) == ("deny", "user")
    [end] = payloads(log, "turn.completed")
    assert end["stopReason"] == "cancelled"
    state = DashboardState()
    for event in log:
        apply_event(state, event)
    [turn] = state.to_state_dump()["sessions"][0]["turns"]
    assert turn["toolCalls"] == [
        {"toolCallId": "t1", "tool": "execute", "status": "denied", "decision": "deny", "decidedBy": "user"}
    ]


async def test_a_withdrawn_question_stays_cancelled(tmp_path: Path) -> None:
    """Our stop withdraws the question: that is no denial by the user."""
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None)) as harness:
        session = await harness.agents.start(script_agent_config(), tmp_path, prompt=script(*CODEX_ASKS))
        await harness.watch.wait_for(
            lambda e: e.type == "permission.resolved" and e.payload["decision"] == "ask"
        )
        assert session.cancel() is True
        assert await session.turn.wait() == "cancelled"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert chain_violations(log) == []
    [failed] = payloads(log, "tool.failed")
    assert failed["errorCode"] == "cancelled"
    [answer] = [p for p in payloads(log, "permission.resolved") if p["decision"] != "ask"]
    assert (answer["decision"], answer["actor"]) == ("deny", "system")


def usage(amount: float, currency: str = "USD") -> dict:
    return {"sessionUpdate": "usage_update", "used": 1000, "size": 200000,
            "cost": {"amount": amount, "currency": currency}}  # fmt: skip


async def test_the_agents_own_cost_is_its_turns_cost(tmp_path: Path) -> None:
    """Claude's adapter reports the session's cost so far in USD: each turn costs what it grew
    by, and the dashboard's state has dollars, not "price unknown"."""
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None)) as harness:
        session = await harness.agents.start(
            script_agent_config(), tmp_path, prompt=script({"send": usage(0.25)}, {"say": "one"})
        )
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        assert await session.prompt(script({"send": usage(0.40)}, {"say": "two"})).wait() == "final"
        assert await session.prompt(script({"send": usage(9.0, "EUR")}, {"say": "three"})).wait() == "final"
        log = harness.log(session.session_id)
    costs = [p.get("usage", {}).get("costUsd") for p in payloads(log, "turn.completed")]
    assert costs[0] == pytest.approx(0.25) and costs[1] == pytest.approx(0.15) and costs[2] is None
    state = DashboardState()
    for event in log:
        apply_event(state, event)
    [dumped] = state.to_state_dump()["sessions"]
    assert dumped["costUsd"] == pytest.approx(0.40)


ASK_LS = {"toolCallId": "", "title": "ls -la", "kind": "execute", "rawInput": {"command": "ls -la"}}


def ask_ls(call_id: str) -> list[dict[str, Any]]:
    done = update(call_id, status="completed", content=text("a.txt\n"))
    return [{"send": call(call_id, "ls -la", {"command": "ls -la"})},
            {"ask": {**ASK_LS, "toolCallId": call_id}, "allowed": [{"send": done}]}]  # fmt: skip


async def test_allow_for_this_session_is_ours(tmp_path: Path) -> None:
    """ "Allow for this session" tells the agent `allow_once` (never its persistent option) and
    our session rule answers its next question about the same command without asking."""
    log, _, prompter = await run(
        tmp_path, script(*ask_ls("t1"), *ask_ls("t2")), lambda request: PermissionAnswer("allow", "session")
    )
    assert len(prompter.requests) == 1
    assert said(log) == "told yestold yes"
    second = [
        (p["decision"], p["actor"], p.get("policy")) for p in payloads(log, "permission.resolved", "t2")
    ]
    assert second == [("allow", "policy", "session:shell")]
    assert [p["toolCallId"] for p in payloads(log, "tool.completed")] == ["t1", "t2"]


async def test_the_agents_always_is_used_when_picked_but_never_for_a_protected_path(tmp_path: Path) -> None:
    hook = "echo x > .git/hooks/pre-commit"
    steps = [
        {"send": call("t1", "ls -la", {"command": "ls -la"})},
        {"ask": {**ASK_LS, "toolCallId": "t1"}},
        {"send": call("t2", hook, {"command": hook})},
        {"ask": {"toolCallId": "t2", "title": hook, "kind": "execute", "rawInput": {"command": hook}}},
    ]
    log, _, _ = await run(
        tmp_path, script(*steps), lambda request: AcpPermissionAnswer("allow", "session", option_id="always")
    )
    assert said(log) == "told alwaystold yes"
    [protected] = [p for p in payloads(log, "permission.resolved", "t2") if p["decision"] != "ask"]
    assert protected["reason"] == (
        "'Always' would be remembered by the agent, and the call changes a protected path: chose 'Yes' instead"
    )


async def test_a_question_that_names_the_call_better_than_its_updates_is_judged_as_it_says(
    tmp_path: Path,
) -> None:
    """The call was requested without input (its `in_progress` released it); the question brings
    the command: the question shows it, with our classifier's risk for it, and keeps it."""
    steps = [
        {"send": call("t1", "Terminal", {})},
        {"send": update("t1", status="in_progress")},
        {"ask": ASKED_RM, "denied": [{"send": update("t1", status="failed")}]},
    ]
    log, _, prompter = await run(tmp_path, script(*steps), lambda request: PermissionAnswer("deny"))
    [question] = prompter.requests
    assert (question.args_preview, question.risk) == (RM, "destructive")
    [requested] = payloads(log, "model.tool_call_requested")
    assert requested["args"]["title"] == "Terminal"  # as the updates said it when it was requested
    [kept] = [p["data"] for p in payloads(log, "source.record") if p["recordType"] == "request_permission"]
    assert kept["toolCall"]["rawInput"] == {"command": RM}
    [failed] = payloads(log, "tool.failed")
    assert failed["errorCode"] == "permission_denied"


def model_option(model: str) -> dict:
    return {"sessionUpdate": "config_option_update", "configOptions": [
        {"type": "select", "id": "model", "name": "Model", "category": "model", "currentValue": model,
         "options": [{"value": model, "name": model}]}]}  # fmt: skip


TOKENS = {"usage": {"totalTokens": 3000, "inputTokens": 2000, "outputTokens": 1000}}


@pytest.mark.parametrize(("model", "priced"), [("gpt-5.4", True), ("a-model-nobody-prices", False)])
async def test_tokens_without_the_agents_cost_are_priced_as_ours(
    tmp_path: Path, model: str, priced: bool
) -> None:
    """An agent that reports tokens and no cost: they are priced by our table as the model it
    says it uses, exactly as our own agents' tokens; an unknown model stays "price unknown"."""
    log, _, _ = await run(
        tmp_path, script({"send": model_option(model)}, {"say": "hi"}, TOKENS), lambda r: None
    )
    [end] = payloads(log, "turn.completed")
    expected = shipped_prices().cost_usd(model, 2000, 1000)
    assert (expected is not None) is priced
    assert end["usage"].get("costUsd") == expected
    assert (end["usage"]["promptTokens"], end["usage"]["completionTokens"]) == (2000, 1000)


async def test_a_hostile_agents_options_are_kept_bounded_and_as_text(tmp_path: Path) -> None:
    """An agent's option names are its text: of forty options, one named with escape sequences and
    a megabyte of words, the log keeps sixteen, each cut to what a person reads; the dialog shows
    the escapes as text."""
    hostile = "\x1b]0;PWNED\x07\x1b[2JAllow " + "x" * 1_000_000
    options = [{"optionId": "evil", "name": hostile, "kind": "allow_once"}]
    options += [{"optionId": f"o{n}", "name": f"Option {n}", "kind": "reject_once"} for n in range(39)]
    steps = [{"ask": {"toolCallId": "t1", "title": "ls", "kind": "execute"}, "options": options}]
    log, _, _ = await run(tmp_path, script(*steps), lambda request: PermissionAnswer("deny"))
    assert chain_violations(log) == []
    [asked] = payloads(log, "permission.requested")
    kept = asked["options"]
    assert len(kept) == 16 and kept[1] == {"optionId": "o0", "name": "Option 0", "kind": "reject_once"}
    name = kept[0]["name"]
    assert len(name) <= 300 and name.startswith("\x1b]0;PWNED")  # the log keeps what was sent
    shown = option_label(1, AgentOption("evil", name, "allow_once")).plain  # the dialog shows it as text
    assert_safe(shown, "an agent's option in the dialog")
    assert "␛]0;PWNED" in shown
