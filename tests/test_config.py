"""Model settings: profiles in a real TOML file, the environment, flags; `agent-tui models`; no key leaks."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_model_server import (
    FakeModelServer,
    Status,
    Stream,
    anthropic_error,
    anthropic_stream,
    openai_error,
    openai_stream,
)
from support_providers import FAKE_KEY, agent_tui, clean_env, project
from test_workbench_cli import Terminal, _all_turn_ends

from agent_tui.providers.config import (
    ConfigError,
    ModelSettings,
    load_config,
    resolve_settings,
)
from agent_tui.providers.factory import build_provider
from agent_tui.providers.windows import DEFAULT_CONTEXT_WINDOW
from agent_tui.runtime.session_dirs import default_sessions_dir
from agent_tui.store import JsonlEventLog

CONFIG = """\
default_profile = "local"

[profiles.local]
provider = "openai"
model = "qwen2.5-coder:14b"
base_url = "http://localhost:11434/v1"
api_key_env = "LOCAL_LLM_KEY"
context_window = 32768
max_output_tokens = 4096
temperature = 0.2

[profiles.claude]
provider = "anthropic"
model = "claude-sonnet-4-5"
api_key_env = "MY_ANTHROPIC_KEY"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(textwrap.dedent(text))
    return path


def settings(tmp_path: Path, text: str = CONFIG, **kwargs: object) -> ModelSettings | None:
    return resolve_settings(load_config(write(tmp_path, text)), **kwargs)  # type: ignore[arg-type]


class TestPrecedence:
    def test_the_default_profile_gives_every_setting_with_its_file_and_line(self, tmp_path: Path) -> None:
        got = settings(tmp_path, env={})
        assert got is not None
        path = tmp_path / "config.toml"
        assert (got.provider, got.model, got.base_url) == (
            "openai",
            "qwen2.5-coder:14b",
            "http://localhost:11434/v1",
        )
        assert (got.api_key_env, got.context_window, got.max_output_tokens, got.temperature) == (
            "LOCAL_LLM_KEY",
            32768,
            4096,
            0.2,
        )
        assert got.profile == "local"
        assert got.sources["model"] == f"profile local ({path}:5)"
        assert got.sources["temperature"] == f"profile local ({path}:10)"
        assert got.sources["profile"] == f"default_profile ({path}:1)"

    def test_flags_beat_the_environment_which_beats_the_profile(self, tmp_path: Path) -> None:
        env = {
            "AGENT_TUI_MODEL": "from-env",
            "AGENT_TUI_BASE_URL": "http://env:1/v1",
            "AGENT_TUI_TEMPERATURE": "1",
        }
        got = settings(tmp_path, model="from-flag", env=env)
        assert got is not None
        assert (got.model, got.sources["model"]) == ("from-flag", "--model")
        assert (got.base_url, got.sources["base_url"]) == ("http://env:1/v1", "env AGENT_TUI_BASE_URL")
        assert (got.temperature, got.sources["temperature"]) == (1.0, "env AGENT_TUI_TEMPERATURE")
        assert got.sources["context_window"].startswith("profile local")

    def test_the_profile_flag_beats_the_profile_variable_which_beats_default_profile(
        self, tmp_path: Path
    ) -> None:
        got = settings(tmp_path, env={"AGENT_TUI_PROFILE": "claude"})
        assert got is not None and got.profile == "claude"
        assert got.sources["profile"] == "env AGENT_TUI_PROFILE"
        got = settings(tmp_path, profile="local", env={"AGENT_TUI_PROFILE": "claude"})
        assert got is not None and (got.profile, got.sources["profile"]) == ("local", "--profile")

    def test_built_in_defaults_fill_what_nothing_else_sets(self, tmp_path: Path) -> None:
        got = settings(tmp_path, profile="claude", env={})
        assert got is not None
        assert (got.base_url, got.sources["base_url"]) == ("https://api.anthropic.com", "default")
        assert got.context_window == 200_000 and got.sources["context_window"] == "built-in table (claude*)"
        assert got.max_output_tokens == 8192
        assert got.temperature is None
        unknown = resolve_settings(
            load_config(tmp_path / "none.toml"), provider="openai", model="my-local", env={}
        )
        assert unknown is not None and unknown.context_window == DEFAULT_CONTEXT_WINDOW

    def test_nothing_configured_means_no_settings_and_the_demo(self, tmp_path: Path) -> None:
        assert resolve_settings(load_config(tmp_path / "missing.toml"), env={}) is None

    def test_a_model_alone_is_enough_and_names_its_provider(self, tmp_path: Path) -> None:
        got = resolve_settings(
            load_config(tmp_path / "missing.toml"), env={"AGENT_TUI_MODEL": "claude-opus-4-1"}
        )
        assert got is not None and got.provider == "anthropic"
        assert got.sources["provider"] == "inferred from the model name"

    def test_the_vendors_own_base_url_variable_counts_only_below_the_profile(self, tmp_path: Path) -> None:
        env = {"OPENAI_BASE_URL": "http://gateway:8080/v1"}
        local = settings(tmp_path, env=env)
        assert local is not None and local.base_url == "http://localhost:11434/v1"
        plain = resolve_settings(load_config(tmp_path / "none.toml"), provider="openai", env=env)
        assert plain is not None and plain.sources["base_url"] == "env OPENAI_BASE_URL"

    def test_another_provider_on_the_command_line_sets_the_default_profile_aside(
        self, tmp_path: Path
    ) -> None:
        got = settings(tmp_path, provider="anthropic", model="claude-3-haiku-20240307", env={})
        assert got is not None and got.profile is None
        assert got.base_url == "https://api.anthropic.com" and got.max_output_tokens == 4096

    def test_an_explicit_profile_for_another_provider_is_an_error(self, tmp_path: Path) -> None:
        with pytest.raises(
            ConfigError, match="profile 'local' is for openai, but the provider asked for is anthropic"
        ):
            settings(tmp_path, profile="local", provider="anthropic", env={})

    def test_the_prompt_budget_leaves_room_for_the_answer(self, tmp_path: Path) -> None:
        got = settings(tmp_path, env={})
        assert got is not None and got.prompt_budget == 32768 - 4096


class TestTheReadmeExample:
    def test_the_config_in_the_readme_loads_and_resolves(self, tmp_path: Path) -> None:
        readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
        section = readme[readme.index("## Real models") :]
        example = section[section.index("```toml\n") + 8 : section.index("```\n", section.index("```toml"))]
        config = load_config(write(tmp_path, example))
        assert sorted(config.profiles) == ["claude", "local", "router"]
        router = resolve_settings(config, profile="router", env={})
        assert router is not None and router.api_key_env == "OPENROUTER_API_KEY"
        local = resolve_settings(config, env={})
        assert local is not None and local.profile == "local" and local.api_key_env is None
        bad = example.replace("context_window = 131072", "context_window = 'big'")
        with pytest.raises(
            ConfigError, match=r":8: profiles.router.context_window: expected a positive whole"
        ):
            load_config(write(tmp_path, bad))


class TestErrors:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("[profiles.a]\nprovider = \n", r":2: Invalid value \(column 12\)"),
            (
                '[profiles.a]\nprovider = "gemini"\n',
                ":2: profiles.a.provider: expected one of openai, anthropic, got 'gemini'",
            ),
            (
                "[profiles.a]\ncontext_window = -5\n",
                ":2: profiles.a.context_window: expected a positive whole number",
            ),
            (
                "[profiles.a]\nmodel = 'm'\ntemperature = 7\n",
                ":3: profiles.a.temperature: expected a number from 0 to 2",
            ),
            (
                "[profiles.a]\nmodel = 'm'\nbase_url = 'localhost:1234'\n",
                ":3: profiles.a.base_url: expected an http",
            ),
            ("[profiles.a]\n\nmodle = 'x'\n", ":3: profiles.a.modle: unknown setting"),
            (
                'default_profile = "nope"\n[profiles.a]\nmodel = "m"\n',
                ":1: default_profile 'nope': no such profile",
            ),
            (
                'default-profile = "a"\n',
                r":1: unknown setting 'default-profile' \(known at the top: default_profile, profiles, acp, shell_env, sandbox, notify_command, bus, prices, budget, mcp, hooks\)$",
            ),
            (
                '[profiles.a]\nmodel = "m"\n\n[profile.b]\nmodel = "m"\n',
                r":4: unknown table 'profile' \(known at the top: default_profile, profiles, acp, shell_env, sandbox, notify_command, bus, prices, budget, mcp, hooks\)$",
            ),
            ("profiles = 3\n", ":1: profiles must be a table"),
            (
                "[profiles]\nlocal = { provider = 'openai', context_window = 'big' }\n",
                ":2: profiles.local.context_window",
            ),
        ],
    )
    def test_a_bad_file_names_its_path_and_line(self, tmp_path: Path, text: str, expected: str) -> None:
        path = write(tmp_path, text)
        with pytest.raises(ConfigError) as caught:
            load_config(path)
        message = str(caught.value)
        assert message.startswith(f"{path}:")
        assert "\n" not in message
        assert re.search(expected, message), message

    def test_a_key_in_the_file_is_refused_without_repeating_it(self, tmp_path: Path) -> None:
        path = write(tmp_path, f'[profiles.a]\nmodel = "m"\napi_key = "{FAKE_KEY}"\n')
        with pytest.raises(ConfigError) as caught:
            load_config(path)
        assert f"{path}:3: profiles.a.api_key: keys are not read from the config file" in str(caught.value)
        assert FAKE_KEY not in str(caught.value)

    def test_a_key_put_where_its_variables_name_belongs_is_not_repeated(self, tmp_path: Path) -> None:
        path = write(tmp_path, f'[profiles.a]\napi_key_env = "{FAKE_KEY}"\n')
        with pytest.raises(ConfigError) as caught:
            load_config(path)
        assert ":2: profiles.a.api_key_env: expected the NAME of an environment variable" in str(caught.value)
        assert FAKE_KEY not in str(caught.value)

    def test_bad_environment_values_name_the_variable(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError, match=r"^AGENT_TUI_CONTEXT_WINDOW: expected a positive whole number"):
            settings(tmp_path, env={"AGENT_TUI_CONTEXT_WINDOW": "lots"})
        with pytest.raises(ConfigError, match=r"^AGENT_TUI_PROVIDER: expected one of openai, anthropic"):
            settings(tmp_path, env={"AGENT_TUI_PROVIDER": "gemini"})

    def test_a_missing_profile_lists_the_ones_there_are(self, tmp_path: Path) -> None:
        with pytest.raises(
            ConfigError, match=r"^--profile: 'work': no such profile \(profiles: claude, local\)"
        ):
            settings(tmp_path, profile="work", env={})

    def test_the_vendors_endpoint_without_a_key_is_refused_naming_the_variable(self, tmp_path: Path) -> None:
        got = settings(tmp_path, profile="claude", env={})
        assert got is not None
        with pytest.raises(ConfigError, match=r"^MY_ANTHROPIC_KEY is not set"):
            build_provider(got, {})

    def test_a_named_key_variable_that_is_empty_is_refused(self, tmp_path: Path) -> None:
        got = settings(tmp_path, env={})  # the local profile names LOCAL_LLM_KEY
        assert got is not None and got.key_state({}) == "missing"
        with pytest.raises(ConfigError, match=r"^LOCAL_LLM_KEY is not set: openai at http://localhost"):
            build_provider(got, {})

    def test_a_custom_endpoint_gets_no_key_unless_one_is_named(self, tmp_path: Path) -> None:
        env = {"OPENAI_API_KEY": FAKE_KEY}
        text = "[profiles.x]\nbase_url = 'http://localhost:8000/v1'\n"
        got = settings(tmp_path, text, profile="x", env=env)
        assert got is not None and got.api_key_env is None and got.key_state(env) == "none"
        assert build_provider(got, env).max_context_tokens == got.prompt_budget
        named = settings(tmp_path, text, profile="x", env={**env, "AGENT_TUI_API_KEY_ENV": "OPENAI_API_KEY"})
        assert named is not None and named.api_key_env == "OPENAI_API_KEY"
        # The vendor's own base-URL variable pairs with the vendor's own key variable.
        paired = resolve_settings(
            load_config(tmp_path / "none.toml"), provider="openai", env={"OPENAI_BASE_URL": "http://gw:1/v1"}
        )
        assert paired is not None and paired.api_key_env == "OPENAI_API_KEY"


class TestModelsCommand:
    def test_lists_profiles_sources_and_only_whether_keys_are_set(self, tmp_path: Path) -> None:
        path = write(tmp_path, CONFIG)
        env = clean_env(AGENT_TUI_CONFIG=str(path), MY_ANTHROPIC_KEY=FAKE_KEY, AGENT_TUI_MODEL="qwen3-coder")
        done = agent_tui("models", env=env)
        assert done.returncode == 0, done.stderr
        out = done.stdout
        assert f"config file: {path} (2 profiles; default_profile: local)" in out
        assert "profile claude:" in out and "profile local (default):" in out
        assert "MY_ANTHROPIC_KEY: set" in out
        assert re.search(r"LOCAL_LLM_KEY: missing +needed: set it to use this model", out)
        assert "qwen3-coder" in out and "env AGENT_TUI_MODEL" in out
        assert f"profile local ({path}:6)" in out  # base_url's line
        assert FAKE_KEY not in out + done.stderr

    def test_without_any_configuration_it_says_how_to_configure(self, tmp_path: Path) -> None:
        done = agent_tui("models", env=clean_env(AGENT_TUI_CONFIG=str(tmp_path / "none.toml")))
        assert done.returncode == 0
        assert "nothing is configured, so the dashboard runs the demo" in done.stdout
        assert "--provider openai|anthropic --model NAME" in done.stdout

    def test_a_broken_file_is_one_line_on_stderr(self, tmp_path: Path) -> None:
        path = write(tmp_path, "[profiles.a]\ncontext_window = 'x'\n")
        done = agent_tui("models", env=clean_env(AGENT_TUI_CONFIG=str(path)))
        assert done.returncode == 2
        assert (
            done.stderr
            == f"agent-tui: {path}:2: profiles.a.context_window: expected a positive whole number of tokens, got 'x'\n"
        )

    def test_a_file_that_is_not_toml_reads_the_same_from_every_command(self, tmp_path: Path) -> None:
        path = write(tmp_path, "[profiles.a]\nmodel = \n")
        env = clean_env(AGENT_TUI_CONFIG=str(path))
        expected = f"agent-tui: {path}:2: Invalid value (column 9)\n"
        models = agent_tui("models", env=env)
        dashboard = agent_tui("--cwd", str(tmp_path), env=env)  # fails before the UI would open
        run = agent_tui(
            "run", "--prompt", "hi", "--cwd", str(tmp_path), "--sessions-dir", str(tmp_path / "s"), env=env
        )
        assert [models.stderr, dashboard.stderr, run.stderr] == [expected] * 3
        assert [models.returncode, dashboard.returncode, run.returncode] == [2, 2, 2]


def env_with_data_home(tmp_path: Path) -> dict[str, str]:
    """No config file, the fake key, and the platform data directory under `tmp_path / "data"`."""
    return clean_env(
        AGENT_TUI_CONFIG=str(tmp_path / "none.toml"),
        OPENAI_API_KEY=FAKE_KEY,
        XDG_DATA_HOME=str(tmp_path / "data"),
    )


class TestRunWithARealModel:
    def test_run_prompt_works_in_the_real_directory_and_prints_its_events(self, tmp_path: Path) -> None:
        cwd = project(tmp_path)
        with FakeModelServer() as server:
            server.script(
                Stream(
                    openai_stream(
                        [], [("call_w1", "write_file", ['{"path": "NOTES.md", "content": "hi\\n"}'])]
                    )
                ),
                Stream(openai_stream(["Wrote NOTES.md."])),
            )
            env = clean_env(AGENT_TUI_CONFIG=str(tmp_path / "none.toml"))
            done = agent_tui(
                "run",
                "--prompt",
                "Write a note",
                "--cwd",
                str(cwd),
                "--sessions-dir",
                str(tmp_path / "s"),
                "--provider",
                "openai",
                "--model",
                "gpt-test",
                "--base-url",
                server.openai_url,
                "--approve",
                "allow",
                env=env,
            )
        assert done.returncode == 0, done.stdout + done.stderr
        assert (cwd / "NOTES.md").read_text() == "hi\n"  # the real directory, not a copy
        assert "wants write_file" in done.stdout and "turn ended: final" in done.stdout
        assert "\n1 session, " in done.stdout  # one, not "1 sessions"
        # The flag answered, not a person: the log says so (the dashboard shows "by --approve").
        assert "permission allow by user (--approve allow)" in done.stdout
        (log,) = (tmp_path / "s").glob("*.jsonl")
        answers = [
            event.payload
            for event in JsonlEventLog(log).replay("strict")
            if event.type == "permission.resolved" and event.payload["decision"] != "ask"
        ]
        assert [(a["actor"], a.get("reason")) for a in answers] == [("user", "--approve allow")]

    def test_without_a_sessions_dir_the_run_is_kept_with_the_projects_sessions(self, tmp_path: Path) -> None:
        # Where the dashboard on that project (and `agent-tui sessions`) looks for its sessions,
        # so a headless run can be continued there.
        cwd = project(tmp_path)
        env = env_with_data_home(tmp_path)
        with FakeModelServer() as server:
            server.script(Stream(openai_stream(["Nothing to do."])))
            model = ["--provider", "openai", "--model", "m", "--base-url", server.openai_url]
            done = agent_tui("run", "--prompt", "Look around", "--cwd", str(cwd), *model, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        sessions = default_sessions_dir(cwd, tmp_path / "data" / "agent-tui")
        assert f"logs in {sessions}" in done.stdout
        assert len(list(sessions.glob("*.jsonl"))) == 1
        listing = agent_tui("sessions", "--cwd", str(cwd), env=env)
        assert listing.returncode == 0 and listing.stdout.startswith("1 session in ")
        assert "'Look around'" in listing.stdout

    def test_a_missing_cwd_creates_no_sessions_dir(self, tmp_path: Path) -> None:
        env = env_with_data_home(tmp_path)
        model = ["--provider", "openai", "--model", "m"]
        done = agent_tui("run", "--prompt", "hi", "--cwd", str(tmp_path / "nowhere"), *model, env=env)
        assert done.returncode == 2
        assert done.stderr == f"agent-tui: {tmp_path / 'nowhere'}: no such directory\n"
        assert not (tmp_path / "data").exists()

    def test_ctrl_c_cancels_the_turn_closes_its_log_and_exits_130(self, tmp_path: Path) -> None:
        cwd = project(tmp_path)
        sessions = tmp_path / "s"
        with FakeModelServer() as server:
            server.script(Stream(openai_stream(["thinking ", "slowly"]), hold_after=2))
            env = clean_env(AGENT_TUI_CONFIG=str(tmp_path / "none.toml"), OPENAI_API_KEY=FAKE_KEY)
            command = [sys.executable, "-m", "agent_tui", "run", "--prompt", "go", "--cwd", str(cwd)]
            command += ["--sessions-dir", str(sessions), "--provider", "openai", "--model", "m"]
            command += ["--base-url", server.openai_url]
            process = subprocess.Popen(
                command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            try:
                assert server.holding.wait(timeout=60), "the model call never started"
                process.send_signal(signal.SIGINT)
                out, err = process.communicate(timeout=60)
            finally:
                process.kill()
            assert server.disconnected.wait(timeout=5)
        assert process.returncode == 130, out + err
        assert "turn ended: cancelled" in out and "Traceback" not in err
        (log,) = sessions.glob("*.jsonl")
        last = json.loads(log.read_text().splitlines()[-1])
        assert (last["type"], last["payload"]["stopReason"]) == ("turn.completed", "cancelled")

    def test_bad_usage_is_one_line_and_status_2(self, tmp_path: Path) -> None:
        env = clean_env(AGENT_TUI_CONFIG=str(tmp_path / "none.toml"))
        sessions = str(tmp_path / "s")
        cases = [
            (["run", "--prompt", "x", "--sessions-dir", sessions], "needs both --prompt TEXT and --cwd DIR"),
            (
                ["run", "--prompt", "x", "--cwd", str(tmp_path / "nope"), "--sessions-dir", sessions],
                "no such directory",
            ),
            (
                ["run", "--prompt", "x", "--cwd", str(tmp_path), "--sessions-dir", sessions],
                "To use a real model",
            ),
            (["run", "--sessions-dir", sessions], "run needs a SCENARIO.json"),
            (
                [
                    "run",
                    "--prompt",
                    "x",
                    "--cwd",
                    str(tmp_path),
                    "--sessions-dir",
                    sessions,
                    "--provider",
                    "openai",
                ],
                "OPENAI_API_KEY is not set",
            ),
        ]
        for args, expected in cases:
            done = agent_tui(*args, env=env)
            assert done.returncode == 2, (args, done.stderr)
            assert expected in done.stderr and done.stderr.count("\n") == 1, done.stderr
            assert "Traceback" not in done.stderr


class TestKeysNeverLeak:
    @pytest.mark.parametrize("vendor", ["openai", "anthropic"])
    def test_no_log_event_stdout_or_stderr_holds_the_key(self, tmp_path: Path, vendor: str) -> None:
        cwd = project(tmp_path)
        sessions = tmp_path / "sessions"
        variable = "OPENAI_API_KEY" if vendor == "openai" else "ANTHROPIC_API_KEY"
        # A custom endpoint gets a key only when its variable is named.
        env = clean_env(
            AGENT_TUI_CONFIG=str(tmp_path / "none.toml"),
            AGENT_TUI_API_KEY_ENV=variable,
            **{variable: FAKE_KEY},
        )
        echo = f"key {FAKE_KEY} was refused"  # servers do quote keys back in their messages
        stream: Callable[[list[str]], list[bytes]]
        if vendor == "openai":
            error, stream = openai_error(429, echo), openai_stream
        else:
            error, stream = anthropic_error(echo, "rate_limit_error"), anthropic_stream
        outputs: list[str] = []
        with FakeModelServer() as server:
            url = server.openai_url if vendor == "openai" else server.anthropic_url
            server.script(
                Status(429, error, {"retry-after": "0"}),
                Stream(stream([f"Checking {FAKE_KEY[:6]}"], [("call_1", "list_dir", ['{"path": "."}'])])),
                Stream(stream(["Done."])),
                Status(401, error),
            )
            for _ in range(2):  # a turn that retries and works, then one that fails with a 401
                done = agent_tui(
                    "run",
                    "--prompt",
                    "look",
                    "--cwd",
                    str(cwd),
                    "--sessions-dir",
                    str(sessions),
                    "--provider",
                    vendor,
                    "--model",
                    "test-model",
                    "--base-url",
                    url,
                    env=env,
                )
                outputs += [done.stdout, done.stderr]
            sent = [
                r.headers.get("authorization", "") + r.headers.get("x-api-key", "") for r in server.requests
            ]
        assert all(FAKE_KEY in header for header in sent)  # the key was really in play
        assert "provider_failure" in outputs[2]  # the second run failed, and said so
        logs = [path.read_text() for path in sessions.rglob("*") if path.is_file()]
        assert len(logs) == 2 and all(log.strip() for log in logs)
        for text in outputs + logs:
            assert FAKE_KEY not in text


OPEN_COUNTER = """\
import os, sys
_token = os.urandom(8).hex()  # one per interpreter: a restart (execve) keeps the pid
_watched = os.environ["WATCHED_CONFIG"]
def _hook(event, args):
    if event == "open" and args and str(args[0]) == _watched:
        with open(os.environ["OPENS_LOG"], "a") as log:
            log.write(_token + "\\n")
sys.addaudithook(_hook)
"""


ONE_OF_EACH = """\
default_profile = "fake"
[profiles.fake]
provider = "openai"
model = "gpt-test"
base_url = "http://127.0.0.1:1/v1"
[shell_env]
include = ["LANG"]
[prices."gpt-test"]
input = 1.0
output = 2.0
[mcp.off]
command = "true"
enabled = false
"""
"""A profile, prices and an MCP server: each a reader of the file once."""


def counting_opens(tmp_path: Path, config: Path, **extra: str) -> tuple[dict[str, str], Path]:
    """The environment of an agent-tui whose every interpreter writes a line to the returned
    file each time it opens `config` (an audit hook in `sitecustomize`)."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(OPEN_COUNTER)
    opens = tmp_path / "opens"
    env = clean_env(
        AGENT_TUI_CONFIG=str(config),
        WATCHED_CONFIG=str(config),
        OPENS_LOG=str(opens),
        PYTHONPATH=str(hooks),
        XDG_DATA_HOME=str(tmp_path / "data"),
        **extra,
    )
    return env, opens


def assert_read_once(opens: Path) -> None:
    readings = opens.read_text().split()
    assert readings and all(readings.count(token) == 1 for token in readings), readings


class TestTheConfigFileIsReadOncePerProcess:
    def test_a_turn_with_profile_prices_and_mcp_tables_opens_the_config_file_once(
        self, tmp_path: Path
    ) -> None:
        # The entry (keys to hide), the shell settings, the model settings, the prices and the
        # MCP servers all come from one reading, handed down.
        config = write(tmp_path, ONE_OF_EACH)
        with FakeModelServer() as server:
            server.script(Stream(openai_stream(["Done."])))
            env, opens = counting_opens(tmp_path, config, AGENT_TUI_BASE_URL=server.openai_url)
            done = agent_tui(
                "run", "--prompt", "hi", "--cwd", str(project(tmp_path)), "--sessions-dir", str(tmp_path / "s"),
                env=env,
            )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "turn ended: final" in done.stdout
        assert_read_once(opens)

    def test_a_project_dashboard_with_an_acp_agent_opens_the_config_file_once(self, tmp_path: Path) -> None:
        # Besides the turn's readers: the dashboard's ACP agents, the workbench's prices and MCP
        # servers, and the servers the ACP agents are handed when they are served.
        config = write(tmp_path, ONE_OF_EACH + '[acp.idle]\ncommand = "true"\n')
        with FakeModelServer() as server:
            server.script(Stream(openai_stream(["Done."])))
            env, opens = counting_opens(
                tmp_path, config, AGENT_TUI_BASE_URL=server.openai_url, TERM="xterm-256color"
            )
            terminal = Terminal(["--cwd", str(project(tmp_path)), "--prompt", "hi"], env)
            try:
                logs = tmp_path / "data" / "agent-tui" / "projects"
                terminal.wait_until(
                    lambda: (1, ["final"]) in _all_turn_ends(logs).values(), "the turn to end"
                )
                os.kill(terminal.pid, signal.SIGTERM)
                terminal.wait_until(terminal.exited, "agent-tui to exit", seconds=30)
            finally:
                terminal.close()
        assert terminal.status == 128 + signal.SIGTERM
        assert_read_once(opens)

    @pytest.mark.parametrize("command", ["attach", "web"])
    def test_attach_and_web_open_the_config_file_once(self, tmp_path: Path, command: str) -> None:
        # The entry, then the bus settings and the target of the dashboard (a server that is
        # not there: the command ends at once, having read all it reads).
        config = write(tmp_path, '[bus]\nurl = "nats://127.0.0.1:1"\n')
        env, opens = counting_opens(tmp_path, config)
        done = agent_tui(command, env=env)
        assert (done.returncode, done.stderr) == (
            2,
            "agent-tui: no bus at nats://127.0.0.1:1: nothing answers there\n",
        )
        assert_read_once(opens)

    def test_the_acp_server_opens_the_config_file_once(self, tmp_path: Path) -> None:
        # The entry, then the server's MCP servers (its client leaves at once: it ends).
        config = write(tmp_path, ONE_OF_EACH)
        scenario = tmp_path / "scenario.json"
        scenario.write_text(json.dumps({"sessions": [{"prompt": "x", "steps": [{"text": ["hi"]}]}]}))
        env, opens = counting_opens(tmp_path, config)
        command = [
            sys.executable,
            "-m",
            "agent_tui",
            "acp",
            "--scenario",
            str(scenario),
            "--sessions-dir",
            str(tmp_path / "s"),
        ]
        done = subprocess.run(
            command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert_read_once(opens)
