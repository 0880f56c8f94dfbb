"""Safety: how risky a tool call is, and why.

The shell classifier parses a command line with tree-sitter-bash and calls it `read` only on
proof (every command on the read-only allow-list, every option known to be read-only); the
per-program rules are tables in `program_rules`, `git_rules`, `special_rules`, and the `sed` and
`awk` checks in `sed_awk`. Nothing here imports the engine: the engine asks, and for git it may
pass a `RepositoryCheck`, its look at the repository git will use (its config can run programs
that no command line shows), and a `ReadScope`, where the command runs (the classifier then
looks at the paths a `read` names: never a credential store, nothing outside the session's
directory without the sandbox).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_tui.events.lazy_names import lazy_names

if TYPE_CHECKING:
    from agent_tui.safety.assessment import RISK_ORDER, RiskAssessment, riskiest
    from agent_tui.safety.read_scope import ReadScope
    from agent_tui.safety.shell_paths import shell_commands
    from agent_tui.safety.shell_risk import RepositoryCheck, assess_shell, classify_shell, shell_programs

# loaded on first use: the hook installer reads a `.git` file through `safety.git_hooks` without
# loading the classifier (tree-sitter and its tables)
__getattr__, __dir__ = lazy_names(__name__, __file__)

__all__ = [
    "RISK_ORDER",
    "ReadScope",
    "RepositoryCheck",
    "RiskAssessment",
    "assess_shell",
    "classify_shell",
    "riskiest",
    "shell_commands",
    "shell_programs",
]
