"""The shell classifier this project used before `agent_tui.safety`: kept as the bench baseline.

A hand-written tokenizer (shlex plus a pre-pass for substitutions and heredocs) and per-program
tables that call a command `read` unless they know it writes, runs or reaches out. It is not
used by the application; `bench_shell_risk.py` times it beside the new classifier.

Its contract was:
- `classify_shell` is a pure function of the command text; a command it cannot parse is
  `execute`, never `read`;
- a compound command (`;`, `&&`, `||`, `|`, `$(…)`, backticks, subshells, heredocs) is as risky
  as its riskiest part, ordered destructive > network > execute > write > read;
- wrappers (`sudo`, `env`, `nice`, `timeout`, `xargs`, `sh -c`, `eval`, `find -exec`, …) are
  looked through, so wrapping a command never lowers its risk.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from agent_tui.events.model import Risk

__all__ = ["RISK_ORDER", "classify_shell", "riskiest", "shell_programs"]

RISK_ORDER: tuple[Risk, ...] = ("read", "write", "execute", "network", "destructive")
_RANK: dict[str, int] = {risk: rank for rank, risk in enumerate(RISK_ORDER)}


def riskiest(*risks: Risk) -> Risk:
    """The most dangerous of `risks` (destructive > network > execute > write > read)."""
    return max(risks, key=_RANK.__getitem__, default="read")


# =============================================================================================
# The shell classifier
# =============================================================================================


class _Unparsable(Exception):
    pass


_OPERATOR_CHARS = "();<>|&"
# Quoted or escaped operator characters are words, not operators: the pre-pass swaps them for
# private-use characters that shlex treats as word characters, and swaps them back afterwards.
_HIDE = {char: chr(0xE000 + index) for index, char in enumerate(_OPERATOR_CHARS)}
_UNHIDE = str.maketrans({hidden: char for char, hidden in _HIDE.items()})
_SUBST = "\ue0ff"  # stands in for a command substitution in the outer command
_SUBST_LABEL = "$(…)"
_MAX_DEPTH = 8

_OPERATORS = (
    ";;&",
    "&>>",
    ">>",
    "&&",
    "||",
    ";;",
    ";&",
    "&>",
    ">&",
    ">|",
    "<<<",
    "<<",
    "<>",
    "<&",
    "|&",
    ";",
    "&",
    "|",
    "(",
    ")",
    "<",
    ">",
)
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "&", "(", ")", ";;", ";&", ";;&"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<", "<<", "<<<", "<>", "<&"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_SYSTEM_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})


@dataclass
class _Analysis:
    risk: Risk = "read"
    programs: list[str] = field(default_factory=list)

    def add(self, risk: Risk, *programs: str) -> None:
        self.risk = riskiest(self.risk, risk)
        self.programs.extend(programs)

    def merge(self, other: _Analysis) -> None:
        self.add(other.risk, *other.programs)


def classify_shell(cmd: str) -> Risk:
    """The risk of a shell command line, from its text alone.

    Rules, applied to every simple command of the line (split on `;`, `&&`, `||`, `|`, `&`,
    newlines, `( )` subshells and `{ }` groups, plus every `$(...)`, backtick and `<(...)`
    substitution, also inside double quotes); the line takes the most dangerous result, in the
    order destructive > network > execute > write > read:

    - **read**: commands that only look: `ls`, `cat`, `head`, `tail`, `wc`, `pwd`, `echo`,
      `grep`/`rg`, `find` (without `-delete`, `-exec`, `-fprint`), `diff`, `stat`, `sed`
      without `-i`, `sort` without `-o`, `git status/log/diff/show/blame/branch (listing)`, `cd`,
      `export`, `sleep`, ... Output redirected to `/dev/null` (or `/dev/stdout`, `/dev/stderr`,
      `/dev/tty`, `2>&1`) stays read: `echo hi > /dev/null` is read.
    - **write**: creating or appending without loss: `mkdir`, `touch`, `chmod`, `>>` onto a file,
      `tee -a`, `cp -n`, `ln` (no `-f`), `git add/commit/merge/switch/stash`, `patch`.
    - **destructive**: deleting, moving over, truncating or rewriting history: `rm`, `rmdir`,
      `mv`, `cp` (it may overwrite), `ln -f`, `shred`, `truncate`, `dd of=`, `>`/`>|`/`&>` onto a
      file, `tee` onto a file, `sed -i`, `perl -i`, `sort -o`, `find -delete`,
      `git reset --hard`, `git clean` (not `-n`), `git checkout` (except `-b`), `git restore`,
      `git rebase`, `git commit --amend`, `git push --force/--delete/+ref`, `git branch -D`,
      `git rm/mv`, `tar x`, `apt remove`, `docker rm`, `kubectl delete`, `mkfs`, ...
    - **network**: anything that reaches another machine: `curl`, `wget`, `ssh`, `scp`,
      `rsync`, `nc`, `ping`, `git push/pull/fetch/clone`, `pip install`, `npm install`,
      `npx`, `cargo install`, `go get`, `apt install`, `docker pull`, `kubectl`, `gh`, ...
    - **execute**: everything else, including interpreters and build tools (`python`, `make`,
      `pytest`, `npm run`), `sudo CMD` (at least execute, more if CMD is), a shell reading a
      script or stdin (`| sh`, `bash x.sh`), programs named by a relative path (`./ls`) or a
      variable, and any line that cannot be parsed (unbalanced quotes or parentheses).

    Wrappers are looked through: `sudo`, `env`, `nice`, `nohup`, `time`, `timeout`, `xargs`,
    `command`, `exec`, `watch`, `stdbuf`, `sh -c STRING`, `bash -c STRING`, `eval`, and
    `find -exec`. So `curl x | sh` is `network` (curl is network, `sh` execute, network ranks
    higher), and `sudo rm x` is destructive.

    Heredoc bodies are data, not commands (but `$(...)` inside an unquoted heredoc is
    classified). Known blind spot: `sed` scripts using the `w` command are not detected.
    """
    return _analyze_line(cmd).risk


def shell_programs(cmd: str) -> tuple[str, ...]:
    """The program names a command line runs, sorted and unique (the shell remember key).

    Multi-command tools carry their subcommand (`git push`, `npm install`); wrappers add the
    wrapped program (`sudo ls` gives `ls` and `sudo`). A line that cannot be parsed gives the
    whole line, so only the identical line matches.
    """
    try:
        analysis = _analyze(cmd, 0)
    except _Unparsable:
        return (cmd,)
    return tuple(sorted(set(analysis.programs)))


def _analyze_line(cmd: str) -> _Analysis:
    try:
        return _analyze(cmd, 0)
    except _Unparsable:
        return _Analysis("execute", [cmd])


def _analyze(cmd: str, depth: int) -> _Analysis:
    if depth > _MAX_DEPTH:
        raise _Unparsable
    text, substitutions = _prepare(cmd)
    result = _Analysis()
    for body in substitutions:
        result.merge(_analyze(body, depth + 1))
    for segment in _segments(_tokens(text)):
        result.merge(_simple_command(segment, depth))
    return result


# -- lexing ------------------------------------------------------------------------------------


def _prepare(cmd: str) -> tuple[str, list[str]]:
    """Lift out substitutions, drop comments and heredoc bodies, turn newlines into `;`, hide
    quoted operators.

    Returns:
        The outer command (substitutions replaced by a placeholder word) and the bodies of the
        substitutions, each to be classified on its own.
    """
    out: list[str] = []
    substitutions: list[str] = []
    # heredocs opened on this line: (delimiter, quoted, strip_tabs); bodies follow the newline
    heredocs: list[tuple[str, bool, bool]] = []
    quote: str | None = None
    last = " "  # the last character emitted, to tell a `#` comment from a `#` inside a word
    index = 0
    length = len(cmd)
    while index < length:
        char = cmd[index]
        if quote == "'":
            if char == "'":
                quote = None
            out.append(_HIDE.get(char, char))
            index += 1
            continue
        if char == "\\":
            following = cmd[index + 1 : index + 2]
            if following == "\n":
                index += 2
                continue
            out.append(_HIDE[following] if following in _HIDE else char + following)
            last = "x"
            index += 2
            continue
        if quote != '"' and char in "'\"":
            quote = char
            out.append(char)
            last = "x"
            index += 1
            continue
        if quote == '"' and char == '"':
            quote = None
            out.append(char)
            index += 1
            continue
        substitution = _substitution_at(cmd, index, inside_quotes=quote == '"')
        if substitution is not None:
            body, end = substitution
            if body is not None:
                substitutions.append(body)
            out.append(_SUBST)
            last = "x"
            index = end
            continue
        if quote == '"':
            out.append(_HIDE.get(char, char))
        elif cmd.startswith("<<", index) and not cmd.startswith("<<<", index):
            delimiter, quoted, strip_tabs, index = _heredoc_word(cmd, index + 2)
            heredocs.append((delimiter, quoted, strip_tabs))
            out.append(" << " + (delimiter or "EOF") + " ")
            last = " "
            continue
        elif char == "#" and (last.isspace() or last in _OPERATOR_CHARS):
            newline = cmd.find("\n", index)
            index = length if newline < 0 else newline
            continue
        elif char == "\n":
            out.append(" ; ")
            for delimiter, quoted, strip_tabs in heredocs:
                body, index = _heredoc_body(cmd, index + 1, delimiter, strip_tabs)
                if not quoted:  # an unquoted heredoc expands $(...) and `...`
                    substitutions.extend(_substitutions_in(body))
                index -= 1
            heredocs.clear()
            char = " "
        else:
            out.append(char)
        last = char
        index += 1
    if quote is not None:
        raise _Unparsable
    return "".join(out), substitutions


def _heredoc_word(cmd: str, index: int) -> tuple[str, bool, bool, int]:
    """The delimiter after `<<`: (word without quotes, quoted?, `<<-`?, index after it)."""
    strip_tabs = cmd.startswith("-", index)
    if strip_tabs:
        index += 1
    while index < len(cmd) and cmd[index] in " \t":
        index += 1
    start = index
    while index < len(cmd) and not cmd[index].isspace() and cmd[index] not in _OPERATOR_CHARS:
        index += 1
    raw = cmd[start:index]
    quoted = any(char in raw for char in "'\"\\")
    delimiter = raw.replace("'", "").replace('"', "").replace("\\", "")
    if not delimiter or "$(" in raw or "`" in raw:
        raise _Unparsable
    return delimiter, quoted, strip_tabs, index


def _heredoc_body(cmd: str, index: int, delimiter: str, strip_tabs: bool) -> tuple[str, int]:
    """The body lines from `index` up to the delimiter line: (body, index after that line)."""
    start = index
    while index < len(cmd):
        newline = cmd.find("\n", index)
        end = len(cmd) if newline < 0 else newline
        line = cmd[index:end]
        if (line.lstrip("\t") if strip_tabs else line) == delimiter:
            return cmd[start:index], end
        index = end + 1
    return cmd[start:], len(cmd)  # no delimiter line: the body runs to the end, as in bash


def _substitutions_in(text: str) -> list[str]:
    """The `$(...)` and backtick bodies in heredoc text (not shell syntax otherwise)."""
    found = []
    index = 0
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        substitution = _substitution_at(text, index, inside_quotes=True)
        if substitution is None:
            index += 1
            continue
        body, index = substitution
        if body is not None:
            found.append(body)
    return found


def _substitution_at(cmd: str, index: int, *, inside_quotes: bool) -> tuple[str | None, int] | None:
    """A substitution starting at `index`: (body or None for pure arithmetic, end index)."""
    if cmd.startswith("`", index):
        end = index + 1
        while end < len(cmd) and cmd[end] != "`":
            end += 2 if cmd[end] == "\\" else 1
        if end >= len(cmd):
            raise _Unparsable
        return cmd[index + 1 : end].replace("\\`", "`"), end + 1
    opener = cmd[index : index + 2]
    if opener == "$(" or (not inside_quotes and opener in ("<(", ">(")):
        close = _closing_paren(cmd, index + 2)
        body = cmd[index + 2 : close]
        if opener == "$(" and body.startswith("(") and body.endswith(")"):
            if "$(" not in body and "`" not in body:
                return None, close + 1  # $(( arithmetic )) runs nothing
        return body, close + 1
    return None


def _closing_paren(cmd: str, start: int) -> int:
    depth = 1
    quote: str | None = None
    index = start
    while index < len(cmd):
        char = cmd[index]
        if quote == "'":
            if char == "'":
                quote = None
        elif char == "\\":
            index += 1
        elif quote == '"':
            if char == '"':
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    raise _Unparsable


def _tokens(text: str) -> list[tuple[bool, str]]:
    """(is_operator, text) tokens of a prepared command."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        raw = list(lexer)
    except ValueError:
        raise _Unparsable from None
    tokens: list[tuple[bool, str]] = []
    for token in raw:
        if token and all(char in _OPERATOR_CHARS for char in token):
            tokens.extend((True, op) for op in _split_operators(token))
        else:
            tokens.append((False, token.translate(_UNHIDE)))
    return tokens


def _split_operators(run: str) -> list[str]:
    """shlex groups adjacent punctuation (`)|`, `;(`): split it into shell operators."""
    ops = []
    while run:
        for op in _OPERATORS:
            if run.startswith(op):
                ops.append(op)
                run = run[len(op) :]
                break
    return ops


def _segments(tokens: list[tuple[bool, str]]) -> list[list[tuple[bool, str]]]:
    segments: list[list[tuple[bool, str]]] = [[]]
    for token in tokens:
        if token[0] and token[1] in _SEPARATORS:
            segments.append([])
        else:
            segments[-1].append(token)
    return [segment for segment in segments if segment]


# -- one simple command ------------------------------------------------------------------------


def _harmless_target(target: str) -> bool:
    return target in _HARMLESS_TARGETS or re.fullmatch(r"/dev/fd/\d+", target) is not None


def _redirect_risk(op: str, target: str) -> Risk:
    if op in ("<", "<<", "<<<", "<&"):
        return "read"
    if op == ">&" and (target.isdigit() or target == "-"):
        return "read"
    if _harmless_target(target):
        return "read"
    if op in (">>", "&>>", "<>"):
        return "write"
    return "destructive"


def _simple_command(segment: list[tuple[bool, str]], depth: int) -> _Analysis:
    result = _Analysis()
    words: list[str] = []
    index = 0
    while index < len(segment):
        is_op, text = segment[index]
        if is_op:  # a redirection: every separator was split off already
            if text not in _REDIRECTS:
                raise _Unparsable
            following = segment[index + 1] if index + 1 < len(segment) else None
            if following is None or following[0]:
                raise _Unparsable  # `ls >` with nothing to redirect to
            result.add(_redirect_risk(text, following[1]))
            index += 2
            continue
        next_is_redirect = index + 1 < len(segment) and segment[index + 1][0]
        if not (text.isdigit() and next_is_redirect):  # `2>x`: the 2 is a descriptor
            words.append(text)
        index += 1
    result.merge(_command(words, depth))
    return result


_KEYWORDS = frozenset(
    {"!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "fi", "done", "esac", "coproc"}
)
_HEADERS = frozenset({"for", "select", "case", "in", "function"})


def _command(words: Sequence[str], depth: int) -> _Analysis:
    """Classify one simple command given as words (redirections already removed)."""
    index = 0
    while index < len(words) and (words[index] in _KEYWORDS or _ASSIGNMENT.match(words[index])):
        index += 1
    words = words[index:]
    if not words or words[0] in _HEADERS:
        return _Analysis()
    first, args = words[0], list(words[1:])
    if _SUBST in first or "$" in first:
        return _Analysis("execute", [_SUBST_LABEL if _SUBST in first else first])
    if "/" in first:
        if os.path.dirname(first) not in _SYSTEM_DIRS:
            return _Analysis("execute", [first])
        first = os.path.basename(first)
    name = first
    wrapper = _WRAPPERS.get(name)
    if wrapper is not None:
        floor, inner = wrapper(args)
        result = _Analysis(floor, [name])
        if inner is not None:
            result.merge(_command(inner, depth + 1))
        return result
    if name in _SHELLS:
        return _shell_interpreter(name, args, depth)
    if name == "eval":
        result = _analyze(" ".join(args), depth + 1)
        result.programs.append("eval")
        return result
    if name == "find":
        return _find(args, depth)
    special = _SPECIAL.get(name)
    if special is not None:
        risk, label = special(args)
        return _Analysis(risk, [f"{name} {label}" if label else name])
    if name.startswith("mkfs."):
        return _Analysis("destructive", [name])
    return _Analysis(_SIMPLE.get(name, "execute"), [name])


# -- argument helpers --------------------------------------------------------------------------


def _options(args: Sequence[str]) -> list[str]:
    """The option words before `--`."""
    found = []
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and arg != "-":
            found.append(arg)
    return found


def _has(args: Sequence[str], short: str = "", long: tuple[str, ...] = ()) -> bool:
    """Whether any of the short letters (in a group like `-rf`) or long options is given."""
    for option in _options(args):
        if option.startswith("--"):
            if option.split("=", 1)[0] in long:
                return True
        elif any(letter in option[1:] for letter in short):
            return True
    return False


def _positionals(args: Sequence[str], with_value: frozenset[str] = frozenset()) -> list[str]:
    found = []
    skip = False
    after_dashes = False
    for arg in args:
        if skip:
            skip = False
            continue
        if after_dashes:
            found.append(arg)
        elif arg == "--":
            after_dashes = True
        elif arg.startswith("-") and arg != "-":
            skip = arg in with_value
        else:
            found.append(arg)
    return found


def _strip_options(args: Sequence[str], with_value: frozenset[str]) -> list[str]:
    """The words after the leading options (and their values) of a wrapper."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            return list(args[index + 1 :])
        if not arg.startswith("-") or arg == "-":
            break
        index += 2 if arg in with_value else 1
    return list(args[index:])


# -- wrappers: (floor risk, wrapped command or None) -------------------------------------------

_Wrapper = Callable[[list[str]], tuple[Risk, list[str] | None]]


def _wrap(floor: Risk, with_value: frozenset[str] = frozenset()) -> _Wrapper:
    def wrapper(args: list[str]) -> tuple[Risk, list[str] | None]:
        inner = _strip_options(args, with_value)
        return floor, inner or None

    return wrapper


def _env(args: list[str]) -> tuple[Risk, list[str] | None]:
    inner = _strip_options(args, frozenset({"-u", "--unset", "-C", "--chdir", "-S"}))
    while inner and _ASSIGNMENT.match(inner[0]):
        inner = inner[1:]
    return "read", inner or None


def _timeout(args: list[str]) -> tuple[Risk, list[str] | None]:
    inner = _strip_options(args, frozenset({"-s", "--signal", "-k", "--kill-after"}))
    return "read", inner[1:] or None  # the first word is the duration


def _command_builtin(args: list[str]) -> tuple[Risk, list[str] | None]:
    if _has(args, "vV"):
        return "read", None
    return "read", _strip_options(args, frozenset()) or None


def _sudo(args: list[str]) -> tuple[Risk, list[str] | None]:
    with_value = frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"})
    return "execute", _strip_options(args, with_value) or None


def _su(args: list[str]) -> tuple[Risk, list[str] | None]:
    for index, arg in enumerate(args):
        if arg in ("-c", "--command") and index + 1 < len(args):
            return "execute", ["sh", "-c", args[index + 1]]
    return "execute", None


_WRAPPERS: dict[str, _Wrapper] = {
    "sudo": _sudo,
    "doas": _wrap("execute", frozenset({"-u", "-C"})),
    "su": _su,
    "env": _env,
    "nice": _wrap("read", frozenset({"-n", "--adjustment"})),
    "ionice": _wrap("read", frozenset({"-c", "-n", "-p", "-P", "-u", "-t"})),
    "nohup": _wrap("read"),
    "time": _wrap("read"),
    "stdbuf": _wrap("read", frozenset({"-i", "-o", "-e"})),
    "setsid": _wrap("read"),
    "timeout": _timeout,
    "watch": _wrap("read", frozenset({"-n", "--interval", "-q", "--equexit"})),
    "xargs": _wrap(
        "read",
        frozenset(
            {
                "-I",
                "-n",
                "-P",
                "-L",
                "-d",
                "-E",
                "-s",
                "-a",
                "--max-args",
                "--max-procs",
                "--delimiter",
                "--arg-file",
                "--max-lines",
            }
        ),
    ),
    "command": _command_builtin,
    "builtin": _wrap("read"),
    "exec": _wrap("read", frozenset({"-a"})),
    "busybox": _wrap("read"),
}

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash"})


def _shell_interpreter(name: str, args: list[str], depth: int) -> _Analysis:
    """`sh -c STRING` is STRING; a shell running a script or reading stdin is execute."""
    for index, arg in enumerate(args):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            if index + 1 < len(args):
                result = _analyze(args[index + 1], depth + 1)
                result.programs.append(name)
                return result
            break
        if not arg.startswith("-"):
            break
    return _Analysis("execute", [name])


def _find(args: list[str], depth: int) -> _Analysis:
    result = _Analysis("read", ["find"])
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "-delete" or arg in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            result.add("destructive")
        elif arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            result.add("execute")
            result.merge(_command(args[index + 1 : end], depth + 1))
            index = end
        index += 1
    return result


# -- per-program rules: (risk, subcommand label or "") -----------------------------------------

_Special = Callable[[list[str]], tuple[Risk, str]]


def _sed(args: list[str]) -> tuple[Risk, str]:
    return ("destructive" if _has(args, "i", ("--in-place",)) else "read"), ""


def _perl(args: list[str]) -> tuple[Risk, str]:
    return ("destructive" if _has(args, "i") else "execute"), ""


def _sort(args: list[str]) -> tuple[Risk, str]:
    return ("destructive" if _has(args, "o", ("--output",)) else "read"), ""


def _uniq(args: list[str]) -> tuple[Risk, str]:
    with_value = frozenset({"-f", "-s", "-w"})
    return ("destructive" if len(_positionals(args, with_value)) >= 2 else "read"), ""


def _xxd(args: list[str]) -> tuple[Risk, str]:
    with_value = frozenset({"-c", "-g", "-l", "-o", "-s", "-n"})
    return ("destructive" if len(_positionals(args, with_value)) >= 2 else "read"), ""


def _tee(args: list[str]) -> tuple[Risk, str]:
    files = [path for path in _positionals(args) if not _harmless_target(path)]
    if not files:
        return "read", ""
    return ("write" if _has(args, "a", ("--append",)) else "destructive"), ""


def _dd(args: list[str]) -> tuple[Risk, str]:
    for arg in args:
        if arg.startswith("of=") and not _harmless_target(arg[3:]):
            return "destructive", ""
    return "read", ""


def _cp(args: list[str]) -> tuple[Risk, str]:
    return ("write" if _has(args, "n", ("--no-clobber",)) else "destructive"), ""


def _ln(args: list[str]) -> tuple[Risk, str]:
    return ("destructive" if _has(args, "f", ("--force",)) else "write"), ""


def _rsync(args: list[str]) -> tuple[Risk, str]:
    destructive = any(
        option.startswith("--delete") or option == "--remove-source-files" for option in _options(args)
    )
    return ("destructive" if destructive else "network"), ""


def _tar(args: list[str]) -> tuple[Risk, str]:
    letters: set[str] = set()
    longs: set[str] = set()
    if args and not args[0].startswith("-"):
        letters |= set(args[0])
    for option in _options(args):
        if option.startswith("--"):
            longs.add(option.split("=", 1)[0])
        else:
            letters |= set(option[1:])
    if longs & {"--to-command", "--checkpoint-action", "--use-compress-program"} or "I" in letters:
        return "execute", ""
    if "x" in letters or longs & {"--extract", "--get", "--delete"}:
        return "destructive", ""
    if letters & set("cruA") or longs & {"--create", "--append", "--update", "--concatenate"}:
        return "write", ""
    if "t" in letters or "--list" in longs:
        return "read", ""
    return "execute", ""


def _unzip(args: list[str]) -> tuple[Risk, str]:
    if _has(args, "ltvZ"):
        return "read", ""
    return ("destructive" if _has(args, "o") else "write"), ""


def _compressor(args: list[str]) -> tuple[Risk, str]:
    if _has(args, "clt", ("--stdout", "--to-stdout", "--list", "--test")):
        return "read", ""
    if _has(args, "k", ("--keep",)):
        return "write", ""
    return "destructive", ""  # replaces the original file


def _subcommand(args: Sequence[str], with_value: frozenset[str] = frozenset()) -> tuple[str, list[str]]:
    positionals = _positionals(args, with_value)
    if not positionals:
        return "", []
    first = positionals[0]
    return first, list(args[list(args).index(first) + 1 :])


def _table(
    table: Mapping[str, Risk],
    *,
    default: Risk = "execute",
    empty: Risk = "read",
    with_value: frozenset[str] = frozenset(),
) -> _Special:
    def classify(args: list[str]) -> tuple[Risk, str]:
        sub, _ = _subcommand(args, with_value)
        if not sub:
            return empty, ""
        return table.get(sub, default), sub

    return classify


def _words(risk: Risk, text: str) -> dict[str, Risk]:
    return {word: risk for word in text.split()}


_NPM = {
    **_words(
        "network",
        "install i isntall add ci update up upgrade publish login adduser view v "
        "info show outdated audit search dist-tag deprecate create init exec x doctor ping "
        "fund",
    ),
    **_words("destructive", "unpublish"),
    **_words("write", "uninstall remove rm r un unlink prune dedupe link version pack"),
    **_words("read", "ls list ll la root prefix bin help config get explain why --version -v"),
}
_YARN = {
    **_words("network", "install add upgrade up dlx info npm publish create init"),
    **_words("write", "remove unlink"),
    **_words("read", "list why versions --version config"),
}
_PNPM = {
    **_words("network", "install i add update up upgrade dlx publish fetch create outdated audit"),
    **_words("write", "remove rm uninstall un unlink prune"),
    **_words("read", "ls list why --version"),
}
_BUN = {
    **_words("network", "install i add update upgrade x create publish pm"),
    **_words("write", "remove rm"),
}
_PIP = {
    **_words("network", "install download wheel search index"),
    **_words("write", "uninstall"),
    **_words("read", "list show freeze check help config cache inspect debug --version"),
}
_CARGO = {
    **_words("network", "install fetch update publish search login add yank owner"),
    **_words("write", "clean fmt remove rm new init"),
    **_words("read", "--version version metadata tree help"),
}
_GEM = {
    **_words("network", "install update push fetch"),
    **_words("write", "uninstall"),
    **_words("read", "list"),
}
_POETRY = {
    **_words("network", "add install update lock publish search"),
    **_words("write", "remove"),
    **_words("read", "show check --version"),
}
_CONDA = {
    **_words("network", "install create update upgrade search"),
    **_words("write", "remove uninstall"),
    **_words("read", "list info"),
}
_BREW = {
    **_words("network", "install upgrade update tap fetch reinstall"),
    **_words("write", "uninstall remove rm untap cleanup"),
    **_words("read", "list info search --version"),
}
_SYSTEM_PACKAGES = {
    **_words("network", "install update upgrade dist-upgrade full-upgrade add download source makecache"),
    **_words("destructive", "remove purge autoremove del erase"),
    **_words("read", "list show search policy info"),
}
_BUNDLE = {**_words("network", "install update add"), **_words("read", "list show")}
_COMPOSER = {**_words("network", "install require update create-project"), **_words("write", "remove")}
_PIPX = {
    **_words("network", "install upgrade run inject"),
    **_words("write", "uninstall"),
    **_words("read", "list"),
}


def _pip(args: list[str]) -> tuple[Risk, str]:
    return _table(_PIP)(args)


def _python(args: list[str]) -> tuple[Risk, str]:
    if len(args) >= 2 and args[0] == "-m":
        module, rest = args[1], args[2:]
        if module == "pip":
            risk, sub = _pip(rest)
            return risk, f"-m pip {sub}".rstrip()
        if module == "venv":
            return "write", "-m venv"
        return "execute", f"-m {module}"
    return "execute", ""


def _uv(args: list[str]) -> tuple[Risk, str]:
    sub, rest = _subcommand(args)
    if sub == "pip":
        risk, inner = _pip(rest)
        return risk, f"pip {inner}".rstrip()
    if sub == "tool":
        action, _ = _subcommand(rest)
        risk: Risk = {
            "install": "network",
            "run": "network",
            "upgrade": "network",
            "uninstall": "write",
            "list": "read",
        }.get(action, "execute")
        return risk, f"tool {action}".rstrip()
    table = {
        **_words("network", "add sync lock"),
        **_words("write", "remove venv init"),
        **_words("read", "--version version tree"),
    }
    if sub == "python":
        action, _ = _subcommand(rest)
        return ("network" if action == "install" else "read"), "python"
    return table.get(sub, "execute" if sub else "read"), sub


def _go(args: list[str]) -> tuple[Risk, str]:
    sub, rest = _subcommand(args)
    if sub == "mod":
        action, _ = _subcommand(rest)
        risk: Risk = {"init": "write", "graph": "read", "why": "read", "verify": "read", "edit": "write"}.get(
            action, "network"
        )
        return risk, f"mod {action}".rstrip()
    table = {
        **_words("network", "get install"),
        **_words("write", "fmt"),
        **_words("read", "version env list doc help"),
    }
    return table.get(sub, "execute" if sub else "read"), sub


def _docker(args: list[str]) -> tuple[Risk, str]:
    with_value = frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"})
    sub, rest = _subcommand(args, with_value)
    label = sub
    action = sub
    if sub in ("container", "image", "volume", "network", "system", "builder", "buildx", "plugin", "context"):
        action, _ = _subcommand(rest)
        label = f"{sub} {action}".rstrip()
    if action in ("rm", "rmi", "prune", "remove", "delete"):
        return "destructive", label
    if action in ("pull", "push", "login", "search", "build"):
        return "network", label
    if action in (
        "ps",
        "images",
        "inspect",
        "logs",
        "version",
        "info",
        "ls",
        "list",
        "history",
        "top",
        "stats",
        "diff",
        "",
    ):
        return "read", label
    return "execute", label


_REMOTE_DESTRUCTIVE = frozenset(
    {"delete", "rm", "remove", "destroy", "uninstall", "purge", "rb", "del", "drain"}
)


def _remote_cli(args: list[str]) -> tuple[Risk, str]:
    """Cloud and cluster CLIs: always network, destructive when they delete something."""
    positionals = _positionals(args)
    label = " ".join(positionals[:1])
    if any(word in _REMOTE_DESTRUCTIVE for word in positionals[:3]):
        return "destructive", label
    return "network", label


def _git(args: list[str]) -> tuple[Risk, str]:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        with_value = args[index] in (
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--config-env",
            "--exec-path",
        )
        index += 2 if with_value else 1
    if index >= len(args):
        return "read", ""
    sub, rest = args[index], args[index + 1 :]
    rule = _GIT.get(sub)
    if rule is None:
        return "execute", sub
    return (rule(rest) if callable(rule) else rule), sub


def _git_push(args: list[str]) -> Risk:
    forced = _has(
        args,
        "fd",
        ("--force", "--force-with-lease", "--force-if-includes", "--delete", "--mirror", "--prune"),
    )
    refspec_rewrite = any(arg.startswith(("+", ":")) for arg in _positionals(args))
    return "destructive" if forced or refspec_rewrite else "network"


def _git_branch(args: list[str]) -> Risk:
    if _has(args, "dDMCf", ("--delete", "--force")):
        return "destructive"
    if _has(args, "mc", ("--move", "--copy", "--set-upstream-to", "--unset-upstream", "--edit-description")):
        return "write"
    listing = _has(
        args,
        "alrv",
        (
            "--list",
            "--all",
            "--remotes",
            "--verbose",
            "--contains",
            "--merged",
            "--no-merged",
            "--show-current",
        ),
    )
    return "read" if listing or not _positionals(args) else "write"


def _git_tag(args: list[str]) -> Risk:
    if _has(args, "df", ("--delete", "--force")):
        return "destructive"
    if _has(args, "lvn", ("--list", "--verify", "--contains")) or not _positionals(args):
        return "read"
    return "write"


def _git_stash(args: list[str]) -> Risk:
    sub = _positionals(args)[:1]
    if sub and sub[0] in ("drop", "clear"):
        return "destructive"
    if sub and sub[0] in ("list", "show"):
        return "read"
    return "write"


def _git_reset(args: list[str]) -> Risk:
    return "destructive" if _has(args, "", ("--hard", "--merge", "--keep")) else "write"


def _git_checkout(args: list[str]) -> Risk:
    if _has(args, "f", ("--force",)):
        return "destructive"
    return "write" if _has(args, "bB", ("--orphan",)) else "destructive"


def _git_switch(args: list[str]) -> Risk:
    forced = _has(args, "fC", ("--force", "--discard-changes", "--force-create"))
    return "destructive" if forced else "write"


def _git_restore(args: list[str]) -> Risk:
    staged_only = _has(args, "S", ("--staged",)) and not _has(args, "W", ("--worktree",))
    return "write" if staged_only else "destructive"


def _git_remote(args: list[str]) -> Risk:
    sub = _positionals(args)[:1]
    if not sub:
        return "read"
    if sub[0] in ("add", "set-url", "rename", "remove", "rm", "set-head", "set-branches"):
        return "write"
    if sub[0] in ("get-url",):
        return "read"
    return "network"  # show, update, prune contact the remote


def _git_config(args: list[str]) -> Risk:
    reading = _has(
        args, "l", ("--get", "--get-all", "--get-regexp", "--list", "--show-origin", "--get-urlmatch")
    )
    if reading or len(_positionals(args, frozenset({"-f", "--file", "--type"}))) <= 1:
        return "read"
    return "write"


_GitRule = Risk | Callable[[list[str]], Risk]
_GIT: dict[str, _GitRule] = {
    **_words(
        "read",
        "status log diff show blame ls-files ls-tree rev-parse rev-list describe "
        "shortlog grep cat-file help version whatchanged cherry count-objects for-each-ref "
        "name-rev merge-base var check-ignore show-ref diff-tree diff-files diff-index "
        "verify-commit request-pull show-branch range-diff",
    ),
    **_words("network", "pull fetch clone ls-remote submodule send-email lfs"),
    **_words(
        "write",
        "add stage commit merge cherry-pick revert init apply am notes bisect "
        "format-patch pack-refs repack sparse-checkout gc",
    ),
    **_words("destructive", "clean rm mv rebase filter-branch filter-repo prune replace"),
    "push": _git_push,
    "branch": _git_branch,
    "tag": _git_tag,
    "stash": _git_stash,
    "reset": _git_reset,
    "checkout": _git_checkout,
    "switch": _git_switch,
    "restore": _git_restore,
    "remote": _git_remote,
    "config": _git_config,
    "commit": lambda args: "destructive" if _has(args, "", ("--amend",)) else "write",
    "clean": lambda args: "read" if _has(args, "n", ("--dry-run",)) else "destructive",
    "reflog": lambda args: "destructive" if _positionals(args)[:1] in (["expire"], ["delete"]) else "read",
    "update-ref": lambda args: "destructive" if _has(args, "d") else "write",
    "worktree": lambda args: {"remove": "destructive", "prune": "destructive", "list": "read"}.get(
        (_positionals(args) or [""])[0], "write"
    ),
}


def _pacman(args: list[str]) -> tuple[Risk, str]:
    options = _options(args)
    if any(option.startswith("-R") for option in options):
        return "destructive", "-R"
    if any(option.startswith(("-S", "-U")) for option in options):
        return "network", "-S"
    return "read", ""


_SPECIAL: dict[str, _Special] = {
    "git": _git,
    "sed": _sed,
    "gsed": _sed,
    "perl": _perl,
    "sort": _sort,
    "uniq": _uniq,
    "xxd": _xxd,
    "tee": _tee,
    "dd": _dd,
    "cp": _cp,
    "ln": _ln,
    "rsync": _rsync,
    "tar": _tar,
    "unzip": _unzip,
    **{
        name: _compressor
        for name in (
            "gzip",
            "gunzip",
            "bzip2",
            "bunzip2",
            "xz",
            "unxz",
            "lzma",
            "unlzma",
            "compress",
            "uncompress",
        )
    },
    "npm": _table(_NPM),
    "yarn": _table(_YARN, empty="network"),
    "pnpm": _table(_PNPM),
    "bun": _table(_BUN),
    "pip": _pip,
    "pip3": _pip,
    "python": _python,
    "python3": _python,
    "uv": _uv,
    "poetry": _table(_POETRY),
    "pipx": _table(_PIPX),
    "conda": _table(_CONDA),
    "mamba": _table(_CONDA),
    "micromamba": _table(_CONDA),
    "cargo": _table(_CARGO),
    "go": _go,
    "gem": _table(_GEM),
    "bundle": _table(_BUNDLE),
    "composer": _table(_COMPOSER),
    "brew": _table(_BREW),
    **{
        name: _table(_SYSTEM_PACKAGES)
        for name in ("apt", "apt-get", "aptitude", "dnf", "yum", "apk", "zypper")
    },
    "pacman": _pacman,
    "docker": _docker,
    "podman": _docker,
    **{
        name: _remote_cli
        for name in (
            "kubectl",
            "helm",
            "oc",
            "gh",
            "glab",
            "hub",
            "aws",
            "gcloud",
            "gsutil",
            "az",
            "rclone",
            "s3cmd",
            "terraform",
            "tofu",
            "heroku",
            "flyctl",
            "vercel",
        )
    },
}

_SIMPLE: dict[str, Risk] = {
    **_words(
        "read",
        "ls ll dir vdir cat bat batcat head tail wc pwd echo printf grep egrep "
        "fgrep rg ag ack fd fdfind tree stat file du df which whereis type less more most "
        "diff cmp comm cut tr nl paste basename dirname realpath readlink date whoami id "
        "groups uname hostname printenv true false test [ [[ seq jq md5sum sha1sum "
        "sha224sum sha256sum sha384sum sha512sum b2sum cksum sum od hexdump hd strings "
        "column fold rev tac expand unexpand fmt look join cd pushd popd dirs export unset "
        "set alias unalias local declare typeset readonly shift read wait jobs sleep ps "
        "pgrep pidof uptime free lsof locale tty logname yes : history help man info "
        "whatis apropos tput clear getconf nproc arch lsblk cal factor expr bc numfmt shuf "
        "base64 base32 zcat zless zmore zgrep bzcat xzcat zstdcat ldd nm objdump readelf "
        "size locate w who last getent lscpu pstree ulimit umask return exit break "
        "continue trap",
    ),
    **_words("write", "mkdir touch chmod chown chgrp mkfifo mknod patch split csplit zip mktemp"),
    **_words(
        "destructive",
        "rm rmdir mv shred truncate unlink wipefs mkfs mke2fs fdisk sfdisk parted srm blkdiscard",
    ),
    **_words(
        "network",
        "curl wget ssh scp sftp ftp tftp lftp telnet nc ncat netcat socat ping "
        "ping6 traceroute tracepath mtr dig nslookup host whois http https xh aria2c npx "
        "bunx pnpx uvx mosh websocat grpcurl",
    ),
}
