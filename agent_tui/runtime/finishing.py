"""The words of finishing a session's work: the refusal the workbench's actions raise, and what a
session's log says about its place and its turns.

Invariants:
- what the log says is frozen dataclasses of plain values, so it crosses to another process (an
  attached dashboard) as it is;
- `FinishRefused` is the one refusal of those actions; its message is a sentence for the user,
  and nothing was changed when it is raised (except where its message says so);
- `read_facts` reads the session's log from the store and nothing else: where it works (its
  directory, its worktree and where that started), its first prompt, and each turn's prompt and
  the shell commands it ran.

Every front end finishes work by commands (`runtime.commands`: `ReadReview`, `Commit`, ...)
that the host's `CommandExecutor` carries out with the workbench's own methods; a refusal is
the reply's sentence, read back as a `FinishRefused` (`command_executor.read_result`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent_tui.store import EventStore


class FinishRefused(Exception):
    """A review action that was not done; the message says why."""


@dataclass(frozen=True)
class TurnFacts:
    turn_id: str
    number: int
    prompt: str
    shell_commands: tuple[str, ...] = ()
    rewound: bool = False
    spawned: bool = False
    """Whether it started sub-agents (whose changes count as the turn's)."""


@dataclass(frozen=True)
class SessionFacts:
    session_id: str
    cwd: Path
    prompt: str
    worktree_path: Path | None = None
    worktree_branch: str | None = None
    base_branch: str | None = None
    base_commit: str | None = None
    turns: tuple[TurnFacts, ...] = field(default_factory=tuple)


def read_facts(store: EventStore, session_id: str) -> SessionFacts:
    """What the session's log says (see the module contract).

    Raises:
        FinishRefused: the log cannot be read, or does not start with `session.created`.
    """
    cwd: Path | None = None
    worktree: dict[str, str] = {}
    prompts: dict[str, str] = {}  # by turn, in the order the turns started
    commands: dict[str, list[str]] = {}
    rewound: set[str] = set()
    spawning: set[str] = set()
    try:
        for event in store.replay(session_id):
            payload, kind = event.payload, event.type
            if kind == "session.created":
                cwd = Path(payload["cwd"])
                worktree = payload.get("worktree") or {}
            elif kind == "user.message" and event.turn_id is not None and event.turn_id not in prompts:
                prompts[event.turn_id] = payload["content"]
            elif kind == "model.tool_call_requested" and event.turn_id:
                command = payload["args"].get("cmd") if payload["tool"] == "shell" else None
                if isinstance(command, str):
                    commands.setdefault(event.turn_id, []).append(command)
                elif payload["tool"] == "spawn_agent":
                    spawning.add(event.turn_id)
            elif kind == "turn.rewound":
                rewound.add(payload["rewoundTurnId"])
    except Exception as error:
        raise FinishRefused(f"the log of {session_id} cannot be read: {error}") from None
    if cwd is None:
        raise FinishRefused(f"the log of {session_id} does not say where it works")
    return SessionFacts(
        session_id,
        cwd,
        next(iter(prompts.values()), ""),
        worktree_path=Path(worktree["path"]) if worktree.get("path") else None,
        worktree_branch=worktree.get("branch"),
        base_branch=worktree.get("baseBranch"),
        base_commit=worktree.get("baseCommit"),
        turns=tuple(
            TurnFacts(turn, number, prompt, tuple(commands.get(turn, ())), turn in rewound, turn in spawning)
            for number, (turn, prompt) in enumerate(prompts.items(), start=1)
        ),
    )
