"""Agents' answers rendered as Markdown in the detail (live and recorded) and in the replay's
scrubber: headings, lists, code blocks highlighted; with terminal safety kept (no control code,
no Rich markup read from the text, no link made a terminal hyperlink); `W` shows cut lines whole.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support_tui import detail_text, snapshot  # noqa: F401 - snapshot: where pictures go
from support_workbench import Log, at, settle, wait_for
from textual.pilot import Pilot

from agent_tui.events import Event
from agent_tui.tui.answer_markdown import MARKDOWN_BLOCK_LINES, answer_lines, markdown_blocks
from agent_tui.tui.app import AgentTuiApp
from agent_tui.tui.replay_app import ReplayApp
from agent_tui.tui.widgets.transcript_lines import TranscriptLines

ANSWER = """## What I changed

The login check now compares **hashes**:

1. `check_login` hashes the password
2. it compares with `hmac.compare_digest`

```python
def check_login(name: str, password: str) -> bool:
    user = find_user(name)
    return user is not None and hmac.compare_digest(user.password_hash, hash_password(password))
```

> Run the tests with `pytest -q`.
"""

HOSTILE = (
    "Title\x1b]0;pwned\x07 and \x1b[2J wipe\n\n"
    "[red]not red[/red] [link=https://evil.example]click[/link]\n\n"
    "\x1b]8;;https://evil.example\x1b\\an OSC 8 link\x1b]8;;\x1b\\ and a [markdown link](https://evil.example/x)\n\n"
    "```\ncode with \x9b31m C1 and \u202e bidi\n```\n"
)


def answer_log(text: str, *, long_args: bool = False) -> list[Event]:
    log = Log("sess_00000000md01", at(9, 0), cwd="/tmp/shop", agentName="writer")
    log.start("turn_a", "Fix the login check")
    log.step("turn_a", 1, text)
    if long_args:
        path = "src/" + "very-long-directory-name/" * 8 + "auth.py"
        log.tool("turn_a", "call_1", "read_file", {"path": path}, "read", f"path={path}")
        log.step("turn_a", 2, "Read it.")
    log.end("turn_a", after=3)
    return log.events


def test_an_answer_is_rendered_as_markdown() -> None:
    rows = answer_lines(ANSWER, 80)
    plain = [row.plain for row in rows]
    assert plain[0] == "◆ What I changed"  # the heading, at the left, after the mark
    assert "  The login check now compares hashes:" in plain  # `**` read as bold
    assert any(line.strip().startswith("1 check_login hashes the password") for line in plain), plain
    code = next(row for row in rows if "def check_login" in row.plain)
    assert len({span.style for span in code.spans}) > 2  # highlighted: several colours on one line
    assert all(row.cell_length <= 80 for row in rows)
    assert any(line.strip().startswith("▌ Run the tests") for line in plain), plain


def test_a_line_break_in_a_paragraph_is_kept() -> None:
    plain = [row.plain for row in answer_lines("line one\nline **two**", 80)]
    assert plain == ["◆ line one", "  line two"]


def test_hostile_text_stays_inert() -> None:
    rows = answer_lines(HOSTILE, 60)
    text = "\n".join(row.plain for row in rows)
    for unsafe in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert unsafe not in text
    assert "␛]0;pwned␇" in text and "\\x9b31m" in text and "\\u202e" in text  # shown, as markers
    title = next(row for row in rows if "pwned" in row.plain)
    start = title.plain.index("␛")
    assert any(span.start <= start < span.end and "reverse" in str(span.style) for span in title.spans)
    assert "[red]not red[/red] [link=https://evil.example]click[/link]" in text  # no markup read
    assert "markdown link (https://evil.example/x)" in text  # the address shown, not a hyperlink
    for row in rows:
        for span in row.spans:
            style = span.style
            assert "link" not in str(style) or "link=" not in str(style), style
            rich = getattr(style, "rich_style", None)
            assert rich is None or not rich.link


def test_blocks_keep_a_fence_whole_and_a_huge_block_is_shown_plain() -> None:
    assert markdown_blocks("a\n\n```\nx\n\ny\n```\n\nb") == ["a", "```\nx\n\ny\n```", "b"]
    huge = "```\n" + "\n".join(f"line {n} [b]" for n in range(MARKDOWN_BLOCK_LINES + 10)) + "\n```"
    rows = answer_lines(huge, 80)
    assert rows[1].plain == "  line 0 [b]" and len(rows) == MARKDOWN_BLOCK_LINES + 12


def test_of_a_long_answer_only_the_last_lines_are_markdown() -> None:
    text = "\n\n".join(f"**part {n}**" for n in range(1_000))
    plain = [row.plain for row in answer_lines(text, 80)]
    assert plain[0] == "◆ **part 0**"  # the start: plain, as it was written
    assert plain[-1] == "  part 999"  # the end, where it grows: Markdown


_LOADED = """
import json, sys
import agent_tui.tui.formatting
import agent_tui.tui.replay_app
before = [name for name in ("agent_tui.tui.answer_markdown", "markdown_it", "rich.markdown") if name in sys.modules]
from agent_tui.tui.answer_markdown import answer_lines
print(json.dumps({"before": before, "rows": [row.plain for row in answer_lines("**done**", 40)]}))
"""


def test_the_renderer_loads_with_the_first_answer_not_at_start_up() -> None:
    """Rich's Markdown, its parser and the highlighter are not imported by the detail's
    formatting or the replay's app until an answer is shown (a tenth of a second of start-up)."""
    out = subprocess.run([sys.executable, "-c", _LOADED], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out)
    assert loaded == {"before": [], "rows": ["◆ done"]}


def painted(app: AgentTuiApp | ReplayApp) -> list[str]:
    """Every row the detail's text parts paint, as the terminal gets them (segments' text), and
    no segment carries a link or a control."""
    rows = []
    for part in app.screen_stack[0].query("#detail TranscriptLines").results(TranscriptLines):
        for y in range(part.size.height):
            strip = part.render_line(y)
            for segment in strip:
                assert not segment.control
                assert segment.style is None or not segment.style.link
            rows.append(strip.text)
    return rows


@pytest.mark.anyio
async def test_the_detail_shows_markdown_and_hostile_text_inert(home_in_tmp: Path) -> None:
    app = AgentTuiApp(events=answer_log(ANSWER + "\n" + HOSTILE), live=False)
    async with app.run_test(size=(120, 60)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: "What I changed" in detail_text(app), "the answer")
        shown = "\n".join(painted(app))
        assert "◆ What I changed" in shown and "## What" not in shown
        assert "def check_login(name: str, password: str) -> bool:" in shown
        assert "[red]not red[/red]" in shown and "␛]8;;https://evil.example␛\\an OSC 8 link" in shown
        for unsafe in ("\x1b", "\x07", "\x9b", "\u202e"):
            assert unsafe not in shown


@pytest.mark.anyio
async def test_the_replay_scrubber_shows_markdown(tmp_path: Path, home_in_tmp: Path) -> None:
    log = tmp_path / "sess_00000000md01.jsonl"
    lines = [event.to_json() for event in answer_log(ANSWER)]
    log.write_bytes(b"\n".join(line if isinstance(line, bytes) else line.encode() for line in lines) + b"\n")
    app = ReplayApp([log])
    async with app.run_test(size=(120, 50)) as pilot:
        await settle(pilot)
        await pilot.press("end")
        await wait_for(pilot, lambda: "What I changed" in detail_text(app), "the answer at the end")
        text = detail_text(app)
        assert "◆ What I changed" in text and "## What" not in text and "**hashes**" not in text


@pytest.mark.anyio
async def test_W_shows_cut_lines_whole_and_again_cuts_them(home_in_tmp: Path) -> None:
    app = AgentTuiApp(events=answer_log("Reading.", long_args=True), live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: "read_file" in detail_text(app), "the call")
        whole = "src/" + "very-long-directory-name/" * 8 + "auth.py"
        assert whole not in detail_text(app).replace("\n", "")  # cut with …
        await pilot.press("W")
        await wait_for(pilot, lambda: app.dashboard.detail.whole_lines, "whole lines")
        await settle(pilot)
        assert whole in detail_text(app).replace("\n", "")
        await pilot.press("W")
        await settle(pilot)
        assert whole not in detail_text(app).replace("\n", "")


def test_looks_of_a_markdown_answer_in_the_detail(snap_compare, home_in_tmp: Path) -> None:
    async def shown(pilot: Pilot) -> None:
        await settle(pilot)
        await settle(pilot)

    app = AgentTuiApp(events=answer_log(ANSWER), live=False)
    assert snap_compare(app, terminal_size=(100, 34), run_before=shown)


@pytest.mark.anyio
async def test_an_unchecked_worktree_box_is_empty_and_a_checked_one_shows_its_X() -> None:
    from textual.app import App, ComposeResult

    from agent_tui.tui.screens.new_agent import TickBox

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield TickBox("Own worktree", id="box")

    app = One()
    async with app.run_test(size=(40, 3)) as pilot:
        box = app.query_one("#box", TickBox)
        assert box.render().plain.startswith("▐ ▌")
        box.focus()
        await pilot.press("space")
        assert box.value and box.render().plain.startswith("▐X▌")
