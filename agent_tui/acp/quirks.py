"""The one table of what known ACP agents do unusually, and which rule of ours handles it.

Most of what real agents do differently is handled by general rules of the recorder (a call
held until its input is known, `in_progress` that is not yet "ran without asking", a deny that
stays a denial when the prompt ends `cancelled`) and of the mapping (where a result's text and
exit code are found). `QUIRKS` says which agent needs which rule, so a reader knows why the rule
is there; the few mappings that are truly one agent's own (`TITLE_IS_COMMAND`,
`OUTPUT_IN_PIECES`) are decided here and nowhere else.

Invariants:
- an agent is named as in its `initialize` answer (`agentInfo.name`), its versions by a range
  (`since` inclusive, `before` exclusive; None is open);
- every entry names its rule and the test that shows it (`tests/test_acp_quirks.py` holds the
  names to real tests);
- an agent-specific rule applies only to the agents and versions its entries name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["OUTPUT_IN_PIECES", "QUIRKS", "TITLE_IS_COMMAND", "AgentIdentity", "Quirk", "applies"]


@dataclass(frozen=True)
class AgentIdentity:
    """Who the agent said it is in `initialize` (`agentInfo`)."""

    name: str
    version: str | None = None


@dataclass(frozen=True)
class Quirk:
    """One unusual behaviour of one agent, and what handles it.

    Args:
        agent: `agentInfo.name` as the agent sends it.
        since, before: the versions that behave so (`since` included, `before` not; None: open).
        behaviour: what it does, in a sentence.
        rule: the rule that handles it (a general one, or an agent-specific name of this module).
        test: `file::test` that shows the rule on a scripted agent behaving so.
    """

    agent: str
    since: str | None
    before: str | None
    behaviour: str
    rule: str
    test: str


TITLE_IS_COMMAND = "title-is-command"
"""Agent-specific rule: an `execute` call without a command in its raw input names its command
in its title, which our shell classifier then judges."""

OUTPUT_IN_PIECES = "output-in-pieces"
"""Agent-specific rule: a running call's text content is the output's next piece, not the
output so far (ACP's content replaces); the pieces are joined."""

_ORDERS = "tests/test_acp_orders.py"
_QUIRKS = "tests/test_acp_quirks.py"

QUIRKS: tuple[Quirk, ...] = (
    Quirk(
        "@agentclientprotocol/claude-agent-acp", "0.101.0", None,
        "sends its first `tool_call` before the input streamed (title `Terminal`, `rawInput: {}`), "
        "then updates that bring the input, then asks with the whole call",
        "held until input (recorder)",
        f"{_ORDERS}::test_a_call_sent_before_its_input_is_requested_with_its_input",
    ),
    Quirk(
        "@agentclientprotocol/claude-agent-acp", "0.101.0", None,
        "reports a command's exit code as `_meta.terminal_exit.exit_code` of its last update",
        "exit codes where agents put them (mapping.exit_code_of)",
        f"{_QUIRKS}::test_each_agents_result_text_and_exit_code",
    ),
    Quirk(
        "@agentclientprotocol/claude-agent-acp", "0.101.0", None,
        "reports its own cost, for the whole session so far, as `usage_update.cost` in USD",
        "the agent's own cost (recorder)",
        f"{_ORDERS}::test_the_agents_own_cost_is_its_turns_cost",
    ),
    Quirk(
        "@agentclientprotocol/claude-agent-acp", "0.101.0", None,
        "completes a command with its output as one fenced block (```` ```console ````)",
        "a result that is one fenced block is its body (mapping.unfenced)",
        f"{_QUIRKS}::test_each_agents_result_text_and_exit_code",
    ),
    Quirk(
        "codex-acp", "0.16.0", None,
        "answers a deny by ending the prompt `cancelled`, without an update of the call",
        "a deny is a denial (recorder)",
        f"{_ORDERS}::test_a_deny_stays_a_denial_when_the_agent_ends_the_prompt_cancelled",
    ),
    Quirk(
        "codex-acp", "0.16.0", None,
        "asks before it sends the `tool_call`, with `rawInput.command` the argument vector "
        "`[\"/bin/bash\", \"-lc\", CMD]`",
        "a shell's script is the command (mapping.command_of)",
        "tests/test_acp_mapping.py::test_risk_of_an_agent_call",
    ),
    Quirk(
        "codex-acp", "0.16.0", None,
        "completes a command without content; `rawOutput` holds `stdout`, `stderr`, "
        "`aggregated_output`, `formatted_output` and `exit_code`",
        "result text and exit codes where agents put them (mapping)",
        f"{_QUIRKS}::test_each_agents_result_text_and_exit_code",
    ),
    Quirk(
        "gemini-cli", "0.61.0", None,
        "asks before it sends any `tool_call`; the asked call has no `rawInput`, and the title of "
        "a shell call is its command",
        TITLE_IS_COMMAND,
        f"{_QUIRKS}::test_a_gemini_shell_call_is_judged_by_the_command_in_its_title",
    ),
    Quirk(
        "gemini-cli", "0.61.0", None,
        "answers `session/load` before its replay of the history ends: the rest of it comes in "
        "the turn that loaded the session",
        "a late replay is the history's, not the turn's (recorder)",
        "tests/test_acp_client.py::test_a_history_replayed_after_the_load_answer_is_not_the_new_turns_words",
    ),
    Quirk(
        "gemini-cli", "0.61.0", None,
        "reports no exit code",
        "no exit code is made up (mapping.exit_code_of)",
        f"{_QUIRKS}::test_each_agents_result_text_and_exit_code",
    ),
    Quirk(
        "OpenCode", "1.18.33", None,
        "marks a call `in_progress`, then asks about it",
        "in_progress is not ran-without-asking (recorder)",
        f"{_ORDERS}::test_a_call_marked_running_before_its_question_starts_only_after_the_allow",
    ),
    Quirk(
        "OpenCode", "1.18.33", None,
        "puts a command's text in `rawOutput.output` and its exit code in `rawOutput.metadata.exit`",
        "result text and exit codes where agents put them (mapping)",
        f"{_QUIRKS}::test_each_agents_result_text_and_exit_code",
    ),
    Quirk(
        "@mistralai/mistral-vibe", "3.0.2", None,
        "marks a call waiting for approval `in_progress`, then asks with a tool call that carries "
        "only its id",
        "in_progress is not ran-without-asking (recorder)",
        f"{_ORDERS}::test_a_question_that_names_only_the_call_shows_what_the_call_said",
    ),
    Quirk(
        "@mistralai/mistral-vibe", "3.0.2", None,
        "sends a running command's output in pieces, each update's content the next piece, and "
        "completes a command without content",
        OUTPUT_IN_PIECES,
        f"{_QUIRKS}::test_vibes_output_pieces_are_joined",
    ),
    Quirk(
        "@mistralai/mistral-vibe", "3.0.2", None,
        "reports no exit code",
        "no exit code is made up (mapping.exit_code_of)",
        f"{_QUIRKS}::test_each_agents_result_text_and_exit_code",
    ),
)  # fmt: skip


def applies(rule: str, agent: AgentIdentity | None) -> bool:
    """Whether the agent-specific `rule` applies to `agent` (None: an agent not known yet)."""
    if agent is None:
        return False
    return any(
        quirk.rule == rule and quirk.agent == agent.name and _in_range(agent.version, quirk)
        for quirk in QUIRKS
    )


def _in_range(version: str | None, quirk: Quirk) -> bool:
    if quirk.since is None and quirk.before is None:
        return True
    if version is None:
        return False
    have = _parts(version)
    if quirk.since is not None and have < _parts(quirk.since):
        return False
    return quirk.before is None or have < _parts(quirk.before)


def _parts(version: str) -> tuple[int, ...]:
    """`1.18.33` → (1, 18, 33); anything after the numbers (`-beta`) is ignored."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split("-")[0])[:4])
