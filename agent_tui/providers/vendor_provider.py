"""`VendorProvider`: what the OpenAI and Anthropic adapters share around the vendor's SDK client.

A subclass says which SDK client to build (`_make_client`), what a request's body is
(`request_params`), where it is posted (`path`, `stream_cls`) and how the stream's events are
read (`_reader`, a `StreamReader`); this class owns the rest, the same for every vendor:

Invariants:
- the SDK's own retries are off (`max_retries=0`) and its timeouts are the policy's: retries are
  driven by `with_retries`, so each one is seen as a `Retrying` chunk;
- the API key is given to the SDK client and to the `Redactor` and kept nowhere else: every
  failure's text goes through the redactor before it leaves the adapter;
- one attempt posts the request through the SDK's generic `post` and closes its stream however
  it ends; a stream that ends before the reader saw the model finish is `StreamIncomplete`;
- `max_context_tokens` is the settings' prompt budget (the window less the room kept for the
  answer); `aclose` closes the client's connections.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any, Protocol

from agent_tui.engine.provider import ModelRequest, ProviderChunk
from agent_tui.providers.config import NO_KEY, ModelSettings
from agent_tui.providers.retry import Redactor, RetryPolicy, StreamIncomplete, with_retries


class StreamReader(Protocol):
    """What one streamed answer has said so far (a fresh one per attempt)."""

    finished: bool
    """Whether the stream said the model finished its answer."""

    def read(self, event: Any) -> ProviderChunk | None:
        """Take in one decoded stream event; returns the chunk it completes, if any."""

    def last_chunks(self, fallback_model: str) -> Iterable[ProviderChunk]:
        """What the finished answer yields after its events: calls still held, then `StepDone`."""


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
    path = ""
    """The endpoint the request is posted to (`/v1/messages`)."""
    stream_cls: Any = None
    """The SDK's `AsyncStream[object]`: each event handed over as its decoded JSON."""

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

    def request_params(self, request: ModelRequest) -> dict[str, Any]:
        """The body of the request for `request` (what the server is sent)."""
        raise NotImplementedError

    def _reader(self) -> StreamReader:
        """A reader of one attempt's events."""
        raise NotImplementedError

    async def _post(self, request: ModelRequest) -> Any:
        # The SDK's generic `post` (its way to reach any endpoint) with `cast_to=object`: its HTTP,
        # timeouts, typed errors (an `error` event included) and SSE decoding, each event handed
        # over as the decoded JSON instead of built into the SDK's typed classes, which costs
        # several times what the whole engine spends on a chunk (see bench/bench_providers.py).
        return await self._client.post(
            self.path,
            cast_to=object,
            body=self.request_params(request),
            stream=True,
            stream_cls=self.stream_cls,
        )

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        """One try at the call: the chunks of one HTTP stream."""
        response = await self._post(request)
        try:
            reader = self._reader()
            while True:
                try:  # `__anext__` rather than `async for`: one async generator less per chunk
                    event = await response.__anext__()
                except StopAsyncIteration:
                    break
                chunk = reader.read(event)
                if chunk is not None:
                    yield chunk
            if not reader.finished:
                raise StreamIncomplete("the stream ended before the model finished its answer")
            for chunk in reader.last_chunks(self.model):
                yield chunk
        finally:
            await response.close()

    async def aclose(self) -> None:
        await self._client.close()

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderChunk]:
        return with_retries(
            lambda: self._attempt(request), vendor=self.name, policy=self.policy, redact=self._redact
        )
