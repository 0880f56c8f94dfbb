"""Scratch workspaces: a scenario's directories are copied before a run, never changed in place.

A workspace that made its own root (a fresh temporary directory, since none was given) owns it:
`remove()` deletes it, and nobody else has to remember whether it was made or given. A root that
was given is the caller's and is never removed.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path


class Workspace:
    """Copies of the scenario's `cwd` directories under one scratch root.

    Args:
        base_dir: the directory relative paths in the scenario are taken from (the scenario file's).
        root: where the copies go (a fresh temporary directory if not given).
    """

    def __init__(self, base_dir: Path, root: Path | None = None) -> None:
        self.base_dir = base_dir
        self.owned = root is None  # a temporary directory made here: `remove()` deletes it
        self.root = root if root is not None else Path(tempfile.mkdtemp(prefix="agent-tui-"))
        self.root.mkdir(parents=True, exist_ok=True)
        self._copies: dict[Path, Path] = {}

    def remove(self) -> None:
        """Delete the root and its copies if this workspace made it; a given root stays."""
        if self.owned:
            shutil.rmtree(self.root, ignore_errors=True)

    def prepare(self, cwd: str) -> Path:
        """The scratch copy of `cwd` (copied once; sessions with the same cwd share it)."""
        source = (self.base_dir / cwd).resolve()
        copy = self._copies.get(source)
        if copy is not None:
            return copy
        name = source.name or "workspace"
        copy = self.root / name
        suffix = 1
        while copy.exists():
            suffix += 1
            copy = self.root / f"{name}-{suffix}"
        if not source.exists():
            raise FileNotFoundError(2, "no such directory", str(source))
        if not source.is_dir():
            raise NotADirectoryError(20, "not a directory", str(source))
        shutil.copytree(source, copy, symlinks=True)
        self._copies[source] = copy
        return copy
