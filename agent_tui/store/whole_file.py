"""Writing a small file whole: readers see the old content or the new, never half of either.

Invariants:
- `write_whole(path, data)` writes `data` to a temporary file beside `path` (same directory, so
  the same file system) and renames it over `path`; a failure at any point leaves `path` as it
  was and removes the temporary file;
- the parent directory is made when missing.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_whole"]


def write_whole(path: Path, data: bytes) -> None:
    """Replace `path`'s content with `data` in one rename.

    Raises:
        OSError: the directory or the file could not be written (nothing was changed).
    """
    directory = path.parent if str(path.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
