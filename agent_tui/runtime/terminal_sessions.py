"""`TerminalSessions`: the Claude Code and Codex sessions run in the user's own terminals, as the
command executor sees them.

Such a session is one of the engine's sessions (its log, its listeners), but no turn of the engine
runs it: its CLI does, in a terminal agent-tui does not own. This port is what the executor needs
of whoever follows them (`agent_tui.terminal`): whether a session is one, and how to stop its turn.

Invariants:
- `stop` never ends the CLI: it denies every further tool call of the session's turn until the
  turn ends (and for Claude Code answers a question waiting `deny` with `interrupt`); it returns
  how many turns it stopped (0 or 1);
- follow-ups, steering and budgets are refused for a terminal session with
  `events.driven_from_its_terminal(name)`: its CLI takes input only from its own terminal.
"""

from __future__ import annotations

from typing import Protocol


class TerminalSessions(Protocol):
    """The terminal sessions this host follows (see the module docstring)."""

    def runs(self, session_id: str) -> bool:
        """Whether `session_id` is a terminal session (a CLI's, or one of its sub-agents')."""
        ...

    async def stop(self, session_id: str, *, by: str | None = None) -> int:
        """Stop the turn of the terminal session `session_id` (`by`: who asked)."""
        ...
