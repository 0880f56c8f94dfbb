"""Who may reach the web dashboard: the holder of the access token, and nobody else.

`textual-serve` has no authentication of its own; this middleware stands in front of every
route of our server (the page, the websocket, the static files, and any path that does not
exist).

Invariants:
- a request is let through only if it carries the token: as `?token=` (then a cookie is set so
  the page's own requests carry it too) or as that cookie; both are compared with
  `hmac.compare_digest`; a `?token=` that is wrong is refused even with a good cookie;
- a refusal is `403` with an empty body and nothing else: no page, no hint of what was wrong,
  of which paths exist, or that there is a token at all;
- a good `?token=` on the page is answered by a redirect to the same page without it (and
  without any other parameter a link brought), so the token does not stay in the address bar,
  the history or a `Referer`;
- the cookie is `HttpOnly`, `SameSite=Strict`, `Path=/`; a websocket whose `Origin` is not the
  page's own host is refused too (a page of another local server on another port is the same
  "site" for cookies, not the same origin);
- every answer forbids framing (clickjacking), referrers, caching of the page, and loading
  anything from elsewhere (`Content-Security-Policy`: our own origin only);
- nothing here logs, and no error names the token.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from aiohttp import hdrs, web

from agent_tui.web.access_token import AccessToken

if TYPE_CHECKING:
    from aiohttp.typedefs import Middleware

COOKIE = "agent_tui_web"
COOKIE_MAX_AGE_S = 400 * 24 * 3600  # the longest browsers keep one
TOKEN_PARAMETER = "token"

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",  # textual.js and xterm set styles of their own
        "font-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'none'",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def refused() -> web.Response:
    """The one answer to anyone without the token."""
    return web.Response(status=403, text="", content_type="text/plain")


def token_access(token: AccessToken) -> Middleware:
    """The middleware that lets only the token's holder in (see the module docstring)."""

    @web.middleware
    async def access(request: web.Request, handler: Handler) -> web.StreamResponse:
        offered = request.query.getall(TOKEN_PARAMETER, [])
        if offered:
            if len(offered) != 1 or not token.matches(offered[0]):
                return refused()
        elif not token.matches(request.cookies.get(COOKIE)):
            return refused()
        if is_websocket(request) and not same_origin(request):
            return refused()
        if offered and request.method == "GET" and not is_websocket(request):
            response: web.StreamResponse = web.HTTPSeeOther(location=without_token(request))
        else:
            try:
                response = await handler(request)
            except web.HTTPException as error:
                response = error
        if offered:
            response.set_cookie(
                COOKIE,
                token.value,
                max_age=COOKIE_MAX_AGE_S,
                path="/",
                httponly=True,
                samesite="Strict",
            )
        if not response.prepared:
            response.headers.update(SECURITY_HEADERS)
        return response

    return access


def is_websocket(request: web.Request) -> bool:
    return request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"


def same_origin(request: web.Request) -> bool:
    """Whether the request's `Origin` (when a browser sent one) is the host it was sent to."""
    origin = request.headers.get(hdrs.ORIGIN)
    if origin is None:
        return True  # not a browser's page: the token was shown, that is all that counts
    try:
        netloc = urlsplit(origin).netloc
    except ValueError:
        return False
    return bool(netloc) and netloc.lower() == request.host.lower()


def without_token(request: web.Request) -> str:
    """The request's own page, relative (a proxy may serve us under a path of its own), with no
    parameters: textual.js reads some (`ping` makes it fetch an address), so none that came with
    a link is carried over."""
    name = request.path.rsplit("/", 1)[-1]
    return f"./{name}"
