"""Which variables a tool never sees: secret words inside names, credentials inside values.

The tables below are the cases; the properties check the rule beyond them (any harmless name
made of everyday words passes, any name with a secret word where it counts is dropped, any URL
with credentials is dropped wherever it stands in a value). The end-to-end cases run the real
shell tool, in process and through `python -m agent_tui run`, and read what `env` printed.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support_providers import clean_env

from agent_tui.bus.config import BusSettings
from agent_tui.cli.entry import keys_to_move
from agent_tui.cli.web_command import _bus_environment
from agent_tui.engine import secret_rules, vault
from agent_tui.engine.secret_rules import (
    NAME_WORDS,
    NOT_SECRET_NAMES,
    VALUE_RULES,
    Placement,
    is_secret_name,
    redact,
    secret_in_value,
)
from agent_tui.engine.tools.base import ToolContext
from agent_tui.engine.tools.shell_setup import ShellSetup
from agent_tui.engine.tools.shell_tool import ShellTool
from agent_tui.engine.tools.tool_env import shell_environment
from agent_tui.events import Event
from agent_tui.providers.retry import Redactor
from agent_tui.store import JsonlEventLog


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


SECRET_NAMES = [
    "AUTHORIZATION",
    "HTTP_AUTHORIZATION",
    "PROXY_AUTHORIZATION",
    "COOKIE",
    "SESSION_COOKIE",
    "SLACK_WEBHOOK_URL",
    "TEAMS_WEBHOOK_URL",
    "CI_JOB_JWT",
    "CI_JOB_JWT_V2",
    "BEARER",
    "MY_BEARER",
    "OAUTH",
    "GITHUB_OAUTH",
    "SENTRY_DSN",
    "SENTRYDSN",
    "DB_PASSWD",
    "MY_PRIVATE_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AWS_CREDENTIALS",
    "DOCKER_CREDS",
    "CLIENT_SECRET",
    "MYSECRETVALUE",
    "GH_TOKEN",
    "GHTOKEN",
    "TOKEN_FILE",
    "APIKEY",
    "NUGET_APIKEY",
    "MyApiKey",
    "OPENAI_API_KEY",
    "anthropic_api_key",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "SSHKEY",
    "DEPLOYKEY",
    "PGPASSWORD",
    "PGPASS",
    "DB_PASS",
    "SMTP_PW",
    "MYSQL_PWD",
    "MYSQLPWD",
    "GITHUB_PAT",
    "NPM_AUTH",
    "BASICAUTH",
    "GPG_PASSPHRASE",
    "GPG_SIGNING_KEY",
    "WALLET_MNEMONIC",
    "TOKENIZERS_TOKEN",  # the secret word outside the harmless one
    "SECRETARY_PASSWORD",
    "COMPASS_API_KEY",
    "KEYBOARD_KEY",
    "PGP_PRIVKEY",
    "VOICEMAIL_PASSCODE",
    "AZURE_STORAGE_ACCOUNTKEY",
    "DOCKER_AUTH_CONFIG",
    "KEYSTOREPASS",
    "SNOWFLAKE_PRIVATE_KEY_PASSPHRASE",
]

ALLOW_LIST = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/home/me",
    "USER": "me",
    "SHELL": "/bin/bash",
    "LANG": "en_US.UTF-8",
    "LC_ALL": "en_US.UTF-8",
    "TERM": "xterm-256color",
    "COLORTERM": "truecolor",
    "GIT_AUTHOR_NAME": "Me Myself",
    "GIT_AUTHOR_EMAIL": "me@example.com",
    "GIT_COMMITTER_NAME": "Me Myself",
    "GIT_COMMITTER_EMAIL": "me@example.com",
    "CLAUDE_CODE_SESSION_ID": "0b6c3f5e-4f7a-4f55-9d3c-2f1f2f0a9c11",
    "XAUTHORITY": "/run/user/1000/.mutter-Xwaylandauth.ABC123",
    "DISPLAY": ":0",
    "WAYLAND_DISPLAY": "wayland-0",
    "SSH_AUTH_SOCK": "/run/user/1000/keyring/ssh",
    "TOKENIZERS_PARALLELISM": "false",
    "KEYBOARD_LAYOUT": "us",
    "MONKEY_PATCH": "1",
    "PASSENGER_APP_ENV": "production",
    "AUTHOR": "me",
    "COOKIECUTTER_CONFIG": "/home/me/.cookiecutterrc",
    "NO_PROXY": "localhost,127.0.0.1,.internal",
    "HTTPS_PROXY": "http://proxy.internal:3128",
    "SECRETARY": "none",
    "GOAUTH": "netrc",
    "XDG_SESSION_ID": "3",
    "XDG_SESSION_TYPE": "wayland",
    "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    "KEYMAP": "us",
    "COMPASS_HOME": "/opt/compass",
    "BYPASS_CACHE": "1",
    "PASSPORT_STRATEGY": "local",
    "LESSKEY": "/home/me/.less",
    "GOPRIVATE": "github.com/me/*",
    "KUBECONFIG": "/home/me/.kube/config",
    "AUTHENTIK_HOST": "https://auth.example",
    "EDITOR": "vim",
    "LS_COLORS": "rs=0:di=01;34:ln=01;36:*.tar=01;31:*.key=01;33:*.pem=01;33",
    "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus,guid=0123456789abcdef0123456789abcdef",
    "NODE_OPTIONS": "--max-old-space-size=4096",
    "PIP_INDEX_URL": "https://pypi.org/simple",
    "REPO_URL": "ssh://git@github.com/me/repo.git",
    "UPSTREAM": "git@github.com:me/repo.git",
    "CDN": "https://unpkg.com/react@18/umd/react.production.min.js",
    "PROFILE_URL": "https://mastodon.social/@someone",
    "DOCS_URL": "https://example.com/docs?page=2&lang=en&tokenizer=bert",
    "TEAM": "task-force-alpha",
    "SKLEARN_HOME": "/opt/sk-learn-extensions-for-something/bin",
    "HF_HOME": "/home/me/.cache/hf_hub",
    "STATUS": "Authorization required",
}
"""Names and values a tool must see exactly as they are (PWD and OLDPWD are checked apart: a
shell sets them itself)."""

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

SECRET_VALUES = [
    "postgres://app:hunter2@db.internal/app",
    "redis://:hunter2@cache:6379/0",
    "amqp://guest:guest@rabbit:5672/",
    "https://TOKEN1234@github.com/me/repo.git",
    "https://x-access-token:abc123@github.com/o/r.git",
    "git+https://user:pw@git.example/r.git",
    "ssh://git:pw@host/r.git",  # an ssh URL with a password is one all the same
    "jdbc:postgresql://db:5432/app?user=app&password=hunter2",
    "jdbc:mysql://app:hunter2@db/app",
    "jdbc:sqlserver://db:1433;databaseName=app;user=app;password=hunter2",
    "jdbc:oracle:thin:scott/tiger@db.example:1521/orcl",
    "https://api.example/v1/items?token=abc123",
    "https://api.example/v1/items?limit=5&access_token=abc123",
    "https://maps.example/api?key=abc123",
    "https://api.example/?api_key=abc123",
    "https://api.example/?api-key=abc123",
    "https://store.blob.core.windows.net/c/b?sv=2020&sig=abc123",
    "https://bucket.s3.amazonaws.com/o?X-Amz-Credential=AK%2F2024&X-Amz-Signature=abc123",
    "https://app.example/callback#access_token=abc123&state=x",
    "https://auth.example/token?client_secret=abc123",
    "https://legacy.example/login?user=me&pwd=abc123",
    "host=db user=app password=hunter2 dbname=app",
    "Server=db;Database=app;User Id=app;Password=hunter2;",
    "--token=abc123 --verbose",
    "-Djavax.net.ssl.trustStorePassword=changeit",
    "DefaultEndpointsProtocol=https;AccountName=me;AccountKey=abc123==;EndpointSuffix=core.windows.net",
    "Endpoint=sb://me.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abc123=",
    "https://me.blob.core.windows.net/c?SharedAccessSignature=abc123",
    "Driver={PostgreSQL};Server=db;Uid=app;Pwd=hunter2;",
    "nats://tok123@bus.example:4222",
    "http://me:pw@[::1]:8080/",
    "postgresql://app:hunter2@/app?host=/cloudsql/proj:region:db",  # a socket: no host before the path
    "postgresql://app:hunter2@%2Fvar%2Frun%2Fpostgresql/app",  # a socket folder, percent-encoded
    "HTTPS://TOKEN123@GITHUB.COM/ME/R",
    '"postgres://app:hunter2@db/app"',
    "nats://a:b@h1:4222,nats://c:d@h2:4222",
    "'url.https://tok123@github.com/.insteadof'='https://github.com/'",  # GIT_CONFIG_PARAMETERS
    "Authorization: Bearer abc123",
    '{"spring":{"datasource":{"username":"app","password":"hunter2"}}}',  # SPRING_APPLICATION_JSON
    '{"db_password" : "hunter2"}',
    "https://hooks.slack.com/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "https://discord.com/api/webhooks/123456789012345678/abcdefghijklmnop",
    JWT,
    "Bearer ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "gho_0123456789abcdefghijABCDEFGHIJ012345",
    "ghs_0123456789abcdefghijABCDEFGHIJ012345",
    "ghu_0123456789abcdefghijABCDEFGHIJ012345",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789",
    "sk-0123456789abcdefghijABCDEFGHIJ0123456789abcdef",
    "sk-ant-api03-0123456789abcdefghijABCDEFGHIJ",
    "sk-proj-0123456789abcdefghijABCDEFGHIJ",
    "xoxb-123456789012-1234567890123-abcdefghijkl",
    "xoxp-123456789012-1234567890123-abcdefghijkl",
    "xoxa-2-123456789012-abcdefghijkl",
    "xapp-1-A0123456789-1234567890123-abcdef",
    "AKIAIOSFODNN7EXAMPLE",
    "aws:ASIAIOSFODNN7EXAMPLE",
    "glpat-0123456789abcdefghij",
    "AIzaSyA0123456789abcdefghijklmnopqrstuv",
    "npm_0123456789abcdefghijABCDEFGHIJ012345",
    "hf_0123456789abcdefghijABCDEFGHIJ",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
]
"""Values that carry a credential, whatever the variable's name."""

HARMLESS_VALUES = [
    *ALLOW_LIST.values(),
    "eyJ",
    "eyJhbGciOiJIUzI1NiJ9",  # a JWT's header alone is no token
    "AKIA",
    "sk-learn",
    "disk-0123456789abcdef0123456789abcdef01",
    "ghp_short",
    "postgres://postgres@localhost/app?sslmode=disable",  # a login name, the password asked apart
    "mysql://root@127.0.0.1:3306/app",
    "ftp://anonymous@ftp.example.org/pub",
    "tcp://127.0.0.1:2376",
    "https://proxy.golang.org,direct",
    "-mod=mod",
    "https://user@",  # no host: nothing to log in to
    "mailto:me@example.com",
    "key=",  # no value
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_secret_word_inside_a_name_makes_it_secret(name: str) -> None:
    assert vault.is_secret_name(name)
    assert name not in shell_environment(ShellSetup(), {name: "harmless", "PATH": "/bin"})


@pytest.mark.parametrize("name", [*ALLOW_LIST, "PWD", "OLDPWD", "GIT_CONFIG_KEY_0"])
def test_harmless_names_are_not_secret(name: str) -> None:
    assert not vault.is_secret_name(name)


def test_the_allow_list_passes_through_unchanged() -> None:
    source = {**ALLOW_LIST, "PWD": "/w", "OLDPWD": "/v", **dict.fromkeys(SECRET_NAMES, "x")}
    env = shell_environment(ShellSetup(), source)
    assert {name: env.get(name) for name in ALLOW_LIST} == ALLOW_LIST
    assert (env["PWD"], env["OLDPWD"]) == ("/w", "/v")
    assert not set(SECRET_NAMES) & set(env)


@pytest.mark.parametrize("value", SECRET_VALUES)
def test_a_value_that_carries_a_credential_is_dropped_whatever_its_name(value: str) -> None:
    assert secret_in_value(value)
    env = shell_environment(ShellSetup(), {"SOME_SETTING": value, "PATH": "/bin"})
    assert "SOME_SETTING" not in env and env["PATH"] == "/bin"


@pytest.mark.parametrize("value", HARMLESS_VALUES)
def test_an_ordinary_value_is_kept(value: str) -> None:
    assert not secret_in_value(value)


@pytest.mark.parametrize("rule", VALUE_RULES, ids=lambda rule: rule.what)
def test_every_value_rule_finds_its_own_example_and_redact_hides_only_the_secret(rule: Any) -> None:
    (match, *_) = list(rule.matches(rule.example))
    secret = match.group("secret")
    said = redact(f"could not connect with {rule.example} (retrying)")
    assert secret not in said and "[redacted]" in said
    assert said.startswith("could not connect with ") and said.endswith(" (retrying)")


def test_redact_keeps_what_the_credential_was_for() -> None:
    said = redact("GET https://me:hunter2@db.example/x?user=me&password=pw1234&page=2 failed")
    assert said == "GET https://[redacted]@db.example/x?user=me&password=[redacted]&page=2 failed"


def test_a_provider_failure_never_quotes_a_credential_it_was_not_told_about() -> None:
    redactor = Redactor(["sk-our-own-key-0123"])
    said = redactor(
        "upstream https://proxy:hunter2@gw.example refused ghp_0123456789abcdefghijABCDEFGHIJ012345 "
        "and sk-our-own-key-0123; see https://gw.example/?access_token=abc123"
    )
    for secret in ("hunter2", "ghp_0123456789", "sk-our-own-key-0123", "abc123"):
        assert secret not in said
    assert "gw.example" in said


def test_include_passes_a_secret_named_or_valued_variable_on_purpose() -> None:
    source = {
        "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T0/B0/XXXXXXXXXXXXXXXXXXXX",
        "PATH": "/b",
    }
    source["DATABASE_URL"] = "postgres://app:hunter2@db/app"
    setup = ShellSetup(include=frozenset({"SLACK_WEBHOOK_URL", "DATABASE_URL"}))
    env = shell_environment(setup, source)
    assert env["SLACK_WEBHOOK_URL"] == source["SLACK_WEBHOOK_URL"]
    assert env["DATABASE_URL"] == source["DATABASE_URL"]
    assert "DATABASE_URL" not in shell_environment(ShellSetup(), source)


def test_a_git_setting_that_carries_a_credential_leaves_whole_and_git_still_runs(tmp_path: Path) -> None:
    user = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_COUNT": "3",
        "GIT_CONFIG_KEY_0": "url.https://ghp_tok123@github.com/.insteadOf",
        "GIT_CONFIG_VALUE_0": "https://github.com/",
        "GIT_CONFIG_KEY_1": "user.name",
        "GIT_CONFIG_VALUE_1": "Me",
        "GIT_CONFIG_KEY_2": "http.extraHeader",
        "GIT_CONFIG_VALUE_2": "Authorization: Basic dXNlcjpwdw==",
    }
    env = shell_environment(ShellSetup(), user)
    listed = subprocess.run(
        ["git", "config", "--list"], env=env, cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout
    assert "user.name=Me" in listed and "core.fsmonitor=false" in listed
    assert "ghp_tok123" not in listed and "dXNlcjpwdw" not in listed
    assert env["GIT_CONFIG_COUNT"] == "4"
    # Included half-way, a credential still does not reach git through a pair.
    env = shell_environment(ShellSetup(include=frozenset({"GIT_CONFIG_KEY_0"})), user)
    assert "ghp_tok123" not in str(env)


def test_the_start_up_hand_over_takes_values_too_but_leaves_gits_pairs() -> None:
    env = {
        "CI_JOB_JWT_V2": JWT,
        "SOME_SETTING": "postgres://app:hunter2@db/app",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "url.https://tok123@github.com/.insteadOf",
        "GIT_CONFIG_VALUE_0": "https://github.com/",
        "TOKENIZERS_PARALLELISM": "false",
        "AGENT_TUI_CONFIG": "/nonexistent/config.toml",
    }
    assert set(keys_to_move(env)) == {"CI_JOB_JWT_V2", "SOME_SETTING"}


def test_a_web_tab_gets_no_secret_but_the_bus_credentials_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(vault._held, "MY_NATS_TOKEN", "tok-from-the-vault")
    settings = BusSettings(url="nats://bus.example:4222", credentials_env="MY_NATS_TOKEN")
    assert _bus_environment(settings) == {
        "AGENT_TUI_BUS": "nats://bus.example:4222",
        "MY_NATS_TOKEN": "tok-from-the-vault",
    }
    inherited = vault.without_secrets({"MY_NATS_TOKEN": "x", "HOME": "/h", "X": "https://a:b@c/"})
    assert inherited == {"HOME": "/h"}


# -- properties ---------------------------------------------------------------------------------

SAFE_WORDS = [
    "PATH",
    "HOME",
    "USER",
    "NAME",
    "EMAIL",
    "DIR",
    "CONFIG",
    "CACHE",
    "DATA",
    "LANG",
    "TERM",
    "DISPLAY",
    "SESSION",
    "ID",
    "PORT",
    "HOST",
    "LEVEL",
    "MODE",
    "LOG",
    "DEBUG",
    "AUTHOR",
    "AUTHORITY",
    "KEYBOARD",
    "KEYMAP",
    "KEYRING",
    "MONKEY",
    "PATCH",
    "PASSENGER",
    "TOKENIZERS",
    "TOKENIZER",
    "PARALLELISM",
    "SECRETARY",
    "COOKIECUTTER",
    "COMPASS",
    "BYPASS",
    "LAYOUT",
    "APP",
    "ENV",
    "XDG",
    "RUNTIME",
    "NODE",
    "PYTHON",
    "GIT",
    "COMMITTER",
    "CLAUDE",
    "CODE",
    "SOCK",
    "PROXY",
    "NO",
    "VERSION",
    "COLOR",
    "THEME",
    "BACKEND",
    "TIMEOUT",
    "EDITOR",
    "WIDTH",
    "HEIGHT",
    "REGION",
    "ZONE",
    "URL",
    "HOSTNAME",
    "VIRTUAL",
    "JAVA",
    "OPTS",
]
"""Everyday words of variable names, among them words that contain a secret word harmlessly."""

words = st.sampled_from(SAFE_WORDS)
cases = st.sampled_from([str.upper, str.lower, str.title])


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(words, min_size=1, max_size=4), number=st.sampled_from(["", "1", "_2"]), case=cases)
def test_property_names_made_of_harmless_words_pass(parts: list[str], number: str, case: Any) -> None:
    name = case("_".join(parts) + number)
    assert not is_secret_name(name)
    assert shell_environment(ShellSetup(), {name: "/some/value"}).get(name) == "/some/value"


@settings(max_examples=500, deadline=None)
@given(
    word=st.sampled_from(sorted(NAME_WORDS)),
    left=st.one_of(st.just(""), words),
    right=st.one_of(st.just(""), words),
    glue_left=st.booleans(),
    glue_right=st.booleans(),
    case=cases,
)
def test_property_a_name_with_a_secret_word_where_it_counts_is_dropped(
    word: str, left: str, right: str, glue_left: bool, glue_right: bool, case: Any
) -> None:
    placement = NAME_WORDS[word]
    left_sep = "" if glue_left and placement is not Placement.WHOLE_PART else "_"
    right_sep = "" if glue_right and placement is Placement.ANYWHERE else "_"
    name = case((left + left_sep if left else "") + word + (right_sep + right if right else ""))
    if NOT_SECRET_NAMES.match(name.upper()):
        return  # the few names that match a word and hold none (PWD)
    assert is_secret_name(name), name
    assert name not in shell_environment(ShellSetup(), {name: "x"})


hosts = st.from_regex(r"[a-z][a-z0-9-]{0,12}(\.[a-z]{2,6}){1,2}", fullmatch=True)
userinfo = st.from_regex(r"[A-Za-z0-9._~%!$'()*+-]{1,24}(:[A-Za-z0-9._~%!$'()*+-]{0,24})?", fullmatch=True)
schemes = st.sampled_from(["https", "http", "postgres", "postgresql", "mysql", "mongodb+srv", "redis", "ftp"])
LOGIN_SCHEMES = ("postgres", "postgresql", "mysql", "ftp")
"""Schemes whose bare user name is a login (the password is asked apart), not a secret."""
prefixes = st.sampled_from(["", "jdbc:", "jdbc:tracing:", "url=", "--db ", "a,"])
segments = st.lists(st.sampled_from([w.lower() for w in SAFE_WORDS]), max_size=3)


@settings(max_examples=300, deadline=None)
@given(prefix=prefixes, scheme=schemes, user=userinfo, host=hosts, path=segments)
def test_property_a_url_with_user_information_is_dropped_wherever_it_stands(
    prefix: str, scheme: str, user: str, host: str, path: list[str]
) -> None:
    if scheme in LOGIN_SCHEMES and ":" not in user:
        user += ":pw"
    value = f"{prefix}{scheme}://{user}@{host}/{'/'.join(path)}"
    assert secret_in_value(value), value
    assert "[redacted]" in redact(value) and f"{user}@" not in redact(value)


@settings(max_examples=300, deadline=None)
@given(scheme=schemes, host=hosts, path=segments, query=st.lists(st.tuples(words, words), max_size=3))
def test_property_a_url_without_credentials_is_kept(
    scheme: str, host: str, path: list[str], query: list[tuple[str, str]]
) -> None:
    params = "&".join(f"{key.lower()}={value.lower()}" for key, value in query)
    value = f"{scheme}://{host}/{'/'.join(path)}" + (f"?{params}" if params else "")
    assert not secret_in_value(value), value


@settings(max_examples=200, deadline=None)
@given(
    scheme=schemes,
    host=hosts,
    name=st.sampled_from(["password", "passwd", "pwd", "token", "access_token", "api_key", "apikey", "sig"]),
    secret=st.from_regex(r"[A-Za-z0-9%._~-]{1,30}", fullmatch=True),
    separator=st.sampled_from(["?", "&", ";", "#"]),
)
def test_property_a_credential_parameter_is_dropped(
    scheme: str, host: str, name: str, secret: str, separator: str
) -> None:
    value = f"{scheme}://{host}/db?user=me{separator}{name}={secret}"
    assert secret_in_value(value), value


# -- end to end ---------------------------------------------------------------------------------


def _secrets() -> dict[str, str]:
    """Every secret name with a value found nowhere else, and harmless names with secret values."""
    made = {name: f"secret-{n}-{uuid.uuid4().hex}" for n, name in enumerate(SECRET_NAMES)}
    for n, value in enumerate(SECRET_VALUES):
        made[f"HARMLESS_NAME_{n}"] = value
    return made


@pytest.mark.anyio
async def test_the_shell_tool_shows_the_allow_list_and_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = _secrets()
    for name, value in {**ALLOW_LIST, **secrets}.items():
        if name != "PATH":
            monkeypatch.setenv(name, value)
    chunks: list[str] = []

    async def on_output(stream: str, text: str) -> None:
        chunks.append(text)

    tool = ShellTool(ShellSetup())
    ctx = ToolContext(cwd=tmp_path, session_id="s", turn_id="t", tool_call_id="c", on_output=on_output)
    result = await tool.run(tool.Args(cmd="env -0"), ctx)
    assert result.ok and result.exit_code == 0, result.text
    printed = dict(line.split("=", 1) for line in result.text.split("\0") if "=" in line)
    assert not set(secrets) & set(printed)
    for value in secrets.values():
        assert value not in result.text
    assert {name: printed.get(name) for name in ALLOW_LIST if name != "PATH"} == {
        name: value for name, value in ALLOW_LIST.items() if name != "PATH"
    }


def test_a_real_run_hands_its_commands_the_allow_list_and_no_secret(tmp_path: Path) -> None:
    secrets = _secrets()
    (tmp_path / "ws").mkdir()
    steps = [{"text": ["look"], "toolCalls": [{"tool": "shell", "args": {"cmd": "env -0 | base64 -w0"}}]}]
    body = {
        "sessions": [
            {"title": "lead", "cwd": "ws", "prompt": "show env", "steps": [*steps, {"text": ["ok"]}]}
        ]
    }
    scenario = tmp_path / "scenario.json"
    scenario.write_bytes(orjson.dumps(body))
    config = tmp_path / "config.toml"
    config.write_text("[sandbox]\nenabled = false\n")
    kept = {name: value for name, value in ALLOW_LIST.items() if name not in ("PATH", "HOME")}
    env = clean_env(AGENT_TUI_CONFIG=str(config), XDG_DATA_HOME=str(tmp_path / "data"), **kept, **secrets)
    sessions = tmp_path / "sessions"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_tui",
            "run",
            str(scenario),
            "--sessions-dir",
            str(sessions),
            "--approve",
            "allow",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    (log,) = sessions.glob("*.jsonl")
    events: list[Event] = list(JsonlEventLog(log).replay("strict"))
    (output,) = [e.payload["result"] for e in events if e.type == "tool.completed"]
    text = base64.b64decode(output).decode()
    printed = dict(line.split("=", 1) for line in text.split("\0") if "=" in line)
    assert not set(secrets) & set(printed)
    for value in secrets.values():
        assert value not in text
        assert value not in log.read_text()
    assert {name: printed.get(name) for name in kept} == kept
    assert secret_rules.REDACTED not in text  # dropped, not rewritten


@pytest.mark.anyio
async def test_a_web_tabs_process_inherits_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textual_serve.download_manager import DownloadManager

    from agent_tui.web.tab_process import TabProcess

    secrets = _secrets()
    for name, value in {**ALLOW_LIST, **secrets}.items():
        if name != "PATH":
            monkeypatch.setenv(name, value)
    dump = tmp_path / "env.json"
    program = f"import json, os; open({str(dump)!r}, 'w').write(json.dumps(dict(os.environ)))"

    async def ignore(data: Any = None) -> None:
        pass

    tab = TabProcess(
        [sys.executable, "-c", program],
        environment={"AGENT_TUI_BUS": "nats://ana:hunter2@bus.example:4222"},  # given on purpose
        write_bytes=ignore,
        write_str=ignore,
        close=ignore,
        download_manager=DownloadManager(),
    )
    await tab.start(80, 24)
    await tab.ended()
    await tab.stop()
    seen = orjson.loads(dump.read_bytes())
    assert not set(secrets) & set(seen)
    assert seen["AGENT_TUI_BUS"] == "nats://ana:hunter2@bus.example:4222"
    assert {name: seen.get(name) for name in ALLOW_LIST if name != "PATH"} == {
        name: value for name, value in ALLOW_LIST.items() if name != "PATH"
    }


@pytest.mark.anyio
async def test_an_mcp_server_gets_the_allow_list_but_no_secret_unless_its_config_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support_mcp import of_type, run_one_call, stdio_config

    monkeypatch.setenv("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/XXXXXXXXXXXXXXXXXXXX")
    monkeypatch.setenv("APP_DATABASE", "postgres://app:hunter2@db.internal/app")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setenv("CI_JOB_JWT_V2", JWT)
    config = stdio_config(env=("CI_JOB_JWT_V2",))  # named by the user's config: passed on purpose
    seen = {}
    for variable in ("SLACK_WEBHOOK_URL", "APP_DATABASE", "TOKENIZERS_PARALLELISM", "CI_JOB_JWT_V2"):
        events, _ = await run_one_call(tmp_path, config, "mcp__test__where", {"variable": variable})
        result = of_type(events, "tool.completed")[0].payload["result"]
        seen[variable] = result.rpartition(f" {variable}=")[2]
    assert seen == {
        "SLACK_WEBHOOK_URL": "<unset>",
        "APP_DATABASE": "<unset>",
        "TOKENIZERS_PARALLELISM": "false",
        "CI_JOB_JWT_V2": JWT,
    }
