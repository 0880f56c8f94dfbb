"""A session tree as one self-contained HTML file: it opens offline and fetches nothing.

Invariants:
- the page holds its own style and no script; it names no other file or address (no `src`, no
  `href` but the in-page links to sessions), so it shows the same anywhere, offline included;
- every piece of text from the log is escaped (`html.escape`) after `visible` has made its control
  characters visible: a log cannot add markup, a script or a request to the page;
- sessions nest as `<section>`s under the one that spawned them, in the Markdown's order and words.
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape

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
from agent_tui.export.wording import call_facts, session_facts, shown_output, turn_facts, write_note

__all__ = ["to_html"]

_STYLE = """
:root { color-scheme: light dark; --muted: #6b7280; --add: #16a34a; --del: #dc2626; --line: #d1d5db; }
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
section.session { border-left: 3px solid var(--line); padding-left: 1rem; margin: 1rem 0; }
.facts, .meta { color: var(--muted); font-size: 0.9em; }
blockquote { margin: 0.5rem 0; padding: 0.25rem 0.75rem; border-left: 3px solid var(--line); }
pre { background: rgba(127, 127, 127, 0.12); padding: 0.5rem; overflow-x: auto; white-space: pre-wrap; }
.call { margin: 0.75rem 0; }
.call code { font-weight: 600; }
.add { color: var(--add); } .del { color: var(--del); } .hunk { color: var(--muted); }
.warning { color: var(--del); }
"""


def _t(text: str) -> str:
    return escape(visible(text))


def _diff(lines: list[str]) -> str:
    rows = []
    for line in lines:
        kind = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        kind = "hunk" if line.startswith("@@") else kind
        rows.append(f'<span class="{kind}">{_t(line)}</span>' if kind else _t(line))
    return "<pre>" + "\n".join(rows) + "</pre>"


def _call(call: ToolCall) -> Iterator[str]:
    yield '<div class="call">'
    yield f"<div>⚙ <strong>{_t(call.tool)}</strong> <code>{_t(call.preview)}</code></div>"
    yield f'<div class="meta">{" · ".join(_t(fact) for fact in call_facts(call))}</div>'
    if call.warning:
        yield f'<div class="warning">⚠ {_t(call.warning)}</div>'
    note = write_note(call)
    if note:
        yield f'<div class="meta">{_t(note)}</div>'
    diff = call.diff
    if diff:
        yield _diff(diff)
    output = shown_output(call)
    if output:
        yield f"<pre>{_t(output)}</pre>"
    yield "</div>"


def _block(block: Block) -> Iterator[str]:
    if isinstance(block, ModelText):
        if block.text.strip():
            yield f'<div class="said">{_t(block.text.strip())}</div>'.replace("\n", "<br>\n")
    elif isinstance(block, UserText):
        who = "You (steering)" if block.steered else "You"
        yield f"<blockquote><strong>{who}:</strong> {_t(block.text)}</blockquote>"
    elif isinstance(block, ToolCall):
        yield from _call(block)
    elif isinstance(block, Delivery):
        yield (
            f"<blockquote>↳ <strong>{_t(block.agent_name)}</strong> {_t(block.status)}: "
            f"{_t(block.text)}</blockquote>"
        )
    elif isinstance(block, Compaction):
        yield (
            f'<div class="meta">◆ context compacted: {block.before_tokens:,} → '
            f"{block.after_tokens:,} tokens</div>"
        )
    elif isinstance(block, Retry):
        yield f'<div class="meta">model call retried (attempt {block.attempt}): {_t(block.reason)}</div>'


def _turn(turn: ExportedTurn, level: int) -> Iterator[str]:
    tag = f"h{min(6, level)}"
    yield f"<{tag}>Turn {turn.number} · {_t(turn_facts(turn))}</{tag}>"
    yield f"<blockquote><strong>You:</strong> {_t(turn.prompt)}</blockquote>"
    for block in turn.blocks:
        yield from _block(block)
    if turn.message:
        yield f'<div class="meta">{_t(turn.message)}</div>'


def _session(session: ExportedSession, depth: int) -> Iterator[str]:
    tag = f"h{min(6, depth + 1)}"
    yield f'<section class="session" id="{escape(session.session_id)}">'
    yield f"<{tag}>{'↳ ' if depth else ''}{_t(session.name)}</{tag}>"
    yield f'<div class="facts">{" · ".join(_t(fact) for fact in session_facts(session))}</div>'
    for turn in session.turns:
        yield from _turn(turn, depth + 2)
    for child in session.children:
        yield from _session(child, depth + 1)
    yield "</section>"


def to_html(roots: list[ExportedSession]) -> str:
    """The HTML document of these session trees (see the module's invariants)."""
    title = _t(roots[0].name) if roots else "agent-tui export"
    body = [line for root in roots for line in _session(root, 0)]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{title} · agent-tui</title>",
            f"<style>{_STYLE}</style>",
            "</head>",
            "<body>",
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )
