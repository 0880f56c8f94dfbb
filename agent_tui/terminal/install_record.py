"""The record an install of agent-tui's hook keeps of what a hook file was before it.

Invariants: one record a hook file, named by the file's real path (`backup_path`), so every
spelling of the path meets the same record; kept in agent-tui's data dir, private to the user
(0600); a record that cannot be read, or is not the user's to trust, is as if there were none
(uninstall then only removes our entries and leaves the rest of the file as it is).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from agent_tui.private_files import UntrustedStateError, read_trusted, write_private


def backup_dir() -> Path:
    """Where the bytes a hook file held before our install are kept (agent-tui's data dir)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("agent-tui")) / "hook-installs"


def backup_path(path: Path) -> Path:
    """The record of the hook file `path`: named by its real path, so every spelling meets."""
    real = os.path.join(os.path.realpath(path.parent), path.name)
    return backup_dir() / (hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:32] + ".json")


@dataclass(frozen=True)
class InstallRecord:
    """What a hook file was before our install."""

    original: bytes | None
    """The file's bytes before the install; None: there was no file."""
    made: tuple[str, ...] = ()
    """Folders the install made for it, outermost first."""


def load_record(path: Path) -> InstallRecord | None:
    """The record of `path`, or None when there is none we can trust."""
    try:
        fields = json.loads(read_trusted(backup_path(path)))
        original = fields["original"]
        made = fields.get("made", [])
        return InstallRecord(
            None if original is None else base64.b64decode(original, validate=True),
            tuple(str(folder) for folder in made),
        )
    except (OSError, ValueError, KeyError, TypeError, UntrustedStateError):
        return None  # none (or not ours to trust): uninstall then only removes our entries


def save_record(path: Path, record: InstallRecord) -> None:
    """Keep `record` for `path`, private to the user (0600).

    Raises:
        OSError: it could not be written.
    """
    fields = {
        "path": str(path),
        "original": None if record.original is None else base64.b64encode(record.original).decode(),
        "made": list(record.made),
    }
    write_private(backup_path(path), json.dumps(fields, indent=1).encode() + b"\n")


def drop_record(path: Path) -> None:
    """Forget the record of `path` (there may be none)."""
    with contextlib.suppress(OSError):
        backup_path(path).unlink()
