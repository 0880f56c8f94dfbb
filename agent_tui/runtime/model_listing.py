"""`agent-tui models`: the configured models, each setting beside where it came from.

Invariants:
- a key is shown only as `set` or `missing` (with the NAME of its variable), never its value;
- the listing never fails on one bad profile: a profile that cannot be resolved shows its
  error in place, and the rest is still listed;
- "in use now" is exactly what `agent-tui run` would use with the same flags and environment;
- its first lines say where shell commands run (`shell_settings.sandbox_state`): in the sandbox,
  or why not.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent_tui.engine.vault import ENVIRONMENT
from agent_tui.events.wording import counted
from agent_tui.providers.config import (
    HOW_TO_CONFIGURE,
    SETTINGS,
    Config,
    ConfigError,
    ModelSettings,
    resolve_settings,
)
from agent_tui.runtime.shell_settings import sandbox_state

_WIDTH = 18


def models_report(
    config: Config,
    *,
    profile: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] = ENVIRONMENT,
) -> str:
    """The text `agent-tui models` prints (ends with a newline)."""
    count = len(config.profiles)
    where = f"{config.path}" + ("" if config.exists else " (not found: no profiles)")
    lines = [f"config file: {where}"]
    if config.exists:
        default = f"; default_profile: {config.default_profile}" if config.default_profile else ""
        lines[0] += f" ({counted(count, 'profile')}{default})"
    lines.append(f"sandbox: {sandbox_state(config)}")
    lines += ["", "in use now (what `agent-tui run` uses with these flags and this environment):"]
    try:
        current = resolve_settings(
            config, profile=profile, provider=provider, model=model, base_url=base_url, env=env
        )
    except ConfigError as error:
        lines.append(f"  error: {error}")
    else:
        if current is None:
            lines.append("  nothing is configured, so the dashboard runs the demo.")
            lines.append("  " + HOW_TO_CONFIGURE.format(path=config.path))
        else:
            lines += _settings_lines(current, env)
    for name in sorted(config.profiles):
        lines += ["", f"profile {name}{' (default)' if name == config.default_profile else ''}:"]
        try:
            resolved = resolve_settings(config, profile=name, env=env)
        except ConfigError as error:
            lines.append(f"  error: {error}")
            continue
        assert resolved is not None  # a chosen profile always resolves to settings
        lines += _settings_lines(resolved, env, show_profile=False)
    return "\n".join(lines) + "\n"


def _settings_lines(
    settings: ModelSettings, env: Mapping[str, str], *, show_profile: bool = True
) -> list[str]:
    rows: list[tuple[str, str, str]] = []
    if show_profile and settings.profile is not None:
        rows.append(("profile", settings.profile, settings.sources.get("profile", "")))
    for name in SETTINGS:
        value = getattr(settings, name)
        shown = "(not sent)" if value is None else str(value)
        rows.append((name, shown, settings.sources.get(name, "")))
    state = settings.key_state(env)
    if state == "none":
        rows.append(("key", "none sent", settings.sources.get("api_key_env", "")))
    else:
        note = "read from the environment only" if state == "set" else "needed: set it to use this model"
        rows.append(("key", f"{settings.api_key_env}: {state}", note))
    value_width = max(len(value) for _, value, _ in rows)
    return [f"  {name:<{_WIDTH}} {value:<{value_width}}  {source}".rstrip() for name, value, source in rows]
