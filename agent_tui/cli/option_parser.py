"""The argument parsers `agent-tui` is built of: what they add to argparse's.

Invariants:
- a long option no parser knows is named as the error, with the nearest known one
  (`unrecognized option --sesions-dir; did you mean --sessions-dir?`), never mistaken for the
  command or an argument (`Parser`);
- an argument a command does not know is that command's error, said with its own usage
  (`SubcommandParser`);
- a command's arguments may be added only when a command line naming it is parsed
  (`SubcommandParser.take`): what the command line reads is the same as with all of them built.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence


class Parser(argparse.ArgumentParser):
    """A parser that names a long option it does not know, with the one it probably meant
    (`unrecognized option --sesions-dir; did you mean --sessions-dir?`), before anything else is
    read: plain argparse went on and took the option's value for the command (`invalid choice:
    'X'`) or for a positional argument."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._check_options(list(args) if args is not None else sys.argv[1:])
        return super().parse_known_args(args, namespace)

    def _check_options(self, args: list[str]) -> None:
        """Error on the first `--option` this parser does not know, up to its command's name."""
        takes_value = {
            option: action.nargs != 0 for action in self._actions for option in action.option_strings
        }
        commands = {
            name
            for action in self._actions
            if isinstance(action, argparse._SubParsersAction)
            for name in action.choices
        }
        index = 0
        while index < len(args):
            token = args[index]
            index += 1
            if token == "--" or token in commands:
                return
            if not token.startswith("--"):
                continue
            name, equals, _ = token.partition("=")
            known = [option for option in takes_value if option.startswith(name)]
            if name in takes_value:
                known = [name]
            if not known:
                self.error(
                    unknown_option(name, [option for option in takes_value if option.startswith("--")])
                )
            if len(known) == 1 and takes_value[known[0]] and not equals:
                index += 1  # its value, whatever it looks like


def unknown_option(name: str, options: list[str]) -> str:
    """`unrecognized option --sesions-dir; did you mean --sessions-dir?` (the hint when one is near)."""
    import difflib  # only for a misspelled option: every command parses without it

    near = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
    hint = f"; did you mean {near[0]}?" if near else ""
    return f"unrecognized option {name}{hint}"


class SubcommandParser(Parser):
    """A subcommand's parser: an argument it does not know is its own error, said with its own
    usage. (Plain argparse hands such arguments up to the top-level parser, which answered
    `agent-tui replay --frob` with the usage of `agent-tui`.)"""

    fill: Callable[[argparse.ArgumentParser], None] | None = None
    """Adds the command's arguments when its command line is parsed (see `take`)."""

    def take(self, arguments: Callable[[argparse.ArgumentParser], None], *, lazy: bool) -> None:
        """Add the command's `arguments` now, or with `lazy` when a command line naming it is
        parsed: a command line names one command, so the others' arguments need not be built."""
        if lazy:
            self.fill = arguments
        else:
            arguments(self)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self.fill is not None:
            fill, self.fill = self.fill, None
            fill(self)
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras
