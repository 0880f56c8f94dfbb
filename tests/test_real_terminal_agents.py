"""Claude Code and Codex in their own terminals, answered from agent-tui's dashboard: the user's whole path.

Each test runs the real CLI's own TUI (or `claude -p`) in one tmux server and `agent-tui` (the
dashboard, started in the project as a user starts it) in another, both with one isolated
`$HOME`, `$XDG_RUNTIME_DIR`, `CLAUDE_CONFIG_DIR` and `CODEX_HOME` (`tests/support_real_clis.py`
points the CLI at the fake model on 127.0.0.1). The user already has hooks of their own (the
harness's recording hook); agent-tui's hook is added by the real `agent-tui hooks install CLI
--user`, and Codex's question about trusting the new hooks is answered in its TUI as a user
answers it. The fake model proposes `touch <marker>` (and, where the tree is checked, does it
from a sub-agent), so whether the command ran is whether the marker exists.

What is checked, per CLI: the session shows in the dashboard's tree (with its sub-agent as a
child) and its question in the queue and the dialog (the command, its risk); `y` in agent-tui
runs the command, `n` does not (the CLI shows the denial); an answer in the CLI's own terminal
takes the question out of agent-tui's queue (Claude Code: its yes or its no; Codex: its Esc,
and its question handed back after `[hooks] hand_back_after` opens its own dialog); with no
dashboard the CLI's own question works at once; `claude -p` waits for the queue; `x` stops as
docs/terminal-agents.md says; `hooks install` leaves the user's hooks as they were (they still
fire, and Codex still trusts them: it asks about ours alone) and `uninstall` gives the file back
byte for byte; `agent-tui replay --dump state` of our log of the session names who answered.

The dashboard is started with no model configured, as a user who runs only Claude Code and Codex
would: with agent-tui's hook installed it opens the workbench on them, not the demo.

Every wait polls the panes, the hook's record or a file, with a deadline; no sleeps.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support_real_clis import (
    CLAUDE_DIALOG,
    CLAUDE_INTERRUPTED,
    CODEX_BLOCKED,
    CODEX_DIALOG,
    CODEX_TRUST,
    WAIT,
    Session,
    accept_hook_trust,
    cli_session,
    press,
    submit,
    wait_file,
    wait_ready,
)
from support_tmux import Tmux

pytestmark = pytest.mark.real_agents

__all__ = ["cli_session"]

OpenSession = Callable[..., Session]

PROMPT = "Please create the marker file."
SUBAGENT_PROMPT = "Create the sub-agent's marker file."
AGENT_TUI = Path(sys.executable).with_name("agent-tui")
"""The `agent-tui` entry installed beside the tests' interpreter: the user's command."""
MAIN_CALL = {"claude-code": "toolu_main1", "codex": "call_main1"}
SUB_CALL = {"claude-code": "toolu_sub1", "codex": "call_sub1"}
NAME = {"claude-code": "claude", "codex": "codex"}
"""What the dashboard calls each CLI's sessions."""
DENIED = {"claude-code": "Denied by PermissionRequest hook", "codex": CODEX_BLOCKED}
"""What the CLI's own screen says of a call agent-tui's queue denied."""
EMPTY_QUEUE = "No pending approvals."
QUEUED = "Approvals (1)"
DIALOG_OPEN = "Allow once"  # (the hint under the buttons wraps with the dialog's width)

# -- the rig: a CLI with the user's hooks and ours, agent-tui's dashboard beside it -------------------


def agent_tui(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real `agent-tui` entry with the test's isolated environment."""
    if not AGENT_TUI.exists():
        pytest.fail(f"the agent-tui entry is not installed beside {sys.executable} (pip install -e .)")
    return subprocess.run(
        [str(AGENT_TUI), *args],
        env={**os.environ, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )


@dataclass
class Rig:
    """One CLI set up as a user has it, with agent-tui's hook installed after their own."""

    session: Session
    env: dict[str, str]
    before: bytes
    """The user's hooks file before `hooks install`."""
    marker: Path
    dashboard: Tmux | None = None

    @property
    def cli(self) -> str:
        return self.session.home.cli

    @property
    def tmux(self) -> Tmux:
        return self.session.tmux

    @property
    def hooks_file(self) -> Path:
        return self.session.home.hooks_file()

    @property
    def runtime(self) -> Path:
        return Path(self.env["XDG_RUNTIME_DIR"])

    @property
    def sessions_dirs(self) -> list[Path]:
        """The project's sessions directories agent-tui made (one per project)."""
        return sorted((Path(self.env["XDG_DATA_HOME"]) / "agent-tui" / "projects").glob("*"))

    def open_dashboard(self) -> Tmux:
        """`agent-tui` in the project, in a tmux of its own; returns once it answers hooks."""
        dashboard = Tmux()
        self.dashboard = dashboard
        dashboard.start(AGENT_TUI, env=self.env, cwd=self.session.home.workspace)
        wait_listening(self.runtime / "agent-tui" / "hooks.sock", dashboard)
        return dashboard

    def dash(self, text: str, what: str) -> str:
        """The dashboard's screen once it shows `text` (failing with both panes)."""
        assert self.dashboard is not None
        try:
            return self.dashboard.wait_for(text, what, WAIT)
        except AssertionError as error:
            raise AssertionError(f"{error}\nthe CLI shows:\n{self.tmux.screen()}") from None

    def quit_dashboard(self) -> None:
        assert self.dashboard is not None
        self.dashboard("send-keys", "-t", "t", "C-q")
        self.dashboard.wait_for("dead", "the dashboard to quit", WAIT)

    def decisions(self) -> dict[str, tuple[str | None, str | None]]:
        """Each tool call's (decision, decidedBy), by the CLI's call id, as `agent-tui replay
        DIR --dump state` shows our logs of the project's sessions."""
        [directory] = self.sessions_dirs
        done = agent_tui(self.env, "replay", str(directory), "--dump", "state")
        assert done.returncode == 0, done.stderr
        dump = json.loads(done.stdout)
        return {
            call["toolCallId"]: (call.get("decision"), call.get("decidedBy"))
            for session in dump["sessions"]
            for turn in session["turns"]
            for call in turn.get("toolCalls", ())
        }

    def resolutions(self, call_id: str) -> list[dict[str, Any]]:
        """The `permission.resolved` payloads our logs hold for the CLI's call `call_id`."""
        found = []
        for directory in self.sessions_dirs:
            for log in sorted(directory.glob("*.jsonl")):
                for line in log.read_text().splitlines():
                    try:
                        event = json.loads(line)
                    except ValueError:  # a line being written
                        continue
                    payload = event.get("payload", {})
                    if event.get("type") == "permission.resolved" and payload.get("toolCallId") == call_id:
                        found.append(payload)
        return found


def isolated_env(session: Session) -> dict[str, str]:
    """The CLI's environment plus agent-tui's own places, all under the test's directory."""
    home = session.home
    root = home.home.parent
    # A short folder of its own in /tmp (0700): a Unix socket's path holds at most 107 bytes, and
    # the test's own directory under pytest-xdist is longer than that with agent-tui/hooks.sock.
    runtime = Path(tempfile.mkdtemp(prefix="atui-", dir="/tmp"))
    env = dict(home.env)
    env.update(
        XDG_RUNTIME_DIR=str(runtime),
        XDG_CONFIG_HOME=str(home.home / ".config"),
        XDG_DATA_HOME=str(home.home / ".local" / "share"),
        XDG_STATE_HOME=str(home.home / ".local" / "state"),
        XDG_CACHE_HOME=str(home.home / ".cache"),
        AGENT_TUI_CONFIG=str(home.home / ".config" / "agent-tui" / "config.toml"),
    )
    # The other CLI's folder too: nothing of the machine's own ~/.claude or ~/.codex is looked at.
    env.setdefault("CLAUDE_CONFIG_DIR", str(root / "claude-config"))
    env.setdefault("CODEX_HOME", str(root / "codex-home"))
    return env


def wait_listening(path: Path, dashboard: Tmux) -> None:
    """Wait until agent-tui's hook socket at `path` accepts a connection."""
    deadline = time.monotonic() + WAIT
    while True:
        if path.exists():
            with socket.socket(socket.AF_UNIX) as probe:
                try:
                    probe.connect(str(path))
                    return
                except OSError:
                    pass
        if time.monotonic() > deadline:
            raise AssertionError(f"agent-tui never listened at {path}; its pane shows:\n{dashboard.screen()}")
        time.sleep(0.05)


@pytest.fixture
def rig(cli_session: OpenSession) -> Iterator[Callable[..., Rig]]:
    """`rig(cli, subagent=False, config="")`: the CLI with the user's recording hook and, after
    it, agent-tui's hook installed by `agent-tui hooks install CLI --user`; the model scripted
    to touch the marker (from a sub-agent with `subagent`); `config` is agent-tui's config file."""
    made: list[Rig] = []

    def make(cli: str, *, subagent: bool = False, config: str = "") -> Rig:
        session = cli_session(cli)
        env = isolated_env(session)
        session.home.env = env
        marker = session.home.workspace / "marker"
        hooks_file = session.home.install_hook()  # the user's own hooks
        before = hooks_file.read_bytes()
        installed = agent_tui(env, "hooks", "install", cli, "--user")
        assert installed.returncode == 0, installed.stderr
        assert str(hooks_file) in installed.stdout, installed.stdout
        config_file = Path(env["AGENT_TUI_CONFIG"])
        config_file.parent.mkdir(parents=True, exist_ok=True)
        config_file.write_text(config)
        if subagent:
            session.script(PROMPT, "", subagent_prompt=SUBAGENT_PROMPT, subagent_command=f"touch {marker}")
        else:
            session.script(PROMPT, f"touch {marker}")
        built = Rig(session, env, before, marker)
        made.append(built)
        return built

    yield make
    for built in made:
        if built.dashboard is not None:
            built.dashboard.close()
        shutil.rmtree(built.runtime, ignore_errors=True)


def user_hooks_kept(rig: Rig) -> None:
    """The user's hooks are the first groups of each event, exactly as they were."""
    before = json.loads(rig.before)["hooks"]
    after = json.loads(rig.hooks_file.read_bytes())["hooks"]
    for event, groups in before.items():
        assert after[event][: len(groups)] == groups, f"the user's {event} hooks changed"
        assert len(after.get(event, ())) >= len(groups)


def uninstall_restores(rig: Rig) -> None:
    removed = agent_tui(rig.env, "hooks", "uninstall", rig.cli, "--user")
    assert removed.returncode == 0, removed.stderr
    assert rig.hooks_file.read_bytes() == rig.before


def tree_rows(screen: str) -> list[str]:
    """The rows of the dashboard's session tree (its left pane), as drawn."""
    rows = []
    for line in screen.splitlines():
        if line.startswith("│") and "││" in line:
            row = line[1:].split("││", 1)[0].rstrip()
            if "─ " in row:
                rows.append(row)
    return rows


def wait_child(rig: Rig, name: str) -> list[str]:
    """Wait until the tree shows a session with a child under it; its rows then."""
    assert rig.dashboard is not None
    deadline = time.monotonic() + WAIT
    while True:
        screen = rig.dashboard.screen()
        rows = [row for row in tree_rows(screen) if "└─" in row or "├─" in row]
        depths = [row.index("─") for row in rows]
        if len(rows) >= 2 and max(depths) > min(depths) and name in screen:
            return rows
        if time.monotonic() > deadline:
            raise AssertionError(f"the tree never showed a sub-agent under a {name} session:\n{screen}")
        time.sleep(0.1)


def flat(screen: str) -> str:
    """The screen's text without spaces and box lines: a path the dashboard wrapped reads whole."""
    return re.sub(r"[\s│]", "", screen)


def wait_question(rig: Rig, what: str = "the question in agent-tui's queue") -> str:
    """The dashboard once the command to touch the marker waits in its queue."""
    assert rig.dashboard is not None
    wanted = flat(f"touch {rig.marker}")
    deadline = time.monotonic() + WAIT
    while True:
        screen = rig.dashboard.screen()
        if QUEUED in screen and wanted in flat(screen):
            return screen
        if time.monotonic() > deadline:
            seen = [event.get("hook_event_name") for event in rig.session.hook.events()]
            raise AssertionError(
                f"timed out waiting for {what}; the dashboard shows:\n{screen}\n"
                f"the CLI shows:\n{rig.tmux.screen()}\nthe user's hook saw: {seen}"
            )
        time.sleep(0.1)


def ask(rig: Rig) -> str:
    """The prompt sent in the CLI's TUI; returns the dashboard once the question is in its queue."""
    submit(rig.tmux, PROMPT)
    return wait_question(rig)


def open_dialog(rig: Rig) -> str:
    """`A`: the oldest question in the approval dialog; its text."""
    assert rig.dashboard is not None
    rig.dashboard("send-keys", "-t", "t", "A")
    return rig.dash(DIALOG_OPEN, "the approval dialog")


def dash_key(rig: Rig, key: str) -> None:
    assert rig.dashboard is not None
    rig.dashboard("send-keys", "-t", "t", key)


def hook_clients(runtime: Path) -> list[int]:
    """The pids of agent-tui hook processes whose environment names `runtime` (this test's)."""
    found = []
    wanted = f"XDG_RUNTIME_DIR={runtime}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"agent_tui.terminal.hook_client" in argv and wanted in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def answer_in_cli(rig: Rig, key: str, dialog: str) -> None:
    """Press `key` in the CLI's own dialog, as a user does again when the first press came
    before the dialog took keys (it still shows a moment later)."""
    deadline = time.monotonic() + WAIT
    press(rig.tmux, key)
    while True:
        settle = time.monotonic() + 1.0
        while dialog in rig.tmux.screen() and time.monotonic() < settle:
            time.sleep(0.05)
        if dialog not in rig.tmux.screen():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the CLI's dialog never took {key!r}:\n{rig.tmux.screen()}")
        press(rig.tmux, key)


def wait_until(check: Callable[[], bool], what: str, show: Callable[[], str] = lambda: "") -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{show()}")
        time.sleep(0.05)


# -- y, n, the tree, the record ------------------------------------------------------------------------


@pytest.mark.parametrize("cli", ["claude-code", "codex"])
def test_y_in_agent_tui_runs_a_sub_agents_command_shown_under_its_session(
    cli: str, rig: Callable[..., Rig]
) -> None:
    setup = rig(cli, subagent=True)
    user_hooks_kept(setup)
    setup.open_dashboard()
    setup.session.open_tui()
    ask(setup)
    rows = wait_child(setup, NAME[cli])
    assert len(rows) == 2, rows
    dialog = open_dialog(setup)
    assert flat(f"touch {setup.marker}") in flat(dialog)
    assert "write" in dialog  # the risk the classifier gives `touch`
    assert " › " in dialog  # asked by the sub-agent: its path names its parent
    assert not setup.marker.exists()
    dash_key(setup, "y")
    wait_file(setup.marker, "the sub-agent's command, allowed in agent-tui")
    setup.dash(EMPTY_QUEUE, "the queue emptied")
    # The user's own hook still saw everything (it alone records PostToolUse).
    setup.session.hook.wait_for("PostToolUse", lambda e: e.get("tool_use_id") == SUB_CALL[cli])
    setup.quit_dashboard()
    assert setup.decisions()[SUB_CALL[cli]] == ("allow", "user")
    uninstall_restores(setup)


@pytest.mark.parametrize("cli", ["claude-code", "codex"])
def test_n_in_agent_tui_denies_the_command_and_the_cli_says_so(cli: str, rig: Callable[..., Rig]) -> None:
    setup = rig(cli)
    setup.open_dashboard()
    setup.session.open_tui()
    ask(setup)
    screen = setup.dash(NAME[cli], "the session in the tree")
    assert tree_rows(screen), screen
    open_dialog(setup)
    dash_key(setup, "n")
    setup.tmux.wait_for(DENIED[cli], f"{cli} to show the denial", WAIT)
    setup.session.hook.wait_for("Stop")
    assert not setup.marker.exists()
    setup.dash(EMPTY_QUEUE, "the queue emptied")
    setup.quit_dashboard()
    assert setup.decisions()[MAIN_CALL[cli]] == ("deny", "user")


# -- answered in the CLI's own terminal -------------------------------------------------------------


@pytest.mark.parametrize("key", ["1", "Escape"])
def test_an_answer_in_claude_codes_terminal_withdraws_the_question(key: str, rig: Callable[..., Rig]) -> None:
    setup = rig("claude-code")
    setup.open_dashboard()
    setup.session.open_tui()
    ask(setup)
    setup.tmux.wait_for(CLAUDE_DIALOG, "Claude Code's own dialog", WAIT)
    answer_in_cli(setup, key, CLAUDE_DIALOG)
    setup.dash(EMPTY_QUEUE, "the question withdrawn from agent-tui's queue")
    call = MAIN_CALL["claude-code"]
    if key == "1":
        wait_file(setup.marker, "the command, allowed in the terminal")
        setup.session.hook.wait_for("Stop")
        after = ("withdrawn", "system")
    else:
        setup.tmux.wait_for(CLAUDE_INTERRUPTED, "Claude Code's turn, refused in the terminal", WAIT)
        # The transcript's refusal reaches our log too: the user refused, in the terminal.
        wait_until(
            lambda: any(r["decision"] == "deny" for r in setup.resolutions(call)),
            "the transcript's refusal in our log",
            lambda: str(setup.resolutions(call)),
        )
        assert not setup.marker.exists()
        after = ("deny", "user")
    setup.quit_dashboard()
    asked = [r for r in setup.resolutions(call) if r["requestId"].startswith("hook_")]
    assert [(r["decision"], r.get("reason")) for r in asked[1:]] == [
        ("withdrawn", "answered in the terminal")
    ]
    assert setup.decisions()[call] == after, setup.resolutions(call)


def test_esc_in_codex_while_it_waits_for_agent_tui_withdraws_the_question(rig: Callable[..., Rig]) -> None:
    setup = rig("codex")
    setup.open_dashboard()
    setup.session.open_tui()
    ask(setup)
    press(setup.tmux, "Escape")
    setup.tmux.wait_for("Conversation interrupted", "Codex's turn interrupted", WAIT)
    setup.dash(EMPTY_QUEUE, "the question withdrawn from agent-tui's queue")
    assert not setup.marker.exists()
    setup.quit_dashboard()
    call = MAIN_CALL["codex"]
    assert setup.decisions()[call] == ("withdrawn", "system"), setup.resolutions(call)


def test_a_codex_question_nobody_answers_is_handed_back_to_its_terminal(rig: Callable[..., Rig]) -> None:
    setup = rig("codex", config="[hooks]\nhand_back_after = 1\n")
    setup.open_dashboard()
    setup.session.open_tui()
    submit(setup.tmux, PROMPT)
    setup.tmux.wait_for(CODEX_DIALOG, "Codex's own dialog, once agent-tui handed the question back", WAIT)
    setup.dash(EMPTY_QUEUE, "the question gone from agent-tui's queue")
    call = MAIN_CALL["codex"]
    # It was asked in agent-tui (held there for a second), then handed back.
    asked = [(r["decision"], r.get("reason")) for r in setup.resolutions(call)]
    assert asked[0][0] == "ask" and asked[1:] == [("withdrawn", "handed back to the terminal")], asked
    answer_in_cli(setup, "y", CODEX_DIALOG)
    wait_file(setup.marker, "the command, allowed in Codex's own dialog")
    # The call says how its question went.
    setup.dash("handed back", "the call saying its question went back to the terminal")
    setup.quit_dashboard()
    assert setup.decisions()[call] == ("withdrawn", "system")


def test_codex_keeps_trusting_the_users_hooks_and_asks_once_about_agent_tuis(
    cli_session: OpenSession,
) -> None:
    session = cli_session("codex")
    env = isolated_env(session)
    session.home.env = env
    hooks_file = session.home.install_hook()  # the user's own hooks, trusted in Codex's TUI
    session.open_tui()
    trusted = _trust(session)
    assert trusted and all(key.startswith(f"{hooks_file}:") for key in trusted), trusted
    session.tmux.close()
    before = hooks_file.read_bytes()
    installed = agent_tui(env, "hooks", "install", "codex", "--user")
    assert installed.returncode == 0, installed.stderr
    assert "trust" in installed.stdout  # the installer says Codex will ask, and never trusts for you
    ours = sum(
        len(groups) - len(json.loads(before)["hooks"].get(event, ()))
        for event, groups in json.loads(hooks_file.read_bytes())["hooks"].items()
    )
    assert _trust(session) == trusted  # nothing was trusted for the user
    session.tmux = Tmux()
    session.home.start(session.tmux)
    screen = session.tmux.wait_for(CODEX_TRUST, "Codex's question about agent-tui's hooks", WAIT)
    assert f"{ours} hooks are new or changed" in screen, screen  # only ours: the user's kept their trust
    accept_hook_trust(session.tmux)
    wait_ready(session.tmux, "codex")
    after = _trust(session)
    assert {key: after[key] for key in trusted} == trusted
    assert len(after) == len(trusted) + ours
    removed = agent_tui(env, "hooks", "uninstall", "codex", "--user")
    assert removed.returncode == 0, removed.stderr
    assert hooks_file.read_bytes() == before


def _trust(session: Session) -> dict[str, str]:
    """Codex's trusted hooks (`[hooks.state]` of its config.toml): key → hash."""
    config = tomllib.loads((session.home.config_dir / "config.toml").read_text())
    state = config.get("hooks", {}).get("state", {})
    return {key: entry.get("trusted_hash", "") for key, entry in state.items()}


# -- no dashboard, claude -p, x ------------------------------------------------------------------------


@pytest.mark.parametrize("cli", ["claude-code", "codex"])
def test_with_no_dashboard_the_clis_own_question_works_at_once(cli: str, rig: Callable[..., Rig]) -> None:
    setup = rig(cli)
    setup.session.open_tui()
    submit(setup.tmux, PROMPT)
    setup.tmux.wait_for(CLAUDE_DIALOG if cli == "claude-code" else CODEX_DIALOG, f"{cli}'s own dialog", WAIT)
    setup.session.hook.wait_for("PermissionRequest")
    # Our hook gave no decision and is gone, the CLI's dialog still open and unanswered.
    wait_until(lambda: not hook_clients(setup.runtime), "agent-tui's hook to give up", setup.tmux.screen)
    assert not setup.marker.exists()
    answer_in_cli(
        setup, "1" if cli == "claude-code" else "y", CLAUDE_DIALOG if cli == "claude-code" else CODEX_DIALOG
    )
    wait_file(setup.marker, "the command, allowed in the CLI's own dialog")
    assert setup.sessions_dirs == []  # no agent-tui ran: nothing was written for it


def test_claude_p_waits_for_agent_tuis_queue_and_y_runs_it(rig: Callable[..., Rig]) -> None:
    setup = rig("claude-code")
    setup.open_dashboard()
    setup.session.home.start(setup.tmux, *setup.session.home.headless(PROMPT))
    wait_question(setup, "claude -p's question in agent-tui's queue")
    assert not setup.marker.exists()
    open_dialog(setup)
    dash_key(setup, "y")
    wait_file(setup.marker, "the command, allowed in agent-tui")
    screen = setup.tmux.wait_for("dead", "claude -p to finish")
    assert "Done." in screen
    setup.quit_dashboard()
    assert setup.decisions()[MAIN_CALL["claude-code"]] == ("allow", "user")


@pytest.mark.parametrize("cli", ["claude-code", "codex"])
def test_x_in_agent_tui_stops_the_sessions_turn(cli: str, rig: Callable[..., Rig]) -> None:
    setup = rig(cli)
    setup.open_dashboard()
    setup.session.open_tui()
    ask(setup)
    setup.dash(NAME[cli], "the session in the tree")
    dash_key(setup, "x")
    if cli == "claude-code":  # the waiting question is denied with interrupt: the turn is aborted
        setup.tmux.wait_for(CLAUDE_INTERRUPTED, "Claude Code's turn interrupted", WAIT)
    else:  # the waiting question is denied; Codex goes on without the call
        setup.tmux.wait_for(CODEX_BLOCKED, "Codex to show the call denied", WAIT)
        setup.session.hook.wait_for("Stop")
    setup.dash(EMPTY_QUEUE, "the question answered by the stop")
    assert not setup.marker.exists()
    setup.quit_dashboard()
    call = MAIN_CALL[cli]
    assert setup.decisions()[call] == ("deny", "user"), setup.resolutions(call)
