"""flott's web dashboard: static files (HTML, ES modules, CSS; no build step) served by the REST
endpoint at ``/`` and ``/web/<file>``.

The pages call flott's REST routes with relative URLs, so the dashboard works behind a path
prefix. Only the files shipped in ``static/`` are served, by exact name (read once at start:
no path from a request ever reaches the file system), with a Content-Security-Policy that
allows scripts and styles from the endpoint itself only (a job name or an exception text
can never run as script, even if a page forgot to escape it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web

STATIC_DIR = Path(__file__).parent / "static"
_CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'"
    ),
}


class Dashboard:
    """The static files of ``directory``, by name, with their content types."""

    def __init__(self, directory: Path = STATIC_DIR) -> None:
        self._files: dict[str, tuple[bytes, str]] = {}
        if directory.is_dir():
            for p in directory.iterdir():
                if p.is_file() and not p.is_symlink() and p.suffix in _CONTENT_TYPES:
                    self._files[p.name] = (p.read_bytes(), _CONTENT_TYPES[p.suffix])

    @property
    def names(self) -> list[str]:
        return sorted(self._files)

    def _serve(self, request: web.Request, name: str) -> web.Response:
        found = self._files.get(name)
        if found is None:
            # the endpoint's guard answers it as Flink's {"errors": ["Not found: <path>"]}; the
            # dashboard sits below the REST floor and does not import its errors
            raise web.HTTPNotFound()
        body, content_type = found
        return web.Response(body=body, headers={"Content-Type": content_type, **_HEADERS})

    async def index(self, request: web.Request) -> web.StreamResponse:
        return self._serve(request, "index.html")

    async def file(self, request: web.Request) -> web.StreamResponse:
        return self._serve(request, request.match_info["filename"])

    def routes(self) -> list[tuple[str, Callable[[web.Request], Awaitable[web.StreamResponse]]]]:
        """``(path, handler)`` for the endpoint to register (GET, unversioned)."""
        return [("/", self.index), ("/index.html", self.index), ("/web/{filename}", self.file)]
