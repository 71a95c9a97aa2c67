"""The dashboard's access log without its secrets (issue 20).

The dashboard's server (server.AccessLog) writes one line per request: method, target and status. The target's query
string can hold the access token (`?token=...` logs in once; every wrong guess is logged too),
so the value of every query parameter whose name holds a word that says secret (`token`,
`key`, `pass`, `secret`, `auth`, `sig`, `credential`, `code`; the dashboard's own parameters,
`job`, `since`, `until`, `refresh`, hold none) is written as `[REDACTED]`, whatever it is. Headers (the `Authorization` bearer, the token cookie) are never
written: the log has the request line only, and error messages can be passed through the
same redaction (redacted_line).
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

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

