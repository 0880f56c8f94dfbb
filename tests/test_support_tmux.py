"""The tmux harness of the real-terminal tests (`tests/support_tmux.py`): its pane answers a TUI's
start-up queries, reports a dead program at once, and starts a program again only for the named
start-up failure, once, before any key was sent."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from support_tmux import Tmux

QUERIES = r"""
import os, sys, termios, tty
fd = sys.stdin.fileno()
tty.setraw(fd)
os.write(1, b"\x1b[6n\x1b]10;?\x1b\\\x1b]11;?\x1b\\\x1b[c")
answers = b""
while not answers.endswith(b"c"):  # the device attributes come last: tmux answers in order
    answers += os.read(fd, 1024)
open(sys.argv[1], "w").write(repr(answers))
"""


def test_the_pane_answers_the_start_up_queries_of_a_tui(tmp_path: Path, tmux: Tmux) -> None:
    """Cursor position, default foreground and background (OSC 10/11), device attributes: a TUI
    that asks for all four gets all four, so it needs not wait out a deadline (Codex does)."""
    answers = tmp_path / "answers"
    tmux.start(sys.executable, "-c", QUERIES, answers)
    tmux.wait_for("dead", "the program to read its answers")
    text = answers.read_text()
    assert re.search(r"\\x1b\[\d+;\d+R", text) and r"\x1b[?1;2c" in text, text
    assert r"\x1b]10;rgb:d0d0/d0d0/d0d0" in text and r"\x1b]11;rgb:1c1c/1c1c/1c1c" in text, text


def _crashing(tmp_path: Path, times: int, message: str = "Error: it broke at start-up") -> list[str]:
    """A program that dies showing `message` on its first `times` runs, then shows READY and stays
    (its runs are counted in `runs`)."""
    runs = tmp_path / "runs"
    script = (
        f"echo run >> {runs}; "
        f'if [ "$(wc -l < {runs})" -le {times} ]; then echo "{message}"; exit 1; fi; '
        "echo READY; read _"
    )
    return ["sh", "-c", script]


def _runs(tmp_path: Path) -> int:
    return len((tmp_path / "runs").read_text().splitlines())


def test_a_dead_program_fails_the_wait_at_once_with_its_screen(tmp_path: Path, tmux: Tmux) -> None:
    tmux.start(*_crashing(tmp_path, 1))
    with pytest.raises(AssertionError, match=r"exited while waiting for the ready line(.|\n)*it broke"):
        tmux.wait_for("READY", "the ready line", timeout=30)
    assert _runs(tmp_path) == 1


def test_the_named_start_up_failure_starts_the_program_again_once_and_says_so(
    tmp_path: Path, tmux: Tmux
) -> None:
    tmux.start(*_crashing(tmp_path, 1), restart_once_on="it broke at start-up")
    with pytest.warns(UserWarning, match="died at start-up with 'it broke at start-up'"):
        tmux.wait_for("READY", "the ready line", timeout=30)
    assert _runs(tmp_path) == 2
    assert tmux.title() == "KNOWN-TITLE" and tmux.keys_sent == 0


def test_a_second_start_up_failure_fails(tmp_path: Path, tmux: Tmux) -> None:
    tmux.start(*_crashing(tmp_path, 2), restart_once_on="it broke at start-up")
    with pytest.warns(UserWarning), pytest.raises(AssertionError, match="exited while waiting"):
        tmux.wait_for("READY", "the ready line", timeout=30)
    assert _runs(tmp_path) == 2


def test_another_failure_is_not_restarted(tmp_path: Path, tmux: Tmux) -> None:
    tmux.start(*_crashing(tmp_path, 1, "Error: something else"), restart_once_on="it broke at start-up")
    with pytest.raises(AssertionError, match=r"exited while waiting(.|\n)*something else"):
        tmux.wait_for("READY", "the ready line", timeout=30)
    assert _runs(tmp_path) == 1


def test_a_failure_after_a_key_of_ours_is_not_restarted(tmp_path: Path, tmux: Tmux) -> None:
    """Once a key was sent, the failure may be ours: it fails, as any other would."""
    runs = tmp_path / "runs"
    script = f"echo run >> {runs}; echo WAITING; read _; echo 'Error: it broke at start-up'; exit 1"
    tmux.start("sh", "-c", script, restart_once_on="it broke at start-up")
    tmux.wait_for("WAITING", "the program's first line")
    tmux("send-keys", "-t", "t", "Enter")
    with pytest.raises(AssertionError, match=r"exited while waiting(.|\n)*it broke at start-up"):
        tmux.wait_for("READY", "the ready line", timeout=30)
    assert _runs(tmp_path) == 1
