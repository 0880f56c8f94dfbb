"""What a `write_file` or `edit_file` call would change, against the file as it is now.

Invariants:
- a preview reads the file only; it never writes, and it resolves the path exactly as the tool
  will (`resolve_under` the session's cwd), so a path that leaves the cwd previews as the
  `path_unsafe` failure the call will meet, never as the contents of a file outside;
- `write_file` onto an existing file is an `overwrite`, onto nothing a `create` (every line
  added); `edit_file` replaces the one occurrence of `old`, and an `old` that occurs zero or several
  times previews as the failure the call will meet (`problem`), with no diff;
- files larger than `MAX_PREVIEW_BYTES` are not read (the preview says so);
- where the file cannot be read (an attached dashboard: the file is on the host), a preview is
  made of the call's arguments alone (`preview_asked`): a `write` of every line, or an edit's
  replaced text against its replacement, marked `asked` (no line numbers: where in the file
  the text stands is not known here).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agent_tui.engine.tools.base import ToolError
from agent_tui.engine.tools.paths import display_path, resolve_under

MAX_PREVIEW_BYTES = 1_000_000
CONTEXT_LINES = 3
PREVIEWED_TOOLS = ("write_file", "edit_file")

ChangeKind = Literal["create", "overwrite", "write", "edit", "unchanged", "fails"]
LineKind = Literal["hunk", "context", "add", "remove"]


@dataclass(frozen=True)
class DiffLine:
    """One line of a unified diff: `text` has no sign and no newline; numbers are 1-based."""

    kind: LineKind
    text: str
    old_number: int | None = None
    new_number: int | None = None


@dataclass(frozen=True)
class ChangePreview:
    """A file change as the user should judge it.

    `kind` is `create`, `overwrite` (write_file onto an existing file), `write` (onto a file
    not seen: `asked`), `edit`, `unchanged` (the new content equals the old) or `fails` (the call
    will fail: `problem` says why).
    """

    path: str
    kind: ChangeKind
    old_text: str = ""
    new_text: str = ""
    problem: str | None = None
    asked: bool = False
    """Made of the call's arguments only, not against the file: its line numbers are the
    texts' own, not the file's."""

    def lines(self, context: int = CONTEXT_LINES) -> list[DiffLine]:
        """The unified diff, hunk headers included (every line added for a new file)."""
        if self.kind in ("fails", "unchanged"):
            return []
        old = self.old_text.splitlines()
        new = self.new_text.splitlines()
        out: list[DiffLine] = []
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for group in matcher.get_grouped_opcodes(context):
            first, last = group[0], group[-1]
            out.append(DiffLine("hunk", f"@@ -{_span(first[1], last[2])} +{_span(first[3], last[4])} @@"))
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    out += [
                        DiffLine("context", text, i1 + n + 1, j1 + n + 1) for n, text in enumerate(old[i1:i2])
                    ]
                    continue
                if tag in ("replace", "delete"):
                    out += [DiffLine("remove", text, i1 + n + 1, None) for n, text in enumerate(old[i1:i2])]
                if tag in ("replace", "insert"):
                    out += [DiffLine("add", text, None, j1 + n + 1) for n, text in enumerate(new[j1:j2])]
        return out

    def counts(self) -> tuple[int, int]:
        """(lines added, lines removed)."""
        lines = self.lines(0)
        return (
            sum(1 for line in lines if line.kind == "add"),
            sum(1 for line in lines if line.kind == "remove"),
        )

    def unified_text(self) -> str:
        """The diff as `diff -u` body text (hunks only), for logs and tests."""
        sign = {"hunk": "", "context": " ", "add": "+", "remove": "-"}
        return "".join(sign[line.kind] + line.text + "\n" for line in self.lines())


def _span(start: int, end: int) -> str:
    length = end - start
    first = start + 1 if length else start
    return f"{first},{length}" if length != 1 else str(first)


def preview_change(cwd: Path, tool: str, args: Mapping[str, Any]) -> ChangePreview | None:
    """The change a `write_file`/`edit_file` call would make in `cwd` now; None for other tools."""
    if tool not in PREVIEWED_TOOLS:
        return None
    user_path = str(args.get("path", ""))
    try:
        resolved = resolve_under(cwd, user_path, must_exist=False)
    except ToolError as error:
        return ChangePreview(user_path, "fails", problem=f"{error.code}: {error.message}")
    shown = display_path(cwd, resolved)
    exists = os.path.lexists(resolved)
    old_text = ""
    if exists:
        try:
            old_text = _read_text(resolved)
        except _TooLarge as error:
            return ChangePreview(shown, "fails" if tool == "edit_file" else "overwrite", problem=str(error))
        except OSError as error:
            return ChangePreview(shown, "fails", problem=f"{shown}: {error.strerror or error}")
    if tool == "write_file":
        new_text = str(args.get("content", ""))
        if not exists:
            return ChangePreview(shown, "create", "", new_text)
        kind: ChangeKind = "unchanged" if new_text == old_text else "overwrite"
        return ChangePreview(shown, kind, old_text, new_text)
    if not exists:
        return ChangePreview(shown, "fails", problem=f"{shown}: no such file (the edit will fail)")
    old, new = str(args.get("old", "")), str(args.get("new", ""))
    count = old_text.count(old) if old else 0
    if count != 1:
        times = "does not occur" if count == 0 else f"occurs {count} times"
        return ChangePreview(
            shown, "fails", problem=f"the text to replace {times} in {shown} now: the edit will fail"
        )
    new_text = old_text.replace(old, new, 1)
    return ChangePreview(shown, "unchanged" if new_text == old_text else "edit", old_text, new_text)


def preview_asked(tool: str, args: Mapping[str, Any]) -> ChangePreview | None:
    """The change a `write_file`/`edit_file` call asks for, from its arguments alone (for a
    dashboard that cannot read the file); None for other tools."""
    if tool not in PREVIEWED_TOOLS:
        return None
    path = str(args.get("path", ""))
    if tool == "write_file":
        return ChangePreview(path, "write", "", str(args.get("content", "")), asked=True)
    old, new = str(args.get("old", "")), str(args.get("new", ""))
    return ChangePreview(path, "unchanged" if old == new else "edit", old, new, asked=True)


class _TooLarge(Exception):
    pass


def _read_text(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_PREVIEW_BYTES:
        raise _TooLarge(f"{path.name} is {size:,} bytes: too large to preview")
    return path.read_bytes().decode("utf-8", errors="replace")
