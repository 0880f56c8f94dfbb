"""Who wrote a log: our engine, or another program (an imported tool's log, an ACP agent).

`session.created{client}` names the program that wrote a session. Invariants:
- `OUR_CLIENT` is the name our engine writes (`SessionEngine(client=...)` may give another, for
  tests; the checks then take that name as `ours`);
- `is_ours` is the one test of it: a session is ours when its client is ours, or not known
  (a log read from the middle, without its `session.created`: nothing says another program
  wrote it). The dashboard (steering, the "via" note), the workbench (reopening), the export
  ("imported from") and the chain checker (an imported log's rules) all ask it.
"""

from __future__ import annotations

__all__ = ["OUR_CLIENT", "TRANSCRIPT_CLIENTS", "is_ours"]

OUR_CLIENT = "agent-tui"
"""The `client` our engine writes in `session.created`."""


def is_ours(client: str | None, ours: str = OUR_CLIENT) -> bool:
    """Whether a session whose log names `client` was written by our engine (called `ours`)."""
    return client is None or client == ours


TRANSCRIPT_CLIENTS = frozenset({"claude-code", "codex"})
"""The clients of logs made of a CLI's transcript (an import, or a terminal agent followed live):
no engine continues them, their sub-agents' included (the transcript's next lines do)."""
