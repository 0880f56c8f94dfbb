"""`agent-tui export` as a user meets it: a real run's session tree (a sub-agent, a denied call,
an edit's diff) as Markdown, HTML and JSON, each parsed back; hostile text from a log stays text;
a missing, ambiguous or corrupt session is one clear line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import orjson
import pytest
from replay_logs import SessionLog

SCENARIO = {
    "maxContextTokens": 8000,
    "policy": {"byTool": {"spawn_agent": "allow", "wait_agent": "allow", "edit_file": "allow"}},
    "sessions": [
        {
            "title": "lead",
            "agentName": "lead",
            "cwd": "ws",
            "prompt": "Rename greet to hello",
            "steps": [
                {
                    "text": ["Asking ", "an explorer."],
                    "toolCalls": [
                        {"tool": "spawn_agent", "args": {"agentName": "explorer", "prompt": "look"}}
                    ],
                },
                {"text": ["Waiting."], "toolCalls": [{"tool": "wait_agent", "args": {}}]},
                {
                    "text": ["Editing."],
                    "toolCalls": [
                        {
                            "tool": "edit_file",
                            "args": {"path": "app.py", "old": "def greet():\n", "new": "def hello():\n"},
                        }
                    ],
                },
                {"text": ["Cleaning up."], "toolCalls": [{"tool": "shell", "args": {"cmd": "rm old.py"}}]},
                {"text": ["Done."]},
            ],
        }
    ],
    "agents": {"explorer": {"steps": [{"text": ["Found ", "app.py."]}]}},
}


def agent_tui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A real run of the scenario (`--approve deny`: the `rm` is denied); its logs and lead's id."""
    root = tmp_path_factory.mktemp("export")
    (root / "ws").mkdir()
    (root / "ws" / "app.py").write_text("def greet():\n    return 'hi'\n")
    (root / "ws" / "old.py").write_text("")
    scenario = root / "scenario.json"
    scenario.write_bytes(orjson.dumps(SCENARIO))
    logs = root / "logs"
    result = agent_tui("run", str(scenario), "--sessions-dir", str(logs), "--approve", "deny", "-q")
    assert result.returncode == 0, result.stderr
    lead = next(
        path.stem for path in logs.glob("*.jsonl") if b'"agentName":"lead"' in path.read_bytes()[:600]
    )
    return logs, lead


def fenced_blocks(markdown: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, as a Markdown reader finds them."""
    return [
        (m["lang"], m["body"])
        for m in re.finditer(r"^(?P<f>`{3,})(?P<lang>\w*)\n(?P<body>.*?)\n(?P=f)$", markdown, re.S | re.M)
    ]


class TestMarkdown:
    def test_the_tree_its_denial_and_its_diff(self, run: tuple[Path, str]) -> None:
        logs, lead = run
        result = agent_tui("export", lead, "--sessions-dir", str(logs))
        assert result.returncode == 0 and result.stderr == ""
        text = result.stdout
        headings = [line for line in text.splitlines() if line.startswith("#")]
        assert headings[0] == "# lead"
        assert headings[1].startswith("## Turn 1 · ") and "final" in headings[1]
        assert "## ↳ explorer" in headings  # the sub-agent, one level below its parent
        assert any(h.startswith("### Turn 1 · ") for h in headings[headings.index("## ↳ explorer") :])
        assert "> **You:** Rename greet to hello" in text
        rm = text[text.index('**⚙ shell** `cmd="rm old.py"`') :]
        assert rm.splitlines()[2].startswith("- destructive · asked by policy")
        assert "denied by you: --approve deny" in rm.splitlines()[2]
        diffs = [body for lang, body in fenced_blocks(text) if lang == "diff"]
        assert diffs == ["--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-def greet():\n+def hello():"]
        assert "↳ **explorer** completed: Found app.py." in text

    def test_a_short_id_finds_the_session_and_out_writes_the_file(
        self, run: tuple[Path, str], tmp_path: Path
    ) -> None:
        logs, lead = run
        out = tmp_path / "lead.md"
        result = agent_tui("export", lead[:10], "--sessions-dir", str(logs), "--out", str(out))
        assert result.returncode == 0 and result.stdout == ""
        assert result.stderr == f"agent-tui: {lead} exported to {out}\n"
        assert out.read_text() == agent_tui("export", str(logs / f"{lead}.jsonl")).stdout


class TestHtml:
    def test_one_self_contained_page_with_the_same_content(self, run: tuple[Path, str]) -> None:
        logs, lead = run
        result = agent_tui("export", lead, "--sessions-dir", str(logs), "--format", "html")
        assert result.returncode == 0
        page = Page()
        page.feed(result.stdout)
        page.close()
        assert page.open == [], "every element is closed"
        assert page.tags["section"] == 2  # lead, and explorer inside it
        assert "script" not in page.tags and "link" not in page.tags and "img" not in page.tags
        assert not page.outside, f"the page refers to other files or addresses: {page.outside}"
        assert "denied by you: --approve deny" in page.text
        assert "-def greet():" in page.text and "+def hello():" in page.text
        assert page.nesting.index("explorer") > page.nesting.index("lead")


class TestJson:
    def test_the_document_field_for_field(self, run: tuple[Path, str]) -> None:
        logs, lead = run
        result = agent_tui("export", lead, "--sessions-dir", str(logs), "--format", "json")
        document = json.loads(result.stdout)
        (root,) = document["sessions"]
        assert root["name"] == "lead" and [child["name"] for child in root["children"]] == ["explorer"]
        calls = [block for block in root["turns"][0]["blocks"] if block["kind"] == "tool"]
        assert [call["tool"] for call in calls] == ["spawn_agent", "wait_agent", "edit_file", "shell"]
        rm = calls[-1]
        assert rm["risk"] == "destructive" and rm["status"] == "failed"
        assert [(d["decision"], d["actor"]) for d in rm["decisions"]] == [("ask", "policy"), ("deny", "user")]
        assert calls[2]["diff"][-2:] == ["-def greet():", "+def hello():"]


def hostile_log(directory: Path) -> Path:
    log = SessionLog("sess_hostile")
    log.created(0, name="evil\x1b]0;pwned\x07")
    log.add("turn.started", "turn_1", {"promptPreview": "hi"}, 1_000)
    log.add("user.message", "turn_1", {"content": "hi\x1b[2J"}, 1_000)
    log.add("model.delta", "turn_1", {"text": "<script>alert(1)</script> ```` \x9b31m"}, 2_000)
    log.add("turn.completed", "turn_1", {"stopReason": "final"}, 3_000)
    return log.write(directory)


def test_text_from_the_log_cannot_drive_a_terminal_or_add_markup(tmp_path: Path) -> None:
    path = hostile_log(tmp_path)
    markdown = agent_tui("export", str(path)).stdout
    assert "\x1b" not in markdown and "\x9b" not in markdown and "\x07" not in markdown
    assert "# evil␛]0;pwned␇" in markdown and "hi␛[2J" in markdown
    html = agent_tui("export", str(path), "--format", "html").stdout
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    raw = subprocess.run(
        [sys.executable, "-m", "agent_tui", "export", str(path), "--format", "json"],
        capture_output=True,
        timeout=60,
    ).stdout
    assert b"\x1b" not in raw and b"\xc2\x9b" not in raw
    assert json.loads(raw)["sessions"][0]["turns"][0]["blocks"][0]["text"].endswith("\x9b31m")


def test_what_cannot_be_exported_is_one_line(run: tuple[Path, str], tmp_path: Path) -> None:
    logs, _lead = run
    missing = agent_tui("export", "sess_nope", "--sessions-dir", str(logs))
    assert missing.returncode == 2 and missing.stderr == f"agent-tui: no session sess_nope in {logs}\n"
    ambiguous = agent_tui("export", "sess_", "--sessions-dir", str(logs))
    assert ambiguous.returncode == 2 and "could be any of 2 sessions" in ambiguous.stderr
    corrupt = tmp_path / "sess_hostile.jsonl"
    lines = hostile_log(tmp_path).read_bytes().splitlines(keepends=True)
    corrupt.write_bytes(b"".join([*lines[:2], b"{not json}\n", *lines[2:]]))
    broken = agent_tui("export", str(corrupt))
    assert broken.returncode == 3 and broken.stderr.startswith(f"agent-tui: {corrupt}:3: ")
    assert "Traceback" not in broken.stderr


class Page(HTMLParser):
    """What a browser would build from the page: open elements, tag counts, text, outside refs."""

    VOID = frozenset({"meta", "br", "hr", "img", "link", "input"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.tags: dict[str, int] = {}
        self.text = ""
        self.outside: list[str] = []
        self.nesting: list[str] = []  # session names, in document order

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for name, value in attrs:
            if name in ("src", "href", "action") or (value and "://" in value):
                self.outside.append(f"{tag} {name}={value}")
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1] if self.open else None}>"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        self.text += data
        if self.open and self.open[-1] in ("h1", "h2") and data.strip():
            self.nesting.append(data.strip().removeprefix("↳ "))


@pytest.mark.anyio
async def test_the_palette_exports_the_selected_session_from_the_replay(
    run: tuple[Path, str], home_in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_tui import settle, wait_for

    from agent_tui.tui.replay_app import ReplayApp

    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    logs, lead = run
    app = ReplayApp(sorted(logs.glob("*.jsonl")))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.replay.select_session(lead)
        await pilot.pause()
        (command,) = (c for c in app.replay.palette_commands() if c.name == "Export session as Markdown")
        command.run()
        await wait_for(
            pilot, lambda: any(n.message.startswith("Exported to ") for n in app.notices), "the export"
        )
    (written,) = (home_in_tmp / ".local/share/agent-tui/exports").glob("*.md")
    assert written.name == f"lead-{lead}.md"
    assert written.read_text() == agent_tui("export", str(logs / f"{lead}.jsonl")).stdout
