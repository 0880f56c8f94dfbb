"""Commands that run other commands: wrappers, shells, `find -exec`, `env`, `eval`.

Invariants:
- a wrapper (`env CMD`, `nice`, `timeout`, `xargs`, `sudo`, `sh -c`, `bash -lc`, `eval`,
  `find -exec`, …) is at least `execute`, and at least as risky as the command it wraps: the
  wrapped command is classified with the same rules, so wrapping never lowers a risk;
- when a wrapper carries an option we do not know, we cannot tell where the wrapped command
  starts, so every place it could start is classified and the riskiest reading wins;
- assignments (`NAME=value` before a command, in `env`, `export`, `declare`) are harmless only
  for a short list of names that cannot change what runs (`LC_*`, `LANG`, `TZ`, `TERM`, …);
  any other name is at least `execute`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from agent_tui.safety.assessment import Findings
from agent_tui.safety.shell_parse import Word, subscript_with_expansion
from agent_tui.safety.shell_words import names

__all__ = ["SHELLS", "WRAPPERS", "assignment_reason", "declaration", "env", "find", "shell", "wrapper"]

ClassifyWords = Callable[[Sequence[Word], int], Findings]
ClassifyScript = Callable[[str, int], Findings]

_PLAIN_DECLARATION_FLAGS = frozenset("xrgp")
_HARMLESS_NAME = re.compile(
    r"(LC_[A-Z_]+|LANG|LANGUAGE|TZ|TERM|COLUMNS|LINES|NO_COLOR|CLICOLOR|CLICOLOR_FORCE|FORCE_COLOR|"
    r"LS_COLORS|GREP_COLORS|TIME_STYLE|POSIXLY_CORRECT)"
)
_RUNS_CODE = re.compile(
    r"(PATH|LD_\w+|DYLD_\w+|\w*PAGER|GIT_\w+|\w*_CONFIG\w*|EDITOR|VISUAL|BASH_ENV|ENV|SHELLOPTS|"
    r"BASHOPTS|IFS|PS4|PROMPT_COMMAND|PYTHON\w*|PERL5\w*|NODE_OPTIONS|RUBYOPT|HOME|XDG_\w+|LESSOPEN|"
    r"LESSCLOSE|SHELL|CDPATH|GLOBIGNORE|BASH_FUNC_\w+|RIPGREP_CONFIG_PATH)"
)


def assignment_reason(name: str, value: Word | None) -> str | None:
    """Why `NAME=value` is not harmless, or None when it is."""
    if value is not None and not value.literal:
        return f"`{name}={value.source}` assigns a value not known here"
    if _HARMLESS_NAME.fullmatch(name):
        return None
    if _RUNS_CODE.fullmatch(name):
        return f"`{name}=` can change what runs"
    return f"`{name}=` is not known to be harmless"


# name → (options that take a value, options known to be flags, words to skip before the command)
_WRAPPER_OPTIONS: dict[str, tuple[str, str, int]] = {
    "nice": ("-n --adjustment", "", 0),
    "ionice": ("-c -n -p -P -u --class --classdata", "-t", 0),
    "timeout": ("-s --signal -k --kill-after", "--preserve-status --foreground -v --verbose", 1),
    "stdbuf": ("-i -o -e --input --output --error", "", 0),
    "nohup": ("", "", 0),
    "time": ("-f --format -o --output", "-p -v -a --append", 0),
    "setsid": ("", "-c -f -w --ctty --fork --wait", 0),
    "watch": ("-n --interval -d", "-t -x -e -g -c -b -p", 0),
    "xargs": (
        "-I -n -P -L -d -E -s -a --max-args --max-procs --delimiter --arg-file --max-lines --max-chars "
        "--eof --replace --process-slot-var",
        "-0 --null -r --no-run-if-empty -t --verbose -p -x -o",
        0,
    ),
    "sudo": ("-u -g -C -D -h -p -r -t -U -T --user --group", "-n -E -H -S -b -i -s -k -K --preserve-env", 0),
    "doas": ("-u -C", "-n -s", 0),
    "exec": ("-a", "-c -l", 0),
    "command": ("", "-p", 0),
    "builtin": ("", "", 0),
    "busybox": ("", "", 0),
    "unbuffer": ("", "", 0),
    "caffeinate": ("-t -w", "-d -i -m -s -u", 0),
}
WRAPPERS: dict[str, tuple[frozenset[str], frozenset[str], int]] = {
    name: (names(with_value), names(flags), skip)
    for name, (with_value, flags, skip) in _WRAPPER_OPTIONS.items()
}
_WHAT_WRAPPERS_DO = {
    "sudo": "runs a command as another user",
    "doas": "runs a command as another user",
    "xargs": "runs a command with arguments read from its input",
    "exec": "replaces the shell with a command",
}
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash"})
_SHELL_VALUE_OPTIONS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


def wrapper(name: str, args: Sequence[Word], depth: int, classify: ClassifyWords) -> Findings:
    """`nice CMD`, `timeout 5 CMD`, `xargs CMD`, `sudo CMD`, …: execute, and the wrapped command."""
    with_value, flags, skip = WRAPPERS[name]
    found = Findings(programs=[name])
    found.add("execute", f"`{name}` {_WHAT_WRAPPERS_DO.get(name, 'runs another command')}")
    if name == "time" and any(
        arg.value in ("-o", "--output") or arg.value.startswith("--output=") for arg in args
    ):
        found.add("destructive", "`time -o` writes a file")
    starts: set[int] = set()
    index = 0
    while index < len(args):
        value = args[index].value
        if value == "--":
            index += 1
            break
        if not value.startswith("-") or value == "-":
            break
        option = value.split("=", 1)[0]
        if option in with_value and "=" not in value:
            index += 2
            continue
        if (
            option not in with_value
            and option not in flags
            and not (option[:2] in with_value and len(option) > 2)
        ):
            starts.update({index + 1, index + 2})  # an option we do not know: it may take a value
        index += 1
    starts.add(index + skip)
    for start in sorted(starts):
        if start < len(args):
            found.merge(classify(args[start:], depth + 1))
    return found


def shell(name: str, args: Sequence[Word], depth: int, script: ClassifyScript) -> Findings:
    """`sh -c SCRIPT` is SCRIPT (and execute); a shell running a file or its input is execute."""
    found = Findings(programs=[name])
    takes_script = False
    index = 0
    while index < len(args):
        value = args[index].value
        if value == "--":
            index += 1
            break
        if value[:1] not in ("-", "+") or value in ("-", "+"):
            break
        if value in _SHELL_VALUE_OPTIONS:
            index += 2
            continue
        if not value.startswith("--") and "c" in value[1:]:
            takes_script = True
        index += 1
    if not takes_script:
        found.add("execute", f"`{name}` runs a script or its input")
        return found
    found.add("execute", f"`{name} -c` runs a shell")
    if index >= len(args):
        found.add("execute", f"`{name} -c` without a script")
    elif not args[index].literal:
        found.add("execute", f"`{name} -c {args[index].source}`: the script is not known here")
    else:
        found.merge(script(args[index].value, depth + 1))
    return found


# GNU env's long options, and those of them that take a value (required)
_ENV_LONG_VALUED = names("unset chdir split-string")
_ENV_LONG = _ENV_LONG_VALUED | names(
    "ignore-environment null block-signal default-signal ignore-signal list-signal-handling debug help version"
)
_ENV_SHORT_FLAGS = frozenset("i0v")
_ENV_SHORT_VALUED = frozenset("uCS")


def env(args: Sequence[Word], depth: int, classify: ClassifyWords, script: ClassifyScript) -> Findings:
    """`env [OPTIONS] [NAME=VALUE…] [CMD…]`: prints the environment, or runs CMD with changes.

    Options are read as GNU env reads them: short ones cluster (`-iS'cmd'` is `-i -S 'cmd'`),
    long ones match by unique prefix (`--sp=` is `--split-string=`); `-S` runs its string as a
    command line; an option not known here is not judged.
    """
    found = Findings(programs=["env"])
    index = 0
    while index < len(args):
        value = args[index].value
        if value == "--":
            index += 1
            break
        if value.startswith("-") and value != "-":
            following = args[index + 1].value if index + 1 < len(args) else None
            taken, command_line, unknown = _env_option(value, following)
            if unknown is not None:
                found.add("execute", f"`env {unknown}`: an option not known here")
                return found
            if command_line is not None:
                found.add("execute", "`env -S` runs a command line")
                found.merge(script(command_line, depth + 1))
                return found
            index += taken
            continue
        name, equals, rest = value.partition("=")
        if equals and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            reason = assignment_reason(name, Word(rest, rest, args[index].expansions))
            if reason is not None:
                found.add("execute", reason)
            index += 1
            continue
        break
    if index >= len(args):
        found.add("read", "`env` prints the environment")
        return found
    found.add("execute", "`env` runs another command")
    found.merge(classify(args[index:], depth + 1))
    return found


def _env_option(value: str, following: str | None) -> tuple[int, str | None, str | None]:
    """One of env's options (`value`; `following`, the word after it): the words it takes, the
    command line it runs (`-S`), and the option as said when it is not known here."""
    if value.startswith("--"):
        name, equals, attached = value[2:].partition("=")
        matches = [option for option in _ENV_LONG if option.startswith(name)] if name else []
        if name in _ENV_LONG:
            matches = [name]
        if len(matches) != 1:
            return 0, None, value
        if matches[0] == "split-string":
            return 1, attached if equals else (following or ""), None
        return 1 if equals or matches[0] not in _ENV_LONG_VALUED else 2, None, None
    cluster = value[1:]
    for position, letter in enumerate(cluster):
        if letter in _ENV_SHORT_VALUED:
            rest = cluster[position + 1 :]
            if letter == "S":
                return 1, rest or (following or ""), None
            return 1 if rest else 2, None, None  # the value is the rest of the word, or the next one
        if letter not in _ENV_SHORT_FLAGS:
            return 0, None, f"-{letter}"
    return 1, None, None


def declaration(name: str, args: Sequence[Word]) -> Findings:
    """`export`, `declare`, `local`, …: harmless names only; `-f` (functions) is not judged."""
    found = Findings(programs=[name])
    for arg in args:
        value = arg.value
        if value.startswith("-") or value.startswith("+"):
            if "f" in value[1:]:
                found.add("execute", f"`{name} {value}` deals in shell functions")
            elif set(value[1:]) - _PLAIN_DECLARATION_FLAGS:
                # `-i` evaluates values as arithmetic, `-n` makes names references, `-a`/`-A`
                # read `([$(cmd)]=x)`: each can run a command hidden in a subscript
                found.add("execute", f"`{name} {value}` changes how bash reads the values")
            continue
        if subscript_with_expansion(value) or value.partition("=")[2].startswith("("):
            found.add("execute", f"`{name}` gets `{value}`, whose subscript bash may expand")
        variable, equals, rest = value.partition("=")
        reason = assignment_reason(variable, Word(rest, rest, arg.expansions) if equals else None)
        if reason is not None:
            found.add("execute", reason)
    if not found.assessments:
        found.add("read", f"`{name}` sets harmless variables only")
    return found


_FIND_VALUE = names(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type -xtype -size "
    "-perm -user -group -uid -gid -links -inum -samefile -newer -anewer -cnewer -mtime -atime -ctime "
    "-mmin -amin -cmin -used -fstype -context -maxdepth -mindepth -regextype -printf -files0-from -D"
)
_FIND_FLAG = frozenset(
    [
        "-print",
        "-print0",
        "-ls",
        "-prune",
        "-quit",
        "-true",
        "-false",
        "-empty",
        "-readable",
        "-writable",
        "-executable",
        "-nouser",
        "-nogroup",
        "-depth",
        "-d",
        "-xdev",
        "-mount",
        "-follow",
        "-noleaf",
        "-ignore_readdir_race",
        "-noignore_readdir_race",
        "-daystart",
        "-not",
        "-a",
        "-and",
        "-o",
        "-or",
        "!",
        "(",
        ")",
        ",",
        "-H",
        "-L",
        "-P",
    ]
)
_FIND_WRITES = {"-fprint": 1, "-fprint0": 1, "-fls": 1, "-fprintf": 2}
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_NEWER_XY = re.compile(r"-newer[aBcmt][aBcmt]")


def find(args: Sequence[Word], depth: int, classify: ClassifyWords) -> Findings:
    """`find`: read for tests and printing; `-delete`/`-fprint` destructive; `-exec CMD` runs CMD."""
    found = Findings(programs=["find"])
    values = [arg.value for arg in args]
    for value in values:  # anywhere, even where it would be an option's value: leave no doubt
        if value == "-delete":
            found.add("destructive", "`find -delete` deletes what it finds")
        elif value in _FIND_WRITES:
            found.add("destructive", f"`find {value}` writes a file")
    index = 0
    while index < len(values):
        value = values[index]
        if value in _FIND_EXEC:
            end = index + 1
            while end < len(values) and values[end] not in (";", "+"):
                end += 1
            found.add("execute", f"`find {value}` runs a command")
            if end > index + 1:
                found.merge(classify(args[index + 1 : end], depth + 1))
            index = end + 1
            continue
        if value in _FIND_VALUE or _NEWER_XY.fullmatch(value):
            if index + 1 >= len(values):
                found.add("execute", f"`find {value}` is missing its value")
            index += 2
            continue
        if value in _FIND_WRITES:
            index += 1 + _FIND_WRITES[value]
            continue
        if (
            value.startswith("-")
            and value not in _FIND_FLAG
            and value != "-delete"
            and not value.startswith("-O")
        ):
            found.add("execute", f"`find {value}` is not a known read-only test")
        index += 1
    if not found.assessments:
        found.add("read", "`find` only lists files")
    return found
