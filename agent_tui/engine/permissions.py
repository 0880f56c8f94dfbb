"""Who may run what: the policy, the question and its answer, and remembered answers.

The shell classifier lives in `agent_tui.safety`; it is re-exported here.

Invariants this module guarantees:
- `PermissionEngine.evaluate` decides in one fixed order: answers remembered for this session,
  then the user's "always" rules, then the project's own rules file if the user accepted its
  content (`engine.project_rules`), then the policy `byTool`, `byRisk`, `default`, and
  finally `ask`; the `Verdict` names the rule that decided (`policy`);
- a call that would change a protected path (`engine.protected_paths`: `.git/`, `.agent-tui/`,
  the user's rules) is never allowed by any of those: it is asked (policy `protected`), with a
  warning saying what it changes; only a person's answer lets it run;
- a remembered answer covers only calls with the same key: the tool, the risk, and for `shell`
  the set of program names in the command, so "allow `ls` for this session" never allows `rm`;
- an answer remembered for a session outlives the process: its log holds the user's
  `permission.resolved{remember:"session"}`, and `SessionAnswers` (fed the log's events when a
  session is reopened) gives it back to the engine, with the call's full arguments and risk
  from the same log, so the reopened session's next turn is not asked again;
- the rules file is plain, pretty-printed JSON a person can edit; it is re-read when it changes
  on disk, and a malformed file raises `PermissionRulesError` naming the file and the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from agent_tui.engine.permission_rules import (
    PermissionRule,
    PermissionRulesError,
    RememberKey,
    as_mapping,
    file_signature,
    first_match,
    parse_rules,
    write_document,
)
from agent_tui.engine.project_rules import ProjectRules
from agent_tui.engine.protected_paths import ProtectedChange, protected_change
from agent_tui.events.model import Decision, Remember, Risk
from agent_tui.safety import classify_shell

__all__ = [
    "DEFAULT_POLICY",
    "PermissionAnswer",
    "PermissionEngine",
    "PermissionRequest",
    "PermissionRule",
    "PermissionRulesError",
    "PolicyConfig",
    "SessionAnswers",
    "Verdict",
    "classify_shell",
]

# =============================================================================================
# Policy, verdicts, requests and answers
# =============================================================================================


class PolicyConfig(BaseModel):
    """A static policy: a decision per tool, per risk, and a default (scenario `policy`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    byTool: dict[str, Decision] = Field(default_factory=dict)
    byRisk: dict[Risk, Decision] = Field(default_factory=dict)
    default: Decision | None = None


DEFAULT_POLICY = PolicyConfig(
    byRisk={
        "read": "allow",
        "write": "ask",
        "execute": "ask",
        "network": "ask",
        "destructive": "ask",  # with a warning, added by `PermissionEngine.evaluate`
    }
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The engine's decision on one call, and which rule made it.

    `policy` is `session:<tool>`, `always:<tool>`, `project:<tool>` (an accepted project
    rule), `byTool.<tool>`, `byRisk.<risk>`, `default`, `protected` (a protected path: always
    asked), or None when nothing matched (then `decision` is `ask`). `warning` is set when a
    destructive call or a protected change is put to the user.
    """

    decision: Decision
    policy: str | None
    reason: str | None = None
    warning: str | None = None


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """A question to the user (held by `engine.questions`, shown in the approval queue)."""

    session_id: str
    turn_id: str
    request_id: str
    tool_call_id: str
    tool: str
    risk: Risk
    args_preview: str
    args: Mapping[str, Any]
    agent_path: tuple[str, ...]
    warning: str | None
    reason: str | None = None  # why the call has its risk, in a few words


@dataclass(frozen=True, slots=True)
class PermissionAnswer:
    """The user's answer; `remember` says how far it reaches (see `PermissionEngine.remember`)."""

    decision: Literal["allow", "deny"]
    remember: Remember = "once"
    reason: str | None = None
    by: Mapping[str, str] | None = None
    """Who answered, when it was not this process's own user (an attached dashboard: its name,
    its user, its host); stored as the `permission.resolved`'s `by`."""
    actor: Literal["user", "system"] = "user"
    """`system` when no person answered (a wait for an answer that timed out)."""


# =============================================================================================
# Remembered answers and the rules file
# =============================================================================================


def _example(tool: str, args: Mapping[str, Any]) -> str:
    if tool == "shell" and isinstance(args.get("cmd"), str):
        text = args["cmd"]
    else:
        text = orjson.dumps(dict(args), default=str).decode()
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:119] + "…"


class _RulesStore:
    """The "always" rules: a JSON file re-read when it changes, or memory when there is none."""

    def __init__(self, path: Path | None, project: str | None = None) -> None:
        self.path = path
        self.project = project
        self._rules: list[PermissionRule] = []
        self._signature: tuple[int, int, int, int] | None = None
        self.reload_if_changed()

    def _stat(self) -> tuple[int, int, int, int] | None:
        if self.path is None:
            return None
        try:
            return file_signature(self.path)
        except OSError as error:
            raise PermissionRulesError(self.path, f"cannot read ({error.strerror})") from None

    def reload_if_changed(self) -> list[PermissionRule]:
        if self.path is None:
            return self._rules
        signature = self._stat()
        if signature != self._signature:
            try:
                raw = self.path.read_bytes() if signature is not None else b""
            except OSError as error:
                raise PermissionRulesError(self.path, f"cannot read ({error.strerror})") from None
            self._rules = parse_rules(self.path, raw)
            self._signature = signature
        return self._rules

    def match(self, key: RememberKey) -> PermissionRule | None:
        return first_match(self.reload_if_changed(), key)

    def add(self, rule: PermissionRule, key: RememberKey) -> None:
        rules = [existing for existing in self.reload_if_changed() if not existing.same_key(key)]
        rules.append(rule)
        if self.path is not None:
            project = {"project": self.project} if self.project is not None else {}
            dumped = [rule.model_dump(exclude_none=True) for rule in rules]
            write_document(self.path, {"version": 1, **project, "rules": dumped})
            self._signature = self._stat()
        self._rules = rules


class PermissionEngine:
    """Decides whether a tool call may run, and remembers the user's answers.

    Args:
        policy: the static policy; `DEFAULT_POLICY` when None.
        rules_path: the user's "always" rules file for this project (kept in the user's data,
            never in the project). Without one, "always" answers last as long as this engine,
            for every session.
        project: whose rules `rules_path` holds (written into the file, for a person reading it).
        project_rules: the project's own rules file (`ProjectRules`), applied only while the
            user has accepted its content; None: there is none.
        protected_roots: more places no rule may let a call change (the user's rules
            directory); `rules_path` and the acceptances file are always among them.

    Raises:
        PermissionRulesError: the rules file exists but is not valid (also from `evaluate` and
            `remember`, if it is broken later).
    """

    def __init__(
        self,
        policy: PolicyConfig | None = None,
        *,
        rules_path: Path | None = None,
        project: str | None = None,
        project_rules: ProjectRules | None = None,
        protected_roots: Sequence[Path] = (),
    ) -> None:
        self.policy = policy if policy is not None else DEFAULT_POLICY
        self.rules_path = rules_path
        self.project_rules = project_rules
        self._rules = _RulesStore(rules_path, project)
        self._sessions: dict[str, dict[RememberKey, Literal["allow", "deny"]]] = {}
        roots = list(protected_roots)
        if rules_path is not None:
            roots.append(rules_path)
        if project_rules is not None:
            roots.append(project_rules.accepted.path)
        self.protected_roots = tuple(roots)

    def with_policy(self, policy: PolicyConfig) -> PermissionEngine:
        """An engine with another policy (a sub-agent's) that shares these rules: the same
        "always" rules (file or memory), project rules and protected places."""
        other = PermissionEngine(policy, project_rules=self.project_rules)
        other.rules_path = self.rules_path
        other._rules = self._rules
        other.protected_roots = self.protected_roots
        return other

    def protected_change(
        self, tool: str, args: Mapping[str, Any] | BaseModel, risk: Risk, cwd: Path | None
    ) -> ProtectedChange | None:
        """Whether the call would change a protected path (`engine.protected_paths`)."""
        return protected_change(tool, as_mapping(args), risk, cwd, extra_roots=self.protected_roots)

    def evaluate(
        self,
        session_id: str,
        tool: str,
        args: Mapping[str, Any] | BaseModel,
        risk: Risk,
        *,
        protected: ProtectedChange | None = None,
    ) -> Verdict:
        """Decide on one call: session answers, the user's "always" rules, the accepted project
        rules, byTool, byRisk, default, ask. A `protected` change is never allowed by any of
        them: an allow becomes an `ask` with the change's warning (a deny stays a deny)."""
        verdict = self._decide(session_id, tool, args, risk)
        if protected is None or verdict.decision == "deny":
            return verdict
        decided = f"; {verdict.policy} would allow it" if verdict.decision == "allow" else ""
        return Verdict(
            "ask",
            "protected",
            reason=f"a protected path is asked about every time{decided}",
            warning=protected.warning,
        )

    def _decide(self, session_id: str, tool: str, args: Mapping[str, Any] | BaseModel, risk: Risk) -> Verdict:
        key = RememberKey.of(tool, args, risk)
        remembered = self._sessions.get(session_id, {}).get(key)
        if remembered is not None:
            return Verdict(remembered, f"session:{tool}", reason="remembered for this session")
        rule = self._rules.match(key)
        if rule is not None:
            where = f"rule in {self.rules_path}" if self.rules_path else "remembered always"
            return Verdict(rule.decision, f"always:{tool}", reason=where)
        if self.project_rules is not None:
            rule = first_match(self.project_rules.active(), key)
            if rule is not None:
                where = f"accepted project rule in {self.project_rules.path}"
                return Verdict(rule.decision, f"project:{tool}", reason=where)
        policy = self.policy
        if tool in policy.byTool:
            verdict = Verdict(policy.byTool[tool], f"byTool.{tool}")
        elif risk in policy.byRisk:
            verdict = Verdict(policy.byRisk[risk], f"byRisk.{risk}")
        elif policy.default is not None:
            verdict = Verdict(policy.default, "default")
        else:
            verdict = Verdict("ask", None, reason="no rule matched")
        if verdict.decision == "ask" and risk == "destructive":
            verdict = Verdict("ask", verdict.policy, verdict.reason, _warning(tool, args))
        return verdict

    def remember(
        self,
        session_id: str,
        tool: str,
        args: Mapping[str, Any] | BaseModel,
        risk: Risk,
        answer: PermissionAnswer,
    ) -> None:
        """Keep `answer` for later calls with the same key (see `RememberKey`).

        `once` keeps nothing; `session` keeps it in memory for `session_id` until
        `forget_session`; `always` writes a rule to the rules file (replacing a rule with the
        same key), which every engine reading that file then applies.
        """
        if answer.remember == "once":
            return
        key = RememberKey.of(tool, args, risk)
        if answer.remember == "session":
            self._sessions.setdefault(session_id, {})[key] = answer.decision
            return
        rule = PermissionRule(
            tool=tool,
            risk=risk,
            programs=list(key.programs) if key.programs is not None else None,
            decision=answer.decision,
            example=_example(tool, as_mapping(args)),
        )
        self._rules.add(rule, key)

    def forget_session(self, session_id: str) -> None:
        """Drop the answers remembered for one session."""
        self._sessions.pop(session_id, None)

    def rules(self) -> list[PermissionRule]:
        """The "always" rules as they are now (re-read from disk if the file changed)."""
        return list(self._rules.reload_if_changed())


class SessionAnswers:
    """The answers a session's log says the user gave "for this session", read as it replays.

    Feed it every event of one session's log (`track`), then `restore` them into the engine
    that decides for that session. Only a person's answer counts (`actor: user`, `allow` or
    `deny`, `remember: session`); a call whose request or arguments the log lacks is skipped.
    """

    __slots__ = ("_args", "_asked", "answers")

    def __init__(self) -> None:
        self._args: dict[str, tuple[str, Mapping[str, Any]]] = {}  # toolCallId → (tool, args)
        self._asked: dict[str, Risk] = {}  # requestId → risk
        self.answers: list[tuple[str, Mapping[str, Any], Risk, Literal["allow", "deny"]]] = []

    def track(self, event: Any) -> None:
        """Take in one stored event (an `Event`) of the session's log, in order."""
        kind = event.type
        if kind == "model.tool_call_requested":
            payload = event.payload
            args = payload.get("args")
            if isinstance(args, Mapping):
                self._args[payload["toolCallId"]] = (payload["tool"], args)
        elif kind == "permission.requested":
            self._asked[event.payload["requestId"]] = event.payload["risk"]
        elif kind == "permission.resolved":
            payload = event.payload
            decision = payload.get("decision")
            if payload.get("remember") != "session" or payload.get("actor") != "user":
                return
            call = self._args.get(payload["toolCallId"])
            risk = self._asked.get(payload["requestId"])
            if call is None or risk is None or decision not in ("allow", "deny"):
                return
            self.answers.append((call[0], call[1], risk, decision))

    def restore(self, permissions: PermissionEngine, session_id: str) -> None:
        """Remember each answer for `session_id` again, in the order they were given."""
        for tool, args, risk, decision in self.answers:
            permissions.remember(session_id, tool, args, risk, PermissionAnswer(decision, remember="session"))


def _warning(tool: str, args: Mapping[str, Any] | BaseModel) -> str:
    if tool == "shell":
        return (
            f"destructive command `{_example(tool, as_mapping(args))}`: it can delete, "
            "overwrite or rewrite data that may not be recoverable"
        )
    return f"{tool} is classified destructive: it can delete or overwrite data"
