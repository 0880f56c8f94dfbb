"""Foreign logs made replayable: converted into our logs that the scrubber and `--dump` read.

`replay_inputs(paths, follow=…)` finds every log under `paths` (ours, Claude Code, Codex, mixed)
and returns our log files to replay:
- our own logs as they are;
- a foreign log converted once into a cache folder keyed by its path, size and modification time
  (`<user cache dir>/agent-tui/imports/<key>/`), so replaying it again reads the cache; the cache
  is written to a temporary folder and renamed into place, so a crash never leaves half of one;
  its folders are 0700 and its files 0600 (`private_files`): they hold the sessions; it is
  bounded in size, the least recently used entries dropped first and never one a replay still
  reads (`import_cache.py`: the entries of a `ReplayInputs` are in use until its `close()`);
- in follow mode, foreign logs are converted into a fresh temporary folder instead and a
  `ForeignFollower` keeps appending to it as the sources grow; that folder is the one to watch
  for new sessions (a sub-agent that starts later), and it is removed by `close()`.

The same session from two files (the same log in two folders, or a copy beside it under another
name) is read once, with a warning naming both files: the one named `<sessionId>.jsonl` is kept,
else the first in path order.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from agent_tui.importers.convert import (
    ImportInputError,
    SessionLogWriter,
    SourceFile,
    convert_source,
    discover,
    session_of,
)
from agent_tui.importers.follow import ForeignFollower
from agent_tui.importers.import_cache import CacheUse, bound_bytes, cache_lock, prune, use
from agent_tui.private_files import make_private_dirs, write_private

CACHE_VERSION = "4"
"""Bumped when the importers change what they write, so old cache entries are not reused."""


def cache_root() -> Path:
    return Path(platformdirs.user_cache_dir("agent-tui")) / "imports"


@dataclass
class ReplayInputs:
    """Our log files to replay, the folder to watch for new ones, and what was said on the way."""

    files: list[Path]
    watch_dir: Path | None = None
    warnings: list[str] = field(default_factory=list)
    follower: ForeignFollower | None = None
    scratch: Path | None = None
    cache_use: CacheUse | None = None  # the cache entries it reads, kept from pruning

    def close(self) -> None:
        if self.cache_use is not None:
            self.cache_use.close()
            self.cache_use = None
        if self.follower is not None:
            self.follower.stop()
            self.follower = None
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def __enter__(self) -> ReplayInputs:
        if self.follower is not None:
            self.follower.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def replay_inputs(paths: list[Path], *, follow: bool = False) -> ReplayInputs:
    """Our logs for everything under `paths`, converting foreign logs (see the module docstring).

    Raises:
        ImportInputError: a path is missing, or nothing under `paths` is a log we can read.
    """
    found = discover(paths)
    if not found.sources and not found.own_logs:
        where = ", ".join(str(path) for path in paths)
        raise ImportInputError(f"{where}: no agent-tui, Claude Code or Codex logs found")
    inputs = ReplayInputs(files=[], warnings=list(found.warnings))
    if follow and found.sources:
        scratch = Path(tempfile.mkdtemp(prefix="agent-tui-follow-"))
        follower = ForeignFollower(found.sources, scratch, list(paths))
        follower.catch_up()
        inputs.follower, inputs.scratch, inputs.watch_dir = follower, scratch, scratch
        inputs.warnings += follower.warnings
        converted = sorted(scratch.glob("*.jsonl"))
    else:
        converted = []
        inputs.cache_use = CacheUse(cache_root())
        made = False
        for source in found.sources:
            folder, warnings, new = _cached(source, inputs.cache_use)
            made |= new
            inputs.warnings += warnings
            converted += sorted(folder.glob("*.jsonl"))
        if made:  # once per replay: a prune reads every entry's size
            prune(cache_root(), bound_bytes())
    inputs.files, duplicates = once_per_session([*found.own_logs, *converted])
    inputs.warnings += duplicates
    inputs.files.sort(key=lambda path: path.stem)
    if not found.sources and len(paths) == 1 and paths[0].is_dir():
        inputs.watch_dir = paths[0]
    return inputs


def once_per_session(files: list[Path]) -> tuple[list[Path], list[str]]:
    """`files` with each session's log once, and a warning naming both files for each copy left
    out. A log's session is its first line's `sessionId` (its file name when that is unreadable);
    of two logs of one session the one named `<sessionId>.jsonl` is kept, else the first given."""
    groups: dict[str, list[Path]] = {}
    for file in files:
        groups.setdefault(session_of(file) or file.stem, []).append(file)
    kept: list[Path] = []
    warnings: list[str] = []
    for session_id, group in groups.items():
        named = [file for file in group if file.stem == session_id]
        keep = (named or group)[0]
        kept.append(keep)
        warnings += [
            f"{file}: session {session_id} is also in {keep} (this copy left out)"
            for file in group
            if file != keep
        ]
    # In the order given (`files.index` was a scan per log: 3,000 logs took seconds).
    given: dict[Path, int] = {}
    for position, file in enumerate(files):
        given.setdefault(file, position)
    return sorted(kept, key=given.__getitem__), warnings


def _cached(source: SourceFile, user: CacheUse) -> tuple[Path, list[str], bool]:
    """The cache folder holding `source` converted (converting it first if needed), its
    warnings, and whether it was converted now; `user` holds it in use."""
    stat = source.path.stat()
    key = hashlib.blake2b(
        f"{CACHE_VERSION}\0{source.path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0{source.agent_hints}".encode(),
        digest_size=12,
    ).hexdigest()
    root = cache_root()
    folder = root / key
    notes = folder / "warnings.txt"
    with cache_lock(root, exclusive=False):
        user.add(key)
        cached = notes.is_file()
        if cached:
            use(folder)
    if cached:
        return folder, notes.read_text(encoding="utf-8").splitlines(), False
    make_private_dirs(folder.parent)
    building = Path(tempfile.mkdtemp(prefix=key + ".", dir=folder.parent))  # 0700
    try:
        importer = convert_source(source, SessionLogWriter(building))
        write_private(building / "warnings.txt", "".join(w + "\n" for w in importer.warnings).encode("utf-8"))
        try:
            os.rename(building, folder)
        except OSError:  # another process cached it first: use theirs
            shutil.rmtree(building, ignore_errors=True)
        return folder, importer.warnings, True
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
