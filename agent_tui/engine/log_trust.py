"""Whether what a session's log says may be taken as the user's word.

A reopened session's "for this session" answers come from its log. That is the user's word only
when nobody else could have written the log: a sessions directory inside the project (given
with `--sessions-dir`) holds files that may have come with the repository, or that an agent
allowed to write files put there. Invariants:
- the project is the git checkout holding the session's directory, else that directory;
- a store that keeps no files (no `path_for`) is trusted: nothing outside the process writes it;
- logs under agent-tui's own data directory (where sessions go by default) are trusted even when
  the project holds it (a home directory kept in git).
"""

from __future__ import annotations

from pathlib import Path


def project_of(cwd: Path) -> Path:
    """The project a session works in: the git checkout holding `cwd`, else `cwd` itself."""
    start = cwd.resolve()
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return start


def log_inside_project(store: object, session_id: str, cwd: Path) -> Path | None:
    """The log's path when the store keeps it inside the session's project, else None.

    A log there may have come with the repository, or been written by an agent that was allowed
    to write files: the answers in it are not the user's word, so they are not restored.
    """
    path_for = getattr(store, "path_for", None)
    if path_for is None:
        return None
    path = Path(path_for(session_id)).resolve()
    if path.is_relative_to(_data_dir()):
        return None
    return path if path.is_relative_to(project_of(cwd)) else None


def _data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("agent-tui")).resolve()
