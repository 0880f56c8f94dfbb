"""What an external (ACP) agent says of its own way of working: its mode and its plan, as lines
of the session's header.

An ACP agent may report the mode it works in (`session/new`'s `modes`, `current_mode_update`:
"code", "plan", "ask"…) and its plan (`plan` updates: the whole list of entries each time, each
with its words, a priority and a status). The reducer keeps the latest of each per session
(`SessionView.mode_name`, `SessionView.plan`, and `plan_text` for a plan sent as text); these
functions only word them.

Rules:
- nothing shows for a session that reported neither (our own agents, most logs);
- the plan reads as the agent wrote it, in its order, one entry a line with its status as a
  glyph that says it without its colour (`✓` completed, `▸` in progress, `○` pending), a high
  priority marked `!`; past `PLAN_LINES` entries the rest are counted, never dropped silently;
- every word the agent sent enters through `marked` (it is the agent's text, not markup).
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content

from agent_tui.reducer import PlanEntryView
from agent_tui.tui.marked import marked

MUTED = "$text-muted"
PLAN_LINES = 8
"""A plan longer than this shows its first entries and counts the rest."""
PLAN_GLYPH = {
    "completed": ("✓", "$text-success"),
    "in_progress": ("▸", "bold $text-accent"),
    "pending": ("○", MUTED),
}
"""An entry's status as a glyph and its style (an unknown status reads as pending)."""


def mode_line(mode: str | None, plan: Sequence[PlanEntryView]) -> Content | None:
    """`mode code · plan 2 of 5 done`: the agent's mode and how far its plan is (None: neither)."""
    parts: list[Content | tuple[str, str]] = []
    if mode:
        parts += [("mode ", MUTED), marked(mode, "bold $text-secondary")]
    if plan:
        done = sum(1 for entry in plan if entry.status == "completed")
        parts += [(" · " if parts else "", MUTED), (f"plan {done} of {len(plan)} done", MUTED)]
    return Content.assemble(*parts) if parts else None


def plan_lines(plan: Sequence[PlanEntryView]) -> list[Content]:
    """The plan's entries, one a line, in the agent's order (see the module docstring)."""
    lines = []
    for entry in plan[:PLAN_LINES]:
        glyph, style = PLAN_GLYPH.get(entry.status, PLAN_GLYPH["pending"])
        urgent = ("! ", "bold $text-warning") if entry.priority == "high" else ("", "")
        text_style = MUTED if entry.status == "completed" else "$foreground"
        lines.append(
            Content.assemble(("  ", ""), (glyph, style), (" ", ""), urgent, marked(entry.content, text_style))
        )
    hidden = len(plan) - PLAN_LINES
    if hidden > 0:
        lines.append(Content.styled(f"    … {hidden} more", MUTED))
    return lines


def plan_text_lines(text: str | None) -> list[Content]:
    """A plan the agent sent as text (`plan_update`), its first `PLAN_LINES` lines as it wrote them."""
    if not text:
        return []
    lines = text.splitlines()
    shown = [Content.assemble(("plan ", MUTED)) + marked(lines[0])]
    shown += [Content.assemble(("  ", "")) + marked(line) for line in lines[1:PLAN_LINES]]
    if len(lines) > PLAN_LINES:
        shown.append(Content.styled(f"    … {len(lines) - PLAN_LINES} more lines", MUTED))
    return shown
