"""What a risk decision is: a risk, a short reason, and an optional warning.

Invariants:
- risks are ordered destructive > network > execute > write > read (`RISK_ORDER`, lowest
  first), and `riskiest` is the one place that order is applied;
- `worst` keeps the first assessment of the highest risk, so a compound command reports the
  reason of its riskiest part, and of the leftmost one when several tie;
- an assessment is a frozen value: it can cross from the classifier to the router, the engine
  and the event log without being copied.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agent_tui.events.model import Risk

__all__ = ["RANK", "RISK_ORDER", "Findings", "RiskAssessment", "riskiest", "worst"]

RISK_ORDER: tuple[Risk, ...] = ("read", "write", "execute", "network", "destructive")
RANK: dict[str, int] = {risk: rank for rank, risk in enumerate(RISK_ORDER)}


def riskiest(*risks: Risk) -> Risk:
    """The most dangerous of `risks` (destructive > network > execute > write > read)."""
    return max(risks, key=RANK.__getitem__, default="read")


@dataclass(frozen=True, slots=True)
class RiskAssessment:
    """The risk of one tool call and why.

    Attributes:
        risk: what the call may do, at worst.
        reason: a few words a person can check, e.g. "`sed` script uses `e`: runs a command".
        warning: set when the call overwrites or deletes something a person should look at
            twice, e.g. "overwrites notes.txt".
    """

    risk: Risk
    reason: str | None = None
    warning: str | None = None


def worst(assessments: Iterable[RiskAssessment]) -> RiskAssessment | None:
    """The first assessment of the highest risk, or None when there are none."""
    found: RiskAssessment | None = None
    best = -1
    for assessment in assessments:
        rank = RANK[assessment.risk]
        if rank > best:
            found, best = assessment, rank
    return found


@dataclass(slots=True)
class Findings:
    """What the analysis of (part of) a command line found: assessments and program names."""

    assessments: list[RiskAssessment] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)

    def add(self, risk: Risk, reason: str) -> None:
        self.assessments.append(RiskAssessment(risk, reason))

    def merge(self, other: Findings) -> None:
        self.assessments.extend(other.assessments)
        self.programs.extend(other.programs)
