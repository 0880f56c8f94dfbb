"""Writing a small file whole: readers see the old content or the new, never half of either.

Invariants:
- `write_whole(path, data)` writes `data` to a temporary file beside `path` (same directory, so
  the same file system) and renames it over `path`; a failure at any point leaves `path` as it
  was and removes the temporary file;
- the parent directory is made when missing (0700, each level: `private_files`), and the
  file is 0600 whatever the umask (agent-tui's files hold session content).
"""

from __future__ import annotations

from pathlib import Path

from agent_tui.private_files import write_private

__all__ = ["write_whole"]


def write_whole(path: Path, data: bytes) -> None:
    """Replace `path`'s content with `data` in one rename.

    Raises:
        OSError: the directory or the file could not be written (nothing was changed).
    """
    write_private(path, data)
