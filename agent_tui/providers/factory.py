"""`build_provider`: resolved settings in, a ready model provider out (the only reader of API keys).

Invariants:
- the key is read from the environment variable the settings name, here and nowhere else (by
  default through `engine.vault.ENVIRONMENT`, which still has the keys the start-up took out
  of the process environment), and handed to the adapter, which keeps it out of every message it produces;
- a key variable that is named (by default, the vendor's, for the vendor's endpoint) but empty
  is a `ConfigError` naming it, never a failed request later; with none named, no key is sent
  (a local server);
- the vendor SDKs are imported only when a provider is built, so commands that never talk to a
  model stay quick.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_tui.engine.provider import ModelProvider
from agent_tui.engine.vault import ENVIRONMENT
from agent_tui.providers.config import ConfigError, ModelSettings
from agent_tui.providers.retry import RetryPolicy


def build_provider(
    settings: ModelSettings,
    env: Mapping[str, str] = ENVIRONMENT,
    *,
    policy: RetryPolicy | None = None,
    http_client: Any = None,
) -> ModelProvider:
    """The adapter for `settings.provider`, given its key from `env[settings.api_key_env]` (if any).

    Args:
        settings: from `config.resolve_settings`.
        env: where the key is read.
        policy: retries and timeouts (the defaults when None).
        http_client: an `httpx2.AsyncClient` for the SDK (tests and benchmarks use an in-process
            transport).

    Raises:
        ConfigError: the key's variable is named but not set.
    """
    key = None
    if settings.api_key_env is not None:
        key = env.get(settings.api_key_env) or None
        if key is None:
            source = settings.sources.get("api_key_env", "default")
            raise ConfigError(
                f"{settings.api_key_env} is not set: {settings.provider} at {settings.base_url} needs "
                f"an API key in that environment variable (its name comes from: {source})"
            )
    if settings.provider == "openai":
        from agent_tui.providers.openai_chat import OpenAIChatProvider

        return OpenAIChatProvider(settings, api_key=key, policy=policy, http_client=http_client)
    if settings.provider == "anthropic":
        from agent_tui.providers.anthropic_messages import AnthropicMessagesProvider

        return AnthropicMessagesProvider(settings, api_key=key, policy=policy, http_client=http_client)
    raise ConfigError(f"unknown provider {settings.provider!r} (known: openai, anthropic)")
