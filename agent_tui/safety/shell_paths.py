"""The words a shell line hands its programs, for checks that care what a command names.

`shell_commands` is the parser's list of simple commands, plus the commands of every word that
is itself a script (`sh -c '…'`, `bash -lc "…"`, `eval '…'`, `find -exec sh -c '…'`): a word
with a space, a redirection or a separator in it is parsed again, a few levels deep. It reads
more than the shell would run (a commit message is parsed too); a caller looking for the paths a
line names wants that.

Invariants:
- never raises, whatever the text; a line that does not parse yields what the parser made out;
- a command's words keep the parser's `Word`s: `value` is the best reading, `literal` says
  whether it is known from the text alone;
- nesting is bounded (`MAX_DEPTH` levels, `MAX_COMMANDS` commands), so a hostile line costs
  little.
"""

from __future__ import annotations

from agent_tui.safety.shell_parse import SimpleCommand, parse_shell

__all__ = ["MAX_COMMANDS", "MAX_DEPTH", "shell_commands"]

MAX_DEPTH = 3
MAX_COMMANDS = 400
_SCRIPT_CHARS = frozenset(" \t\n;&|<>()`$")


def shell_commands(cmd: str) -> list[SimpleCommand]:
    """Every simple command of `cmd` and of the scripts its words hold (see the module contract)."""
    found: list[SimpleCommand] = []
    _collect(cmd, 0, found)
    return found


def _collect(text: str, depth: int, found: list[SimpleCommand]) -> None:
    for command in parse_shell(text).commands:
        if len(found) >= MAX_COMMANDS:
            return
        found.append(command)
        if depth + 1 >= MAX_DEPTH:
            continue
        for word in command.words[1:]:
            if any(char in _SCRIPT_CHARS for char in word.value):
                _collect(word.value, depth + 1, found)
