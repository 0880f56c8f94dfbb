"""`VendorProvider`: what the OpenAI and Anthropic adapters share around the vendor's SDK client.

A subclass says which SDK client to build (`_make_client`) and how one attempt streams
(`_attempt`); this class owns the rest, the same for every vendor:

Invariants:
- the SDK's own retries are off (`max_retries=0`) and its timeouts are the policy's: retries are
  driven by `with_retries`, so each one is seen as a `Retrying` chunk;
- the API key is given to the SDK client and to the `Redactor` and kept nowhere else: every
  failure's text goes through the redactor before it leaves the adapter;
- `max_context_tokens` is the settings' prompt budget (the window less the room kept for the
  answer); `aclose` closes the client's connections.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agent_tui.engine.provider import ModelRequest, ProviderChunk
from agent_tui.providers.config import NO_KEY, ModelSettings
from agent_tui.providers.retry import Redactor, RetryPolicy, with_retries


class VendorProvider:
    """The provider port over one vendor's SDK client.

    Args:
        settings: the resolved model settings (model, base URL, limits).
        api_key: the key (read from the environment by the factory); None for an endpoint that
            needs none.
        policy: retries and timeouts.
        http_client: an `httpx2.AsyncClient` to use instead of the SDK's (tests, benchmarks).
    """

    name = "vendor"

    def __init__(
        self,
        settings: ModelSettings,
        *,
        api_key: str | None,
        policy: RetryPolicy | None = None,
        http_client: Any = None,
    ) -> None:
        self.settings = settings
        self.model = settings.model
        self.max_context_tokens = settings.prompt_budget
        self.policy = policy or RetryPolicy()
        self._redact = Redactor([api_key])
        self._client = self._make_client(
            api_key=api_key or NO_KEY,
            base_url=settings.base_url,
            max_retries=0,
            timeout=self.policy.timeout(),
            http_client=http_client,
        )

    def _make_client(self, **options: Any) -> Any:
        """The vendor SDK's async client, built with `options`."""
        raise NotImplementedError

    def _attempt(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        """One try at the call: the chunks of one HTTP stream."""
        raise NotImplementedError

    async def aclose(self) -> None:
        await self._client.close()

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        return with_retries(
            lambda: self._attempt(request), vendor=self.name, policy=self.policy, redact=self._redact
        )
