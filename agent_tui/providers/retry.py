"""The bounded retry policy every model adapter shares, and the safe wording of its failures.

Invariants:
- a call is retried only before its first chunk reached the engine (nothing stored is ever
  repeated), and only for what a later try can fix: 408, 409, 429 (not a spent quota), 5xx
  (and an `overloaded` or rate-limit error event), a connection that failed or broke, a
  timeout, a stream that ended before the model finished; at most `RetryPolicy.retries` times;
- before each wait the adapter yields `Retrying(attempt, delay_ms, reason)` (the status and the
  server's words); the wait is the server's `Retry-After` (or `retry-after-ms`) when it sent
  one, else exponential backoff with jitter; a `Retry-After` longer than `max_retry_after_s`
  ends the call instead of hanging a turn;
- the vendor SDKs' own retries are off (`max_retries=0`) so every retry is seen and stored;
- every message that leaves here went through `Redactor`: the API key never appears in a
  failure, a retry reason, or anything the engine stores.
"""

from __future__ import annotations

import email.utils
import json
import math
import random
import re
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import anyio
import httpx2

from agent_tui.engine import secret_rules
from agent_tui.engine.provider import ProviderChunk, ProviderFailure, Retrying

_KEY_SHAPES = re.compile(r"\b(?:sk|sk-ant|sk-proj|key)[-_][A-Za-z0-9_\-*.]{6,}")
_MESSAGE_LIMIT = 500
_REASON_LIMIT = 200
QUOTA_SPENT = frozenset({"insufficient_quota", "billing_error", "credit_balance_too_low"})
"""Error types and codes of a 429 that no wait fixes (OpenAI's spent quota, a billing limit)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry, and the HTTP timeouts of one call.

    Args:
        retries: retries after the first try (so at most `retries + 1` requests per call).
        base_delay_s: the first backoff; each retry doubles it, up to `max_delay_s`.
        max_delay_s: the longest backoff.
        max_retry_after_s: the longest `Retry-After` waited for; a longer one fails the call.
        connect_timeout_s: to open a connection.
        read_timeout_s: the longest silence between two reads of a stream.
        write_timeout_s: to send the request.
        jitter: backoffs are scaled by a random factor in [1 - jitter, 1], so many agents that
            hit the same limit do not retry in step.
    """

    retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    max_retry_after_s: float = 60.0
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 120.0
    write_timeout_s: float = 30.0
    jitter: float = 0.25

    def delay_s(self, attempt: int, retry_after_s: float | None) -> float:
        """The wait before retry number `attempt` (1-based)."""
        if retry_after_s is not None:
            return max(0.0, retry_after_s)
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return backoff * (1 - self.jitter * random.random())

    def timeout(self) -> httpx2.Timeout:
        return httpx2.Timeout(
            connect=self.connect_timeout_s,
            read=self.read_timeout_s,
            write=self.write_timeout_s,
            pool=self.connect_timeout_s,
        )


class Redactor:
    """Removes secrets from text: the key in use, anything shaped like an API key, and every
    credential the value rules find (`engine.secret_rules`: a URL's user information or secret
    parameter, a token of a known shape, an `Authorization:` header) an error may quote."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        return secret_rules.redact(_KEY_SHAPES.sub("[redacted]", text))


@dataclass(frozen=True)
class Failure:
    """One failed try, classified. `message` is for the turn's end, `reason` for `model.retry`."""

    message: str
    reason: str
    retryable: bool
    status_code: int | None = None
    retry_after_s: float | None = None


class StreamIncomplete(Exception):
    """The stream ended (cleanly, as far as HTTP goes) before the model said it was done."""


class MalformedChunk(Exception):
    """A stream event decoded as JSON but is not shaped like the API's events."""


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asks us to wait: `retry-after-ms`, `retry-after` (seconds or a date)."""
    if not headers:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if math.isfinite(seconds):
            return max(0.0, seconds)
    value = headers.get("retry-after")
    if value:
        parsed = email.utils.parsedate_tz(value)
        if parsed is not None:
            return max(0.0, email.utils.mktime_tz(parsed) - time.time())
    return None


def server_message(body: object) -> str | None:
    """The human part of an error body: `{"error": {"message": …}}` (both vendors), or the text."""
    if isinstance(body, Mapping):
        error = body.get("error", body)
        return error if isinstance(error, str) else _error_field(body, "message")
    return body.strip() if isinstance(body, str) and body.strip() else None


def _error_field(body: object, name: str) -> str | None:
    """`{"error": {name: …}}`, or the inner `{"type": …, "message": …}` the SDK keeps as body."""
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and isinstance(error.get(name), str):
            return str(error[name])
    return None


def _clip(text: str, redact: Redactor, limit: int = _MESSAGE_LIMIT) -> str:
    """`text` redacted, on one line, cut to `limit` characters. Redacted first: a cut through a
    key would leave its first part, which the redactor no longer recognises."""
    text = " ".join(redact(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def classify(error: BaseException, vendor: str, redact: Redactor) -> Failure:
    """What went wrong in one try, in words that are safe to store, and whether to retry.

    Understands both SDKs' errors by their shape (`status_code` + `response` + `body` for HTTP
    errors; `APIConnectionError`/`APITimeoutError` by name) and httpx2's transport errors.
    """
    if isinstance(error, ProviderFailure):
        return Failure(redact(error.message), "failed", False, error.status_code)
    status = getattr(error, "status_code", None)
    response = getattr(error, "response", None)
    if isinstance(status, int) and response is not None:
        return _http_failure(error, status, response, vendor, redact)
    name = type(error).__name__
    said = server_message(getattr(error, "body", None)) if name == "APIError" else None
    if said is not None:  # an error object in the middle of an OpenAI-style stream
        kind = _error_field(getattr(error, "body", None), "type") or "error"
        retryable = kind in ("server_error", "overloaded_error", "rate_limit_error")
        return Failure(
            redact(f"{vendor} reported an error: {_clip(said, redact)}"), kind.replace("_", " "), retryable
        )
    if name == "APITimeoutError" or isinstance(error, httpx2.TimeoutException):
        return Failure(f"{vendor}: the request timed out", "timed out", True)
    if name == "APIConnectionError" or isinstance(error, httpx2.TransportError | OSError):
        cause = (error.__cause__ or error.__context__) if name == "APIConnectionError" else error
        detail = (
            f" ({type(cause).__name__}: {_clip(str(cause), redact)})"
            if cause is not None and str(cause)
            else ""
        )
        return Failure(redact(f"{vendor}: the connection failed{detail}"), "connection failed", True)
    if isinstance(error, StreamIncomplete):
        return Failure(redact(f"{vendor}: {error}"), "stream ended early", True)
    if isinstance(error, json.JSONDecodeError | UnicodeDecodeError | MalformedChunk):
        return Failure(
            redact(f"{vendor} sent a malformed stream chunk: {_clip(str(error), redact)}"), "malformed", False
        )
    return Failure(redact(f"{vendor}: {name}: {_clip(str(error), redact)}"), name, False)


def _http_failure(error: BaseException, status: int, response: Any, vendor: str, redact: Redactor) -> Failure:
    """An HTTP error status, or an error event in a stream that began with 200."""
    body = getattr(error, "body", None)
    kind = _error_field(body, "type")
    said = server_message(body) or getattr(error, "message", None) or str(error)
    if status >= 400:
        phrase = _phrase(status)
        # A 429 for an exhausted quota or credit is no rate limit: waiting does not fix it.
        spent = QUOTA_SPENT & {kind, _error_field(body, "code")}
        retryable = (status in (408, 409, 429) and not spent) or status >= 500
        answer = f"{status} {phrase}"
    else:  # an error event inside a stream that began with 200 (Anthropic's `overloaded_error`)
        retryable = kind in ("overloaded_error", "rate_limit_error", "api_error")
        answer = kind.replace("_", " ") if kind else "error event"
    message = f"{vendor} answered {answer}: {_clip(said, redact)}"
    # The retry's reason carries the server's words too (which limit was hit, what is down).
    said_more = said.casefold() not in answer.casefold()
    reason = f"{answer}: {_clip(said, redact, _REASON_LIMIT)}" if said_more else answer
    headers = getattr(response, "headers", None)
    return Failure(redact(message), redact(reason), retryable, status, parse_retry_after(headers))


def _phrase(status: int) -> str:
    if status == 529:
        return "Overloaded"
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "error"


async def with_retries(
    attempt: Callable[[], AsyncIterator[ProviderChunk]], *, vendor: str, policy: RetryPolicy, redact: Redactor
) -> AsyncIterator[ProviderChunk]:
    """Run `attempt()` (one request, as a stream of chunks), retrying it under `policy`.

    Yields the chunks of the try that succeeds, preceded by one `Retrying` per failed try.
    Raises `ProviderFailure` (redacted) when a try fails after its first chunk, fails in a way
    no retry can fix, or the retries run out. Each try's stream is closed before the next one
    starts and when the caller stops early (cancel), so the connection is released at once.
    """
    retry = 0
    while True:
        started = False
        failure: Failure | None = None
        stream = attempt()
        try:
            async for chunk in stream:
                started = True
                yield chunk
            return
        except Exception as error:
            failure = classify(error, vendor, redact)
        finally:
            await _close(stream)
        assert failure is not None
        if started:
            raise ProviderFailure(
                f"{failure.message} (after the answer had begun)", status_code=failure.status_code
            )
        if not failure.retryable:
            raise ProviderFailure(failure.message, status_code=failure.status_code)
        if retry >= policy.retries:
            raise ProviderFailure(
                f"{failure.message} (gave up after {retry} retries)", status_code=failure.status_code
            )
        wait = failure.retry_after_s
        if wait is not None and wait > policy.max_retry_after_s:
            raise ProviderFailure(
                f"{failure.message} (the server asks to wait {wait:.0f} s; more than "
                f"{policy.max_retry_after_s:.0f} s, so the call ends here)",
                status_code=failure.status_code,
            )
        retry += 1
        delay = policy.delay_s(retry, wait)
        yield Retrying(retry, round(delay * 1000), failure.reason)
        await anyio.sleep(delay)


async def _close(stream: Any) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is None:
        return
    with anyio.CancelScope(shield=True), anyio.move_on_after(5):
        try:
            await aclose()
        except Exception:
            pass
