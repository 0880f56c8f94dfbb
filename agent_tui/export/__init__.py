"""Exporting a session tree: one session and the sub-agents it spawned, as a document to read or
hand to a colleague (`agent-tui export`, and the dashboard's export command).

`export_session(log, fmt)` reads the session's log and its sub-agents' logs from the same
directory, folds them into one document (`document.py`) and renders it as Markdown, HTML or JSON.
The logs are read as the replay reads them: a torn final line (a session still being written)
is left out, a corrupt complete line stops the export with its `FILE:LINE`.
The export holds what the logs hold, with control characters made visible, and nothing else;
in the Markdown, text from a log cannot make the document's own structure, raw HTML or a link a
renderer would run (`neutral.py`), and in the HTML it is all escaped text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from agent_tui.export.document import ExportedSession, build_documents
from agent_tui.export.html import to_html
from agent_tui.export.json_document import to_json
from agent_tui.export.markdown import to_markdown
from agent_tui.export.sources import ExportSourceError, find_log, tree_logs
from agent_tui.private_files import write_private
from agent_tui.store import EventLogDecodeError, JsonlEventLog

__all__ = [
    "ExportFailed",
    "ExportFormat",
    "ExportSourceError",
    "export_session",
    "find_log",
    "read_tree",
    "render",
    "write_export",
]

ExportFormat = Literal["md", "html", "json"]


def read_tree(log: Path) -> list[ExportedSession]:
    """The session of `log` with its sub-agents nested under it (others of the same directory
    that name a parent outside the tree are not read)."""
    roots = build_documents(JsonlEventLog(path).replay() for path in tree_logs(log))
    return [root for root in roots if root.session_id == log.stem] or roots


def export_session(log: Path, fmt: ExportFormat = "md") -> bytes:
    """The document of `log`'s session tree in `fmt`, as bytes to write.

    Raises:
        EventLogDecodeError: a corrupt line in one of the logs (`FILE:LINE: reason`).
        OSError: a log could not be read.
    """
    return render(read_tree(log), fmt)


def render(roots: list[ExportedSession], fmt: ExportFormat) -> bytes:
    """These session trees as a document in `fmt`."""
    if fmt == "json":
        return to_json(roots)
    text = to_html(roots) if fmt == "html" else to_markdown(roots)
    return text.encode()


class ExportFailed(Exception):
    """An export that could not be written: the sentence names the log or the file and why."""


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def write_export(log: Path, directory: Path, fmt: ExportFormat = "md") -> Path:
    """Write `log`'s session tree into `directory` as `<name>-<session id>.<fmt>` (whole, then
    moved into place); returns the file.

    Raises:
        ExportFailed: a corrupt log line, or a log or the file that could not be read or written.
    """
    try:
        roots = read_tree(log)
        name = roots[0].name if roots else log.stem
        data = render(roots, fmt)
        target = directory / f"{_UNSAFE_NAME.sub('-', name).strip('-')[:40] or 'session'}-{log.stem}.{fmt}"
        write_private(target, data)
    except EventLogDecodeError as error:
        raise ExportFailed(str(error)) from None
    except OSError as error:
        raise ExportFailed(f"{error.filename or log}: {error.strerror or error}") from None
    return target
