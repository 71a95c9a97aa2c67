"""Serving the dashboard: waitress, a production WSGI server, in the one `gangscope dashboard` command.

Flask's own server (Werkzeug's, `flask run`) says it is for development only: one process,
no limits on what a slow client holds, no request queue. waitress is pure Python, on every
platform, with a bounded thread pool and request queue. waitress writes no access log of its
own: `AccessLog` writes one line per request in the common log format, with the values of
secret query parameters masked by the same rule as before (access_log.redacted_target; the
token never reaches a log) and no header at all.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Iterable, TextIO

from gangscope.pipeline.dashboard.access_log import redacted_target

THREADS = 8  # requests served at once; more wait in waitress' queue
CHANNEL_TIMEOUT_S = 120  # an idle client connection is closed after this


class AccessLog:
    """WSGI middleware: one line per request on `stream`,
    `client - - [time] "METHOD target PROTOCOL" status bytes`, secrets masked."""

    def __init__(self, app: Callable, stream: TextIO | None = None) -> None:
        self.app = app
        self.stream = stream

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        def start(status: str, headers: list, exc_info: Any = None):
            # written when the status is known, before the body goes out
            length = next((v for k, v in headers if k.lower() == "content-length"), "-")
            self._write(environ, status.split(" ", 1)[0], length)
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

        return self.app(environ, start)

    def _write(self, environ: dict[str, Any], status: str, length: str) -> None:
        target = environ.get("PATH_INFO", "") or "/"
        if environ.get("QUERY_STRING"):
            target += "?" + environ["QUERY_STRING"]
        when = time.strftime("%d/%b/%Y %H:%M:%S", time.localtime())
        line = (f'{environ.get("REMOTE_ADDR", "-")} - - [{when}] "{environ.get("REQUEST_METHOD", "-")} '
                f'{redacted_target(target)} {environ.get("SERVER_PROTOCOL", "-")}" {status} {length}')
        stream = self.stream or sys.stderr
        stream.write(line + "\n")
        stream.flush()


def make_server(app: Callable, host: str = "127.0.0.1", port: int = 8050, stream: TextIO | None = None,
                trusted_proxy: str | None = None):
    """A waitress server for `app` behind AccessLog, bound and listening (port 0: any free
    port, `server.effective_port` says which); `server.run()` serves until `server.close()`.
    `trusted_proxy`: the address whose X-Forwarded-Proto waitress believes (the request is then
    https, and the token cookie Secure); every other proxy header, and any from elsewhere, dropped."""
    from waitress import create_server

    proxy = {"trusted_proxy": trusted_proxy, "trusted_proxy_headers": {"x-forwarded-proto"}} if trusted_proxy else {}
    return create_server(AccessLog(app, stream), host=host, port=port, threads=THREADS,
                         channel_timeout=CHANNEL_TIMEOUT_S, clear_untrusted_proxy_headers=True, **proxy)


def serve(opensearch_url: str, *, host: str = "127.0.0.1", port: int = 8050, prefix: str = "",
          token: str | None = None, on_listening: Callable[[int], None] | None = None,
          trusted_proxy: str | None = None, **connection: Any) -> None:
    """Run the dashboard with waitress until interrupted (127.0.0.1 by default). `on_listening`
    is called with the port once the socket listens (port 0: the one the system chose), so
    "dashboard on ..." is never said before a request can be answered."""
    from gangscope.pipeline.dashboard.app import create_app

    server = make_server(create_app(opensearch_url, prefix, token, **connection), host, port,
                         trusted_proxy=trusted_proxy)
    if on_listening is not None:
        on_listening(server.effective_port)
    try:
        server.run()
    finally:
        server.close()
