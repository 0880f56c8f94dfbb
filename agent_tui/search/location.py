"""Where the search index of a directory of logs is kept.

Invariants:
- the index of a directory is a pure function of the directory's resolved path:
  `<user data dir>/search/<directory name>-<12 hex digits of its path's SHA-256>.sqlite3`, so
  every command and the dashboard share one index per directory, and two directories with the
  same name never share one;
- nothing but the index lives there: deleting the file loses nothing (it is built again from
  the logs).
"""

from __future__ import annotations

import os
from pathlib import Path

try:  # the one hash a search needs, without `hashlib`'s start-up (it loads OpenSSL's binding)
    from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:  # a Python built without its own SHA-2
        from hashlib import sha256  # type: ignore[assignment,unused-ignore]

APP_NAME = "agent-tui"
"""The name of agent-tui's data directory (as `runtime.session_dirs` names it)."""


def index_path(sessions_dir: Path, data_dir: Path | None = None) -> Path:
    """The index file for the logs in `sessions_dir`.

    Args:
        sessions_dir: the directory of logs (resolved here).
        data_dir: the base (default: `platformdirs.user_data_dir("agent-tui")`).
    """
    if data_dir is None:
        import platformdirs

        data_dir = Path(platformdirs.user_data_dir(APP_NAME))
    resolved = sessions_dir.expanduser().resolve()
    digest = sha256(os.fsencode(resolved)).hexdigest()[:12]
    return data_dir / "search" / f"{resolved.name or 'root'}-{digest}.sqlite3"
