"""The dashboard's access log without its secrets (issue 20).

The web server writes one line per request: method, target and status. The target's query
string can hold the access token (`?token=...` logs in once; every wrong guess is logged too),
so the value of every query parameter whose name holds a word that says secret (`token`,
`key`, `pass`, `secret`, `auth`, `sig`, `credential`, `code`; the dashboard's own parameters,
`job`, `since`, `until`, `refresh`, hold none) is written as `[REDACTED]`, whatever it is. Headers (the `Authorization` bearer, the token cookie) are never
written: the handler logs the request line only, and error messages are passed through the
same redaction.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote_plus

from werkzeug.serving import WSGIRequestHandler

MASK = "[REDACTED]"
# Words that make a query parameter secret wherever they sit in its name.
SECRET_WORDS = ("token", "key", "pass", "secret", "auth", "sig", "credential", "code")
_PARAM = re.compile(r"(?P<lead>[?&;])(?P<name>[^=&;#\s]*)=(?P<value>[^&;#\s]*)")
_TARGET = re.compile(r"\S*\?\S*")


def _secret_param(name: str) -> bool:
    name = unquote_plus(name).lower()
    return any(word in name for word in SECRET_WORDS)


def redacted_target(target: str) -> str:
    """A request target (path and query) with the values of secret query parameters masked."""
    if "?" not in target:
        return target
    path, _, query = target.partition("?")
    masked = _PARAM.sub(lambda m: m["lead"] + m["name"] + "=" + (MASK if _secret_param(m["name"]) else m["value"]),
                        "?" + query)  # fmt: skip
    return path + masked


def redacted_line(text: str) -> str:
    """Any log text with the query string of every target in it redacted (a request line, or an
    error message quoting one)."""
    return _TARGET.sub(lambda m: redacted_target(m[0]), text) if "?" in text else text


class RedactingRequestHandler(WSGIRequestHandler):
    """Werkzeug's request handler, logging targets with their secret parameters masked."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        path, line = getattr(self, "path", None), getattr(self, "requestline", "")
        try:
            if path is not None:
                self.path = redacted_target(path)
            self.requestline = redacted_line(line)
            super().log_request(code, size)
        finally:
            if path is not None:
                self.path = path
            self.requestline = line

    def log(self, type: str, message: str, *args: Any) -> None:
        args = tuple(redacted_line(a) if isinstance(a, str) else a for a in args)
        super().log(type, redacted_line(message), *args)
