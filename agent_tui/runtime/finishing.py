"""The words of finishing a session's work: the requests the workbench's actions take, the
refusal they raise, and what a session's log says about its place and its turns.

Invariants:
- requests and results are frozen dataclasses of plain values, so a front end in another
  process (an attached dashboard) can send and receive them as they are;
- `FinishRefused` is the one refusal of those actions; its message is a sentence for the user,
  and nothing was changed when it is raised (except where its message says so);
- `read_facts` reads the session's log from the store and nothing else: where it works (its
  directory, its worktree and where that started), its first prompt, and each turn's prompt and
  the shell commands it ran;
- `Finishing` is the port every front end finishes work through: the workbench in this process
  implements it, and so does an attached dashboard's remote side (each action a control request
  to the session's host, which calls the workbench's own method). Both give the same results
  and refuse with `FinishRefused`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agent_tui.store import EventStore

if TYPE_CHECKING:
    from agent_tui.events import Event
    from agent_tui.runtime.review import CommitResult, MergeResult, Review
    from agent_tui.runtime.rewind import RewindPlan, RewindResult
    from agent_tui.runtime.session_dirs import StoredSession


class FinishRefused(Exception):
    """A review action that was not done; the message says why."""


@dataclass(frozen=True)
class CommitRequest:
    session_id: str
    message: str


@dataclass(frozen=True)
class MergeRequest:
    session_id: str
    message: str | None = None
    """The merge commit's message (None: one naming the branch and the prompt)."""


@dataclass(frozen=True)
class DiscardRequest:
    session_id: str


@dataclass(frozen=True)
class RewindRequest:
    session_id: str
    turn_id: str
    allow_protected: bool = False
    """The user allowed writing back protected paths (`.git/`, `.agent-tui/`) too."""


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

    def turn(self, turn_id: str) -> TurnFacts | None:
        return next((turn for turn in self.turns if turn.turn_id == turn_id), None)


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


class Finishing(Protocol):
    """Finishing a session's work, wherever it runs (see the module contract). Every method
    raises `FinishRefused` with the reason when it does nothing."""

    async def review(self, session_id: str) -> Review:
        """The session's whole change against its base, file by file."""
        ...

    async def turns(self, session_id: str) -> tuple[TurnFacts, ...]:
        """The session's turns, as its log tells them (for rewinding one)."""
        ...

    async def commit(self, request: CommitRequest) -> CommitResult: ...
    async def merge(self, request: MergeRequest) -> MergeResult: ...
    async def discard(self, request: DiscardRequest) -> None: ...
    async def rewind_plan(self, request: RewindRequest) -> RewindPlan: ...
    async def rewind(self, request: RewindRequest) -> RewindResult: ...

    async def closed(self) -> list[StoredSession]:
        """The closed sessions (roots only), newest first."""
        ...

    async def reopen(self, session_id: str, fold: Callable[[Event], None]) -> list[str]:
        """Reopen a closed session and its sub-agents; `fold` sees their stored events where
        this process reads them. Returns one line per log that could not be reopened."""
        ...
