"""`[bus]` of config.toml, `$AGENT_TUI_BUS` and `--bus`: where the bus is, how a process proves
itself, and how a wrong setting (or a secret where a name belongs) is said."""

from __future__ import annotations

from pathlib import Path

import pytest
from support_nats_auth import OperatorMode, user_nkey

from agent_tui.bus import credentials
from agent_tui.bus.config import BusConfigError, BusSettings, bus_settings, redacted
from agent_tui.bus.credentials import connect_options, describe_failure, scrub, secrets_of
from agent_tui.providers.config import Config, ConfigError, load_config


def config(tmp_path: Path, text: str) -> Config:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_config(path)


def test_the_flag_beats_the_environment_beats_the_file(tmp_path: Path) -> None:
    loaded = config(tmp_path, '[bus]\nurl = "nats://file:4222"\nhost = "box"\nmax_age = "2h"\n')
    assert bus_settings(loaded, env={}).url == "nats://file:4222"
    assert bus_settings(loaded, env={"AGENT_TUI_BUS": "nats://env:4222"}).url == "nats://env:4222"
    settings = bus_settings(loaded, flag_url="tls://flag:4222", flag_host="other", env={"AGENT_TUI_BUS": "x"})
    assert (settings.url, settings.host, settings.max_age_s) == ("tls://flag:4222", "other", 7200.0)
    assert "bus" not in str(loaded.key_variables())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[bus]\nurl = "http://x"\n', r":2: bus.url: bus URL 'http://x': expected nats://HOST:PORT"),
        ('[bus]\ncredentials_env = "hunter2 secret!"\n', r":2: bus.credentials_env: expected the NAME"),
        ('[bus]\ntoken = "abc"\n', r":2: bus.token: unknown setting"),
        ('[bus]\nhost = "a.b"\n', r":2: bus.host: a name of letters"),
        ('[bus]\nuser = "events"\n', r":2: bus.user: a name of letters.*not `events`"),
        ('[bus]\nuser = "ana.b"\n', r":2: bus.user: a name of letters"),
        ('[bus]\nmax_age = "forever"\n', r":2: bus.max_age: max_age 'forever': expected a number"),
        ('[bus]\ncredentials_env = "A"\ncreds_file = "x"\n', r":3: bus.creds_file: give credentials_env or"),
        ("bus = 3\n", r":1: bus must be a table"),
    ],
)
def test_a_wrong_setting_names_its_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as raised:
        bus_settings(config(tmp_path, text), env={})
    assert "hunter2" not in str(raised.value)


def test_the_bus_user_is_the_setting_else_the_credentials_user_else_the_login(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agent_tui.bus.presence.user", lambda: "li.wei")
    named = bus_settings(config(tmp_path, '[bus]\nuser = "ana"\ncredentials_env = "LOGIN"\n'), env={})
    assert credentials.bus_user(named, env={"LOGIN": "bob:pw"}) == "ana"
    login = BusSettings(url="nats://h:1", credentials_env="LOGIN")
    assert credentials.bus_user(login, env={"LOGIN": "bob:pw"}) == "bob"
    assert credentials.bus_user(login, env={"LOGIN": "a-token"}) == "li-wei"  # a token names nobody
    assert credentials.bus_user(BusSettings(url="nats://carol:pw@h:1")) == "carol"
    assert credentials.bus_user(BusSettings(url="nats://t0ken@h:1")) == "li-wei"
    with pytest.raises(BusConfigError, match=r"set \[bus\] user"):
        credentials.bus_user(login, env={"LOGIN": "x.y:pw"})


def test_a_wrong_flag_is_said_without_its_secret(tmp_path: Path) -> None:
    with pytest.raises(BusConfigError) as raised:
        bus_settings(config(tmp_path, ""), flag_url="ftp://ana:hunter2@x", env={})
    assert "hunter2" not in str(raised.value) and "--bus" in str(raised.value)


def test_credentials_come_from_the_named_variable_or_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = BusSettings(url="nats://h:1", credentials_env="BUS_TOKEN")
    assert connect_options(token, env={"BUS_TOKEN": "t0k"}) == {"token": "t0k"}
    assert connect_options(token, env={"BUS_TOKEN": "ana:pw"}) == {"user": "ana", "password": "pw"}
    with pytest.raises(BusConfigError, match=r"\$BUS_TOKEN \(bus credentials_env\) is not set"):
        connect_options(token, env={})
    seed = tmp_path / "seed.nk"
    seed.write_text("SUAEXAMPLESEED\n")
    monkeypatch.setattr(credentials, "_signs_nkeys", lambda: False)
    with pytest.raises(BusConfigError, match=r"seed.nk: signing with an nkey needs the nkeys package"):
        connect_options(BusSettings(url="x", creds_file=seed))
    monkeypatch.setattr(credentials, "_signs_nkeys", lambda: True)
    assert connect_options(BusSettings(url="x", creds_file=seed)) == {"nkeys_seed": str(seed)}
    creds = tmp_path / "user.creds"
    creds.write_text("-----BEGIN NATS USER JWT-----\n...\n")
    assert connect_options(BusSettings(url="x", creds_file=creds)) == {"user_credentials": str(creds)}
    with pytest.raises(BusConfigError, match="cannot read the bus creds file"):
        connect_options(BusSettings(url="x", creds_file=tmp_path / "none"))


def test_failures_and_urls_are_said_without_secrets() -> None:
    assert redacted("nats://ana:pw@h:1,tls://tok@g:2") == "nats://***@h:1,tls://***@g:2"
    settings = BusSettings(url="nats://ana:s3cret-pw@h:1", credentials_env="BUS_TOKEN")
    said = describe_failure(
        settings, RuntimeError("auth s3cret-pw and tok-9876 refused"), env={"BUS_TOKEN": "tok-9876"}
    )
    assert "s3cret" not in said and "tok-9876" not in said and "nats://***@h:1" in said


@pytest.mark.parametrize("kind", ["nkey seed file", "creds file"])
def test_what_a_creds_or_seed_file_holds_is_scrubbed_from_what_is_said(tmp_path: Path, kind: str) -> None:
    trust = OperatorMode.make()
    user = user_nkey()
    text, secrets = (
        (user.seed + "\n", [user.seed])
        if kind == "nkey seed file"
        else (trust.creds, [trust.user_seed, trust.creds.split("\n")[1]])
    )
    path = tmp_path / "ana.creds"
    path.write_text(text)
    settings = BusSettings(url="nats://h:1", creds_file=path)
    error = RuntimeError(f"nkeys: bad signature by {' and '.join(secrets)} ({user.public})")
    said = describe_failure(settings, error)
    assert not any(secret in said for secret in secrets)
    assert said == (
        f"cannot reach the bus at nats://h:1: nkeys: bad signature by {' and '.join('***' for _ in secrets)} "
        f"({user.public})"
    )  # the public key is no secret, and stays
    assert scrub(str(error), settings) == said.removeprefix("cannot reach the bus at nats://h:1: ")


def test_a_creds_file_that_cannot_be_read_adds_nothing_to_scrub(tmp_path: Path) -> None:
    for path in (tmp_path / "missing.creds", tmp_path):  # gone, and a directory
        assert secrets_of(BusSettings(url="nats://h:1", creds_file=path)) == []
