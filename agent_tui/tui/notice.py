"""A notice: one notification the app showed (the top line shows the newest; `N` lists them).

Both show it the same way, `Notice.line`: its severity's mark, its title in bold, then its
message as text (a notice may quote a log, a file name, an error: never markup).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content

from agent_tui.tui.marked import marked

NOTICE_STYLE = {
    "information": ("●", "$text-accent"),
    "warning": ("▲", "$text-warning"),
    "error": ("✗", "$text-error"),
}
"""Each severity's mark and colour."""


@dataclass(frozen=True)
class Notice:
    """One notification the app showed."""

    message: str
    title: str
    severity: str

    def line(self) -> Content:
        """The notice as one line of content (it wraps where it is shown whole)."""
        glyph, style = NOTICE_STYLE.get(self.severity, NOTICE_STYLE["information"])
        parts: list[Content | str | tuple[str, str]] = [(glyph + " ", style)]
        if self.title:
            parts += [marked(self.title, f"bold {style}"), (": ", "$text-muted")]
        parts.append(marked(self.message))
        return Content.assemble(*parts)
