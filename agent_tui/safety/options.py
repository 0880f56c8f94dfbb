"""Command-line options as data, and a scanner that reads them the way getopt_long does.

An `OptionTable` is written as short spec strings: `-n` is a flag, `-k=` takes a value (attached
`-k1` or in the next word), `-i=?` takes an optional value that must be attached (`-i.bak`,
`--color=auto`); `--output=` is a long option with a value. Options that are not read-only carry
their risk and what they do.

Invariants of `scan`:
- short options cluster (`-rn`), and a value-taking letter takes the rest of its word or the
  next word (`sort -roout` is `-r -o out`); a digit run (`-20`) is one number option where the
  table allows it;
- a long option matches exactly, else by a unique prefix (`--in-pl` is `--in-place`), as GNU
  getopt_long and git's parse-options do; an ambiguous prefix, an unknown option, a missing
  value or a value on a flag is a `problem`, never silently skipped;
- `--` ends the options; with `permute` (GNU style) options may follow operands, without it
  (POSIX style) the first operand ends them.

Matching by prefix is safe even for programs that do not accept abbreviations: a prefix that is
unique in our table either means what the program means, or the program rejects it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from agent_tui.events.model import Risk
from agent_tui.safety.assessment import RiskAssessment

__all__ = ["Option", "OptionTable", "Scan", "scan"]

Argument = Literal["none", "required", "optional"]


@dataclass(frozen=True, slots=True)
class Option:
    spelling: str
    argument: Argument = "none"
    risk: Risk = "read"
    effect: str | None = None


@dataclass(frozen=True, slots=True)
class OptionUse:
    option: Option
    written: str
    value: str | None


@dataclass(slots=True)
class Scan:
    """What `scan` found: options used, operands, and what could not be read."""

    used: list[OptionUse] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    dashdash: bool = False
    before_dashdash: int = 0  # how many operands came before `--` (all of them without one)

    def findings(self, label: str) -> list[RiskAssessment]:
        """What the options show of `label`: each problem is `execute`, each option that is not
        read-only its own risk and effect."""
        found = [RiskAssessment("execute", f"`{label}`: {problem}") for problem in self.problems]
        found += [
            RiskAssessment(use.option.risk, f"`{label} {use.written}` {use.option.effect}")
            for use in self.used
            if use.option.risk != "read"
        ]
        return found


class OptionTable:
    """The options one program (or one git subcommand) accepts.

    Args:
        read: spec words of the read-only options, e.g. `"-n -k= --color=? --quiet"`.
        risky: spec words (several may share one entry) → (risk, what they do).
        numbers: `-5` style number options are accepted (head, git log).
        negatable: `--no-X` switches off a read-only `--X` (git's parse-options).
    """

    def __init__(
        self,
        read: str = "",
        risky: Mapping[str, tuple[Risk, str]] | None = None,
        *,
        numbers: bool = False,
        negatable: bool = False,
    ) -> None:
        self.short: dict[str, Option] = {}
        self.long: dict[str, Option] = {}
        self.numbers = numbers
        self.negatable = negatable
        for spec in read.split():
            self._add(spec, "read", None)
        for specs, (risk, effect) in (risky or {}).items():
            for spec in specs.split():
                self._add(spec, risk, effect)

    def _add(self, spec: str, risk: Risk, effect: str | None) -> None:
        argument: Argument = "none"
        if spec.endswith("=?"):
            spec, argument = spec[:-2], "optional"
        elif spec.endswith("="):
            spec, argument = spec[:-1], "required"
        option = Option(spec, argument, risk, effect)
        if spec.startswith("--"):
            self.long[spec[2:]] = option
        elif spec.startswith("-") and len(spec) == 2:
            self.short[spec[1]] = option
        else:
            raise ValueError(f"bad option spec {spec!r}")

    def match_long(self, name: str) -> Option | str:
        """The option `--name` means, or a problem sentence."""
        if (exact := self.long.get(name)) is not None:
            return exact
        matches = {option for key, option in self.long.items() if key.startswith(name)}
        if len(matches) == 1:
            return matches.pop()
        if matches:
            return f"`--{name}` is ambiguous"
        if self.negatable and name.startswith("no-"):
            negated = self.match_long(name[3:])
            if isinstance(negated, Option) and negated.risk == "read":
                return Option(f"--{name}")
        return f"`--{name}` is not a known option"


def scan(args: list[str], table: OptionTable, *, permute: bool = True) -> Scan:
    """Split `args` into options and operands as the program would (see the module contract)."""
    result = Scan()
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            result.dashdash = True
            result.before_dashdash = len(result.operands)
            result.operands.extend(args[index + 1 :])
            return result
        if arg.startswith("--"):
            index = _long(args, index, table, result)
        elif arg.startswith("-") and arg != "-":
            index = _short(args, index, table, result)
        else:
            result.operands.append(arg)
            if not permute:
                result.operands.extend(args[index + 1 :])
                break
        index += 1
    result.before_dashdash = len(result.operands)
    return result


def _long(args: list[str], index: int, table: OptionTable, result: Scan) -> int:
    name, equals, value = args[index][2:].partition("=")
    matched = table.match_long(name)
    if isinstance(matched, str):
        result.problems.append(matched)
        return index
    written = f"--{name}"
    if matched.argument == "none":
        if equals:
            result.problems.append(f"`{matched.spelling}` takes no value")
        result.used.append(OptionUse(matched, written, None))
        return index
    if equals or matched.argument == "optional":
        result.used.append(OptionUse(matched, written, value if equals else None))
        return index
    if index + 1 >= len(args):
        result.problems.append(f"`{matched.spelling}` needs a value")
        result.used.append(OptionUse(matched, written, None))
        return index
    result.used.append(OptionUse(matched, written, args[index + 1]))
    return index + 1


def _short(args: list[str], index: int, table: OptionTable, result: Scan) -> int:
    arg = args[index]
    if table.numbers and arg[1:].isdigit():
        result.used.append(OptionUse(Option("-NUM"), arg, arg[1:]))
        return index
    position = 1
    while position < len(arg):
        letter = arg[position]
        option = table.short.get(letter)
        if option is None:
            result.problems.append(f"`-{letter}` is not a known option")
            position += 1
            continue
        rest = arg[position + 1 :]
        if option.argument == "none":
            result.used.append(OptionUse(option, f"-{letter}", None))
            position += 1
            continue
        if rest or option.argument == "optional":
            result.used.append(OptionUse(option, f"-{letter}", rest or None))
        elif index + 1 < len(args):
            result.used.append(OptionUse(option, f"-{letter}", args[index + 1]))
            index += 1
        else:
            result.problems.append(f"`-{letter}` needs a value")
            result.used.append(OptionUse(option, f"-{letter}", None))
        break
    return index
