"""A session tree as Markdown: headings for sessions and turns, fenced blocks for output and diffs.

Invariants:
- a session is a heading one level below its parent's (the root `#`), its turns one level below
  it (Markdown stops at six levels: deeper ones stay at six);
- every piece of text from the log goes through `visible` (control characters become visible
  marks) and, inside a fenced block, sits behind a fence longer than any run of backticks it
  holds, so no log text can end a block early or drive a terminal that prints the file;
- times are UTC, as the log stores them, so the same logs give the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agent_tui.events import visible
from agent_tui.export.document import (
    Block,
    Compaction,
    Delivery,
    ExportedSession,
    ExportedTurn,
    ModelText,
    Retry,
    ToolCall,
    UserText,
)
from agent_tui.export.wording import (
    call_outcome,
    decision_text,
    session_facts,
    turn_facts,
    write_note,
)

__all__ = ["to_markdown"]

_BACKTICKS = re.compile(r"`+")


def _fenced(text: str, language: str = "text") -> list[str]:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", *visible(text).rstrip("\n").split("\n"), fence]


def _code(text: str) -> str:
    """Inline code: a span of backticks longer than any inside, padded when the text needs it."""
    text = visible(text)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _quote(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in visible(text).split("\n")]


def _block(block: Block) -> Iterator[str]:
    if isinstance(block, ModelText):
        if block.text.strip():
            yield visible(block.text).strip()
            yield ""
    elif isinstance(block, UserText):
        who = "You (steering)" if block.steered else "You"
        yield from _quote(f"**{who}:** {block.text}")
        yield ""
    elif isinstance(block, ToolCall):
        yield from _call(block)
    elif isinstance(block, Delivery):
        yield from _quote(f"↳ **{visible(block.agent_name)}** {block.status}: {block.text}")
        yield ""
    elif isinstance(block, Compaction):
        yield f"*◆ context compacted: {block.before_tokens:,} → {block.after_tokens:,} tokens*"
        yield ""
    elif isinstance(block, Retry):
        yield f"*model call retried (attempt {block.attempt}): {visible(block.reason)}*"
        yield ""


def _call(call: ToolCall) -> Iterator[str]:
    yield f"**⚙ {visible(call.tool)}** {_code(call.preview)}"
    yield ""
    facts = [call.risk] if call.risk else []
    facts += [decision_text(decision) for decision in call.decisions]
    facts.append(call_outcome(call))
    yield "- " + " · ".join(visible(fact) for fact in facts if fact)
    if call.warning:
        yield f"- ⚠ {visible(call.warning)}"
    note = write_note(call)
    if note:
        yield f"- {note}"
    yield ""
    diff = call.diff
    if diff:
        yield from _fenced("\n".join(diff), "diff")
        yield ""
    if call.error:
        yield from _fenced(call.error)
        yield ""
    elif call.result and call.tool not in ("write_file", "edit_file"):
        yield from _fenced(call.result)
        yield ""


def _turn(turn: ExportedTurn, level: int) -> Iterator[str]:
    yield f"{'#' * min(6, level)} Turn {turn.number} · {turn_facts(turn)}"
    yield ""
    yield from _quote(f"**You:** {turn.prompt}")
    yield ""
    for block in turn.blocks:
        yield from _block(block)
    if turn.message:
        yield f"*{visible(turn.message)}*"
        yield ""


def to_markdown(roots: list[ExportedSession]) -> str:
    """The Markdown document of these session trees."""
    lines: list[str] = []
    for root in roots:
        for depth, session in root.walk():
            prefix = "↳ " if depth else ""
            lines += [f"{'#' * min(6, depth + 1)} {prefix}{visible(session.name)}", ""]
            lines += [" · ".join(visible(fact) for fact in session_facts(session)), ""]
            for turn in session.turns:
                lines += _turn(turn, depth + 2)
            if not session.turns:
                lines += ["*No turn yet.*", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
