"""Where permission rules live: the user's own per project, and a project's file once accepted.

"Always" answers belong to the user, not to the repository they were given in: they are kept
under the user's data directory (the same root the project sessions use), one file per
project. A rules file a project ships (`<project>/.agent-tui/permissions.json`) is applied
only after the user accepted its exact content (`engine.project_rules`).

Invariants:
- a project's rules file is a pure function of its repository: `<user data dir>/permissions/
  <name>-<12 hex digits of the SHA-256 of its path>.json`, where the path is the repository's
  main root (a worktree shares its repository's rules), or the directory itself outside git;
- acceptances of project files are kept in `<user data dir>/permissions/accepted-project-rules
  .json`, keyed by the project file's own path;
- the whole `permissions` directory is protected: no rule lets a tool call change it;
- `permission_engine` is the one place a run's rules are put together (the dashboard, the
  scenario runner, `run --prompt` and the ACP server each call it), and `project_rules_file`
  the one place a project's own file is named.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from agent_tui.engine.permissions import PermissionEngine, PolicyConfig
from agent_tui.engine.project_rules import AcceptedRules, ProjectRules
from agent_tui.engine.protected_paths import find_repository
from agent_tui.runtime.session_dirs import user_data_dir

__all__ = [
    "ACCEPTED_FILE",
    "PROJECT_RULES_FILE",
    "RULES_DIR",
    "permission_engine",
    "project_key",
    "project_rules_file",
    "project_rules_notice",
    "rules_dir",
    "user_rules_path",
]

PROJECT_RULES_FILE = Path(".agent-tui") / "permissions.json"
"""A project's own rules file, relative to the project directory."""
RULES_DIR = "permissions"
ACCEPTED_FILE = "accepted-project-rules.json"


def rules_dir(data_dir: Path | None = None) -> Path:
    """`<user data dir>/permissions` (`platformdirs.user_data_dir("agent-tui")` by default)."""
    return user_data_dir(data_dir) / RULES_DIR


def project_rules_file(project: Path) -> Path:
    """A project's own rules file: `<project>/.agent-tui/permissions.json`."""
    return project / PROJECT_RULES_FILE


def project_key(directory: Path) -> Path:
    """What a project's rules are kept under: its repository's main root, or itself."""
    repository = find_repository(directory)
    return repository.main_root if repository is not None else Path(os.path.realpath(directory))


def user_rules_path(project: Path, data_dir: Path | None = None) -> Path:
    """The user's "always" rules for `project` (see the module contract)."""
    key = project_key(project)
    digest = hashlib.sha256(os.fsencode(key)).hexdigest()[:12]
    return rules_dir(data_dir) / f"{key.name or 'root'}-{digest}.json"


def permission_engine(
    policy: PolicyConfig,
    *,
    project: Path,
    read_from: Path | None = None,
    data_dir: Path | None = None,
    keep_rules: bool = True,
    trust_project_rules: bool = False,
) -> PermissionEngine:
    """The permission engine of a run on `project`: the user's rules for it, and the project's
    own rules file, applied once accepted.

    Args:
        project: the user's project directory (what the rules are keyed by).
        read_from: where the project's rules file is read (a scenario's scratch copy of
            `project`); `project` by default. Acceptances are keyed by `project`'s file.
        data_dir: the user data directory (the platform's by default).
        keep_rules: keep "always" answers in the user's rules file for `project`; False (a
            scenario on scratch copies) keeps them for the run only.
        trust_project_rules: accept the project's rules file as it is now
            (`--trust-project-rules`); otherwise it applies only if accepted before.

    Raises:
        PermissionRulesError: the user's rules file exists but is not valid, or a trusted
            project rules file is not.
    """
    directory = rules_dir(data_dir)
    own_file = project_rules_file(project).resolve()
    project_rules = ProjectRules(
        project_rules_file(read_from or project),
        AcceptedRules(directory / ACCEPTED_FILE),
        key=str(own_file),
    )
    if trust_project_rules:
        project_rules.accept_current()
    return PermissionEngine(
        policy,
        rules_path=user_rules_path(project, data_dir) if keep_rules else None,
        project=str(project_key(project)),
        project_rules=project_rules,
        protected_roots=(directory,),
    )


def project_rules_notice(engine: PermissionEngine, shown_as: Path | None = None) -> str | None:
    """What a headless run says about a project rules file it does not use (None: nothing).

    Args:
        shown_as: the path to name (a scenario's original file rather than its scratch copy).
    """
    project_rules = engine.project_rules
    if project_rules is None:
        return None
    state = project_rules.state()
    where = shown_as or state.path
    if state.problem is not None:
        return f"{where}: ignored: {state.problem}"
    if state.needs_acceptance:
        return (
            f"{where}: this project's own permission rules are ignored until you accept them "
            "(--trust-project-rules, or the dashboard's question)"
        )
    return None
