"""`sed` scripts and `awk` programs: read-only only when every command in them only prints.

Invariants:
- a `sed` invocation is `read` only when its options are known read-only, its script is given
  on the command line (not `-f FILE`), and the script parses as GNU sed with only these
  commands: `s` (flags `g p i I m M` and a number), `y`, `p P d D n N g G h H x l = q Q z F`,
  braces, `!`, labels and branches; `e`, `s///e` run a command, `w`, `W`, `s///w` write a
  file, `r`, `R` read another file, and `a`, `i`, `c` (whose text GNU and BSD sed end in
  different places) are not judged read;
- a `sed` line is also not judged read when any of its words has an `e`, `r` or `w` followed by
  a blank anywhere (even inside a pattern): that is the shape of the commands above, and we
  leave no room for a misreading;
- an `awk` invocation is `read` only with `-F`/`-v` options and a program on the command line
  that does not call `system`, `getline` or `close`, uses no `@` (gawk's indirect calls and
  includes) and no `|` pipe, and does not combine `print`/`printf` with `>` (which may be
  output redirection rather than a comparison).
"""

from __future__ import annotations

import re

from agent_tui.safety.assessment import RiskAssessment, worst
from agent_tui.safety.options import OptionTable, scan

__all__ = ["awk_assessment", "sed_assessment"]

SED_OPTIONS = OptionTable(
    "-n --quiet --silent -E -r --regexp-extended -s --separate -u --unbuffered -z --null-data "
    "--zero-terminated --posix --debug --sandbox -b --binary -a --line-length= --help --version "
    "-e= --expression= --follow-symlinks",
    {
        "-i=? -I=? --in-place=?": ("destructive", "edits files in place"),
        "-f= --file=": ("execute", "reads its script from a file"),
    },
)
AWK_OPTIONS = OptionTable("-F= -v=", {"-f= --file=": ("execute", "reads its program from a file")})

_COMMAND_SHAPE = re.compile(r"(?<!\\)[ewrRW]\s")
_SIMPLE = frozenset("pPdDnNgGhHxlz=F")
_WITH_NUMBER = frozenset("qQlL")
_BRANCHES = frozenset("btT")
_S_FLAGS = frozenset("gpiImM0123456789")
_NOT_JUDGED = {
    command: f"`sed` script uses `{command}`: {why}"
    for commands, why in (
        ("aic", "GNU and BSD sed end its text differently"),
        ("rR", "reads another file"),
        ("e", "runs a command"),
        ("wW", "writes a file"),
    )
    for command in commands
}


def sed_assessment(name: str, args: list[str]) -> RiskAssessment:
    """The risk of `sed ARGS` (all words literal)."""
    found = scan(args, SED_OPTIONS)
    findings = found.findings(name)
    scripts = [use.value or "" for use in found.used if use.option.spelling in ("-e", "--expression")]
    files = found.operands
    if not scripts and not any(use.option.spelling in ("-f", "--file") for use in found.used):
        if not files:
            return RiskAssessment("execute", f"`{name}` without a script")
        scripts, files = [files[0]], files[1:]
    for script in scripts:
        findings.append(_sed_script(name, script))
    if any(_COMMAND_SHAPE.search(word) for word in args):
        findings.append(
            RiskAssessment("execute", f"`{name}` has an `e`, `r` or `w` and a blank: a command's shape")
        )
    return worst(findings) or RiskAssessment("read", f"`{name}` script only prints")


def _sed_script(name: str, script: str) -> RiskAssessment:
    if not script.strip():
        return RiskAssessment("execute", f"`{name}` script is empty")
    try:
        commands = _SedReader(script).commands()
    except _SedSyntax as error:
        return RiskAssessment("execute", f"`{name}` script not judged: {error}")
    findings = []
    for command in commands:
        if command in ("w", "W"):
            findings.append(RiskAssessment("destructive", _NOT_JUDGED[command]))
        elif command in _NOT_JUDGED:
            findings.append(RiskAssessment("execute", _NOT_JUDGED[command]))
    return worst(findings) or RiskAssessment("read", f"`{name}` script only prints")


class _SedSyntax(Exception):
    pass


class _SedReader:
    """Reads a GNU sed script command by command; `commands` lists the letters that matter."""

    def __init__(self, script: str) -> None:
        self.text = script
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos : self.pos + 1]

    def skip(self, chars: str) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in chars:
            self.pos += 1

    def commands(self) -> list[str]:
        found: list[str] = []
        while True:
            self.skip(" \t\n;")
            if self.pos >= len(self.text):
                return found
            if self.peek() == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
                continue
            self.address()
            self.skip(" \t")
            if self.peek() == ",":
                self.pos += 1
                self.skip(" \t")
                self.address(second=True)
            self.skip(" \t")
            while self.peek() == "!":
                self.pos += 1
                self.skip(" \t")
            found.extend(self.command())

    def address(self, *, second: bool = False) -> None:
        char = self.peek()
        if char.isdigit() or (second and char in "+~"):
            self.pos += 1
            self.skip("0123456789")
            if self.peek() == "~":
                self.pos += 1
                self.skip("0123456789")
        elif char == "$":
            self.pos += 1
        elif char in ("/", "\\"):
            if char == "\\":
                self.pos += 1
            delimiter = self.peek()
            if not delimiter or delimiter in "\n\\":
                raise _SedSyntax("bad address")
            self.pos += 1
            self.delimited(delimiter)
            self.skip("IM")

    def command(self) -> list[str]:
        char = self.peek()
        if not char:
            raise _SedSyntax("missing command")
        self.pos += 1
        if char in "{}":
            return []
        if char in _SIMPLE:
            if char == "l":
                self.skip("0123456789 \t")
            return self.end([])
        if char in _WITH_NUMBER:
            self.skip(" \t0123456789")
            return self.end([])
        if char in _BRANCHES or char == ":":
            self.rest_of_label()
            return []
        if char == "s":
            return self.substitute()
        if char == "y":
            delimiter = self.peek()
            if not delimiter or delimiter in "\n\\":
                raise _SedSyntax("bad `y` command")
            self.pos += 1
            self.delimited(delimiter)
            self.delimited(delimiter)
            return self.end([])
        if char == "v":
            self.rest_of_label()
            return []
        if char in _NOT_JUDGED:
            self.pos = len(self.text)  # the rest is text, a file name or a command line
            return [char]
        raise _SedSyntax(f"unknown command `{char}`")

    def substitute(self) -> list[str]:
        delimiter = self.peek()
        if not delimiter or delimiter in "\n\\":
            raise _SedSyntax("bad `s` command")
        self.pos += 1
        self.delimited(delimiter, regex=True)
        self.delimited(delimiter)
        found: list[str] = []
        while self.pos < len(self.text):
            flag = self.peek()
            if flag in _S_FLAGS:
                self.pos += 1
            elif flag == "e":
                found.append("e")
                self.pos += 1
            elif flag == "w":
                found.append("w")
                self.pos = len(self.text)
            else:
                break
        return self.end(found)

    def delimited(self, delimiter: str, *, regex: bool = False) -> None:
        """Skip past the next unescaped `delimiter`; refuse one inside `[…]` (seds disagree)."""
        in_bracket = False
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\\":
                self.pos += 2
                continue
            if char == delimiter:
                if in_bracket:
                    raise _SedSyntax("the delimiter inside `[…]`: sed versions read it differently")
                self.pos += 1
                return
            if regex and char == "[":
                in_bracket = True
            elif char == "]":
                in_bracket = False
            self.pos += 1
        raise _SedSyntax(f"unterminated `{delimiter}`")

    def rest_of_label(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] not in ";\n}":
            self.pos += 1

    def end(self, found: list[str]) -> list[str]:
        self.skip(" \t")
        if self.peek() not in ("", ";", "\n", "}", "#"):
            raise _SedSyntax(f"unexpected `{self.peek()}`")
        return found


_AWK_WORD = re.compile(r"\b(system|getline|close)\b")
_AWK_PRINT = re.compile(r"\bprintf?\b")
_AWK_PIPE = re.compile(r"(?<!\|)\|(?!\|)")
_AWK_STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def awk_assessment(name: str, args: list[str]) -> RiskAssessment:
    """The risk of `awk ARGS` (all words literal)."""
    found = scan(args, AWK_OPTIONS, permute=False)
    findings = found.findings(name)
    text = " ".join(found.operands + [use.value or "" for use in found.used])
    call = _AWK_WORD.search(text)
    if call is not None:
        what = {"system": "runs a command", "getline": "can read a command's output", "close": "closes pipes"}
        findings.append(
            RiskAssessment("execute", f"`{name}` program uses `{call.group(1)}`: {what[call.group(1)]}")
        )
    if "@" in _AWK_STRING.sub('""', text):
        findings.append(RiskAssessment("execute", f"`{name}` program uses `@`: indirect calls and includes"))
    if _AWK_PIPE.search(text):
        findings.append(RiskAssessment("execute", f"`{name}` program uses `|`: pipes to or from a command"))
    if ">" in text and _AWK_PRINT.search(text):
        findings.append(RiskAssessment("execute", f"`{name}` program prints with `>`: may write a file"))
    return worst(findings) or RiskAssessment("read", f"`{name}` program only prints")
