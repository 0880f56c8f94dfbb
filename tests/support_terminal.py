"""Hostile text for the terminal-safety tests: escape sequences where a log, a model or a tool
may put them, and the checks that none of them reaches a terminal raw.

- `ATTACK` sets the window title (OSC 0 and OSC 2), writes the clipboard (OSC 52), wipes the
  screen (CSI 2J), switches to the alternate screen, resets the terminal (`ESC c`), wipes again
  with a C1 CSI, reverses the text after it (RLO) and writes over the line (a bare CR).
- `hostile_scenario` is a scenario whose agent's name, prompt, model text and tool output carry
  it; `hostile_log` is a hand-written log that carries it in the fields a scenario cannot set.
- `assert_safe` fails on any character a terminal obeys rather than shows.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import orjson
from replay_logs import SessionLog

from agent_tui.terminal.hook_wire import Cli, raw_event_line

ATTACK = (
    "\x1b]0;PWNED-TITLE\x07\x1b]2;PWNED-TWO\x1b\\\x1b]52;c;cHduZWQ=\x07"
    "\x1b[2J\x1b[?1049h\x1bc\x9b2J\u202eevil\rOVER"
)
"""What an attacker puts in model text, tool output or a log."""

MARKERS = (
    "␛]0;PWNED-TITLE␇",
    "␛]2;PWNED-TWO␛\\",
    "␛]52;c;",
    "␛[2J",
    "␛[?1049h",
    "␛c",
    "\\x9b2J",
    "\\u202eevil",
)
"""How `ATTACK` reads once made visible (all of it on one line; the CR is `␍` or a space)."""

BIDI = {*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}


def obeyed(character: str) -> bool:
    """A character a terminal may act on: C0 but tab and newline, DEL, C1, a bidi control."""
    if character in "\t\n":
        return False
    return unicodedata.category(character) in ("Cc", "Cs") or character in BIDI


def assert_safe(text: str, where: str) -> None:
    """`text` holds nothing a terminal obeys."""
    raw = sorted({f"U+{ord(c):04X}" for c in text if obeyed(c)})
    assert not raw, f"{where} reached the terminal raw: {raw} in {text!r}"


def assert_markers(text: str, where: str, markers: tuple[str, ...] = MARKERS) -> None:
    """`text` is safe and shows `markers`."""
    assert_safe(text, where)
    missing = [m for m in markers if m not in text]
    assert not missing, f"{where} does not show {missing}: {text!r}"


def hostile_scenario(directory: Path) -> Path:
    """A scenario (and its workspace) whose agent, prompt, model text and tool output are hostile."""
    workspace = directory / "ws"
    workspace.mkdir(parents=True)
    (workspace / "evil.txt").write_text("tool says " + ATTACK + "\n")
    scenario = {
        "maxContextTokens": 8000,
        "sessions": [
            {
                "title": "lead " + ATTACK,
                "agentName": "lead " + ATTACK,
                "cwd": "ws",
                "prompt": "please " + ATTACK,
                "steps": [
                    {
                        "text": ["model says ", ATTACK],
                        "toolCalls": [{"tool": "shell", "args": {"cmd": "cat evil.txt"}}],
                    },
                    {"text": ["done " + ATTACK]},
                ],
            }
        ],
    }
    path = directory / "scenario.json"
    path.write_bytes(orjson.dumps(scenario))
    return path


def hostile_log(directory: Path, session_id: str = "ses_hostile") -> Path:
    """A log whose replayed user text, cwd, tool arguments, failures and end message are hostile."""
    log = SessionLog(session_id)
    log.add("session.created", None, {"cwd": "/w/" + ATTACK, "client": "tests", "agentName": "hostile"}, 0)
    turn = "turn_1"
    log.add("turn.started", turn, {"promptPreview": "replayed " + ATTACK}, 10)
    log.add("user.message", turn, {"content": "user wrote " + ATTACK}, 11)
    tokens = {"instruction": 10, "transcript": 20, "tools": 5}
    log.add("context.built", turn, {"step": 1, "tokens": tokens, "maxContextTokens": 8000}, 12)
    log.add("model.delta", turn, {"text": "model wrote " + ATTACK}, 13)
    call = {"toolCallId": "call_1", "tool": "shell", "args": {"cmd": "echo " + ATTACK}}
    log.add("model.tool_call_requested", turn, call, 14)
    log.add(
        "tool.started", turn, {"toolCallId": "call_1", "tool": "shell", "argsPreview": "echo " + ATTACK}, 15
    )
    failure = {"toolCallId": "call_1", "tool": "shell", "errorCode": "timeout", "message": "failed " + ATTACK}
    log.add("tool.failed", turn, failure, 16)
    end = {"stopReason": "error", "errorCode": "provider_failure", "message": "ended " + ATTACK}
    log.add("turn.completed", turn, end, 17)
    turn = "turn_2"  # still waiting for an answer: the approval queue and dialog show it
    log.add("turn.started", turn, {"promptPreview": "second"}, 20)
    command = {"cmd": "rm -rf ./\u202e" + ATTACK}
    log.add("model.tool_call_requested", turn, {"toolCallId": "call_2", "tool": "shell", "args": command}, 21)
    asked = {
        "requestId": "perm_2",
        "toolCallId": "call_2",
        "tool": "shell",
        "risk": "destructive",
        "argsPreview": "rm -rf " + ATTACK,
        "reason": "asks because " + ATTACK,
        "warning": "warns " + ATTACK,
    }
    log.add("permission.requested", turn, asked, 22)
    ask = {"requestId": "perm_2", "toolCallId": "call_2", "decision": "ask", "actor": "policy"}
    log.add("permission.resolved", turn, ask, 23)
    return log.write(directory)


def event_line(cli: Cli, event: dict[str, Any]) -> bytes:
    """The line a hook sends for the hook event `event`."""
    line = raw_event_line(cli, orjson.dumps(event))
    assert line is not None
    return line
