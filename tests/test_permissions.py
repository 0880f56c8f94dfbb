"""Permissions: the policy order, remembered answers and the rules file.

The shell classifier has its own tests in `test_shell_risk.py`.
"""

from __future__ import annotations

import orjson
import pytest

from agent_tui.engine.permissions import (
    DEFAULT_POLICY,
    PermissionAnswer,
    PermissionEngine,
    PermissionRulesError,
    PolicyConfig,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# -- the policy order --------------------------------------------------------------------------


def test_by_tool_beats_by_risk_beats_default_beats_ask() -> None:
    policy = PolicyConfig(byTool={"shell": "deny"}, byRisk={"read": "allow", "write": "ask"}, default="deny")
    engine = PermissionEngine(policy)
    by_tool = engine.evaluate("s1", "shell", {"cmd": "ls"}, "read")
    assert (by_tool.decision, by_tool.policy) == ("deny", "byTool.shell")
    by_risk = engine.evaluate("s1", "read_file", {"path": "a"}, "read")
    assert (by_risk.decision, by_risk.policy) == ("allow", "byRisk.read")
    default = engine.evaluate("s1", "write_file", {"path": "a"}, "network")
    assert (default.decision, default.policy) == ("deny", "default")
    nothing = PermissionEngine(PolicyConfig()).evaluate("s1", "read_file", {"path": "a"}, "read")
    assert (nothing.decision, nothing.policy) == ("ask", None)


def test_default_policy_allows_reads_and_warns_before_destruction() -> None:
    engine = PermissionEngine()
    assert engine.policy == DEFAULT_POLICY
    read = engine.evaluate("s1", "shell", {"cmd": "ls src/foo.py"}, "read")
    assert (read.decision, read.policy, read.warning) == ("allow", "byRisk.read", None)
    for risk in ("write", "execute", "network"):
        verdict = engine.evaluate("s1", "shell", {"cmd": "x"}, risk)
        assert (verdict.decision, verdict.warning) == ("ask", None)
    destructive = engine.evaluate("s1", "shell", {"cmd": "mv src/foo.py src/bar.py"}, "destructive")
    assert destructive.decision == "ask"
    assert destructive.warning is not None and "mv src/foo.py src/bar.py" in destructive.warning


def test_policy_from_a_scenario_dict() -> None:
    policy = PolicyConfig.model_validate({"byTool": {"shell": "allow"}, "default": "ask"})
    verdict = PermissionEngine(policy).evaluate("s", "shell", {"cmd": "rm x"}, "destructive")
    assert verdict.policy == "byTool.shell"
    with pytest.raises(ValueError):
        PolicyConfig.model_validate({"byRisk": {"danger": "allow"}})


# -- remembered answers ------------------------------------------------------------------------


def test_session_answer_covers_the_same_program_only() -> None:
    engine = PermissionEngine(PolicyConfig())
    engine.remember("s1", "shell", {"cmd": "ls src"}, "read", PermissionAnswer("allow", "session"))
    again = engine.evaluate("s1", "shell", {"cmd": "ls -la other"}, "read")
    assert (again.decision, again.policy) == ("allow", "session:shell")
    assert engine.evaluate("s1", "shell", {"cmd": "rm x"}, "destructive").decision == "ask"
    assert engine.evaluate("s1", "shell", {"cmd": "ls; rm x"}, "destructive").decision == "ask"
    assert engine.evaluate("s1", "shell", {"cmd": "cat x"}, "read").decision == "ask"
    assert engine.evaluate("s2", "shell", {"cmd": "ls src"}, "read").decision == "ask"
    engine.forget_session("s1")
    assert engine.evaluate("s1", "shell", {"cmd": "ls src"}, "read").decision == "ask"


def test_session_answer_for_other_tools_covers_the_tool_at_that_risk() -> None:
    engine = PermissionEngine()
    engine.remember("s1", "write_file", {"path": "a"}, "write", PermissionAnswer("deny", "session"))
    verdict = engine.evaluate("s1", "write_file", {"path": "b", "content": ""}, "write")
    assert (verdict.decision, verdict.policy) == ("deny", "session:write_file")
    assert engine.evaluate("s1", "edit_file", {"path": "b"}, "write").decision == "ask"


def test_once_remembers_nothing(tmp_path) -> None:
    rules = tmp_path / ".agent-tui" / "permissions.json"
    engine = PermissionEngine(rules_path=rules)
    engine.remember("s1", "write_file", {"path": "a"}, "write", PermissionAnswer("allow"))
    assert engine.evaluate("s1", "write_file", {"path": "a"}, "write").decision == "ask"
    assert not rules.exists()


def test_always_rules_are_written_to_a_readable_file_and_read_by_a_new_engine(tmp_path) -> None:
    rules = tmp_path / ".agent-tui" / "permissions.json"
    first = PermissionEngine(rules_path=rules)
    first.remember(
        "s1",
        "shell",
        {"cmd": "git push origin main"},
        "network",
        PermissionAnswer("allow", "always"),
    )
    first.remember("s1", "write_file", {"path": "a"}, "write", PermissionAnswer("deny", "always"))
    text = rules.read_text()
    assert text.endswith("\n") and "\n  " in text  # pretty-printed, for people to edit
    document = orjson.loads(text)
    assert document["version"] == 1
    assert document["rules"][0] == {
        "tool": "shell",
        "risk": "network",
        "programs": ["git push"],
        "decision": "allow",
        "example": "git push origin main",
    }

    second = PermissionEngine(rules_path=rules)
    verdict = second.evaluate("other-session", "shell", {"cmd": "git push"}, "network")
    assert (verdict.decision, verdict.policy) == ("allow", "always:shell")
    assert second.evaluate("s", "shell", {"cmd": "git fetch"}, "network").decision == "ask"
    denied = second.evaluate("s", "write_file", {"path": "z"}, "write")
    assert (denied.decision, denied.policy) == ("deny", "always:write_file")

    # answering again for the same key replaces the rule instead of piling up duplicates
    second.remember("s", "write_file", {"path": "a"}, "write", PermissionAnswer("allow", "always"))
    assert [rule.decision for rule in PermissionEngine(rules_path=rules).rules()] == [
        "allow",
        "allow",
    ]


def test_session_answers_come_before_always_rules(tmp_path) -> None:
    engine = PermissionEngine(rules_path=tmp_path / "permissions.json")
    engine.remember("s1", "shell", {"cmd": "ls"}, "read", PermissionAnswer("allow", "always"))
    engine.remember("s1", "shell", {"cmd": "ls"}, "read", PermissionAnswer("deny", "session"))
    assert engine.evaluate("s1", "shell", {"cmd": "ls"}, "read").policy == "session:shell"
    assert engine.evaluate("s2", "shell", {"cmd": "ls"}, "read").policy == "always:shell"


def test_hand_edited_rules_are_picked_up_and_deny_wins(tmp_path) -> None:
    rules = tmp_path / "permissions.json"
    engine = PermissionEngine(PolicyConfig(), rules_path=rules)
    assert engine.evaluate("s", "shell", {"cmd": "cat a"}, "read").decision == "ask"
    rules.write_text(
        '{"version": 1, "rules": [\n'
        '  {"tool": "shell", "risk": "read", "decision": "allow"},\n'
        '  {"tool": "shell", "programs": ["cat"], "decision": "deny"}\n'
        "]}\n"
    )
    assert engine.evaluate("s", "shell", {"cmd": "ls"}, "read").decision == "allow"
    assert engine.evaluate("s", "shell", {"cmd": "cat a"}, "read").decision == "deny"
    assert engine.evaluate("s", "shell", {"cmd": "rm a"}, "destructive").decision == "ask"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "not JSON"),
        ('{"rules": [{"tool": "shell", "decision": "maybe"}]}', "rules[0].decision"),
        ('{"rules": [{"tool": "shell", "decison": "allow"}]}', "rules[0]"),
        ('["shell"]', "Input should be"),
    ],
)
def test_malformed_rules_file_is_a_clear_error_naming_the_file(tmp_path, content, reason) -> None:
    rules = tmp_path / "permissions.json"
    rules.write_text(content)
    with pytest.raises(PermissionRulesError) as caught:
        PermissionEngine(rules_path=rules)
    assert str(rules) in str(caught.value)
    assert reason in str(caught.value)


def test_rules_file_broken_later_fails_evaluate_with_the_same_error(tmp_path) -> None:
    rules = tmp_path / "permissions.json"
    engine = PermissionEngine(rules_path=rules)
    rules.write_text('{"rules": 5}')
    with pytest.raises(PermissionRulesError, match=r"permissions\.json: rules"):
        engine.evaluate("s", "shell", {"cmd": "ls"}, "read")


def test_always_without_a_rules_file_lasts_for_the_engine() -> None:
    engine = PermissionEngine()
    engine.remember("s1", "shell", {"cmd": "make"}, "execute", PermissionAnswer("allow", "always"))
    assert engine.evaluate("s2", "shell", {"cmd": "make test"}, "execute").policy == "always:shell"
    assert PermissionEngine().evaluate("s2", "shell", {"cmd": "make"}, "execute").decision == "ask"
