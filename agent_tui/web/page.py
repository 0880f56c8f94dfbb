"""Our own page and the files it loads, all served by this server: it fetches nothing from
elsewhere.

`textual-serve`'s own template loads a web font from the internet; ours (`page/index.html`)
loads `textual-serve`'s terminal script and stylesheet and its Roboto Mono fonts from the
installed package, and our own script and stylesheet from `page/`. Everything is served under
the dashboard's path secret (`/<path secret>/`); `/` serves only the entry page, which hands the
browser the session value and moves it to the dashboard (`access` decides who gets either).

Invariants:
- only the files named in `THEIR_FILES` and `OUR_STATIC` are served, each from a fixed place: no directory
  listing, no path taken from the request (a `..` or an encoded slash matches no name);
- every reference in the pages and stylesheets is relative (a TLS proxy may serve the
  dashboard under a path of its own);
- the entry page names the session value and the dashboard's path, and nothing else: no script
  of its own inline (the `Content-Security-Policy` allows none), only `enter.js`;
- a file of the installed `textual-serve` that is missing is a `PageError` at start, naming it.
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

OUR_FILES = Path(__file__).with_name("page")


class PageError(Exception):
    """A file the page needs is not installed; one sentence naming it."""


THEIR_FILES = (
    "js/textual.js",
    "css/xterm.css",
    "fonts/RobotoMono-VariableFont_wght.ttf",
    "fonts/RobotoMono-Italic-VariableFont_wght.ttf",
)
"""The files of the installed `textual-serve` the page loads, by their place under its `static/`."""
OUR_STATIC = ("web.js", "web.css", "enter.js")
"""Our own files in `page/`, served as `agent-tui/NAME`."""
CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".ttf": "font/ttf"}


def textual_serve_static() -> Path:
    import textual_serve

    return Path(textual_serve.__file__).parent / "static"


def static_files() -> dict[str, Path]:
    """Every file under `/static/` the page may load, by its name there."""
    theirs = textual_serve_static()
    files = {name: theirs / name for name in THEIR_FILES}
    files |= {f"agent-tui/{name}": OUR_FILES / name for name in OUR_STATIC}
    for path in files.values():
        if not path.is_file():
            raise PageError(f"{path}: missing (reinstall agent-tui-dashboard[bus])")
    return files


class Page:
    """The entry page (`/`), the page (`/<path_secret>/`) and its files
    (`/<path_secret>/static/NAME`), read once at start.

    Args:
        path_secret: the one path segment the dashboard is served under.
        session: the value the entry page gives the browser to keep.
    """

    def __init__(self, path_secret: str, session: str) -> None:
        self.path_secret = path_secret
        self.files = static_files()
        self.index = (OUR_FILES / "index.html").read_bytes()
        self.entry = (
            (OUR_FILES / "enter.html")
            .read_text(encoding="utf-8")
            .replace("{path_secret}", path_secret)
            .replace("{session}", session)
            .encode("utf-8")
        )
        self._bodies = {name: path.read_bytes() for name, path in self.files.items()}

    @property
    def root(self) -> str:
        """The dashboard's own path: `/<path_secret>/`."""
        return f"/{self.path_secret}/"

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/", self.handle_entry),
            web.get(self.root.rstrip("/"), self.handle_root_without_slash),
            web.get(self.root, self.handle_index),
            web.get(self.root + "static/{name:.+}", self.handle_static),
        ]

    async def handle_entry(self, request: web.Request) -> web.Response:
        return web.Response(body=self.entry, content_type="text/html", charset="utf-8")

    async def handle_root_without_slash(self, request: web.Request) -> web.Response:
        raise web.HTTPPermanentRedirect(location=f"./{self.path_secret}/")

    async def handle_index(self, request: web.Request) -> web.Response:
        return web.Response(body=self.index, content_type="text/html", charset="utf-8")

    async def handle_static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        path = self.files.get(name)
        if path is None:
            raise web.HTTPNotFound()
        return web.Response(body=self._bodies[name], content_type=CONTENT_TYPES[path.suffix])
