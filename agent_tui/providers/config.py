"""Model settings: named profiles from a TOML file, the environment and command-line flags, merged.

Precedence, setting by setting: command-line flag > environment > profile > built-in default.
Every resolved setting remembers where it came from (`ModelSettings.sources`), which is what
`agent-tui models` shows.

Invariants:
- keys never come from the file: a profile names the environment variable that holds its key
  (`api_key_env`), and only `factory.build_provider` reads that variable. No error message and
  no source ever repeats the value of a key field;
- a key goes only where it was meant to: the vendor's key variable is the default only for the
  vendor's own endpoint (or the one its own `*_BASE_URL` variable names); a custom endpoint gets
  no key unless `api_key_env` names one;
- a problem in the file is a `ConfigError` reading `PATH:LINE: reason` (a TOML syntax error
  adds `(column N)`, in the same words wherever the file is read: `toml_error_message`); in the
  environment, `VARIABLE: reason`; the file is read once per process, with `tomllib`
  (`load_config`): what needs it after is handed the `Config`, whose `data` the `[acp.NAME]`
  and `[mcp.NAME]` readers take too (`read_named_tables`);
- `resolve_settings` returns None when no model is configured at all (no provider, model or
  profile anywhere): the caller shows the demo instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agent_tui.engine.vault import ENVIRONMENT
from agent_tui.providers.toml_lines import KeyLines

TYPE_CHECKING = False
if TYPE_CHECKING:  # imported where a file sets budgets or prices, or a model is resolved: the
    # entry reads the config of every command, `search` among them; `typing` and `tomllib`
    # (which imports it) cost that start-up when there is no config file to parse
    import tomllib
    from typing import Any

    from agent_tui.costs.budgets import BudgetLimit
    from agent_tui.costs.prices import Price, PriceTable

PROVIDERS = ("openai", "anthropic")
DEFAULT_MODEL = {"openai": "gpt-4.1-mini", "anthropic": "claude-sonnet-4-5"}
DEFAULT_BASE_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
VENDOR_BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
DEFAULT_ANTHROPIC_MAX_OUTPUT = 8_192
NO_KEY = "no-key-needed"  # what a custom endpoint that needs no key is sent (the SDKs insist on one)

ENV_CONFIG = "AGENT_TUI_CONFIG"
ENV_PROFILE = "AGENT_TUI_PROFILE"
ENV_SETTINGS = {
    "provider": "AGENT_TUI_PROVIDER",
    "model": "AGENT_TUI_MODEL",
    "base_url": "AGENT_TUI_BASE_URL",
    "api_key_env": "AGENT_TUI_API_KEY_ENV",
    "context_window": "AGENT_TUI_CONTEXT_WINDOW",
    "max_output_tokens": "AGENT_TUI_MAX_OUTPUT_TOKENS",
    "temperature": "AGENT_TUI_TEMPERATURE",
}
SETTINGS = tuple(ENV_SETTINGS)
HOW_TO_CONFIGURE = (
    "To use a real model, pass --provider openai|anthropic --model NAME (or --profile NAME), set "
    "AGENT_TUI_PROVIDER and AGENT_TUI_MODEL, or add a profile to {path} (see the README, 'Real models')."
)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_http_url(value: object) -> bool:
    """Whether `value` is an http:// or https:// address with a host (a base URL, an MCP server's)."""
    return isinstance(value, str) and re.match(r"^https?://[^\s/]+", value) is not None


class ConfigError(ValueError):
    """A setting is wrong: the message is one line naming where (`PATH:LINE:` or the variable)."""


@dataclass(frozen=True)
class Profile:
    """One `[profiles.NAME]` table, validated (its lines are the `Config`'s `lines`)."""

    name: str
    values: Mapping[str, Any]
    budget: BudgetLimit | None = None
    """`[profiles.NAME.budget]`: its limits replace the top-level `[budget]`'s, one by one."""


@dataclass(frozen=True)
class Config:
    """The parsed config file (empty when the file does not exist)."""

    path: Path
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    default_profile: str | None = None
    exists: bool = False
    shell_include: tuple[str, ...] = ()
    """`[shell_env] include`: variables passed to shell commands although their names look secret."""
    sandbox_enabled: bool = True
    """`[sandbox] enabled`: run shell commands in the sandbox where the machine has one."""
    notify_command: tuple[str, ...] = ()
    """`notify_command`: a program (and its arguments) told each notification as JSON on stdin."""
    bus: Mapping[str, Any] = field(default_factory=dict)
    """`[bus]` as written (checked by `agent_tui.bus.config`, which knows its settings)."""
    budget: BudgetLimit | None = None
    """`[budget] usd, tokens`: what a new root agent's tree may spend (a profile's own replace it)."""
    prices: Mapping[str, Price] = field(default_factory=dict)
    """`[prices."MODEL"]`: the user's prices, replacing a shipped model's or adding a model."""
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The file's tables as parsed, for the readers of `[acp.NAME]` and `[mcp.NAME]`."""
    lines: KeyLines = field(default_factory=lambda: KeyLines(""), repr=False, compare=False)
    """Where each table and key of the file is: the one owner of a setting's line."""

    def price_table(self) -> PriceTable:
        """What models cost: the shipped table with this file's `[prices]` over it."""
        from agent_tui.costs.prices import shipped_prices

        return shipped_prices().with_overrides(self.prices)

    def key_variables(self) -> frozenset[str]:
        """Every `api_key_env` the profiles name (the variables that hold model keys)."""
        named = {
            profile.values["api_key_env"]
            for profile in self.profiles.values()
            if "api_key_env" in profile.values
        }
        bus_env = self.bus.get("credentials_env")
        if isinstance(bus_env, str) and bus_env:
            named.add(bus_env)  # the bus's token or password is held like a model key
        return frozenset(named)

    def where(self, line: int | None) -> str:
        return f"{self.path}:{line}" if line is not None else str(self.path)

    def where_set(self, *path: str) -> str:
        """`PATH:LINE` of a setting the file sets (`where_set("bus", "url")`)."""
        return self.where(self.lines.line(*path))


@dataclass(frozen=True)
class ModelSettings:
    """Everything needed to talk to one model. `sources[setting]` says where each value came from."""

    provider: str
    model: str
    base_url: str
    api_key_env: str | None
    context_window: int
    max_output_tokens: int | None
    temperature: float | None
    profile: str | None
    sources: dict[str, str]
    budget: BudgetLimit | None = None
    """The default budget of a root agent on this model: the profile's limits over `[budget]`'s."""

    @property
    def custom_endpoint(self) -> bool:
        """Not the vendor's own API (a local server or a gateway, which may need no key)."""
        return self.base_url.rstrip("/") != DEFAULT_BASE_URL[self.provider]

    @property
    def prompt_budget(self) -> int:
        """Tokens a request may use: the window less room for the answer (at most half of it)."""
        reserve = min(self.max_output_tokens or 0, self.context_window // 2)
        return self.context_window - reserve

    def key_state(self, env: Mapping[str, str] = ENVIRONMENT) -> str:
        """`set`, `missing` or `none` (no key is sent): never the key itself."""
        if self.api_key_env is None:
            return "none"
        return "set" if env.get(self.api_key_env) else "missing"


# -- the file ------------------------------------------------------------------------------------
def config_path(env: Mapping[str, str] = ENVIRONMENT) -> Path:
    """`$AGENT_TUI_CONFIG`, else `config.toml` in the platform's config directory for agent-tui."""
    override = env.get(ENV_CONFIG)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("agent-tui")) / "config.toml"


def load_config(path: Path | None = None) -> Config:
    """Read and check the config file; a missing file is an empty config.

    Raises:
        ConfigError: the file cannot be read, is not TOML, or holds a bad setting.
    """
    path = path if path is not None else config_path()
    read = read_config_file(path)
    if read is None:
        return Config(path)
    return _check(path, *read)


def read_config_file(path: Path) -> tuple[dict[str, Any], KeyLines] | None:
    """The config file's tables and where each key stands, for every reader of the file (the
    profiles here, `[acp.NAME]`, `[mcp.NAME]`); None when there is no file.

    Raises:
        ConfigError: the file cannot be read, is not UTF-8, or is not TOML (`PATH:LINE: reason`).
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ConfigError(f"{path}: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text") from None
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(toml_error_message(path, error)) from None
    return data, KeyLines(text)


def read_named_tables(source: Path | Config, section: str) -> tuple[dict[str, Any], KeyLines]:
    """The config file's `[SECTION.NAME]` tables by name (none when there is no file), and where
    each key stands: the one reading of `[acp.NAME]` and `[mcp.NAME]`, from the loaded `Config`
    (the file is not read again) or from the file at a path.

    Raises:
        ConfigError: the file cannot be read or is not TOML, or `SECTION` is not a table of tables.
    """
    path = source.path if isinstance(source, Config) else source
    read = (source.data, source.lines) if isinstance(source, Config) else read_config_file(path)
    if read is None:
        return {}, KeyLines("")
    data, lines = read
    tables = data.get(section, {})
    if not isinstance(tables, dict):
        raise ConfigError(
            f"{path}:{lines.line(section)}: {section} must be a table of [{section}.NAME] tables"
        )
    return tables, lines


def toml_error_message(path: Path, error: tomllib.TOMLDecodeError) -> str:
    """The one way a file that is not TOML is said, by every reader of the config file:
    `PATH:LINE: reason (column N)`, or `PATH: reason (at the end of the file)`."""
    message = str(error)
    match = re.search(r"\(at line (\d+), column (\d+)\)$", message)
    if match is None:
        match_end = re.search(r"\(at end of document\)$", message)
        reason = message[: match_end.start()].strip() if match_end else message
        return f"{path}: {reason} (at the end of the file)"
    reason = message[: match.start()].strip()
    return f"{path}:{match.group(1)}: {reason} (column {match.group(2)})"


TOP_LEVEL_KEYS = (
    "default_profile", "profiles", "acp", "shell_env", "sandbox", "notify_command", "bus", "prices",
    "budget", "mcp", "hooks",
)  # fmt: skip
"""Every key the config file may have at its top (`acp` is read by `agent_tui.acp.config`,
`hooks` by `agent_tui.terminal`,
`bus` by `agent_tui.bus.config`, `mcp` by `agent_tui.mcp.config`)."""


_Fail = Callable[[int, str], ConfigError]
"""How a checker says what is wrong at a line: `fail(LINE, reason)` makes the `ConfigError`."""


def _check(path: Path, data: dict[str, Any], lines: KeyLines) -> Config:
    def fail(line: int, reason: str) -> ConfigError:
        return ConfigError(f"{path}:{line}: {reason}")

    for key, value in data.items():
        if key not in TOP_LEVEL_KEYS:
            what = "table" if isinstance(value, dict) else "setting"
            known = ", ".join(TOP_LEVEL_KEYS)
            raise fail(lines.line(key), f"unknown {what} {key!r} (known at the top: {known})")
    profiles = _profiles(data, lines, fail)
    default = data.get("default_profile")
    if default is not None:
        if not isinstance(default, str):
            raise fail(lines.line("default_profile"), "default_profile must be a profile's name")
        if default not in profiles:
            raise fail(lines.line("default_profile"), f"default_profile {default!r}: {_no_profile(profiles)}")
    include = _shell_include(data, lines, fail)
    sandbox_enabled = _sandbox(data, lines, fail)
    notify = _notify_command(data, lines, fail)
    bus = data.get("bus", {})
    if not isinstance(bus, dict):
        raise fail(lines.line("bus"), 'bus must be a table: [bus] url = "nats://..."')
    return Config(
        path,
        profiles,
        default,
        exists=True,
        shell_include=include,
        sandbox_enabled=sandbox_enabled,
        notify_command=notify,
        bus=bus,
        budget=_budget(data.get("budget"), ("budget",), lines, fail),
        prices=_prices(data, lines, fail),
        data=data,
        lines=lines,
    )


def _profiles(data: dict[str, Any], lines: KeyLines, fail: _Fail) -> dict[str, Profile]:
    """`[profiles.NAME]` tables, each setting checked (`check_setting`) with its line."""
    tables = data.get("profiles", {})
    if not isinstance(tables, dict):
        raise fail(lines.line("profiles"), "profiles must be a table of [profiles.NAME] tables")
    profiles: dict[str, Profile] = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise fail(lines.line("profiles", name), f"profiles.{name} must be a table of settings")
        values: dict[str, Any] = {}
        budget = _budget(table.get("budget"), ("profiles", name, "budget"), lines, fail)
        for key, value in table.items():
            if key == "budget":
                continue
            try:
                values[key] = check_setting(key, value)
            except ValueError as error:
                raise fail(lines.line("profiles", name, key), f"profiles.{name}.{key}: {error}") from None
        profiles[name] = Profile(name, values, budget)
    return profiles


def _budget(table: Any, path: tuple[str, ...], lines: KeyLines, fail: _Fail) -> BudgetLimit | None:
    """`[budget] usd = 2.5, tokens = 500000` (or a profile's `[profiles.NAME.budget]`), checked."""
    if table is None:
        return None
    from agent_tui.costs.budgets import BudgetLimit, tokens_problem, usd_problem

    name = ".".join(path)
    _known_table(table, path, ("usd", "tokens"), "usd = 2.50, tokens = 500000", lines, fail)
    usd = table.get("usd")
    problem = usd_problem(usd) if usd is not None else None
    if problem is not None:
        raise fail(lines.line(*path, "usd"), f"{name}.usd: expected {problem}, got {_shown(usd)}")
    tokens = table.get("tokens")
    problem = tokens_problem(tokens) if tokens is not None else None
    if problem is not None:
        raise fail(lines.line(*path, "tokens"), f"{name}.tokens: expected {problem}, got {_shown(tokens)}")
    limit = BudgetLimit(float(usd) if usd is not None else None, tokens)
    return None if limit.empty else limit


def _shown(value: object) -> str:
    """A config value as the error quotes it: short, whatever its size."""
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _prices(data: dict[str, Any], lines: KeyLines, fail: _Fail) -> dict[str, Price]:
    """`[prices."MODEL"] input, cached_input, cache_write, output` (dollars per million tokens)."""
    table = data.get("prices", {})
    example = '[prices."MODEL"] input = 3.0, output = 15.0'
    if not isinstance(table, dict):
        raise fail(lines.line("prices"), f"prices must be a table of models: {example}")
    if not table:
        return {}
    from agent_tui.costs.prices import PRICE_KEYS, price_from, price_value

    prices: dict[str, Price] = {}
    for model, entry in table.items():
        where = lines.line("prices", model)
        if not isinstance(entry, dict):
            raise fail(where, f"prices.{model} must be a table ({', '.join(PRICE_KEYS)}): {example}")
        for key, value in entry.items():
            try:
                price_value(key, value)
            except ValueError as error:
                raise fail(lines.line("prices", model, key), f"prices.{model}: {error}") from None
        try:
            prices[model] = price_from(entry)
        except ValueError as error:
            raise fail(where, f"prices.{model}: {error}") from None
    return prices


def _notify_command(data: dict[str, Any], lines: KeyLines, fail: _Fail) -> tuple[str, ...]:
    """`notify_command = ["PROGRAM", "ARG", ...]`, checked (run without a shell, so a list)."""
    if "notify_command" not in data:
        return ()
    value = data["notify_command"]
    line = lines.line("notify_command")
    if not isinstance(value, list) or not value:
        raise fail(
            line, 'notify_command must be a list: the program and its arguments, e.g. ["ntfy", "publish"]'
        )
    if not all(isinstance(part, str) and part and "\x00" not in part for part in value):
        raise fail(line, "notify_command: every item must be a non-empty string")
    return tuple(value)


def _shell_include(data: dict[str, Any], lines: KeyLines, fail: _Fail) -> tuple[str, ...]:
    """`[shell_env] include = ["NAME", ...]`, checked."""
    table = _known_table(
        data.get("shell_env", {}), ("shell_env",), ("include",), 'include = ["NAME"]', lines, fail
    )
    include = table.get("include", [])
    line = lines.line("shell_env", "include")
    if not isinstance(include, list) or not all(isinstance(name, str) for name in include):
        raise fail(line, "shell_env.include: expected a list of environment variable names")
    for name in include:
        if not _ENV_NAME.match(name):
            raise fail(line, f"shell_env.include: {name!r} is not a variable name (list names, not values)")
    return tuple(include)


def _sandbox(data: dict[str, Any], lines: KeyLines, fail: _Fail) -> bool:
    """`[sandbox] enabled = true|false`, checked."""
    table = _known_table(data.get("sandbox", {}), ("sandbox",), ("enabled",), "enabled = false", lines, fail)
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise fail(
            lines.line("sandbox", "enabled"), f"sandbox.enabled: expected true or false, got {enabled!r}"
        )
    return enabled


def _known_table(
    table: Any, path: tuple[str, ...], known: tuple[str, ...], example: str, lines: KeyLines, fail: _Fail
) -> dict[str, Any]:
    """The table at `path`, checked to be one and to set only `known` settings."""
    name = ".".join(path)
    if not isinstance(table, dict):
        raise fail(lines.line(*path), f"{name} must be a table: [{name}] {example}")
    for key in table:
        if key not in known:
            raise fail(lines.line(*path, key), f"{name}.{key}: unknown setting (known: {', '.join(known)})")
    return table


def _no_profile(profiles: Mapping[str, Any]) -> str:
    known = ", ".join(sorted(profiles)) or "none"
    return f"no such profile (profiles: {known})"


# -- one value -----------------------------------------------------------------------------------
def check_setting(key: str, value: Any) -> Any:
    """The value of one setting, checked (and, for numbers, made the right type).

    Raises:
        ValueError: with a short reason; it never repeats the value of a key field.
    """
    if key == "api_key":
        raise ValueError(
            "keys are not read from the config file; put the NAME of the environment variable "
            "that holds the key in api_key_env"
        )
    if key == "provider":
        if value not in PROVIDERS:
            raise ValueError(f"expected one of {', '.join(PROVIDERS)}, got {value!r}")
        return value
    if key == "model":
        if not isinstance(value, str) or not value.strip():
            raise ValueError("expected a model name")
        return value.strip()
    if key == "base_url":
        if not is_http_url(value):
            raise ValueError(f"expected an http:// or https:// URL, got {value!r}")
        return value.rstrip("/")
    if key == "api_key_env":
        if not isinstance(value, str) or not _ENV_NAME.match(value):
            raise ValueError(
                "expected the NAME of an environment variable (like OPENAI_API_KEY), not the key itself"
            )
        return value
    if key in ("context_window", "max_output_tokens"):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"expected a positive whole number of tokens, got {value!r}")
        return value
    if key == "temperature":
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not 0 <= value <= 2
        ):
            raise ValueError(f"expected a number from 0 to 2, got {value!r}")
        return float(value)
    raise ValueError(f"unknown setting (known: {', '.join(SETTINGS)})")


_NUMBERS: dict[str, Callable[[str], int | float]] = {
    "context_window": int,
    "max_output_tokens": int,
    "temperature": float,
}


def _from_env(key: str, text: str) -> Any:
    """A setting from its text: a number is read first (text that is none `check_setting` refuses,
    in the words it uses for any value that is not one)."""
    try:
        value: Any = _NUMBERS[key](text) if key in _NUMBERS else text
    except ValueError:
        value = text
    return check_setting(key, value)


# -- merging -------------------------------------------------------------------------------------
def resolve_settings(
    config: Config,
    *,
    profile: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] = ENVIRONMENT,
) -> ModelSettings | None:
    """Merge flags, environment, profile and defaults into one model's settings.

    Args:
        config: the loaded config file.
        profile, provider, model, base_url: the command-line flags (None: not given).
        env: the environment to read `AGENT_TUI_*` (and the vendor's base-URL variable) from.

    Returns:
        The settings, or None when nothing names a model (the caller shows the demo).

    Raises:
        ConfigError: a flag or variable has a bad value, names a missing profile, or contradicts
            the profile that was asked for.
    """
    layers, chosen, chosen_source = _layers(
        config, profile, {"provider": provider, "model": model, "base_url": base_url}, env
    )
    picked_provider, picked_model = _pick(layers, "provider"), _pick(layers, "model")
    if picked_provider is None and picked_model is None and chosen is None:
        return None
    sources: dict[str, str] = {}
    if picked_provider is not None:
        resolved_provider, sources["provider"] = picked_provider
    else:
        name = picked_model[0] if picked_model is not None else ""
        resolved_provider = "anthropic" if name.lower().startswith("claude") else "openai"
        sources["provider"] = "inferred from the model name" if name else "default"
    resolved_model, sources["model"] = picked_model or (DEFAULT_MODEL[resolved_provider], "default")
    base_url, sources["base_url"], vendors_endpoint = _base_url(layers, resolved_provider, env)
    resolved: dict[str, Any] = {}
    for key, default in _defaults(resolved_provider, resolved_model, vendors_endpoint).items():
        resolved[key], sources[key] = _pick(layers, key) or default
    budget = config.budget
    if chosen is not None:
        sources["profile"] = chosen_source
        budget = chosen.budget.merged_over(budget) if chosen.budget is not None else budget
    return ModelSettings(
        provider=resolved_provider,
        model=resolved_model,
        base_url=base_url,
        profile=chosen.name if chosen is not None else None,
        sources=sources,
        budget=budget,
        **resolved,
    )


if TYPE_CHECKING:
    _Layer = tuple[dict[str, Any], dict[str, str]]
    """One source of settings: the values it sets, and how each is said in `ModelSettings.sources`."""


def _layers(
    config: Config, profile: str | None, flags: Mapping[str, str | None], env: Mapping[str, str]
) -> tuple[list[_Layer], Profile | None, str]:
    """The flags, the environment and the chosen profile, strongest first; the profile and how it
    was chosen.

    Raises:
        ConfigError: a bad flag or variable, or a profile that is missing or for another provider.
    """
    cli = {
        key: _checked(f"--{key.replace('_', '-')}", key, value)
        for key, value in flags.items()
        if value is not None
    }
    from_env: dict[str, Any] = {}
    for key, variable in ENV_SETTINGS.items():
        text = env.get(variable, "").strip()
        if text:
            from_env[key] = _checked(variable, key, text, env_text=True)
    layers: list[_Layer] = [
        (cli, {key: f"--{key.replace('_', '-')}" for key in cli}),
        (from_env, {key: f"env {ENV_SETTINGS[key]}" for key in from_env}),
    ]
    chosen, chosen_source = _choose_profile(config, profile, env)
    wanted = cli.get("provider", from_env.get("provider"))
    if chosen is not None and wanted is not None and chosen.values.get("provider", wanted) != wanted:
        if chosen_source.startswith("default_profile"):
            chosen = None  # the default profile is for another provider: the flags win whole
        else:
            raise ConfigError(
                f"{chosen_source}: profile {chosen.name!r} is for {chosen.values['provider']}, "
                f"but the provider asked for is {wanted}"
            )
    if chosen is not None:
        where = {
            key: f"profile {chosen.name} ({config.where_set('profiles', chosen.name, key)})"
            for key in chosen.values
        }
        layers.append((dict(chosen.values), where))
    return layers, chosen, chosen_source


def _pick(layers: list[_Layer], key: str) -> tuple[Any, str] | None:
    """The strongest layer's value of `key`, and its source; None when no layer sets it."""
    for values, sources in layers:
        if key in values:
            return values[key], sources[key]
    return None


def _base_url(layers: list[_Layer], provider: str, env: Mapping[str, str]) -> tuple[str, str, bool]:
    """The endpoint, its source, and whether it is the vendor's own: the vendor's key goes to the
    vendor's endpoint (or the one its own variable names), never by default to a server it was
    not made for."""
    # The vendor's own variable (OPENAI_BASE_URL, ...) is a machine-wide default, not a choice
    # made for agent-tui: it counts only when no flag, AGENT_TUI_BASE_URL or profile sets one.
    variable = VENDOR_BASE_URL_ENV[provider]
    if env.get(variable, "").strip():
        value = _checked(variable, "base_url", env[variable].strip(), env_text=True)
        layers.append(({"base_url": value}, {"base_url": f"env {variable}"}))
    base_url, source = _pick(layers, "base_url") or (DEFAULT_BASE_URL[provider], "default")
    return base_url, source, base_url == DEFAULT_BASE_URL[provider] or source == f"env {variable}"


def _defaults(provider: str, model: str, vendors_endpoint: bool) -> dict[str, tuple[Any, str]]:
    """The built-in values (and their sources) of the settings no layer sets."""
    from agent_tui.providers.windows import DEFAULT_CONTEXT_WINDOW, family_of

    family = family_of(model)
    table = f"built-in table ({family.prefix}*)" if family is not None else ""
    defaults: dict[str, tuple[Any, str]] = {
        "api_key_env": (
            (DEFAULT_KEY_ENV[provider], "default")
            if vendors_endpoint
            else (None, "default (a custom endpoint gets no key unless api_key_env names one)")
        ),
        "context_window": (
            (family.context_window, table)
            if family is not None
            else (DEFAULT_CONTEXT_WINDOW, "default (a model the table does not know)")
        ),
        "max_output_tokens": (None, "default (the server decides)"),
        "temperature": (None, "default (the server decides)"),
    }
    limit = family.max_output_tokens if family is not None else None
    if provider == "anthropic":
        defaults["max_output_tokens"] = (limit, table) if limit else (DEFAULT_ANTHROPIC_MAX_OUTPUT, "default")
    return defaults


def _checked(where: str, key: str, value: Any, *, env_text: bool = False) -> Any:
    try:
        return _from_env(key, value) if env_text else check_setting(key, value)
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from None


def _choose_profile(config: Config, flag: str | None, env: Mapping[str, str]) -> tuple[Profile | None, str]:
    name, source = flag, "--profile"
    if name is None and env.get(ENV_PROFILE, "").strip():
        name, source = env[ENV_PROFILE].strip(), f"env {ENV_PROFILE}"
    if name is None and config.default_profile is not None:
        name = config.default_profile
        source = f"default_profile ({config.where_set('default_profile')})"
    if name is None:
        return None, ""
    found = config.profiles.get(name)
    if found is None:
        raise ConfigError(f"{source}: {name!r}: {_no_profile(config.profiles)} in {config.path}")
    return found, source
