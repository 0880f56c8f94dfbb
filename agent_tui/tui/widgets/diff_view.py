"""A file change as a unified diff: line numbers, `+`/`-`, the code syntax-highlighted (a change
known only from what the call asks, `ChangePreview.asked`, without numbers or hunk lines).

The lines come from `ChangePreview.lines()`; the old and the new text are each highlighted
whole (so a multi-line string is coloured right) by Textual's highlighter, with the language
guessed from the file name, then the diff picks its lines out of them. Every colour is a theme
variable: added lines sit on `$success-muted`, removed ones on `$error-muted`. A new file is all
added lines. A line's control characters are shown as markers (`visible`), never sent to the
terminal; the lines are the diff's own (`str.splitlines`), so a bare carriage return ends one.
"""

from __future__ import annotations

from textual.content import Content
from textual.highlight import guess_language, highlight
from textual.widgets import Static

from agent_tui.events import visible
from agent_tui.ports import ChangePreview, DiffLine
from agent_tui.tui.marked import marked

MAX_DIFF_LINES = 2_000
"""A longer diff is cut (the rest is counted), so a huge write cannot stall the dialog."""
MUTED = "$text-muted"


def _highlighted_lines(text: str, language: str) -> list[Content]:
    if not text:
        return []
    lines = "\n".join(visible(line) for line in text.splitlines())  # numbered as the diff numbers them
    return highlight(lines, language=language).split("\n", allow_blank=True)


def diff_content(preview: ChangePreview) -> Content:
    """The whole diff, one line per diff line."""
    lines = preview.lines()
    language = guess_language(preview.new_text or preview.old_text, preview.path)
    old = _highlighted_lines(preview.old_text, language)
    new = _highlighted_lines(preview.new_text, language)
    width = len(str(max(len(old), len(new), 1)))
    if preview.asked:  # the texts' own numbers, not the file's: neither numbers nor hunks
        lines = [line for line in lines if line.kind != "hunk"]
        width = 0
    shown = lines[:MAX_DIFF_LINES]
    longest = max((len(line.text) for line in shown), default=0)
    out = [_line(line, old, new, width, longest) for line in shown]
    if len(lines) > MAX_DIFF_LINES:
        out.append(Content.styled(f"… {len(lines) - MAX_DIFF_LINES} more lines", MUTED))
    return Content("\n").join(out)


def _line(line: DiffLine, old: list[Content], new: list[Content], width: int, longest: int) -> Content:
    """One diff line; added and removed lines are padded to `longest`, so their bands align."""
    if line.kind == "hunk":
        return marked(line.text, f"bold {MUTED}")
    if line.kind == "add":
        number, sign, source, background = line.new_number, "+", new, "on $success-muted"
    elif line.kind == "remove":
        number, sign, source, background = line.old_number, "-", old, "on $error-muted"
    else:
        number, sign, source, background = line.new_number, " ", new, ""
    assert number is not None
    body = source[number - 1] if number - 1 < len(source) else marked(line.text)
    if background:
        body = body.pad_right(max(0, longest - body.cell_length) + 1).stylize_before(background)
        sign_part = Content.styled(f"{sign} ", f"bold {background}")
    else:
        sign_part = Content.styled(f"{sign} ", MUTED)
    shown = f"{number:>{width}} " if width else ""
    return Content.assemble((shown, MUTED), sign_part, body)


class DiffView(Static):
    """A `ChangePreview` drawn as a highlighted diff (put it in a scrolling container)."""

    DEFAULT_CSS = """
    DiffView { width: auto; min-width: 100%; height: auto; text-wrap: nowrap; }
    """

    def __init__(self, preview: ChangePreview, *, id: str | None = None) -> None:
        super().__init__(diff_content(preview), id=id)
        self.preview = preview
