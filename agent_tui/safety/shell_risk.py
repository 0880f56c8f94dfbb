"""The shell risk classifier: what a `shell` call may do, from its text, and why.

`read` is a promise that the command cannot write or run anything, so it is given only on
proof: the line parses (tree-sitter-bash) into plain commands of literal words joined by `&&`,
`||`, `;`, `|` and newlines, with redirections we understand, and every command is on the
read-only allow-list with options known to be read-only for it. Everything else is at least
`execute`, and known writers, network tools and destroyers keep their ranks.

Invariants:
- `assess_shell` is a pure function of the text; it never raises;
- a line is as risky as its riskiest part (destructive > network > execute > write > read), and
  the reason is that part's reason (the leftmost, when several tie);
- a line that does not parse, uses shell syntax beyond plain commands (subshells, loops,
  substitutions, background jobs, functions, …), expands a variable, or assigns a variable that
  is not known to be harmless is at least `execute`; the commands inside are still classified,
  so none of this ever lowers a risk;
- wrapping a command (`env`, `nice`, `timeout`, `xargs`, `sudo`, `sh -c`, `bash -lc`, `eval`,
  `find -exec`, a subshell, a pipeline stage) never lowers its risk;
- git is `read` only in the session's own directory: after a `cd`, `pushd` or `popd` on the same
  line it is at least `execute`, and when the caller gives a `RepositoryCheck`, a line of git
  reads is `execute` if the repository's own config can run programs;
- given where the command runs (`ReadScope`), a line that would be `read` but names a credential
  store, or, without the sandbox, reads outside the session's directory beyond a few harmless
  system places, is `execute` (`read_scope`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from agent_tui.events.model import Risk
from agent_tui.safety import git_rules, program_rules, sed_awk, special_rules, wrapper_rules
from agent_tui.safety.assessment import Findings, RiskAssessment, worst
from agent_tui.safety.options import scan
from agent_tui.safety.read_scope import ReadScope, outside_reason
from agent_tui.safety.shell_parse import Redirect, SimpleCommand, Word, parse_shell, subscript_with_expansion
from agent_tui.safety.shell_words import names

__all__ = ["RepositoryCheck", "assess_shell", "classify_shell", "shell_programs"]

_MAX_DEPTH = 8
MAX_JUDGED_LINE = 8_192
"""A longer line is not parsed: `execute`, asked (judging one costs time linear in its length, on
the caller's thread, and no command a person reads in an approval is this long)."""
_SYSTEM_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})
# Expansions that only turn into file names or fixed text: harmless for a program none of whose
# options writes or runs anything. Every other kind hides a value we cannot see.
_NAME_EXPANSIONS = frozenset({"glob", "brace", "tilde", "arithmetic"})
_SED = frozenset({"sed", "gsed"})
_AWK = frozenset({"awk", "gawk", "mawk", "nawk"})
_DECLARATIONS = frozenset({"export", "declare", "typeset", "local", "readonly"})
_CHANGES_DIRECTORY = frozenset({"cd", "pushd", "popd"})
_SUBCOMMAND_LABELS = names(
    "npm yarn pnpm bun pip pip3 cargo gem poetry pipx conda mamba micromamba brew apt apt-get aptitude "
    "dnf yum apk zypper bundle composer go uv docker podman"
)


RepositoryCheck = Callable[[], str | None]
"""Looks at the repository git finds from the session's directory, without running git in it.

Returns why that repository's own config can make git run a program ("the repository's config
can run commands (core.fsmonitor)"), or None when its config was read and names nothing that
runs (or there is no repository). It is called only for a line that would otherwise be `read`
and runs a git subcommand.
"""


def assess_shell(
    cmd: str, repository: RepositoryCheck | None = None, scope: ReadScope | None = None
) -> RiskAssessment:
    """The risk of a shell command line and the reason for it (see the module contract).

    Args:
        repository: the check of the session's repository; without it a git command is judged
            by its text alone, as if the repository's config ran nothing.
        scope: where the command runs (`read_scope`); with it, a line that reads a credential
            store, or (without the sandbox) a path outside the session's directory, is
            `execute`; without it, the paths a line names are not looked at.
    """
    if len(cmd) > MAX_JUDGED_LINE:
        return RiskAssessment("execute", f"a line of {len(cmd):,} characters is too long to judge")
    found = _line(cmd, 0)
    verdict = worst(found.assessments)
    if verdict is None:
        return RiskAssessment("execute", "empty command")
    if verdict.risk == "read":
        if repository is not None and any(label.startswith("git ") for label in found.programs):
            reason = repository()
            if reason is not None:
                return RiskAssessment("execute", reason)
        if scope is not None:
            reason = outside_reason(cmd, scope)
            if reason is not None:
                return RiskAssessment("execute", reason)
        programs = ", ".join(f"`{name}`" for name in dict.fromkeys(found.programs))
        return RiskAssessment("read", f"only reads: {programs}" if programs else verdict.reason)
    return verdict


def classify_shell(
    cmd: str, repository: RepositoryCheck | None = None, scope: ReadScope | None = None
) -> Risk:
    """The risk of a shell command line (`assess_shell(cmd, repository, scope).risk`)."""
    return assess_shell(cmd, repository, scope).risk


def shell_programs(cmd: str) -> tuple[str, ...]:
    """The programs a line runs, sorted and unique: the key remembered answers are stored under.

    Multi-command tools carry their subcommand (`git push`, `npm install`); wrappers add the
    wrapped program (`sudo rm x` gives `rm` and `sudo`). A line that does not parse gives the
    whole line, so only the identical line matches.
    """
    if len(cmd) > MAX_JUDGED_LINE:
        return (cmd,)
    script = parse_shell(cmd)
    if script.problems:
        return (cmd,)
    return tuple(sorted(set(_line(cmd, 0).programs)))


# -- lines and simple commands -------------------------------------------------------------------


def _line(cmd: str, depth: int) -> Findings:
    found = Findings()
    if depth > _MAX_DEPTH:
        found.add("execute", "commands nested too deep to judge")
        return found
    script = parse_shell(cmd)
    for problem in script.problems:
        found.add("execute", f"cannot be judged: {problem}")
    for construct in dict.fromkeys(script.constructs):
        found.add("execute", f"uses {construct.what}: not judged read")
    moved: str | None = None  # the `cd` that came before, if any
    for command in script.commands:
        judged = _simple(command, depth)
        if moved is not None and any(label.startswith("git") for label in judged.programs):
            judged.add("execute", f"`git` after `{moved}` may use another repository and its config")
        moved = moved or next(
            (word.value for word in command.words if word.value in _CHANGES_DIRECTORY), None
        )
        found.merge(judged)
    return found


def _simple(command: SimpleCommand, depth: int) -> Findings:
    found = Findings()
    for assignment in command.assignments:
        reason = wrapper_rules.assignment_reason(assignment.name, assignment.value)
        if reason is not None:
            found.add("execute", reason)
    for redirect in command.redirects:
        judged = _redirect(redirect)
        if judged is not None:
            found.assessments.append(judged)
    if command.words:
        found.merge(_words(command.words, depth))
    elif not found.assessments and command.assignments:
        found.add("read", "sets harmless variables only")
    return found


def _redirect(redirect: Redirect) -> RiskAssessment | None:
    operator = redirect.operator
    target = redirect.target
    shown = f"{redirect.fd or ''}{operator}"
    if target is None or operator in (">&-", "<&-"):
        return None  # a heredoc (its body was searched for commands) or closing a descriptor
    if not target.literal:
        if operator == "<<<":
            return RiskAssessment("execute", f"`<<<` feeds `{target.source}`, a value not known here")
        if operator in ("<", "<&"):
            return RiskAssessment("execute", f"`{shown}` reads from `{target.source}`, a name not known here")
        risk: Risk = "write" if operator in (">>", "&>>") else "destructive"
        return RiskAssessment(risk, f"`{shown}` writes to `{target.source}`, a name not known here")
    if target.value.startswith(("/dev/tcp/", "/dev/udp/")) and operator != "<<<":
        return RiskAssessment("network", f"`{shown} {target.value}` opens a network connection")
    if operator in ("<", "<<<", "<&") or (
        operator == ">&" and (target.value.isdigit() or target.value == "-")
    ):
        return None
    if special_rules.harmless_target(target.value):
        return None
    if operator in (">>", "&>>"):
        return RiskAssessment("write", f"`{shown}` appends to {target.value}")
    return RiskAssessment("destructive", f"`{shown}` overwrites {target.value}", f"overwrites {target.value}")


def _words(words: Sequence[Word], depth: int) -> Findings:
    """Classify one simple command given as words (assignments and redirections already judged)."""
    if depth > _MAX_DEPTH:
        found = Findings()
        found.add("execute", "commands nested too deep to judge")
        return found
    head, args = words[0], list(words[1:])
    if not head.literal:
        found = Findings(programs=[head.source])
        found.add("execute", f"the program `{head.source}` is not known until the command runs")
        return found
    name = head.value
    if "/" in name:
        if os.path.dirname(name) not in _SYSTEM_DIRS:
            found = Findings(programs=[name])
            found.add("execute", f"`{name}` runs a program named by its path")
            return found
        name = os.path.basename(name)
    found = Findings()
    hidden = next((arg for arg in args if arg.expansions - _NAME_EXPANSIONS), None)
    if hidden is not None:
        found.add("execute", f"`{hidden.source}` expands to a value not known here")
    found.merge(_program(name, args, depth))
    return found


def _program(name: str, args: list[Word], depth: int) -> Findings:
    if name in wrapper_rules.WRAPPERS and not (name == "command" and args and args[0].value in ("-v", "-V")):
        return wrapper_rules.wrapper(name, args, depth, _words)
    if name in wrapper_rules.SHELLS:
        return wrapper_rules.shell(name, args, depth, _line)
    if name == "env":
        return wrapper_rules.env(args, depth, _words, _line)
    if name == "find":
        return _with_names_checked(name, args, wrapper_rules.find(args, depth, _words))
    if name in ("eval", "trap"):
        found = Findings(programs=[name])
        found.add("execute", f"`{name}` runs its arguments as a command line")
        text = args[0].value if name == "trap" and args else " ".join(arg.value for arg in args)
        found.merge(_line(text, depth + 1))
        return found
    if name in _DECLARATIONS:
        return wrapper_rules.declaration(name, args)
    return _judged(name, args)


def _judged(name: str, args: list[Word]) -> Findings:
    """A program that runs no command of its arguments, judged by its own rules."""
    values = [arg.value for arg in args]
    found = Findings(programs=[name])
    if name in ("test", "[") and any(subscript_with_expansion(value) for value in values):
        found.add("execute", f"`{name}` may expand a `NAME[…]` subscript, which can run a command")
    entry = program_rules.READ_ONLY.get(name)
    if name == "command":
        found.add("read", "`command -v` only looks a program up")
    elif entry is not None:
        found.assessments.append(_read_only(name, entry, values))
    elif name == "git":
        assessment, label = git_rules.git_assessment(values)
        found.programs = [label]
        found.assessments.append(assessment)
    elif name in _SED:
        found.assessments.append(sed_awk.sed_assessment(name, values))
    elif name in _AWK:
        found.assessments.append(sed_awk.awk_assessment(name, values))
    elif name in special_rules.SPECIAL:
        found.assessments.append(special_rules.SPECIAL[name](name, values))
        if name in _SUBCOMMAND_LABELS:
            sub = next((value for value in values if not value.startswith("-")), "")
            found.programs = [f"{name} {sub}".strip()]
    elif name in program_rules.PROGRAM_RISKS:
        found.assessments.append(program_rules.PROGRAM_RISKS[name])
    elif name.startswith("mkfs."):
        found.add("destructive", f"`{name}` formats a disk")
    else:
        found.add("execute", f"`{name}` is not on the read-only list")
    if entry is None or entry.options is not None:
        found = _with_names_checked(name, args, found)
    return found


def _read_only(name: str, entry: program_rules.ReadOnly, values: list[str]) -> RiskAssessment:
    if entry.options is None:
        return RiskAssessment("read", f"`{name}` only reads")
    found = scan(values, entry.options, permute=entry.permute)
    findings = found.findings(name)
    if entry.operands is not None:
        checked = entry.operands(name, found)
        if checked is not None:
            findings.append(checked)
    return worst(findings) or RiskAssessment("read", f"`{name}` only reads")


def _with_names_checked(name: str, args: list[Word], found: Findings) -> Findings:
    """Globs and braces are fine only for programs none of whose options write or run anything."""
    expanded = next((arg for arg in args if arg.expansions & _NAME_EXPANSIONS), None)
    if expanded is not None:
        found.add("execute", f"`{name}` gets `{expanded.source}`, which expands to words not known here")
    return found
