"""`agent-tui hooks install|uninstall|status` as a user runs it: the real entry in a subprocess.

Each test has its own home, data dir, runtime dir and `$PATH` (on which the CLIs are npm-style
installs with a `package.json` of the version wanted), so the person's own hook files and any
agent-tui they run are out of reach. `status`'s ping is answered by a stand-in listener on a real
Unix socket, where the running agent-tui would listen.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support_providers import agent_tui, clean_env

from agent_tui.terminal.hook_wire import PING_LINE

PACKAGES = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex"}


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A short `$XDG_RUNTIME_DIR` (a socket's path must fit in 107 bytes)."""
    with tempfile.TemporaryDirectory(prefix="at-rt-", dir="/tmp") as folder:
        os.chmod(folder, 0o700)
        yield Path(folder)


class Machine:
    """A scratch user: home, data dir, runtime dir, and the CLIs found on its PATH."""

    def __init__(self, root: Path, runtime: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.home.mkdir()
        self.bin = root / "bin"
        self.bin.mkdir()
        self.runtime = runtime
        self.env = clean_env(
            HOME=str(self.home),
            XDG_DATA_HOME=str(root / "data"),
            XDG_RUNTIME_DIR=str(runtime),
            PATH=f"{self.bin}{os.pathsep}/usr/bin{os.pathsep}/bin",
        )
        for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
            self.env.pop(name, None)

    def cli(self, command: str, version: str) -> None:
        """`command` installed from npm at `version` (a script it never runs: it fails if run)."""
        package = self.root / "npm" / "node_modules" / PACKAGES[command]
        package.mkdir(parents=True)
        (package / "package.json").write_text(json.dumps({"name": PACKAGES[command], "version": version}))
        script = package / "cli.js"
        script.write_text(f"#!/bin/sh\ntouch {self.root}/ran-{command}\nexit 1\n")
        script.chmod(0o755)
        (self.bin / command).symlink_to(script)

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return agent_tui("hooks", *args, env=self.env, cwd=cwd or self.root)

    def never_ran_a_cli(self) -> bool:
        return not list(self.root.glob("ran-*"))


@pytest.fixture
def machine(tmp_path: Path, runtime: Path) -> Machine:
    return Machine(tmp_path, runtime)


def hooks_of(path: Path) -> dict[str, object]:
    hooks: dict[str, object] = json.loads(path.read_bytes())["hooks"]
    return hooks


def test_install_defaults_to_both_clis_for_the_user(machine: Machine) -> None:
    machine.cli("claude", "2.1.328")
    machine.cli("codex", "0.169.0")
    config = machine.home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3"\n[hooks.state]\n')  # where Codex keeps its trust: never ours to write
    result = machine.run("install")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    claude = machine.home / ".claude" / "settings.json"
    codex = machine.home / ".codex" / "hooks.json"
    assert f"Claude Code: installed in {claude}" in result.stdout
    assert f"Codex: installed in {codex}" in result.stdout
    assert "Codex asks you once to trust the new hook" in result.stdout
    assert "PermissionRequest" in hooks_of(claude)
    assert set(hooks_of(codex)) >= {"PermissionRequest", "PreToolUse", "SubagentStart", "SessionEnd"}
    again = machine.run("install")
    assert again.returncode == 0
    assert "already installed" in again.stdout
    assert machine.never_ran_a_cli()
    assert config.read_text() == 'model = "o3"\n[hooks.state]\n'
    assert sorted(os.listdir(config.parent)) == ["config.toml", "hooks.json"]


def test_uninstall_gives_back_the_users_files(machine: Machine) -> None:
    machine.cli("claude", "2.1.328")
    machine.cli("codex", "0.169.0")
    claude = machine.home / ".claude" / "settings.json"
    claude.parent.mkdir()
    mine = (
        b'{\n\t"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},'
        b'\n\t"model": "opus"\n}'
    )
    claude.write_bytes(mine)
    claude.chmod(0o600)
    assert machine.run("install").returncode == 0
    result = machine.run("uninstall")
    assert result.returncode == 0, result.stderr
    assert "restored as it was" in result.stdout
    assert claude.read_bytes() == mine
    assert not (machine.home / ".codex").exists()


def test_a_cli_too_old_is_refused_in_one_sentence(machine: Machine) -> None:
    machine.cli("claude", "2.0.30")
    machine.cli("codex", "0.121.3")
    result = machine.run("install")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines == [
        f"agent-tui: Claude Code 2.0.30 ({machine.bin / 'claude'}) is too old for agent-tui's hook: "
        "it needs Claude Code 2.0.45 or newer, the first with PermissionRequest",
        f"agent-tui: Codex 0.121.3 ({machine.bin / 'codex'}) is too old for agent-tui's hook: "
        "it needs Codex 0.122.0 or newer, the first with PermissionRequest",
    ]
    assert not (machine.home / ".claude").exists()
    assert not (machine.home / ".codex").exists()


def test_an_older_codex_gets_the_events_it_has_and_a_word_on_its_feature_flag(machine: Machine) -> None:
    machine.cli("codex", "0.123.0")
    result = machine.run("install", "codex")
    assert result.returncode == 0, result.stderr
    assert set(hooks_of(machine.home / ".codex" / "hooks.json")) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "Stop",
    }
    assert "codex_hooks = true" in result.stdout
    assert not (machine.home / ".claude").exists()  # only the CLI named


def test_a_cli_not_on_path_gets_the_hook_anyway_with_a_warning(machine: Machine) -> None:
    machine.cli("codex", "0.169.0")
    result = machine.run("install")
    assert result.returncode == 0
    assert result.stderr.splitlines() == [
        "agent-tui: Claude Code (`claude`) is not on PATH; installing its hook anyway for when it is "
        "(its prompts reach agent-tui from Claude Code 2.0.45 on)"
    ]
    assert "PermissionRequest" in hooks_of(machine.home / ".claude" / "settings.json")


def test_a_cli_in_the_current_directory_is_not_looked_at(machine: Machine) -> None:
    repo = machine.root / "repo"
    repo.mkdir()
    planted = repo / "claude"
    planted.write_text(f"#!/bin/sh\ntouch {machine.root}/ran-planted\n")
    planted.chmod(0o755)
    machine.env["PATH"] = f".{os.pathsep}{os.pathsep}{machine.env['PATH']}"
    result = machine.run("install", "claude-code", cwd=repo)
    assert result.returncode == 0
    assert "is not on PATH" in result.stderr
    assert machine.never_ran_a_cli()


def test_bad_json_is_named_by_file_and_line(machine: Machine) -> None:
    machine.cli("claude", "2.1.328")
    settings = machine.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "model": "opus",\n  "hooks": {"Stop": [}\n}\n')
    settings.chmod(0o600)
    result = machine.run("install", "claude-code")
    assert result.returncode == 1
    assert result.stderr.startswith(f"agent-tui: {settings}:3: Expecting value (column 22)")
    assert len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_project_install_in_a_hostile_repository(machine: Machine) -> None:
    machine.cli("claude", "2.1.328")
    machine.cli("codex", "0.169.0")
    bashrc = machine.home / ".bashrc"
    bashrc.write_text("# mine\n")
    repo = machine.root / "r;$(touch pwned)&'q`id`"
    (repo / ".claude").mkdir(parents=True)
    (repo / ".claude" / "settings.local.json").symlink_to(bashrc)
    (repo / ".claude" / "settings.json").write_text('{"hooks": {}}')
    result = machine.run("install", "--project", str(repo))
    assert result.returncode == 1
    assert "settings.local.json is a symbolic link: agent-tui does not change it" in result.stderr
    assert bashrc.read_text() == "# mine\n"
    assert (repo / ".claude" / "settings.json").read_text() == '{"hooks": {}}'
    codex = repo / ".codex" / "hooks.json"
    assert "PermissionRequest" in hooks_of(codex)  # the other CLI's file was fine
    assert "keep it out of your repository" in result.stdout
    assert not list(machine.root.rglob("pwned"))
    assert not (repo / ".codex" / "config.toml").exists()


def test_codex_in_both_the_users_and_the_projects_file_is_pointed_out(machine: Machine) -> None:
    machine.cli("codex", "0.169.0")
    project = machine.root / "proj"
    project.mkdir()
    assert machine.run("install", "codex").returncode == 0
    result = machine.run("install", "codex", "--project", str(project))
    assert result.returncode == 0, result.stderr
    assert f"agent-tui's hook is in {machine.home / '.codex' / 'hooks.json'} too" in result.stdout
    assert "`agent-tui hooks uninstall codex --user`" in result.stdout
    again = machine.run("install", "codex", cwd=project)
    assert f"agent-tui's hook is in {project / '.codex' / 'hooks.json'} too" in again.stdout


def test_codex_in_a_linked_worktree_is_pointed_at_the_main_checkout(machine: Machine) -> None:
    machine.cli("codex", "0.169.0")
    main = machine.root / "main"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(main)]
    subprocess.run(["git", "init", "-q", str(main)], check=True, timeout=60)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True, timeout=60)
    subprocess.run([*git, "worktree", "add", "-q", str(machine.root / "wt")], check=True, timeout=60)
    (machine.root / "wt" / "sub").mkdir()
    result = machine.run("install", "codex", "--project", str(machine.root / "wt" / "sub"))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"agent-tui: {machine.root / 'wt' / 'sub'} is in a linked git worktree: Codex reads its hooks from "
        f"the main checkout's {main / 'sub' / '.codex' / 'hooks.json'}, so nothing was installed here; run "
        f"`agent-tui hooks install codex --project {main / 'sub'}`"
    ]
    assert not (machine.root / "wt" / "sub" / ".codex").exists()
    assert machine.run("install", "codex", "--project", str(main)).returncode == 0  # a regular checkout
    assert (main / ".codex" / "hooks.json").is_file()


def test_a_control_character_in_a_path_is_shown_not_obeyed(machine: Machine) -> None:
    machine.cli("claude", "2.1.328")
    machine.env["CLAUDE_CONFIG_DIR"] = str(machine.root / "conf\x1b]0;pwned\x07")
    result = machine.run("install", "claude-code")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "conf\\x1b]0;pwned\\x07" in result.stdout


def test_usage_errors(machine: Machine) -> None:
    assert machine.run("install", "cursor").returncode == 2
    both = machine.run("install", "--user", "--project", str(machine.root))
    assert both.returncode == 2
    assert "not allowed with argument" in both.stderr
    assert machine.run().returncode == 2
    missing = machine.run("install", "--project", str(machine.root / "nowhere"))
    assert missing.returncode == 1
    assert "not a folder" in missing.stderr


def test_status_without_a_running_agent_tui(machine: Machine) -> None:
    machine.cli("claude", "2.1.328")
    project = machine.root / "proj"
    project.mkdir()
    assert machine.run("install", "claude-code", "--project", str(project)).returncode == 0
    result = machine.run("status", cwd=project)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"Claude Code: 2.1.328 at {machine.bin / 'claude'}"
    assert lines[1] == "Codex: not on PATH"
    rows = [line.split() for line in lines[2:6]]
    assert rows == [
        ["Claude", "Code", "user", str(machine.home / ".claude" / "settings.json"), "not", "installed"],
        ["Claude", "Code", "project", str(project / ".claude" / "settings.local.json"), "installed"],
        ["Codex", "user", str(machine.home / ".codex" / "hooks.json"), "not", "installed"],
        ["Codex", "project", str(project / ".codex" / "hooks.json"), "not", "installed"],
    ]
    assert lines[6] == (
        f"agent-tui: not reachable at {machine.runtime / 'agent-tui' / 'hooks.sock'} (no agent-tui is "
        "running): hooks give no decision, the CLIs ask as usual"
    )


class StandIn:
    """A listener where a running agent-tui's hook socket would be: it answers one ping."""

    def __init__(self, path: Path, answer: bytes) -> None:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(1)
        self.answer = answer
        self.received = b""
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        conn, _ = self.server.accept()
        with conn:
            while not self.received.endswith(b"\n"):
                chunk = conn.recv(4096)
                if not chunk:
                    break
                self.received += chunk
            conn.sendall(self.answer)

    def close(self) -> None:
        self.thread.join(timeout=30)
        self.server.close()


@pytest.mark.parametrize(
    "answer, reachable, words",
    [
        (
            b'{"v": 1, "pong": true, "pid": 4242, "watched": true}\n',
            True,
            "(pid 4242; someone is watching its queue)",
        ),
        (
            b'{"v": 1, "pong": true, "pid": 4242, "watched": false}\n',
            True,
            "(pid 4242; nobody watches its queue now",
        ),
        (b'{"decision": "allow"}\n', False, "its answer was not a pong"),
        (b"\x1b[2J junk\n", False, "its answer was not a pong"),
    ],
)
def test_status_pings_the_running_agent_tui(
    machine: Machine, answer: bytes, reachable: bool, words: str
) -> None:
    socket_path = machine.runtime / "agent-tui" / "hooks.sock"
    stand_in = StandIn(socket_path, answer)
    try:
        result = machine.run("status")
    finally:
        stand_in.close()
    assert result.returncode == 0, result.stderr
    assert stand_in.received == PING_LINE
    last = result.stdout.splitlines()[-1]
    assert last.startswith(f"agent-tui: {'reachable' if reachable else 'not reachable'} at {socket_path}")
    assert words in last
    assert "\x1b" not in result.stdout


SYSTEM_PYTHON = "/usr/bin/python3"
"""An interpreter the other user may run (the tests' own may sit in a folder only root enters)."""
LISTENER_OF_ANOTHER_USER = """
import socket, sys
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sys.argv[1])
server.listen(1)
print("ready", flush=True)
conn, _ = server.accept()
conn.settimeout(30)
try:
    conn.recv(4096)
    conn.sendall(b'{"v": 1, "pong": true, "pid": 1, "watched": true}\\n')
except OSError:
    pass
"""


def test_status_does_not_believe_a_listener_of_another_user(machine: Machine) -> None:
    machine.runtime.chmod(0o711)
    folder = machine.runtime / "agent-tui"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)  # so the other user can make its socket there (as a planted one would be)
    socket_path = folder / "hooks.sock"
    listener = subprocess.Popen(
        [SYSTEM_PYTHON, "-I", "-c", LISTENER_OF_ANOTHER_USER, str(socket_path)],
        stdout=subprocess.PIPE,
        text=True,
        user=54321,
        group=54321,
        cwd="/",
    )
    try:
        assert listener.stdout is not None and listener.stdout.readline() == "ready\n"
        result = machine.run("status")
    finally:
        listener.wait(timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith(
        f"agent-tui: not reachable at {socket_path} (the listener runs as another user (uid 54321))"
    )


def test_the_hooks_command_imports_little() -> None:
    """Nothing of the engine, the runtime or the event models (the `events` package itself holds
    only the table of its lazily loaded names, which the lazy `safety` package shares)."""
    code = (
        "import sys; import agent_tui.cli.hooks_command; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'pydantic', 'orjson') "
        "or m.startswith(('agent_tui.engine', 'agent_tui.events.', 'agent_tui.runtime')) "
        "and m != 'agent_tui.events.lazy_names'))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
