"""Who may reach the web dashboard: the holder of the access token, and nobody else.

`textual-serve` has no authentication of its own; this middleware stands in front of every
route of our server (the entry, the page, the websocket, the static files, and any path that
does not exist).

Invariants:
- nothing the browser sends on its own is a credential, so nothing a server on another port of
  the same host could receive is one: no cookie is ever set (cookies are not isolated by port:
  one of 127.0.0.1 goes to every server on 127.0.0.1 the browser visits, even at the same path).
  The credential lives in the page's `localStorage`, which is its origin's alone (scheme, host
  and port), and is sent only by our page's script, only to our websocket;
- the token is taken at `/` only, as one `?token=` (the printed address), with `GET`: it is
  answered by the entry page, which gives the browser the session value (`AccessToken.session`)
  to keep and replaces the address with the dashboard's (`<path secret>/`): the token stays in
  no address after the first visit, and nothing else ever takes it;
- the whole dashboard (page, files, websocket) lives under `/<path secret>/`
  (`AccessToken.path_secret`); any other path, and `/` without the token, is refused. The page
  and its files hold no secret; the websocket, the one thing that acts, needs the session value
  too, offered as a subprotocol (`agent-tui.session.<value>`, never in its address), and an
  `Origin` that is the host it was sent to (when a browser sent one); the path, the token and
  the session value are compared with `hmac.compare_digest`. `<path secret>/ws` takes nothing
  but such an upgrade, and no other path takes one;
- a refusal is `403` with an empty body and nothing else: no page, no hint of what was wrong,
  of which paths exist, or that there is a token at all;
- a cookie `agent_tui_web` that an earlier version set (its value was the token, with `Path=/`)
  is deleted by every answer to a request that carries it;
- the page is answered with no parameters (a link's `?ping=` would make textual.js fetch an
  address): a page address with any is redirected to the bare one;
- every answer forbids framing (clickjacking), referrers, caching, and loading anything from
  elsewhere (`Content-Security-Policy`: our own origin only);
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

OLD_COOKIE = "agent_tui_web"
"""The cookie earlier versions set to the token itself; deleted wherever it shows up."""
TOKEN_PARAMETER = "token"
WEBSOCKET = "ws"
"""The websocket's path under the dashboard's, and the one path that takes an upgrade."""
APP_PROTOCOL = "agent-tui"
"""The websocket subprotocol the server agrees to (a browser needs one agreed when it offers any)."""
SESSION_PROTOCOL = "agent-tui.session."
"""The offered subprotocol that carries the session value after this prefix."""

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
        response = await _answer(token, request, handler)
        if not response.prepared:
            if OLD_COOKIE in request.cookies:
                response.del_cookie(OLD_COOKIE, path="/")
            response.headers.update(SECURITY_HEADERS)
        return response

    return access


async def _answer(token: AccessToken, request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path == "/":
        offered = request.query.getall(TOKEN_PARAMETER, [])
        entry = request.method == "GET" and not is_websocket(request)
        if not entry or len(offered) != 1 or not token.matches(offered[0]):
            return refused()
    else:
        segment, slash, rest = request.path[1:].partition("/")
        if not token.path_matches(segment):
            return refused()
        if is_websocket(request) or rest == WEBSOCKET:
            if not is_websocket(request) or rest != WEBSOCKET:
                return refused()
            if not same_origin(request) or not token.session_matches(offered_session(request)):
                return refused()
        elif request.query_string and slash and not rest:
            return web.HTTPSeeOther(location="./")
    try:
        return await handler(request)
    except web.HTTPException as error:
        return error


def is_websocket(request: web.Request) -> bool:
    return request.headers.get(hdrs.UPGRADE, "").lower() == "websocket"


def offered_session(request: web.Request) -> str | None:
    """The session value among the websocket's offered subprotocols (None: none, or several)."""
    offered = [
        part.strip().removeprefix(SESSION_PROTOCOL)
        for header in request.headers.getall(hdrs.SEC_WEBSOCKET_PROTOCOL, [])
        for part in header.split(",")
        if part.strip().startswith(SESSION_PROTOCOL)
    ]
    return offered[0] if len(offered) == 1 else None


def same_origin(request: web.Request) -> bool:
    """Whether the request's `Origin` (when a browser sent one) is the host it was sent to."""
    origin = request.headers.get(hdrs.ORIGIN)
    if origin is None:
        return True  # not a browser's page: the session value was shown, that is all that counts
    try:
        netloc = urlsplit(origin).netloc
    except ValueError:
        return False
    return bool(netloc) and netloc.lower() == request.host.lower()
