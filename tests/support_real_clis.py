"""The real Claude Code and Codex CLIs in tmux, offline, with a recording hook: the harness of the terminal-agent tests.

Each CLI is the native binary `scripts/real_agents.py` installs at the version `tests/real-agents.toml`
pins (`[clis.*]`). `claude_home` / `codex_home` give it an isolated home under a test's directory
(`$HOME`, `CLAUDE_CONFIG_DIR` / `CODEX_HOME`, a workspace) pointed at a `FakeModelServer` on
127.0.0.1, with everything that would ask a first-run question answered in its config:

- Claude Code: onboarding done, the API key approved, the workspace trusted, the auto-mode offer
  seen, the default (asking) permission mode; `IS_SANDBOX=1` (root) and no traffic but the model's;
- Codex: a model provider of ours (Responses API), the workspace trusted, `approval_policy =
  "on-request"` with the `workspace-write` sandbox (0.171.0 refuses `untrusted`; a command the
  model asks to run unsandboxed, `require_escalated`, is what Codex asks the user about).
  Codex asks the user to trust new hooks in its TUI (`accept_hook_trust`); nothing here writes that
  trust. The TUI runs with `--no-daemon` unless told (`daemon=True`), so the session and its hooks
  live in the pane's process group.

`RecordingHook` is the hook both CLIs run: a small Python script that appends each event (its stdin
JSON, its pid and parent pid) to a file, optionally holds until the test releases it, prints the
output the test chose for that event and exits 0. The tests synchronise on what the CLIs write
(the pane's text, the hook's record), never on sleeps; every wait has a deadline that fails with
what was seen.

Codex's own start-up failure `CODEX_STARTUP_CRASH` is the one death `Tmux` answers by starting the
CLI again, once, and only before any key of ours reached it (with a warning in the test output).

Invariants: nothing here reaches beyond 127.0.0.1; a missing CLI fails with the command that
installs it; every process a test starts lives in its tmux server (closed by the fixture) or is a
Codex background service this module stops (`stop_codex_daemon`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fake_model_server import Body, FakeModelServer, Recorded, Stream, anthropic_stream
from fake_responses_api import RESPONSES_MODEL, answers_call, function_outputs, responses_stream, user_texts
from support_tmux import Tmux

_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "real_agents.py"


def _installer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_agents_installer_clis", _SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


INSTALLER = _installer()
AGENTS_DIR: Path = INSTALLER.agents_dir()
CLIS: tuple[str, ...] = tuple(INSTALLER.cli_pins())
"""`claude-code`, `codex`: the names `real-agents.toml` and the hook wire use."""

WAIT = 45.0
"""The longest any one step of a CLI may take (start, a turn, a hook) before a test fails."""


def cli_program(name: str) -> Path:
    """The installed native binary of CLI `name`; fails (never skips) with the install command."""
    program = INSTALLER.cli_executable(name, AGENTS_DIR)
    if name in INSTALLER.missing_clis(AGENTS_DIR):
        version = INSTALLER.cli_pins()[name]["version"]
        pytest.fail(
            f"{name} {version} is not installed in {AGENTS_DIR}: run `{INSTALLER.INSTALL_COMMAND}` "
            "(the one step of the real-agent pass that uses the network)"
        )
    return Path(program)


def cli_version(name: str) -> str:
    return str(INSTALLER.cli_pins()[name]["version"])


# -- the recording hook ----------------------------------------------------------------------------

_HOOK_SCRIPT = """\
import json, os, signal, sys, time
record = sys.argv[1]
raw = sys.stdin.read()
try:
    event = json.loads(raw)
except ValueError:
    event = {"unparsed": raw}
name = event.get("hook_event_name", "unknown") if isinstance(event, dict) else "unknown"
def note(entry):
    with open(os.path.join(record, "events.jsonl"), "a") as file:
        file.write(json.dumps(entry) + "\\n")
note({"pid": os.getpid(), "ppid": os.getppid(), "event": event})
def stopped(number, frame):
    note({"signal": number, "pid": os.getpid(), "name": name})
    sys.exit(0)
signal.signal(signal.SIGTERM, stopped)
decide = os.path.join(record, "decide", name)
if os.path.exists(decide + ".hold"):
    deadline = time.monotonic() + 120
    while not os.path.exists(decide + ".release") and time.monotonic() < deadline:
        time.sleep(0.05)
    note({"released": name, "pid": os.getpid()})
if os.path.exists(decide + ".out"):
    with open(decide + ".out") as file:
        sys.stdout.write(file.read())
sys.exit(0)
"""


class RecordingHook:
    """A hook command that records every event and answers what the test set (`decide`)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        (directory / "decide").mkdir(parents=True, exist_ok=True)
        self.script = directory / "record_hook.py"
        self.script.write_text(_HOOK_SCRIPT)
        self.log = directory / "events.jsonl"

    @property
    def command(self) -> str:
        return f"{sys.executable} -I {self.script} {self.directory}"

    def decide(self, event: str, output: dict[str, Any] | str) -> None:
        """What the hook prints for `event` (a dict as one JSON line; "" for no decision)."""
        text = output if isinstance(output, str) else json.dumps(output)
        (self.directory / "decide" / f"{event}.out").write_text(text)

    def hold(self, event: str) -> None:
        """The hook of `event` waits (after recording it) until `release(event)`."""
        (self.directory / "decide" / f"{event}.hold").write_text("")

    def release(self, event: str) -> None:
        (self.directory / "decide" / f"{event}.release").write_text("")

    def release_all(self) -> None:
        for hold in (self.directory / "decide").glob("*.hold"):
            self.release(hold.stem)

    def records(self) -> list[dict[str, Any]]:
        try:
            lines = self.log.read_text().splitlines()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in lines if line.strip()]

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        """The events recorded so far (of `name` only, if given), in order."""
        found = [record["event"] for record in self.records() if "event" in record]
        return [event for event in found if name is None or event.get("hook_event_name") == name]

    def wait_for(
        self,
        name: str,
        when: Callable[[dict[str, Any]], bool] = lambda event: True,
        timeout: float = WAIT,
        what: str = "",
    ) -> dict[str, Any]:
        """The first recorded `name` event `when` accepts, once there is one."""
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events(name):
                if when(event):
                    return event
            if time.monotonic() > deadline:
                seen = [event.get("hook_event_name") for event in self.events()]
                raise AssertionError(f"timed out waiting for the {name} hook {what}; recorded: {seen}")
            time.sleep(0.05)

    def pid_of(self, name: str) -> int:
        """The pid of the (first) hook process that recorded `name`."""
        for record in self.records():
            if record.get("event", {}).get("hook_event_name") == name:
                return int(record["pid"])
        raise AssertionError(f"no {name} hook was recorded")

    def signals(self, name: str) -> list[int]:
        """The signals the hook processes of `name` got (and recorded before exiting)."""
        return [int(r["signal"]) for r in self.records() if "signal" in r and r.get("name") == name]

    def parent_of(self, name: str) -> int:
        for record in self.records():
            if record.get("event", {}).get("hook_event_name") == name:
                return int(record["ppid"])
        raise AssertionError(f"no {name} hook was recorded")


# -- decisions, as each CLI reads them from a hook's stdout ----------------------------------------


def permission_decision(behavior: str, message: str = "", interrupt: bool = False) -> dict[str, Any]:
    """A PermissionRequest hook's allow / deny (both CLIs read the same shape)."""
    decision: dict[str, Any] = {"behavior": behavior}
    if message:
        decision["message"] = message
    if interrupt:
        decision["interrupt"] = True
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


def pre_tool_use_deny(reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


# -- an isolated home per CLI ----------------------------------------------------------------------

CLAUDE_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
)
CODEX_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "SubagentStart",
    "SubagentStop",
)
"""The events the tests record: Codex 0.171.0 has no SessionEnd and no Notification."""

TOOL_EVENTS = {"PreToolUse", "PermissionRequest", "PostToolUse"}


@dataclass
class CliHome:
    """One CLI's isolated home: where it reads its config, where it works, how to start it."""

    cli: str
    program: Path
    home: Path
    config_dir: Path
    workspace: Path
    env: dict[str, str]
    hook: RecordingHook
    daemon: bool = False
    extra_args: list[str] = field(default_factory=list)

    def tui(self) -> list[str]:
        """The command line of the CLI's own interactive TUI."""
        if self.cli == "codex" and not self.daemon:
            return [str(self.program), "--no-daemon", *self.extra_args]
        return [str(self.program), *self.extra_args]

    def headless(self, prompt: str, *options: str) -> list[str]:
        """The command line of one non-interactive turn (`claude -p`, `codex exec`)."""
        if self.cli == "claude-code":
            return [str(self.program), *options, "-p", prompt]
        return [str(self.program), "exec", "--skip-git-repo-check", *options, prompt]

    def hooks_file(self, project: bool = False) -> Path:
        """Where the hooks are configured: the user's file, or the project's."""
        if self.cli == "claude-code":
            if project:
                return self.workspace / ".claude" / "settings.local.json"
            return self.config_dir / "settings.json"
        return (self.workspace / ".codex" if project else self.config_dir) / "hooks.json"

    def install_hook(
        self,
        events: tuple[str, ...] | None = None,
        project: bool = False,
        timeout: int = 60,
        command: str | None = None,
    ) -> Path:
        """Configure a hook for `events` (all the tests record, by default) in the user's file (or
        the project's): the recording hook, or `command` (agent-tui's own hook entry, say).
        Replaces the file's `hooks` and keeps the rest of it; returns its path."""
        events = events or (CLAUDE_EVENTS if self.cli == "claude-code" else CODEX_EVENTS)
        handler = {"type": "command", "command": command or self.hook.command, "timeout": timeout}
        groups: dict[str, Any] = {}
        for event in events:
            group: dict[str, Any] = {"hooks": [handler]}
            if self.cli == "claude-code" and event in TOOL_EVENTS:
                group = {"matcher": "*", **group}
            groups[event] = [group]
        path = self.hooks_file(project)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            existing = json.loads(path.read_text())
        except FileNotFoundError:
            existing = {}
        existing["hooks"] = groups
        path.write_text(json.dumps(existing, indent=2))
        return path

    def start(self, tmux: Tmux, *command: str) -> None:
        restart = CODEX_STARTUP_CRASH if self.cli == "codex" else None
        tmux.start(*(command or self.tui()), env=self.env, cwd=self.workspace, restart_once_on=restart)

    def transcripts(self) -> list[Path]:
        """The CLI's own session logs under its config dir, oldest first."""
        if self.cli == "claude-code":
            found = (self.config_dir / "projects").glob("*/*.jsonl")
        else:
            found = (self.config_dir / "sessions").glob("*/*/*/rollout-*.jsonl")
        return sorted(found, key=lambda path: path.stat().st_mtime)


CLAUDE_KEY = "sk-ant-fake-test-key-0123456789abcdef"


def claude_home(root: Path, model: FakeModelServer) -> CliHome:
    """Claude Code set up under `root`, pointed at `model`, every first-run question answered."""
    home, config, workspace = root / "home", root / "claude-config", root / "ws"
    for directory in (home, config, workspace):
        directory.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({"permissions": {"defaultMode": "default"}}, indent=2))
    state = {
        "hasCompletedOnboarding": True,
        "numStartups": 1,
        "hasSeenAutoDefaultNudge": True,
        "hasResetAutoModeOptInForDefaultOffer": True,
        "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]], "rejected": []},
        "projects": {str(workspace): {"hasTrustDialogAccepted": True}},
    }
    (config / ".claude.json").write_text(json.dumps(state, indent=2))
    env = {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_BASE_URL": model.anthropic_url,
        "ANTHROPIC_API_KEY": CLAUDE_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "IS_SANDBOX": "1",
        "TERM": "xterm-256color",
    }
    hook = RecordingHook(root / "hook")
    return CliHome("claude-code", cli_program("claude-code"), home, config, workspace, env, hook)


CODEX_KEY = "CODEX_FAKE_MODEL_KEY"


def codex_home(root: Path, model: FakeModelServer, *, daemon: bool = False) -> CliHome:
    """Codex set up under `root`, pointed at `model` (the Responses API), the workspace trusted."""
    home, config, workspace = root / "home", root / "codex-home", root / "ws"
    for directory in (home, config, workspace):
        directory.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        f"""model = "{RESPONSES_MODEL}"
model_provider = "fake"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake model"
base_url = "{model.openai_url}"
env_key = "{CODEX_KEY}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[projects."{workspace}"]
trust_level = "trusted"
"""
    )
    env = {"HOME": str(home), "CODEX_HOME": str(config), CODEX_KEY: "sk-fake-codex", "TERM": "xterm-256color"}
    hook = RecordingHook(root / "hook")
    return CliHome("codex", cli_program("codex"), home, config, workspace, env, hook, daemon=daemon)


# -- driving the TUIs ------------------------------------------------------------------------------

CLAUDE_READY = "? for shortcuts"
CLAUDE_DIALOG = "Do you want to proceed?"
CLAUDE_INTERRUPTED = "Interrupted · What should Claude do instead?"
CODEX_READY = "Ask Codex to do anything"
CODEX_TRUST = "Hooks need review"
CODEX_TRUST_ALL = "Trust all and continue"
CODEX_DIALOG = "Would you like to run the following command?"
CODEX_RUNNING_HOOK = "Running hook"
CODEX_BLOCKED = "Blocked by hook"
CODEX_STARTUP_CRASH = "timed out discarding buffered terminal input"
"""How Codex dies when the input it drains before a protected start-up screen does not settle within
its one second: the one failure `Tmux` may answer by starting the CLI again (once, before any key)."""


def accept_hook_trust(tmux: Tmux) -> None:
    """Answer Codex's start-up question about new hooks the way a user trusts them all: move to
    "Trust all and continue" (again if the first key came before the list took keys), then Enter."""
    tmux.wait_for(CODEX_TRUST_ALL, "Codex's question about new hooks", WAIT)
    deadline = time.monotonic() + WAIT
    while f"› 2. {CODEX_TRUST_ALL}" not in tmux.screen():
        if time.monotonic() > deadline:
            raise AssertionError(f"Codex's hook list never selected {CODEX_TRUST_ALL!r}:\n{tmux.screen()}")
        tmux("send-keys", "-t", "t", "Down")
        _settle(tmux, f"› 2. {CODEX_TRUST_ALL}", 1.0)
    tmux("send-keys", "-t", "t", "Enter")


def dismiss(tmux: Tmux, key: str, text: str) -> None:
    """Press `key` until `text` leaves the screen: again only if the screen is still there 2 s
    later (the first key came while the screen still drained its input, as Codex's protected
    start-up screens do for up to a second after they are drawn); a slow screen that takes the
    first key within that time never gets a second one to carry to the next screen."""
    deadline = time.monotonic() + WAIT
    while text in tmux.screen():
        if time.monotonic() > deadline:
            raise AssertionError(f"{key} never dismissed {text!r}:\n{tmux.screen()}")
        tmux("send-keys", "-t", "t", key)
        _settle(tmux, text, 2.0, shown=False)


def _settle(tmux: Tmux, text: str, timeout: float, *, shown: bool = True) -> None:
    """Poll the pane until `text` is on it (`shown`) or gone, up to `timeout` seconds, without
    failing (the caller decides)."""
    deadline = time.monotonic() + timeout
    while (text in tmux.screen()) != shown and time.monotonic() < deadline:
        time.sleep(0.05)


def wait_ready(tmux: Tmux, cli: str) -> str:
    return tmux.wait_for(CLAUDE_READY if cli == "claude-code" else CODEX_READY, f"{cli}'s prompt", WAIT)


def submit(tmux: Tmux, text: str) -> None:
    """Type `text` into the TUI's composer, then press Enter once it shows (Codex takes a burst of
    keys with an Enter in it as a paste, and keeps the Enter as a newline)."""
    tmux("send-keys", "-t", "t", "-l", text)
    tmux.wait_for(text, "the typed prompt", WAIT)
    tmux("send-keys", "-t", "t", "Enter")


def press(tmux: Tmux, *keys: str) -> None:
    tmux("send-keys", "-t", "t", *keys)


def wait_gone(pid: int, what: str, timeout: float = WAIT) -> None:
    """Wait until process `pid` has exited (or is a zombie nobody reaped yet)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            status = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return
        if status.rsplit(")", 1)[1].split()[0] == "Z":
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} (pid {pid}) is still running")
        time.sleep(0.05)


def wait_file(path: Path, what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what} ({path})")
        time.sleep(0.05)


def stop_codex_daemon(home: CliHome) -> list[int]:
    """Stop the background app-server Codex started for `home` (its processes are the ones
    whose program lies in `home`'s CODEX_HOME); returns their pids."""
    marker = str(home.config_dir)
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].decode(errors="replace").startswith(marker):
            pids.append(int(entry.name))
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for pid in pids:
        try:
            wait_gone(pid, "Codex's background app-server", 10)
        except AssertionError:
            os.kill(pid, signal.SIGKILL)
    return pids


# -- the fake model's scripts ----------------------------------------------------------------------


def _count_tokens(recorded: Recorded) -> bool:
    return recorded.path.startswith("/v1/messages/count_tokens")


def _claude_messages(recorded: Recorded) -> list[dict[str, Any]]:
    body = recorded.body if isinstance(recorded.body, dict) else {}
    return [m for m in body.get("messages", []) if isinstance(m, dict)]


def _first_user_text(recorded: Recorded) -> str:
    users = [m for m in _claude_messages(recorded) if m.get("role") == "user"]
    if not users:
        return ""
    content = users[0].get("content")
    return content if isinstance(content, str) else json.dumps(content)


def _claude_results(recorded: Recorded) -> list[str]:
    """The tool-use ids whose results the request's last user message carries."""
    users = [m for m in _claude_messages(recorded) if m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    if not isinstance(content, list):
        return []
    return [
        b.get("tool_use_id", "") for b in content if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


def _claude_loop(recorded: Recorded) -> bool:
    """A request of an agent loop (it offers the model the shell), not a side request."""
    if not recorded.path.startswith("/v1/messages") or _count_tokens(recorded):
        return False
    body = recorded.body if isinstance(recorded.body, dict) else {}
    offers_shell = any(isinstance(t, dict) and t.get("name") == "Bash" for t in body.get("tools") or ())
    last = json.dumps(_claude_messages(recorded)[-1:])
    return offers_shell and "[SUGGESTION MODE" not in last


def claude_script(
    model: FakeModelServer,
    prompt: str,
    command: str,
    *,
    subagent_prompt: str | None = None,
    subagent_command: str = "",
) -> None:
    """The turn started by `prompt` calls `Bash` with `command` (id `toolu_main1`), then says
    "Done." With `subagent_prompt`, it first starts a sub-agent (`Agent`, id `toolu_agent1`) whose
    own loop calls `Bash` with `subagent_command` (id `toolu_sub1`), then says "Sub done."
    Everything else (token counts, titles, suggestions, later turns) gets a short text."""
    main = lambda r: _claude_loop(r) and prompt in _first_user_text(r)  # noqa: E731
    if subagent_prompt:
        sub = lambda r: _claude_loop(r) and subagent_prompt in _first_user_text(r)  # noqa: E731
        main_only = main
        main = lambda r: main_only(r) and not sub(r)  # noqa: E731
        sub_call = json.dumps({"command": subagent_command, "description": "Run the sub-agent's command"})
        model.route(
            lambda r: sub(r) and not _claude_results(r),
            Stream(anthropic_stream(["On it."], [("toolu_sub1", "Bash", [sub_call[:9], sub_call[9:]])])),
        )
        model.route(
            lambda r: sub(r) and "toolu_sub1" in _claude_results(r), Stream(anthropic_stream(["Sub done."]))
        )
        agent = json.dumps(
            {"description": "Run a command", "prompt": subagent_prompt, "subagent_type": "general-purpose"}
        )
        model.route(
            lambda r: main(r) and not _claude_results(r),
            Stream(anthropic_stream(["Delegating."], [("toolu_agent1", "Agent", [agent[:7], agent[7:]])])),
        )
        model.route(
            lambda r: main(r) and "toolu_agent1" in _claude_results(r),
            Stream(anthropic_stream(["Delegated."])),
        )
    else:
        call = json.dumps({"command": command, "description": "Run the command"})
        model.route(
            lambda r: main(r) and not _claude_results(r),
            Stream(anthropic_stream(["I will run it."], [("toolu_main1", "Bash", [call[:9], call[9:]])])),
        )
        model.route(
            lambda r: main(r) and "toolu_main1" in _claude_results(r), Stream(anthropic_stream(["Done."]))
        )
    model.route(_count_tokens, *[Body({"input_tokens": 42}) for _ in range(200)])
    model.route(lambda r: True, *[Stream(anthropic_stream(["Noted."])) for _ in range(200)])


def claude_tool_results(model: FakeModelServer, tool_use_id: str) -> list[Any]:
    """What the CLI sent the model as the result of call `tool_use_id` (each time it did)."""
    found = []
    for recorded in list(model.requests):
        users = [m for m in _claude_messages(recorded) if m.get("role") == "user"]
        content = users[-1].get("content") if users else None
        for block in content if isinstance(content, list) else []:
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_result"
                and block.get("tool_use_id") == tool_use_id
            ):
                found.append(block.get("content"))
    return found


def _codex_loop(recorded: Recorded) -> bool:
    body = recorded.body if isinstance(recorded.body, dict) else {}
    return recorded.path.endswith("/responses") and bool(body.get("tools"))


def codex_script(
    model: FakeModelServer,
    prompt: str,
    command: str,
    *,
    subagent_prompt: str | None = None,
    subagent_command: str = "",
) -> None:
    """The turn started by `prompt` calls `exec_command` with `command` as a command to run
    outside the sandbox (`require_escalated`: the call Codex asks about), id `call_main1`, then
    says "Done." With `subagent_prompt` it first spawns a sub-agent (`spawn_agent`, id
    `call_spawn1`) whose loop runs `subagent_command` the same way (id `call_sub1`)."""
    sub = lambda r: subagent_prompt is not None and any(subagent_prompt in t for t in user_texts(r))  # noqa: E731
    main = lambda r: _codex_loop(r) and any(prompt in t for t in user_texts(r)) and not sub(r)  # noqa: E731

    def escalated(call_id: str, cmd: str) -> Stream:
        arguments = json.dumps(
            {"cmd": cmd, "sandbox_permissions": "require_escalated", "justification": "Run the command?"}
        )
        return Stream(responses_stream([], [(call_id, "exec_command", [arguments[:10], arguments[10:]])]))

    if subagent_prompt:
        model.route(
            lambda r: _codex_loop(r) and sub(r) and not function_outputs(r),
            escalated("call_sub1", subagent_command),
        )
        model.route(
            lambda r: sub(r) and "call_sub1" in function_outputs(r), Stream(responses_stream(["Sub done."]))
        )
        spawn = json.dumps({"message": subagent_prompt})
        frames = responses_stream([], [("call_spawn1", "spawn_agent", [spawn[:5], spawn[5:]])])
        named = b'"name": "spawn_agent", "namespace": "multi_agent_v1"'
        frames = [frame.replace(b'"name": "spawn_agent"', named) for frame in frames]
        model.route(lambda r: main(r) and not function_outputs(r), Stream(frames))
        model.route(
            lambda r: main(r) and "call_spawn1" in function_outputs(r),
            Stream(responses_stream(["Delegated."])),
        )
    else:
        model.route(lambda r: main(r) and not function_outputs(r), escalated("call_main1", command))
        model.route(answers_call("call_main1"), Stream(responses_stream(["Done."])))
    model.route(lambda r: True, *[Stream(responses_stream(["Noted."])) for _ in range(50)])


def codex_tool_outputs(model: FakeModelServer, call_id: str) -> list[str]:
    return [function_outputs(r)[call_id] for r in list(model.requests) if call_id in function_outputs(r)]


@dataclass
class Session:
    """A CLI home, its model and its tmux, for one test."""

    home: CliHome
    model: FakeModelServer
    tmux: Tmux

    @property
    def hook(self) -> RecordingHook:
        return self.home.hook

    def script(self, prompt: str, command: str, **subagent: Any) -> None:
        (claude_script if self.home.cli == "claude-code" else codex_script)(
            self.model, prompt, command, **subagent
        )

    def open_tui(self) -> None:
        """Start the CLI's TUI and bring it to its composer (trusting Codex's hooks on the way)."""
        self.home.start(self.tmux)
        if self.home.cli == "codex":
            accept_hook_trust(self.tmux)
        wait_ready(self.tmux, self.home.cli)


@pytest.fixture
def cli_session(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Session]]:
    """`cli_session(cli, daemon=False)`: a fresh home for `cli` with a fake model and tmux of its own."""
    opened: list[Session] = []
    servers: list[FakeModelServer] = []

    def open_session(cli: str, *, daemon: bool = False) -> Session:
        model = FakeModelServer().__enter__()
        servers.append(model)
        root = tmp_path / f"{cli}-{len(opened)}"
        home = claude_home(root, model) if cli == "claude-code" else codex_home(root, model, daemon=daemon)
        session = Session(home, model, Tmux())
        opened.append(session)
        return session

    yield open_session
    for session in opened:
        session.hook.release_all()
        session.tmux.close()
        if session.home.cli == "codex":
            stop_codex_daemon(session.home)
            # The service runs from a copy of Codex (some 400 MB) it puts in CODEX_HOME.
            shutil.rmtree(session.home.config_dir / "packages", ignore_errors=True)
    for server in servers:
        server.__exit__(None, None, None)
