"""A session tree as Markdown: headings for sessions and turns, fenced blocks for output and diffs.

Invariants:
- a session is a heading one level below its parent's (the root `#`), its turns one level below
  it (Markdown stops at six levels: deeper ones stay at six);
- every piece of text from the log goes through `visible` (control characters become visible
  marks) and, inside a fenced block, sits behind a fence longer than any run of backticks it
  holds, so no log text can end a block early or drive a terminal that prints the file;
- the document's structure is the export's alone: text a model, a tool, a sub-agent or a prompt
  wrote keeps its own Markdown but cannot make a heading, a prompt, a call or a decision line,
  raw HTML or a `javascript:`/`vbscript:`/`data:` link (`neutral_markdown`), and a name, a
  reason or any other one-line field is plain words on one line (`plain_line`);
- times are UTC, as the log stores them, so the same logs give the same bytes.
"""

from __future__ import annotations

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
from agent_tui.export.neutral import code_span, fenced, neutral_markdown, plain_line
from agent_tui.export.wording import call_facts, session_facts, shown_output, turn_facts, write_note

__all__ = ["to_markdown"]


def _code(text: str) -> str:
    """Inline code on one line: a span of backticks longer than any inside, padded when needed."""
    return code_span(visible(text).replace("\n", "⏎"))


def _quote(label: str, text: str) -> list[str]:
    """`label` and `text` in a quote: the label (ours) opens it, the text can add no structure."""
    said = neutral_markdown(text, label=label)
    return [f"> {line}" if line else ">" for line in said.split("\n")]


def _block(block: Block) -> Iterator[str]:
    if isinstance(block, ModelText):
        if block.text.strip():
            yield neutral_markdown(block.text.strip())
            yield ""
    elif isinstance(block, UserText):
        who = "You (steering)" if block.steered else "You"
        yield from _quote(f"**{who}:**", block.text)
        yield ""
    elif isinstance(block, ToolCall):
        yield from _call(block)
    elif isinstance(block, Delivery):
        yield from _quote(f"↳ **{plain_line(block.agent_name)}** {plain_line(block.status)}:", block.text)
        yield ""
    elif isinstance(block, Compaction):
        yield f"*◆ context compacted: {block.before_tokens:,} → {block.after_tokens:,} tokens*"
        yield ""
    elif isinstance(block, Retry):
        yield f"*model call retried (attempt {block.attempt}): {plain_line(block.reason)}*"
        yield ""


def _call(call: ToolCall) -> Iterator[str]:
    yield f"**⚙ {plain_line(call.tool)}** {_code(call.preview)}"
    yield ""
    yield "- " + " · ".join(plain_line(fact) for fact in call_facts(call))
    if call.warning:
        yield f"- ⚠ {plain_line(call.warning)}"
    note = write_note(call)
    if note:
        yield f"- {note}"
    yield ""
    diff = call.diff
    if diff:
        yield from fenced("\n".join(diff), "diff")
        yield ""
    output = shown_output(call)
    if output:
        yield from fenced(output)
        yield ""


def _turn(turn: ExportedTurn, level: int) -> Iterator[str]:
    yield f"{'#' * min(6, level)} Turn {turn.number} · {plain_line(turn_facts(turn))}"
    yield ""
    yield from _quote("**You:**", turn.prompt)
    yield ""
    for block in turn.blocks:
        yield from _block(block)
    if turn.message:
        yield f"*{plain_line(turn.message)}*"
        yield ""


def to_markdown(roots: list[ExportedSession]) -> str:
    """The Markdown document of these session trees."""
    lines: list[str] = []
    for root in roots:
        for depth, session in root.walk():
            prefix = "↳ " if depth else ""
            lines += [f"{'#' * min(6, depth + 1)} {prefix}{plain_line(session.name)}", ""]
            lines += [" · ".join(plain_line(fact) for fact in session_facts(session)), ""]
            for turn in session.turns:
                lines += _turn(turn, depth + 2)
            if not session.turns:
                lines += ["*No turn yet.*", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
