"""The per-agent quirks table (`agent_tui/acp/quirks.py`): each entry names a real test, and the
agent-specific rules apply to the agents and versions it names only.

The scripted test agent plays each agent (`--name`/`--version` set its `agentInfo`), sending
what that agent sends: where its result's text and exit code are, and Gemini CLI's question
that names a shell command only in its title.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from acp_support import Harness, QueuePrompter, script_agent_config

from agent_tui.acp.quirks import QUIRKS, TITLE_IS_COMMAND, AgentIdentity, applies
from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events.chains import chain_violations

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).parents[1]
KNOWN_AGENTS = {
    "codex-acp",
    "@agentclientprotocol/claude-agent-acp",
    "gemini-cli",
    "OpenCode",
    "@mistralai/mistral-vibe",
}


def test_every_quirk_names_its_agent_and_a_test_that_exists() -> None:
    for quirk in QUIRKS:
        assert quirk.agent in KNOWN_AGENTS, quirk
        assert quirk.behaviour and quirk.rule, quirk
        path, name = quirk.test.split("::")
        source = (ROOT / path).read_text()
        assert re.search(rf"^(async )?def {name}\(", source, re.MULTILINE), quirk.test


@pytest.mark.parametrize(
    ("agent", "applied"),
    [
        (AgentIdentity("gemini-cli", "0.61.0"), True),
        (AgentIdentity("gemini-cli", "0.62.1-nightly"), True),
        (AgentIdentity("gemini-cli", "0.60.9"), False),
        (AgentIdentity("gemini-cli", None), False),
        (AgentIdentity("OpenCode", "1.18.33"), False),
        (None, False),
    ],
)
def test_an_agent_specific_rule_applies_in_its_agents_versions_only(
    agent: AgentIdentity | None, applied: bool
) -> None:
    assert applies(TITLE_IS_COMMAND, agent) is applied


def call_done(content: str | None, raw_output: Any, meta: Any) -> dict[str, Any]:
    done: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}
    if content is not None:
        done["content"] = [{"type": "content", "content": {"type": "text", "text": content}}]
    if raw_output is not None:
        done["rawOutput"] = raw_output
    if meta is not None:
        done["_meta"] = meta
    return done


@pytest.mark.parametrize(
    ("agent", "content", "raw_output", "meta", "result", "exit_code"),
    [
        pytest.param(
            "codex-acp", None,
            {"stdout": "hi\n", "stderr": "", "aggregated_output": "hi\n", "formatted_output": "hi",
             "exit_code": 3, "duration": {"secs": 0, "nanos": 5}},
            None, "hi\n", 3, id="codex",
        ),
        pytest.param(
            "OpenCode", "hi\n", {"output": "hi\n", "metadata": {"exit": 1, "output": "hi\n"}},
            None, "hi\n", 1, id="opencode",
        ),
        pytest.param(
            "OpenCode", None, {"output": "", "metadata": {"exit": 0, "output": ""}},
            None, "", 0, id="opencode-silent",
        ),
        pytest.param(
            "@agentclientprotocol/claude-agent-acp", "```console\nhi\n```", None,
            {"claudeCode": {"toolName": "Bash"}, "terminal_exit": {"terminal_id": "t1", "exit_code": 2, "signal": None}},
            "hi\n", 2, id="claude",
        ),
        pytest.param(
            "test-agent", "```\nhi\n```\nand then ```more```", None, None,
            "```\nhi\n```\nand then ```more```", None, id="not-only-a-block",
        ),
        pytest.param("gemini-cli", "hi\n", None, None, "hi\n", None, id="gemini"),
        pytest.param("@mistralai/mistral-vibe", "hi\n", "hi\n", None, "hi\n", None, id="vibe"),
        pytest.param("test-agent", None, {"answer": 42}, None, '{"answer":42}', None, id="unknown-fields"),
    ],
)  # fmt: skip
async def test_each_agents_result_text_and_exit_code(
    tmp_path: Path,
    agent: str,
    content: str | None,
    raw_output: Any,
    meta: Any,
    result: str,
    exit_code: int | None,
) -> None:
    """The result is the completion's text, else the text of known output fields (never the raw
    JSON when it has any); the exit code is the agent's own, absent when it reports none."""
    steps = [
        {"send": {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "echo hi", "kind": "execute",
                  "status": "in_progress", "rawInput": {"command": "echo hi"}}},
        {"send": call_done(content, raw_output, meta)},
    ]  # fmt: skip
    async with Harness(tmp_path / "logs", QueuePrompter(lambda request: None)) as harness:
        session = await harness.agents.start(
            script_agent_config("--name", agent), tmp_path, prompt="script " + json.dumps(steps)
        )
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert harness.validator.problems == []
    assert chain_violations(log) == []
    [done] = [event.payload for event in log if event.type == "tool.completed"]
    assert done["result"] == result
    assert done.get("exitCode") == exit_code


@pytest.mark.parametrize(
    ("name", "version", "risk"),
    [
        ("gemini-cli", "0.61.0", "destructive"),
        ("test-agent", "1.0", "execute"),
        ("gemini-cli", "0.50.0", "execute"),
    ],
)
async def test_a_gemini_shell_call_is_judged_by_the_command_in_its_title(
    tmp_path: Path, name: str, version: str, risk: str
) -> None:
    """Gemini CLI asks before any `tool_call`, with no `rawInput`: its shell call's title is the
    command, and our classifier judges it; another agent's title is only a title."""
    asked = {"toolCallId": "t1", "status": "pending", "title": "rm -rf build", "content": [], "locations": [],
             "kind": "execute"}  # fmt: skip
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "title": "rm -rf build",
            "content": [{"type": "content", "content": {"type": "text", "text": "removed"}}]}  # fmt: skip
    prompter = QueuePrompter(lambda request: PermissionAnswer("allow"))
    async with Harness(tmp_path / "logs", prompter) as harness:
        session = await harness.agents.start(
            script_agent_config("--name", name, "--version", version),
            tmp_path,
            prompt="script " + json.dumps([{"ask": asked, "allowed": [{"send": done}]}]),
        )
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert chain_violations(log) == []
    [question] = prompter.requests
    assert (question.args_preview, question.risk) == ("rm -rf build", risk)
    [done_event] = [event.payload for event in log if event.type == "tool.completed"]
    assert done_event["result"] == "removed" and "exitCode" not in done_event


def test_the_quirks_table_in_the_docs_is_the_code() -> None:
    doc = (ROOT / "docs" / "acp.md").read_text()
    lines = doc[doc.index("| agent | versions | what it does | rule |") :].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append(tuple(cell.strip() for cell in line.strip("|").split(" | ")))
    expected = [
        (
            f"`{quirk.agent}`",
            (f"from {quirk.since}" if quirk.since else "all")
            + (f" before {quirk.before}" if quirk.before else ""),
            quirk.behaviour,
            quirk.rule,
        )
        for quirk in QUIRKS
    ]
    assert rows == expected


@pytest.mark.parametrize(
    ("name", "deltas", "result"),
    [("@mistralai/mistral-vibe", ["a\n", "b\n"], "a\nb\n"), ("test-agent", ["a\n", "\nb\n"], "b\n")],
)
async def test_vibes_output_pieces_are_joined(
    tmp_path: Path, name: str, deltas: list[str], result: str
) -> None:
    """Vibe's content is the output's next piece; another agent's content replaces the last
    (ACP's rule). A completion without content keeps the output shown so far."""

    def piece(value: str | None, status: str = "in_progress") -> dict[str, Any]:
        done = call_done(value, None, None)
        return {**done, "status": status}

    steps = [
        {"send": {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "ls", "kind": "execute",
                  "status": "in_progress", "rawInput": {"command": "ls"}}},
        {"ask": {"toolCallId": "t1"}, "allowed": [{"send": piece("a\n")}, {"send": piece("b\n")},
                                                  {"send": piece(None, "completed")}]},
    ]  # fmt: skip
    async with Harness(
        tmp_path / "logs", QueuePrompter(lambda request: PermissionAnswer("allow"))
    ) as harness:
        session = await harness.agents.start(
            script_agent_config("--name", name, "--version", "3.0.2"),
            tmp_path,
            prompt="script " + json.dumps(steps),
        )
        assert await session.turn.wait() == "final"  # type: ignore[union-attr]
        log = harness.log(session.session_id)
    assert chain_violations(log) == []
    assert [event.payload["text"] for event in log if event.type == "tool.delta"] == deltas
    [done] = [event.payload for event in log if event.type == "tool.completed"]
    assert done["result"] == result
