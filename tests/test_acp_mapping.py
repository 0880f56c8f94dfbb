"""The ACP vocabulary (`agent_tui.acp.mapping`, `.permissions`, `.config`) and the test validator."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)
from acp.schema import Usage as AcpUsage
from acp_support import WireValidator

from agent_tui.acp.config import AcpConfigError, load_acp_agents
from agent_tui.acp.mapping import (
    KIND_OF_TOOL,
    RISK_OF_KIND,
    STOP_REASON_OF_ACP,
    acp_usage,
    prompt_text,
    risk_for,
    stop_reason_from_acp,
    token_usage,
)
from agent_tui.acp.permissions import (
    AcpPermissionAnswer,
    AgentOption,
    answer_for_option,
    choose_option,
)
from agent_tui.engine.permissions import PermissionAnswer
from agent_tui.events.model import Usage

DOC = (Path(__file__).parents[1] / "docs" / "acp.md").read_text()


def doc_rows(header: str) -> list[list[str]]:
    """The rows of the markdown table that starts with `header`, cells stripped of backticks."""
    lines = DOC[DOC.index(header) :].splitlines()[2:]
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        rows.append([cell.strip().replace("`", "") for cell in line.strip("|").split("|")])
    return rows


def test_the_kind_and_risk_table_in_the_docs_is_the_code() -> None:
    rows = doc_rows("| ACP `kind` | our `tool` | risk |")
    documented = {row[0].split(",")[0]: row[2].split(",")[0] for row in rows}
    assert documented == RISK_OF_KIND


def test_the_tool_to_kind_table_in_the_docs_is_the_code() -> None:
    rows = doc_rows("| our tool | ACP `kind` |")
    documented = {}
    for tools, kind in rows:
        for tool in tools.split(","):
            if tool.strip() != "others":
                documented[tool.strip()] = kind
    assert documented == KIND_OF_TOOL


def test_every_acp_stop_reason_is_documented() -> None:
    for reason, (ours, _message) in STOP_REASON_OF_ACP.items():
        assert re.search(rf"{reason}.*{ours}", DOC), reason


@pytest.mark.parametrize(
    ("kind", "raw_input", "risk"),
    [
        ("execute", {"command": "ls src"}, "read"),
        ("execute", {"command": "rm -rf build"}, "destructive"),
        ("execute", {"cmd": ["curl", "https://example.com"]}, "network"),
        # Codex runs each command as `/bin/bash -lc CMD`: the command is CMD.
        ("execute", {"command": ["/bin/bash", "-lc", "basename /work/notes.txt"]}, "read"),
        ("execute", {"command": ["bash", "-c", "rm -rf build"]}, "destructive"),
        ("execute", {"command": ["bash", "--login", "script.sh"]}, "execute"),
        ("execute", None, "execute"),
        ("delete", {"path": "x"}, "destructive"),
        ("fetch", {"url": "https://example.com"}, "network"),
        (None, None, "execute"),
        ("a-kind-from-the-future", None, "execute"),
    ],
)
def test_risk_of_an_agent_call(kind: str | None, raw_input: object, risk: str) -> None:
    assert risk_for(kind, raw_input)[0] == risk


def test_stop_reasons_map_with_a_message_where_ours_has_no_word() -> None:
    assert stop_reason_from_acp("end_turn") == ("final", None)
    assert stop_reason_from_acp("max_turn_requests") == ("max_steps", None)
    assert stop_reason_from_acp("refusal") == ("final", "the agent refused to continue")
    assert stop_reason_from_acp("something_new") == ("final", "the agent stopped: something_new")


OPTIONS = (
    AgentOption("a1", "Allow", "allow_once"),
    AgentOption("a2", "Always", "allow_always"),
    AgentOption("r1", "Reject", "reject_once"),
)


@pytest.mark.parametrize(
    ("answer", "chosen"),
    [
        (PermissionAnswer("allow"), "a1"),
        # "For this session" is ours (we remember it): the agent is told once, never "always".
        (PermissionAnswer("allow", "session"), "a1"),
        (PermissionAnswer("allow", "always"), "a1"),
        (PermissionAnswer("deny"), "r1"),
        (PermissionAnswer("deny", "always"), "r1"),
        # The agent's persistent option only when the user picked it by its id.
        (AcpPermissionAnswer("allow", "session", option_id="a2"), "a2"),
        (AcpPermissionAnswer("deny", option_id="gone"), "r1"),
    ],
)
def test_an_answer_picks_the_agents_option(answer: PermissionAnswer, chosen: str) -> None:
    choice = choose_option(OPTIONS, answer)
    assert choice.option is not None and choice.option.option_id == chosen
    assert choice.note is None


def test_no_once_option_of_the_answers_family_picks_nothing() -> None:
    assert choose_option(OPTIONS[:2], PermissionAnswer("deny")).option is None
    assert choose_option(OPTIONS[2:], PermissionAnswer("allow")).option is None
    assert choose_option(OPTIONS[1:2], PermissionAnswer("allow", "session")).option is None


def test_the_agents_always_is_never_picked_for_a_protected_path() -> None:
    choice = choose_option(OPTIONS, AcpPermissionAnswer("allow", "session", option_id="a2"), protected=True)
    assert choice.option is not None and choice.option.option_id == "a1"
    assert choice.note == (
        "'Always' would be remembered by the agent, and the call changes a protected path: chose 'Allow' instead"
    )
    reject = choose_option(OPTIONS, AcpPermissionAnswer("deny", option_id="r1"), protected=True)
    assert reject.option is not None and reject.option.option_id == "r1" and reject.note is None


def test_the_servers_options_come_back_as_our_answers() -> None:
    assert answer_for_option("allow_session") == PermissionAnswer("allow", "session")
    assert answer_for_option("deny_once") == PermissionAnswer("deny", "once")
    assert answer_for_option(None).decision == "deny"
    assert answer_for_option("bogus").decision == "deny"


def test_a_prompt_of_blocks_is_one_text() -> None:
    blocks: list[TextContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock] = [
        TextContentBlock(type="text", text="Look at "),
        ResourceContentBlock(type="resource_link", name="a", uri="file:///w/a.py"),
        EmbeddedResourceContentBlock(
            type="resource", resource=TextResourceContents(uri="file:///w/b.py", text="print(1)")
        ),
    ]
    assert (
        prompt_text(blocks)
        == "Look at @file:///w/a.py\n<resource uri='file:///w/b.py'>\nprint(1)\n</resource>\n"
    )


# -- the config file ------------------------------------------------------------------------------
def test_acp_tables_are_read_and_other_tables_ignored(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        'default_profile = "x"\n[profiles.x]\nprovider = "openai"\n\n'
        '[acp.claude]\ncommand = "claude-code-acp"\nenv = ["ANTHROPIC_API_KEY"]\n\n'
        '[acp.gemini]\ncommand = "gemini"\nargs = ["--experimental-acp"]\n'
    )
    agents = load_acp_agents(path)
    assert list(agents) == ["claude", "gemini"]
    assert agents["gemini"].describe() == "gemini --experimental-acp"
    assert agents["claude"].environment({"ANTHROPIC_API_KEY": "k", "OTHER": "o"}) == {
        "ANTHROPIC_API_KEY": "k"
    }
    assert agents["claude"].missing_env({}) == ["ANTHROPIC_API_KEY"]
    assert load_acp_agents(tmp_path / "missing.toml") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[acp.x]\nargs = ["a"]\n', ":1: acp.x.command: expected the program to run"),
        ('[acp.x]\ncommand = "a"\nargs = "b"\n', ":3: acp.x.args: expected a list of strings"),
        (
            '[acp.x]\ncommand = "a"\nenv = ["sk-secret=1"]\n',
            ":3: acp.x.env: 'sk-secret=1' is not a variable name",
        ),
        ('[acp.x]\ncommand = "a"\ncwd = "/"\n', ":3: acp.x.cwd: unknown setting"),
        ("[acp]\nx = 1\n", ":2: acp.x must be a table"),
        ("[acp.x\n", ":1: "),
    ],
)
def test_a_bad_agent_table_names_the_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(AcpConfigError) as error:
        load_acp_agents(path)
    assert str(error.value).startswith(f"{path}{message}")


# -- the validator the other tests rely on -------------------------------------------------------
def test_the_wire_validator_catches_what_the_schema_would_quietly_repair() -> None:
    validator = WireValidator()
    update = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "x", "kind": "not-a-kind"}
    validator(StreamEvent(StreamDirection.INCOMING, {"jsonrpc": "2.0", "method": "session/update",
                                                    "params": {"sessionId": "s", "update": update}}))  # fmt: skip
    validator(StreamEvent(StreamDirection.OUTGOING, {"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
                                                    "params": {"sessionId": "s"}}))  # fmt: skip
    validator(
        StreamEvent(StreamDirection.INCOMING, {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "done"}})
    )
    assert len(validator.problems) == 3
    assert validator.problems[0].startswith("session/update: ")  # refused, or quietly repaired
    assert validator.problems[1].startswith("session/prompt: ")
    assert validator.problems[2].startswith("session/prompt result: ")


def test_the_acp_package_does_not_import_the_dashboard() -> None:
    import subprocess
    import sys

    code = (
        "import sys, agent_tui.acp.agents, agent_tui.acp.serve, agent_tui.acp.server; "
        "print(any(m == 'textual' or m.startswith(('textual.', 'agent_tui.tui')) for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_usage_goes_through_our_usage_model_both_ways() -> None:
    reported = AcpUsage(total_tokens=15, input_tokens=10, output_tokens=5, cached_read_tokens=4)
    assert token_usage(reported) == Usage(promptTokens=10, completionTokens=5, cachedTokens=4)
    none_cached = AcpUsage(total_tokens=15, input_tokens=10, output_tokens=5, cached_read_tokens=0)
    assert token_usage(none_cached) == Usage(promptTokens=10, completionTokens=5)
    assert token_usage(None) is None
    back = acp_usage({"promptTokens": 10, "completionTokens": 5, "cachedTokens": 4})
    assert back is not None
    assert (back.total_tokens, back.input_tokens, back.output_tokens, back.cached_read_tokens) == (
        15,
        10,
        5,
        4,
    )
    assert acp_usage(None) is None


def test_gemini_clis_tokens_in_the_prompt_answers_meta_are_its_usage() -> None:
    meta = {"quota": {"model_usage": [{"model": "gemini-2.5-flash", "token_count": {"input_tokens": 24,
            "output_tokens": 10}}], "token_count": {"input_tokens": 24, "output_tokens": 10}}}  # fmt: skip
    assert token_usage(None, meta) == Usage(promptTokens=24, completionTokens=10)
    assert token_usage(None, {"quota": {}}) is None and token_usage(None, None) is None
    usage = AcpUsage(total_tokens=3, input_tokens=2, output_tokens=1)
    assert token_usage(usage, meta) == Usage(promptTokens=2, completionTokens=1)  # its own usage wins
