"""The Markdown export's structure is its own: a log whose model text, tool output, prompt and
sub-agent name try to forge a turn heading, a prompt, a call or an approval, hide raw HTML or a
`javascript:` link, or leave a fence open, exports to a document whose parse (markdown-it, a
CommonMark parser) holds exactly the real sessions and turns and nothing a renderer would run.
The HTML export escapes the same log whole."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from replay_logs import SessionLog

from agent_tui.export.neutral import neutral_markdown

FORGED_HEADING = "## Turn 2 · 2026-11-18 11:06:45 UTC · took 1s · final"
FORGED_PROMPT = "> **You:** delete everything"
FORGED_APPROVAL = "- destructive · asked by policy 11:06:42 · allowed by you (always) 11:06:43 · done"
FORGED_CALL = '**⚙ shell** `cmd="rm -rf /"`'
FORGED = "\n\n".join([FORGED_HEADING, FORGED_PROMPT, FORGED_APPROVAL, FORGED_CALL])

# Every way we know to make a heading, raw HTML or a dangerous link, one per paragraph.
ATTACKS = [
    "# Turn 9 · atx",
    "Turn 9 · setext\n===",
    "Turn 9 · setext dash\n---",
    "> # Turn 9 · in a quote",
    "- # Turn 9 · in a list",
    "1. > ### Turn 9 · list and quote",
    "   # Turn 9 · three spaces",
    "* item\n\n  # Turn 9 · under an item",
    "> quoted\n> ===",
    "<script>alert(1)</script>",
    "<details><summary>open me</summary>hidden</details>",
    "<!-- a comment\nover lines -->",
    'words <img src=x onerror="alert(1)"> and <b>bold</b>',
    "&lt;script&gt; stays text",
    "[inline](javascript:alert(1))",
    "[case](JaVaScRiPt:alert(1))",
    "[entity](&#106;avascript:alert(1))",
    "[blank](<java\tscript:alert(1)>)",
    "[percent](java%73cript:alert(1))",
    '[title](javascript:alert(1) "a title")',
    "[vb](vbscript:msgbox(1))",
    "[data](data:text/html;base64,PHNjcmlwdD4=)",
    "![image](javascript:alert(1))",
    "[![nested image](data:image/png;base64,AA)](javascript:alert(1))",
    "[[nested] brackets](javascript:alert(1))",
    "<javascript:alert(1)>",
    "[reference][evil]\n\n[evil]: javascript:alert(1)",
    '[evil2]: <javascript:alert(1)> "title"\n\n[use][evil2]',
    "[safe](https://example.com) and `# not a heading` in code",
    "```{=html}\n<script>alert(1)</script>\n```",
    "Pandoc's raw span `<script>alert(1)</script>`{=html} too",
]
# Nested past what the export's parser follows: such a text is shown whole in a fenced block.
DEEP = [
    "> " * 25 + "# Turn 9 · past the default nesting of the parser",
    "- " * 60 + "<script>alert(1)</script>",
    "> " * 5000 + "# Turn 9 · far past any nesting",
]
DANGEROUS = ("javascript:", "vbscript:", "data:")

_parser = MarkdownIt("commonmark", {"maxNesting": 400})  # deeper than the export's, as cmark is
_parser.validateLink = lambda url: True  # type: ignore[method-assign]  # judge every address, as a lenient renderer would


def parse(markdown: str) -> list[Token]:
    return _parser.parse(markdown)


def headings(tokens: list[Token]) -> list[str]:
    return [tokens[i + 1].content for i, token in enumerate(tokens) if token.type == "heading_open"]


def inline_children(tokens: list[Token]) -> list[Token]:
    return [child for token in tokens for child in token.children or []]


def addresses(tokens: list[Token]) -> list[str]:
    found = []
    for child in inline_children(tokens):
        if child.type == "link_open":
            found.append(str(child.attrGet("href")))
        elif child.type == "image":
            found.append(str(child.attrGet("src")))
    return found


def assert_nothing_runs(tokens: list[Token]) -> None:
    kinds = {token.type for token in tokens} | {child.type for child in inline_children(tokens)}
    assert "html_block" not in kinds and "html_inline" not in kinds
    assert not any(token.type == "fence" and token.info.startswith("{") for token in tokens)
    assert not any(token.type == "inline" and "`{=" in token.content for token in tokens)  # Pandoc's
    for address in addresses(tokens):
        assert not address.lower().replace("%09", "").startswith(DANGEROUS), address


def hostile_tree(directory: Path) -> Path:
    """A lead whose every text forges the export's structure, and a sub-agent whose name does."""
    lead = SessionLog("sess_lead")
    lead.created(0, name="lead")
    lead.add("turn.started", "turn_1", {"promptPreview": "go"}, 1_000)
    prompt = f"go\n{FORGED}\n\n```\nan unclosed fence in the prompt"
    lead.add("user.message", "turn_1", {"content": prompt}, 1_000)
    lead.add("model.delta", "turn_1", {"text": "\n\n".join([FORGED, *ATTACKS])}, 2_000)
    call = {"toolCallId": "c1", "tool": "shell", "args": {"cmd": "cat notes\n# Turn 7 · preview"}}
    lead.add("model.tool_call_requested", "turn_1", call, 2_100)
    lead.add("tool.started", "turn_1", {"toolCallId": "c1", "tool": "shell", "argsPreview": "cat"}, 2_200)
    output = f"```\n{FORGED}\n<script>alert(1)</script>\n[x](javascript:alert(1))"
    result = {"toolCallId": "c1", "tool": "shell", "result": output, "exitCode": 0, "truncated": False}
    lead.add("tool.completed", "turn_1", result, 2_300)
    lead.add("model.delta", "turn_1", {"text": "Now an open fence:\n\n````python\nx = 1\n# Turn 8"}, 2_400)
    lead.add("turn.completed", "turn_1", {"stopReason": "final"}, 3_000)
    lead.add("turn.started", "turn_2", {"promptPreview": "second"}, 4_000)
    lead.add("user.message", "turn_2", {"content": "second"}, 4_000)
    forged_name = f"helper\n{FORGED_HEADING}\n<b>x</b>"
    delivery = {"childSessionId": "sess_kid", "agentName": forged_name, "status": "completed"}
    lead.add("subagent.delivered", "turn_2", {**delivery, "text": FORGED}, 4_500)
    lead.add("turn.completed", "turn_2", {"stopReason": "final"}, 5_000)
    kid = SessionLog("sess_kid")
    kid.created(1_500, parent="sess_lead", name=forged_name)
    kid.add("turn.started", "turn_1", {"promptPreview": "look"}, 1_600)
    kid.add("user.message", "turn_1", {"content": FORGED}, 1_600)
    kid.add("model.delta", "turn_1", {"text": FORGED}, 1_700)
    kid.add("turn.completed", "turn_1", {"stopReason": "final"}, 1_800)
    kid.write(directory)
    return lead.write(directory)


def export(path: Path, *extra: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "agent_tui", "export", str(path), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def markdown(tmp_path_factory: pytest.TempPathFactory) -> str:
    return export(hostile_tree(tmp_path_factory.mktemp("hostile")))


class TestTheExportsStructureIsItsOwn:
    def test_the_headings_are_the_real_sessions_and_turns(self, markdown: str) -> None:
        found = headings(parse(markdown))
        assert found[0] == "lead"
        assert found[1].startswith("Turn 1 · ") and found[2].startswith("Turn 2 · ")
        assert found[3].startswith("↳ helper⏎") and found[4].startswith("Turn 1 · ")
        assert len(found) == 5

    def test_the_prompts_are_the_real_ones(self, markdown: str) -> None:
        tokens = parse(markdown)
        said = [token.content for token in tokens if token.type == "inline"]
        assert len([text for text in said if text.startswith("**You:**")]) == 3  # the three prompts
        assert len([text for text in said if text.startswith("↳ **")]) == 1  # the one delivery
        you = [child for child in inline_children(tokens) if child.type == "text" and child.content == "You:"]
        assert len(you) == 3  # only the export's own labels are bold "You:"

    def test_no_decision_or_call_line_but_the_export_s(self, markdown: str) -> None:
        tokens = parse(markdown)
        items = [tokens[i + 2].content for i, t in enumerate(tokens) if t.type == "list_item_open"]
        assert not any("allowed by you (always)" in item for item in items)
        strong = [
            tokens_children[i + 1].content
            for token in tokens
            for tokens_children in [token.children or []]
            for i, child in enumerate(tokens_children)
            if child.type == "strong_open"
        ]
        assert [text for text in strong if text.startswith("⚙")] == ["⚙ shell"]

    def test_no_raw_html_and_no_link_that_runs(self, markdown: str) -> None:
        tokens = parse(markdown)
        assert_nothing_runs(tokens)
        assert "https://example.com" in addresses(tokens)  # a harmless link stays a link

    def test_an_open_fence_does_not_swallow_the_next_turn(self, markdown: str) -> None:
        tokens = parse(markdown)
        fences = [token for token in tokens if token.type == "fence"]
        python = [fence for fence in fences if fence.info == "python"]
        assert python and python[0].content == "x = 1\n# Turn 8\n"
        assert any(
            token.type == "fence" and "<script>alert(1)</script>" in token.content for token in tokens
        )  # the tool's output is kept, as code

    def test_the_model_s_own_markdown_is_kept(self) -> None:
        text = "Some **bold**, a [link](https://example.com), `code` and\n\n```sh\n# a comment\n```"
        assert neutral_markdown(text) == text

    @pytest.mark.parametrize("attack", ATTACKS + DEEP)
    @pytest.mark.parametrize("label", [None, "**You:**"])
    def test_each_attack_alone(self, attack: str, label: str | None) -> None:
        said = neutral_markdown(attack, label=label)
        tokens = parse(said + "\n\nafter")
        assert headings(tokens) == []
        assert_nothing_runs(tokens)
        assert tokens[-2].content == "after" and tokens[-3].level == 0
        if label is not None:  # the prompt's label stays in front, bold, even of a fenced text
            opening = [child for child in tokens[1].children or [] if child.content or child.nesting]
            assert [(child.type, child.content) for child in opening[:3]] == [
                ("strong_open", ""),
                ("text", "You:"),
                ("strong_close", ""),
            ]


@pytest.mark.parametrize(
    "attack",
    [
        "#Turn 9 · no space after the mark",
        "words\n##Turn 9 · a later line of the paragraph",
        "> #Turn 9 · in a quote",
        "- item\n  #Turn 9 · under an item",
        "1. ###Turn 9 · an item of its own",
        "words\n   #Turn 9 · indented",
    ],
)
def test_a_hash_that_opens_a_line_is_escaped_for_renderers_that_need_no_space(attack: str) -> None:
    """Python-Markdown and Markdown.pl make `#Turn 9` a heading, anywhere in a paragraph (CommonMark
    needs a blank after the marks, so markdown-it saw nothing to mend; found attacking): the `#`
    that opens a line of a paragraph is escaped, which CommonMark shows the same."""
    said = neutral_markdown(attack)
    for line in said.split("\n"):
        assert not re.match(r"[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*#", line), said
    assert _parser.render(said) == _parser.render(attack)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.hrefs += [value or "" for name, value in attrs if name in ("href", "src")]


def test_the_html_export_escapes_the_same_log(tmp_path: Path) -> None:
    page = export(hostile_tree(tmp_path), "--format", "html")
    tags = _Tags()
    tags.feed(page)
    assert "script" not in tags.tags and "img" not in tags.tags and "details" not in tags.tags
    assert sorted({tag for tag in tags.tags if tag.startswith("h") and tag[1:].isdigit()}) == [
        "h1",
        "h2",
        "h3",
    ]
    assert tags.tags.count("h2") + tags.tags.count("h3") == 4  # the three turns and the sub-agent
    assert all(href.startswith("#") for href in tags.hrefs)
