"""Who wrote a log: our engine, or another program (an imported tool's log, an ACP agent).

`session.created{client}` names the program that wrote a session. Invariants:
- `OUR_CLIENT` is the name our engine writes (`SessionEngine(client=...)` may give another, for
  tests; the checks then take that name as `ours`);
- `is_ours` is the one test of it: a session is ours when its client is ours, or not known
  (a log read from the middle, without its `session.created`: nothing says another program
  wrote it). The dashboard (steering, the "via" note), the workbench (reopening), the export
  ("imported from") and the chain checker (an imported log's rules) all ask it;
- `terminal_cli` tells a session of Claude Code or Codex run in the user's own terminal (its
  transcript imported, or followed): such a session is named `claude · <name>` / `codex · <name>`
  (`terminal_name`) and never continued by our engine; `driven_from_its_terminal` is the one
  sentence every front end gives when asked to (the composer, review, budget).
"""

from __future__ import annotations

__all__ = [
    "OUR_CLIENT",
    "TERMINAL_CLIS",
    "TRANSCRIPT_CLIENTS",
    "driven_from_its_terminal",
    "is_ours",
    "terminal_cli",
    "terminal_name",
]

OUR_CLIENT = "agent-tui"
"""The `client` our engine writes in `session.created`."""


def is_ours(client: str | None, ours: str = OUR_CLIENT) -> bool:
    """Whether a session whose log names `client` was written by our engine (called `ours`)."""
    return client is None or client == ours


TERMINAL_CLIS = {"claude-code": "claude", "codex": "codex"}
"""The `client` of a terminal CLI's session → the short name it is shown by."""


def terminal_cli(client: str | None) -> str | None:
    """`claude` or `codex` for a session a terminal CLI wrote (by its `client`), else None."""
    return TERMINAL_CLIS.get(client) if client is not None else None


def terminal_name(client: str | None, name: str) -> str:
    """A terminal CLI's session as it is shown (`claude · fix-tests`); any other's `name` as it is."""
    cli = terminal_cli(client)
    return f"{cli} · {name}" if cli is not None else name


def driven_from_its_terminal(path: str) -> str:
    """Why a terminal agent's session is not continued, budgeted or reviewed here (`path`: its
    agent path, `claude · fix-tests`)."""
    return f"{path} is a terminal agent: drive it from its own terminal"


TRANSCRIPT_CLIENTS = frozenset(TERMINAL_CLIS)
"""The clients of logs made of a CLI's transcript (an import, or a terminal agent followed live):
no engine continues them, their sub-agents' included (the transcript's next lines do)."""
