"""An HTTP transport that stops reading a response body past a size: what a streamable-HTTP MCP
server may send us in one answer.

Invariants:
- a body is passed on chunk by chunk as it arrives; once more than `limit` bytes came, reading
  stops with `httpx2.StreamError` (the error the SDK turns into a failed request rather than a
  broken connection), whose message says the limit;
- everything else (connecting, headers, streaming SSE) is the wrapped transport's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2

__all__ = ["BoundedTransport"]


class _BoundedStream(httpx2.AsyncByteStream):
    def __init__(self, stream: httpx2.AsyncByteStream, limit: int) -> None:
        self._stream = stream
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._stream:
            seen += len(chunk)
            if seen > self._limit:
                raise httpx2.StreamError(f"the server sent over {self._limit // 2**20} MB in one answer")
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


class BoundedTransport(httpx2.AsyncBaseTransport):
    """`httpx2.AsyncHTTPTransport` whose response bodies stop at `limit` bytes."""

    def __init__(self, limit: int) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _BoundedStream(response.stream, self._limit)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
