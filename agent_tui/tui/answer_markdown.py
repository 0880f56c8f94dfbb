"""An agent's answer as Markdown: headings, lists, quotes, tables, code blocks highlighted.

`answer_lines(text, width)` gives the rows of an answer rendered by Rich's Markdown (through
Textual's `Content`), each row already cut to `width` cells, the first after `◆ `, the others
under it. The detail and the replay's scrubber show answers through it, live, attached and in
replay alike.

Invariants (terminal safety, as for every untrusted text: `events/terminal_text.py`):
- The text is made `visible` before it is parsed: no control character reaches the renderer,
  so none reaches the terminal (each is shown as its marker; a control picture such as `␛` in
  reverse video, as `marked` shows it elsewhere).
- No markup is read from it: Rich's Markdown takes the text as Markdown only (`[red]` stays
  those five characters), and the rows become `Content` from styled segments, never from markup.
- No link becomes a terminal hyperlink (OSC 8): links are rendered as their text and their
  address in brackets, and any link a style would carry is dropped from every row.

Cost: the answer is split into blocks at blank lines outside code fences, and each block is
rendered once per width (`_block_rows`, an LRU cache): a streaming answer renders only its last
block again as it grows, and a long one only the blocks it has not rendered at that width. What
is rendered at once is capped: a block longer than `MARKDOWN_BLOCK_LINES` lines is shown as plain
text (a giant code block or paste costs what plain text costs), and of an answer longer than
`MARKDOWN_ANSWER_LINES` lines only its last that-many lines are Markdown (where a streaming
answer grows and is read), the lines before them plain: a 2,000-line answer shows in about a
tenth of a second (`bench/bench_markdown.py`). One parser serves every block (Rich's Markdown
builds a parser per instance, which cost several times the parse of a short block). The module itself
(Rich's Markdown, markdown-it, the highlighter) is imported with the first answer shown, not at
start-up.
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache

from markdown_it import MarkdownIt
from rich.console import Console
from rich.markdown import Heading, Markdown
from rich.style import Style
from rich.text import Text
from textual.content import Content

from agent_tui.events import visible
from agent_tui.tui.marked import MARKER_STYLE, marked

MARKDOWN_BLOCK_LINES = 400
"""A block (text between blank lines, or a fenced code block) longer than this is shown plain."""
MARKDOWN_ANSWER_LINES = 400
"""Of a longer answer, only the blocks in its last this-many lines are rendered as Markdown."""
DEFAULT_WIDTH = 80
"""The width an answer is rendered at when the view gives none."""
CODE_THEME = "monokai"
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_PICTURE = re.compile("[\u2400-\u2421]+")
"""The control pictures `visible` shows C0 controls and DEL as."""
_CONSOLE = Console(
    width=DEFAULT_WIDTH,
    color_system="truecolor",
    force_terminal=True,
    legacy_windows=False,
    emoji=False,
    markup=False,
    highlight=False,
)
"""Renders to segments only (never writes anywhere)."""


class _LeftHeading(Heading):
    """Every heading at the left, as the rest of the transcript (Rich centres the first level)."""

    LEVEL_ALIGN = dict.fromkeys(Heading.LEVEL_ALIGN, "left")


class _AnswerMarkdown(Markdown):
    """Rich's Markdown, headings at the left, and a line break in a paragraph kept (as GitHub
    shows a comment): an agent's lines stay the lines it wrote."""

    elements = {**Markdown.elements, "heading_open": _LeftHeading}


_PARSER = MarkdownIt().enable("strikethrough").enable("table")
"""The parser Rich's Markdown builds for itself, built once: building one (and its link
finder) cost more than parsing a short block."""
_TEMPLATE = _AnswerMarkdown("", code_theme=CODE_THEME, hyperlinks=False, inline_code_lexer=None)
"""Rich's options set once by its own constructor; each block is a copy with its own text."""


def _answer_markdown(block: str) -> _AnswerMarkdown:
    """`block` as Rich's Markdown with `_TEMPLATE`'s options, parsed by `_PARSER`."""
    markdown = copy.copy(_TEMPLATE)
    markdown.markup = block
    markdown.parsed = _PARSER.parse(block)
    for token in markdown.parsed:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"
    return markdown


def answer_lines(text: str, width: int | None, lead: Content | None = None) -> list[Content]:
    """`text` (an agent's answer) as rows of at most `width` cells: the first after `lead`
    (`◆ `), the rest indented to match."""
    lead = lead if lead is not None else Content.styled("◆ ", "$text-primary")
    room = max(12, (width or DEFAULT_WIDTH) - lead.cell_length)
    rows: list[Content] = []
    blocks = markdown_blocks(visible(text))
    plain_until = _plain_blocks(blocks)
    for index, block in enumerate(blocks):
        if index < plain_until or block.count("\n") >= MARKDOWN_BLOCK_LINES:
            rows += [marked(line) for line in block.split("\n")]
        else:
            rows += _block_rows(block, room)
        rows.append(Content(""))
    while rows and not rows[-1].plain.strip():
        rows.pop()
    if not rows:
        return []
    indent = Content(" " * lead.cell_length)
    return [Content.assemble(lead if index == 0 else indent, row) for index, row in enumerate(rows)]


def _plain_blocks(blocks: list[str]) -> int:
    """How many blocks at the start are shown plain (those before the last
    `MARKDOWN_ANSWER_LINES` lines)."""
    lines = 0
    for index in range(len(blocks) - 1, -1, -1):
        lines += blocks[index].count("\n") + 2
        if lines > MARKDOWN_ANSWER_LINES:
            return index + 1
    return 0


def markdown_blocks(text: str) -> list[str]:
    """`text` cut at blank lines outside fenced code blocks (a fence's block is kept whole)."""
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        opened = _FENCE.match(line)
        if fence is None and opened is not None:
            fence = opened.group(1)[0] * 3
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        if fence is None and not line.strip():
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


@lru_cache(maxsize=4096)
def _block_rows(block: str, width: int) -> tuple[Content, ...]:
    """One block rendered at `width` cells, row by row (cached: see the module's note on cost)."""
    markdown = _answer_markdown(block)
    options = _CONSOLE.options.update(width=width, highlight=False, markup=False)
    rows = []
    for line in _CONSOLE.render_lines(markdown, options, pad=False):
        text = Text()
        for segment in line:
            if segment.control:
                continue  # never: Markdown renders no control; kept out all the same
            style = segment.style
            if style is not None and (style.link or style.meta):
                style = style.update_link(None) + Style.from_meta(None)
            text.append(segment.text, style)
        text.rstrip()
        row = Content.from_rich_text(text)
        for found in _PICTURE.finditer(row.plain):
            row = row.stylize(MARKER_STYLE, found.start(), found.end())
        rows.append(row)
    while rows and not rows[-1].plain.strip():
        rows.pop()
    first = next((index for index, row in enumerate(rows) if row.plain.strip()), len(rows))
    return tuple(rows[first:])
