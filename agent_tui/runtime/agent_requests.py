"""What is asked of the workbench and what it answers: a new agent's spec, a start that failed,
and whether a message was handed over (`Sent`) or not (`SendRefused`, with the reason).

Plain data, so the dashboard's form and composer can build and read them without the engine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agent_tui.costs.budgets import BudgetLimit

NAME_WORDS = 3


@dataclass(frozen=True)
class AgentSpec:
    """What the new-agent form asks for.

    Args:
        prompt: the first turn's text.
        cwd: where the agent works (default in the form: the project).
        name: its name in the tree (empty: made from the prompt's first words).
        model: a `ModelChoice` name (None: the default).
        own_worktree: work in a new git worktree of `cwd`'s repository, on a new branch.
        acp: run it by this external (ACP) agent instead of our engine (`model` is not used).
        budget: what its tree may spend (None: the config's `[budget]` default, if any).
    """

    prompt: str
    cwd: Path
    name: str = ""
    model: str | None = None
    own_worktree: bool = False
    acp: str | None = None
    budget: BudgetLimit | None = None


class AgentStartError(Exception):
    """The agent could not be started; the message says why in one sentence.

    The one such error: the workbench raises it (no directory, no worktree, no such agent) and
    so does starting an ACP agent's program (not found, not executable).
    """


@dataclass(frozen=True)
class Sent:
    """`send` handed the text over: `steered` into the running turn, or `started` a new turn."""

    how: str  # steered | started


class BudgetRefused(Exception):
    """A budget could not be set; the message says why in one sentence."""


@dataclass(frozen=True)
class SendRefused:
    """`send` could not hand the text over; `reason` is one sentence for the user."""

    reason: str


def name_from_prompt(prompt: str) -> str:
    """`Fix the login bug in auth.py` → `fix-the-login`."""
    words = re.findall(r"[A-Za-z0-9]+", prompt.lower())[:NAME_WORDS]
    return "-".join(words)[:24] or "agent"
