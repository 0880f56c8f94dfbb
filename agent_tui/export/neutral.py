"""Text from a log made fit to stand inside the Markdown export: its own Markdown is kept, but
nothing in it can pass for the export's structure or reach a renderer as markup or a script.

Invariants (each checked by parsing the result with a CommonMark parser, markdown-it, and mended
until it holds):
- no heading, ATX or setext, at any depth of lists and quotes: its opening `#` or its underline
  is escaped, so the line shows as written; the export's headings are its sessions and turns.
  A `#` that opens a line of a paragraph is escaped too (`#Turn 2` is a heading to
  Python-Markdown and Markdown.pl, which need no blank after the marks);
- no paragraph that reads as one of the export's own lines (a prompt or delivery label `You:`,
  `You (steering):`, `↳`, a call line `⚙`, a compaction `◆`, a retry, or a decision such as
  `allowed by you (always)` in a list item): it is shown as written, every mark escaped, and a
  list item's marker with it; a caller whose text opens with its own label names it (`label`);
- no raw HTML (tags, comments, declarations: they are removed, what is left is text; nor Pandoc's
  raw `{=html}` blocks and spans, whose mark is dropped or escaped) and no link,
  image, autolink or reference definition whose address has the `javascript:`, `vbscript:` or
  `data:` scheme, however written (entities, percent escapes, blanks inside): such a link keeps
  its words and loses its address;
- the text ends where it ends: a code fence left open is closed, so the line after the text is
  read as the export wrote it;
- what still fails these checks after a few rounds of mending, or nests deeper than the parser
  follows (90 levels of lists, quotes and emphasis), is shown whole as a fenced block;
- every character goes through `visible` first (control characters become visible marks).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import unescape
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

from agent_tui.events import visible

__all__ = ["code_span", "fenced", "neutral_markdown", "plain_line"]

_ROUNDS = 8
_END = "agent-tui-end-of-text"  # a paragraph after the text: if it is not one, the text spilled
_DANGEROUS = ("javascript:", "vbscript:", "data:")
_BLANKS = re.compile(r"[\x00-\x20\x7f\s]+")
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation mark can be escaped
_MARKS = re.compile(r"([\\`*_\[<>&!#~|])")  # what can open markup inside a line
_TAGS = re.compile(
    r"<!--.*?(?:-->|$)|^.*?-->|<\?.*?(?:\?>|$)|<![A-Za-z\[].*?(?:>|$)"
    r"|</?[A-Za-z][A-Za-z0-9-]*(?:[^>\"']|\"[^\"]*\"|'[^']*')*(?:>|$)"
)
_LABEL = re.compile(r"^\s*(?:You(?: \(steering\))?:|↳|⚙|◆|model call retried)")
_DECISION = re.compile(r"\b(?:allowed|denied|asked) by (?:you|policy|system)\b")
_PREFIX = re.compile(r"^[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t>]*)*$")
_MARKER = re.compile(r"([-+*]|\d{1,9}[.)])([ \t]*)$")
_CLOSED = re.compile(r"^[ >]*(`{3,}|~{3,})[ \t]*$")

_NESTING = 100
"""How deep the parser follows lists, quotes and emphasis; text nested deeper (which the parser
would stop reading, though another renderer would not) is shown whole in a fenced block."""
_parser = MarkdownIt("commonmark", {"maxNesting": _NESTING})
_parser.validateLink = lambda url: True  # type: ignore[method-assign]  # every address becomes a link here, to be judged below


def _dangerous(url: str) -> bool:
    """Whether a renderer could run `url`: blanks and escapes do not hide its scheme."""
    bare = _BLANKS.sub("", unquote(unescape(url))).lower()
    return bare.startswith(_DANGEROUS)


def plain_line(text: str) -> str:
    """`text` as one line of plain words: its line breaks shown as `⏎`, its marks escaped."""
    return _MARKS.sub(r"\\\1", visible(text).replace("\n", "⏎"))


def _longest_ticks(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def fenced(text: str, language: str = "text") -> list[str]:
    """`text` in a fenced block whose fence is longer than any run of backticks it holds."""
    fence = "`" * max(3, _longest_ticks(text) + 1)
    return [f"{fence}{language}", *visible(text).rstrip("\n").split("\n"), fence]


def code_span(text: str) -> str:
    """Inline code: a span of backticks longer than any inside, padded when the text has one at an end."""
    ticks = "`" * (_longest_ticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def neutral_markdown(text: str, *, label: str | None = None) -> str:
    """`text`'s own Markdown with nothing that could pass for the export's structure (see above).

    Args:
        text: Markdown from a log (a model's answer, a prompt, a sub-agent's answer).
        label: the export's own words that open the text's first line (`**You:**`); they alone
            may read as a label, and they stay in front when the text is fenced.
    """
    lines = visible(text if label is None else f"{label} {text}").split("\n")
    try:
        for _ in range(_ROUNDS):
            mended = _mend(lines, label is not None)
            if mended is None:
                return "\n".join(lines)
            lines = mended
    except _Unmendable:
        pass
    head = [label, ""] if label is not None else []
    return "\n".join([*head, *fenced(text)])


class _Unmendable(Exception):
    """The text holds what no edit of a line can mend: it is shown whole, fenced."""


def _mend(lines: list[str], labelled: bool) -> list[str] | None:
    """The lines with this round's faults mended, or None when they hold none."""
    env: dict[str, object] = {}
    tokens = _parser.parse("\n".join([*lines, "", _END]), env)
    count = len(lines)
    if _deepest(tokens) >= _NESTING - 10:
        raise _Unmendable
    edits: dict[int, str] = {}

    def edit(index: int, line: str) -> None:
        if 0 <= index < count:
            edits.setdefault(index, line)

    references = env.get("references")
    for reference in references.values() if isinstance(references, dict) else ():
        if _dangerous(reference["href"]) and reference.get("map"):
            start, end = reference["map"]
            for index in range(start, end):
                edit(index, "")
    parents: list[Token] = []
    for position, token in enumerate(tokens):
        if token.nesting == 1:
            parents.append(token)
        elif token.nesting == -1 and parents:
            parents.pop()
        if token.map is None:
            continue
        if token.type == "fence" and token.map[1] > count:
            return [*lines, token.markup]
        _mend_token(lines, token, parents, labelled and position == 1, edit)
    if not edits:
        closing = tokens[-3:]
        if len(closing) == 3 and closing[1].type == "inline" and closing[1].content == _END:
            if closing[0].level == 0:
                return None
        raise _Unmendable
    return [edits.get(index, line) for index, line in enumerate(lines)]


def _mend_token(
    lines: list[str], token: Token, parents: list[Token], labelled: bool, edit: Callable[[int, str], None]
) -> None:
    """Edit the lines of one token that holds a fault: a heading, raw HTML, a forged line."""
    assert token.map is not None
    start, end = token.map
    if token.type == "heading_open":
        if token.markup.startswith("#"):
            edit(start, _escape_first(lines, start, "#"))
        else:
            edit(end - 1, _escape_first(lines, end - 1, token.markup[0]))
    elif token.type == "html_block":
        for index in range(start, min(end, len(lines))):
            edit(index, _TAGS.sub("", lines[index]).replace("<", "\\<"))
    elif token.type == "fence" and token.info.lstrip().startswith(("{", "=")):
        edit(start, lines[start].replace(token.info, "", 1))  # Pandoc's raw `{=html}` block
    elif token.type == "inline":
        first = labelled and start == 0
        in_item = any(parent.type == "list_item_open" for parent in parents)
        if _forged(token, skip_first_line=first, in_item=in_item):
            said = token.content.split("\n")
            kept = said[:1] if first else []
            shown = _PUNCTUATION.sub(r"\\\1", "\n".join(said[len(kept) :]))
            _rewrite(lines, token, "\n".join([*kept, shown]), edit, in_item)
        elif _unsafe(token):
            _rewrite(lines, token, _inline_markdown(token.children or []), edit, False)
        elif parents and parents[-1].type == "paragraph_open":
            for offset, words in enumerate(token.content.split("\n")):
                if words.lstrip(" \t").startswith("#"):  # a heading to Python-Markdown, Markdown.pl
                    edit(start + offset, _escape_first(lines, start + offset, "#"))


def _deepest(tokens: list[Token]) -> int:
    """The deepest nesting level of the parse, its inline tokens' included."""
    deepest = 0
    for token in tokens:
        deepest = max(deepest, token.level)
        for child in token.children or ():
            deepest = max(deepest, token.level + child.level)
    return deepest


def _escape_first(lines: list[str], index: int, mark: str) -> str:
    line = lines[index]
    at = line.find(mark)
    return line if at < 0 else f"{line[:at]}\\{line[at:]}"


def _plain_text(inline: Token) -> str:
    parts = []
    for child in inline.children or []:
        if child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type in ("text", "code_inline"):
            parts.append(child.content)
    return "".join(parts)


def _forged(inline: Token, *, skip_first_line: bool, in_item: bool) -> bool:
    """Whether this paragraph reads as one of the export's own lines."""
    said = _plain_text(inline).split("\n")
    if skip_first_line:
        said = said[1:]
    return any(_LABEL.match(line) or (in_item and _DECISION.search(line)) for line in said)


def _unsafe(inline: Token) -> bool:
    if "`{=" in inline.content:
        return True  # Pandoc's raw inline `<b>`{=html}
    for child in inline.children or []:
        if child.type == "html_inline":
            return True
        if child.type == "link_open" and _dangerous(str(child.attrGet("href") or "")):
            return True
        if child.type == "image" and _dangerous(str(child.attrGet("src") or "")):
            return True
    return False


def _inline_markdown(children: list[Token]) -> str:
    """The Markdown of a paragraph's inline tokens again, without raw HTML or a dangerous address."""
    out: list[str] = []
    for child in children:
        kind = child.type
        if kind == "text":
            out.append(_PUNCTUATION.sub(r"\\\1", child.content))
        elif kind == "code_inline":
            out.append(code_span(child.content))
        elif kind == "softbreak":
            out.append("\n")
        elif kind == "hardbreak":
            out.append("\\\n")
        elif kind in ("em_open", "em_close", "strong_open", "strong_close"):
            out.append(child.markup)
        elif kind == "link_open":
            href = str(child.attrGet("href") or "")
            if _dangerous(href):
                out.append("\x00")  # a link whose address is dropped
            else:
                out.append(f"\x01{href}\x03")
        elif kind == "link_close":
            out.append("\x02")
        elif kind == "image":
            src = str(child.attrGet("src") or "")
            alt = _PUNCTUATION.sub(r"\\\1", child.content)
            out.append(alt if _dangerous(src) else f"![{alt}](<{src}>)")
        elif kind == "html_inline":
            out.append("\n" * child.content.count("\n"))
        else:
            out.append(_PUNCTUATION.sub(r"\\\1", child.content))
    return _close_links("".join(out))


def _close_links(text: str) -> str:
    """Links written back: `\\x01href\\x03 … \\x02` as `[…](<href>)`, a dropped one's words alone."""
    stack: list[str | None] = []
    out: list[str] = []
    for piece in re.split(r"(\x00|\x01[^\x03]*\x03|\x02)", text):
        if piece == "\x00":
            stack.append(None)
        elif piece.startswith("\x01"):
            stack.append(piece[1:-1])
            out.append("[")
        elif piece == "\x02":
            href = stack.pop() if stack else None
            if href is not None:
                out.append(f"](<{href}>)")
        else:
            out.append(piece)
    return "".join(out)


def _rewrite(
    lines: list[str], inline: Token, content: str, edit: Callable[[int, str], None], unlist: bool
) -> None:
    """Put `content` in place of the inline's lines, each behind the quote or list marks it had."""
    assert inline.map is not None
    start, end = inline.map
    source = lines[start:end]
    said = inline.content.split("\n")
    new = content.split("\n")
    if len(new) > len(source):
        new = [*new[: len(source) - 1], " ".join(new[len(source) - 1 :])]
    new += [""] * (len(source) - len(new))
    for offset, line in enumerate(source):
        words = said[offset] if offset < len(said) else ""
        at = line.find(words) if words else len(line) - len(line.lstrip(" \t>"))
        prefix = line[:at] if at >= 0 else ""
        if at < 0 or not _PREFIX.match(prefix):
            prefix = line[: len(line) - len(line.lstrip(" \t>"))]
        if unlist:
            prefix = _MARKER.sub(r"\\\1\2", prefix)
        edit(start + offset, prefix + new[offset])
