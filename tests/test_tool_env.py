"""What a shell command's environment holds: no keys, the names passed on purpose, a hardened git;
and where the config file and `agent-tui models` say how commands run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support_providers import clean_env

from agent_tui.engine import vault
from agent_tui.engine.tools.base import ToolContext
from agent_tui.engine.tools.shell_setup import ShellSetup, current_shell_setup, use_shell_setup
from agent_tui.engine.tools.shell_tool import ShellTool
from agent_tui.engine.tools.tool_env import shell_environment
from agent_tui.providers.config import ConfigError, load_config
from agent_tui.runtime.shell_settings import shell_setup_for


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


USER_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/me",
    "OPENAI_API_KEY": "sk-1",
    "anthropic_api_key": "sk-2",
    "GH_TOKEN": "t",
    "PGPASSWORD": "p",
    "AWS_SECRET_ACCESS_KEY": "s",
    "GOOGLE_APPLICATION_CREDENTIALS": "/c.json",
    "MyApiKey": "k",
    "LLM_AUTH": "l",
    "GIT_ASKPASS": "/usr/bin/askpass",
    "SSH_ASKPASS": "/usr/bin/ssh-askpass",
    "AGENT_TUI_SECRETS_FD": "7",
    "LANG": "C.UTF-8",
}


def test_secret_looking_names_and_hidden_keys_are_left_out() -> None:
    env = shell_environment(ShellSetup(hidden=frozenset({"LLM_AUTH"})), USER_ENV)
    assert {name for name in USER_ENV if name in env} == {"PATH", "HOME", "LANG"}


def test_included_names_pass_even_when_held_in_the_vault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(vault._held, "HELD_TOKEN", "from-the-vault")
    setup = ShellSetup(
        include=frozenset({"GH_TOKEN", "HELD_TOKEN", "LLM_AUTH"}), hidden=frozenset({"LLM_AUTH"})
    )
    env = shell_environment(setup, USER_ENV)
    assert (env["GH_TOKEN"], env["HELD_TOKEN"], env["LLM_AUTH"]) == ("t", "from-the-vault", "l")
    assert "OPENAI_API_KEY" not in env
    # A name held in the vault but not included is kept out, even if it is in the environment.
    monkeypatch.setitem(vault._held, "SOMETHING", "x")
    assert "SOMETHING" not in shell_environment(ShellSetup(), {**USER_ENV, "SOMETHING": "x"})


def test_git_is_hardened_after_the_users_own_config_settings() -> None:
    user = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "user.name",
        "GIT_CONFIG_VALUE_0": "Me",
        "PAGER": "less",
    }
    env = shell_environment(ShellSetup(), user)
    assert env["GIT_CONFIG_COUNT"] == "4"
    pairs = [(env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"]) for n in range(4)]
    assert pairs == [
        ("user.name", "Me"),
        ("core.fsmonitor", "false"),
        ("core.pager", "cat"),
        ("safe.bareRepository", "explicit"),
    ]
    assert (env["GIT_OPTIONAL_LOCKS"], env["GIT_PAGER"], env["PAGER"], env["GIT_TERMINAL_PROMPT"]) == (
        "0",
        "cat",
        "cat",
        "0",
    )
    broken = shell_environment(ShellSetup(), {"GIT_CONFIG_COUNT": "two", "GIT_CONFIG_KEY_5": "x"})
    assert broken["GIT_CONFIG_COUNT"] == "3" and "GIT_CONFIG_KEY_5" not in broken


def git(*args: str, cwd: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.mark.anyio
async def test_a_repositorys_fsmonitor_program_never_runs_and_status_leaves_the_index_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "a.txt").write_text("a\n")
    git("add", "a.txt", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one", cwd=repo)
    # A hostile repository: an fsmonitor "hook" that leaves a mark, and a stale index stat.
    marker = tmp_path / "fsmonitor-ran"
    hook = repo / "monitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    git("config", "core.fsmonitor", str(hook), cwd=repo)
    os.utime(repo / "a.txt", (1, 1))
    index_before = (repo / ".git" / "index").read_bytes()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")

    async def on_output(stream: str, text: str) -> None:
        pass

    tool = ShellTool(ShellSetup())
    ctx = ToolContext(cwd=repo, session_id="s", turn_id="t", tool_call_id="c", on_output=on_output)
    result = await tool.run(tool.Args(cmd="git status --porcelain; git config core.pager"), ctx)
    assert result.ok and result.exit_code == 0, result.text
    assert result.text == "?? monitor.sh\ncat\n"
    assert not marker.exists()
    assert (repo / ".git" / "index").read_bytes() == index_before  # no optional lock, no refresh


def test_the_setup_is_the_default_outside_a_block_and_comes_back_after() -> None:
    assert current_shell_setup() == ShellSetup()
    wanted = ShellSetup(sandbox=True)
    with use_shell_setup(wanted):
        assert current_shell_setup() is wanted
    assert current_shell_setup() == ShellSetup()


def test_the_config_file_sets_include_and_the_sandbox_and_hides_every_key_variable(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[shell_env]\ninclude = ["GH_TOKEN"]\n\n[sandbox]\nenabled = false\n\n'
        '[profiles.a]\nprovider = "openai"\napi_key_env = "LLM_AUTH"\n'
    )
    setup = shell_setup_for(load_config(path), {"AGENT_TUI_API_KEY_ENV": "OTHER_VAR"})
    assert setup == ShellSetup(
        include=frozenset({"GH_TOKEN"}), hidden=frozenset({"LLM_AUTH", "OTHER_VAR"}), sandbox=False
    )
    assert shell_setup_for(load_config(tmp_path / "none.toml"), {}).sandbox


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[shell_env]\ninclude = "GH_TOKEN"\n',
            ":2: shell_env.include: expected a list of environment variable names",
        ),
        ('[shell_env]\ninclude = ["sk-abc=1"]\n', ":2: shell_env.include: 'sk-abc=1' is not a variable name"),
        ("[shell_env]\nexclude = []\n", ":2: shell_env.exclude: unknown setting (known: include)"),
        ("shell_env = 3\n", ":1: shell_env must be a table"),
        ('\n[sandbox]\nenabled = "no"\n', ":3: sandbox.enabled: expected true or false, got 'no'"),
        ('[sandbox]\nprofile = "strict"\n', ":2: sandbox.profile: unknown setting (known: enabled)"),
    ],
)
def test_a_bad_table_names_its_file_and_line(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}{expected}")


def agent_tui(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent_tui", *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_models_says_where_commands_run(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[sandbox]\nenabled = true\n")
    on = agent_tui("models", env=clean_env(AGENT_TUI_CONFIG=str(path)))
    assert on.returncode == 0, on.stderr
    assert on.stdout.splitlines()[1].startswith("sandbox: bwrap (/")
    # A system bwrap the kernel refuses (user namespaces turned off), found before the bundled one.
    refusing = tmp_path / "bin" / "bwrap"
    refusing.parent.mkdir()
    refusing.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    refusing.chmod(0o755)
    no_bwrap = agent_tui(
        "models", env=clean_env(AGENT_TUI_CONFIG=str(path), PATH=f"{refusing.parent}:/usr/bin:/bin")
    )
    assert no_bwrap.stdout.splitlines()[1] == (
        "sandbox: not available, commands run without one: "
        f"{refusing} does not work here: bwrap: No permissions to create new namespace"
    )
    path.write_text("# mine\n[sandbox]\nenabled = false\n")
    off = agent_tui("models", env=clean_env(AGENT_TUI_CONFIG=str(path)))
    assert off.stdout.splitlines()[1] == f"sandbox: off ([sandbox] enabled = false in {path}:3)"


def test_a_broken_table_stops_the_commands_that_run_tools(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[sandbox]\nenabled = 0\n")
    scenario = tmp_path / "s.json"
    scenario.write_text('{"sessions": []}')
    done = agent_tui(
        "run",
        str(scenario),
        "--sessions-dir",
        str(tmp_path / "out"),
        env=clean_env(AGENT_TUI_CONFIG=str(path)),
    )
    assert (done.returncode, done.stderr) == (
        2,
        f"agent-tui: {path}:2: sandbox.enabled: expected true or false, got 0\n",
    )


def test_a_process_holding_keys_can_make_itself_not_dumpable() -> None:
    code = (
        "import ctypes\nfrom agent_tui.cli.entry import keep_out_debuggers\n"
        "print(keep_out_debuggers(), ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))\n"  # 3: PR_GET_DUMPABLE
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "True 0\n"


@pytest.mark.anyio
async def test_the_dashboard_says_in_its_top_line_that_commands_run_without_a_sandbox() -> None:
    from agent_tui.tui.app import AgentTuiApp
    from agent_tui.tui.widgets.summary_bar import SummaryBar

    warning = (
        "Shell commands run without a sandbox: bwrap was not found on PATH (Debian package: bubblewrap)."
    )
    app = AgentTuiApp(events=[], live=False, warning=warning)
    async with app.run_test(size=(200, 30)) as pilot:
        await pilot.pause()
        bar = app.screen_stack[0].query_one("#summary", SummaryBar)
        assert bar.notice == f"No sandbox: {warning}"
        assert [n.message for n in app.notices].count(warning) == 1


def test_main_in_process_never_restarts_or_takes_the_keys(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent_tui.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-in-process")
    pid = os.getpid()
    assert main(["schema"]) == 0  # had it restarted, this test process would be gone
    assert os.getpid() == pid and os.environ["OPENAI_API_KEY"] == "sk-test-in-process"
    assert "OPENAI_API_KEY" not in vault.held_names()
    assert capsys.readouterr().out.startswith("{")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MYSQL_PWD", "hunter2"),
        ("GITHUB_PAT", "ghp_x"),
        ("SENTRY_DSN", "https://k@o1.ingest.example/1"),
        ("PGPASS", "hunter2"),
        ("NPM_AUTH", "x"),
        ("DATABASE_URL", "postgres://app:hunter2@db.internal/app"),  # a URL with a password
    ],
)
def test_secrets_under_other_names_are_left_out_too(name: str, value: str) -> None:
    env = shell_environment(
        ShellSetup(), {name: value, "PATH": "/usr/bin", "PWD": "/w", "SSH_AUTH_SOCK": "/s"}
    )
    assert name not in env
    assert env["PATH"] == "/usr/bin" and env["PWD"] == "/w" and env["SSH_AUTH_SOCK"] == "/s"
