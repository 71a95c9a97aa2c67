"""The dashboard web app: Flask routes over the panels, rendered by templates/dashboard.

Routes: `/` every panel, `/panel/<name>` one panel, `/api/<name>` one panel's numbers as JSON,
`/healthz`. Query parameters `job`, `since`, `until` filter every panel; `refresh` sets the
auto-refresh in seconds (0 turns it off). With a token, every route but /healthz wants
`Authorization: Bearer <token>` (or the cookie that `?token=<token>` sets once).
"""

from __future__ import annotations

import hmac
import math
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from flask import Flask, Response, abort, jsonify, redirect, request

import gangscope.templates
from gangscope.pipeline.isolation import redacted
from gangscope.pipeline.sinks import indices
from gangscope.pipeline.dashboard.panels import PANELS
from gangscope.pipeline.dashboard.query import Filters, Search, iso_ms, jobs
from gangscope.pipeline.sinks.indices import OpenSearchError

DEFAULT_REFRESH_S = 30
TOKEN_COOKIE = "gangscope_token"
TIME_RANGES = (("", "all time"), ("now-15m", "last 15 min"), ("now-1h", "last hour"), ("now-6h", "last 6 hours"),
               ("now-24h", "last 24 hours"), ("now-7d", "last 7 days"), ("now-30d", "last 30 days"))
_TEMPLATE_DIR = Path(gangscope.templates.__file__).parent / "dashboard"


@cache
def environment() -> jinja2.Environment:
    """Autoescape on for everything: every string on these pages may come from a log line."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(_TEMPLATE_DIR), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(num=fmt_num, duration=fmt_duration, when=fmt_when, pct=fmt_pct, ms_when=fmt_ms_when)
    return env


def fmt_num(v: Any, digits: int = 4) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.{digits}g}"
    return str(v)


def fmt_pct(v: float | None) -> str:
    return "–" if v is None else f"{v * 100:.1f}%"


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = int(round(seconds))
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    parts = [f"{d}d"] if d else []
    parts += [f"{h}h"] if h or d else []
    parts += [f"{m}m"] if (m or h or d) and not d else []
    if not d and not h:
        parts.append(f"{s}s")
    return " ".join(parts)


def fmt_when(value: str | None) -> str:
    """An RFC 3339 time as `YYYY-MM-DD HH:MM:SS.fffZ` (UTC), without the noise of nanoseconds."""
    ms = iso_ms(value)
    return fmt_ms_when(ms) if ms is not None else (value or "–")


def fmt_ms_when(ms: float | None) -> str:
    if ms is None:
        return "–"
    t = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def create_app(opensearch_url: str, prefix: str = "", token: str | None = None, *,
               refresh_s: int = DEFAULT_REFRESH_S, **connection: Any) -> Flask:
    """The dashboard for one cluster. `connection`: username, password, ca_certs, client_cert,
    client_key, verify_certs, timeout (as for `indices.connect`)."""
    app = Flask("gangscope.dashboard")
    client = indices.connect(opensearch_url, **connection)
    search = Search(client, prefix, indices.redact(opensearch_url))
    env = environment()

    @app.before_request
    def _auth():
        if not token or request.path == "/healthz":
            return None
        given = None
        header = request.headers.get("Authorization", "")
        if header.startswith("Bearer "):
            given = header[7:].strip()
        elif request.args.get("token"):
            if hmac.compare_digest(request.args["token"].encode(), token.encode()):
                args = {k: v for k, v in request.args.items() if k != "token"}
                target = request.path + ("?" + urlencode(args) if args else "")
                response = redirect(_safe_local(target))
                # Secure over https (the request's own, or a trusted proxy's X-Forwarded-Proto): never sent in clear
                response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="Strict", secure=request.is_secure)
                return response
        else:
            given = request.cookies.get(TOKEN_COOKIE)
        if given is None or not hmac.compare_digest(given.encode(), token.encode()):
            return Response("unauthorized: send Authorization: Bearer <token>\n", 401,
                            {"WWW-Authenticate": 'Bearer realm="gangscope"', "Content-Type": "text/plain"})
        return None

    def page_context(panel_names: list[str]) -> dict[str, Any]:
        filters, problems = Filters.from_args(request.args)
        refresh = _refresh(request.args.get("refresh"), refresh_s)
        context: dict[str, Any] = {"filters": filters, "problems": problems, "refresh": refresh,
                                   "time_ranges": TIME_RANGES, "panels": [], "jobs": [], "error": None,
                                   "all_panels": list(PANELS.values()),
                                   "generated": fmt_ms_when(datetime.now(timezone.utc).timestamp() * 1000)}
        try:
            context["jobs"] = jobs(search, filters)
            for name in panel_names:
                panel = PANELS[name]
                context["panels"].append({"name": name, "title": panel.TITLE, "template": panel.TEMPLATE,
                                          "data": panel.view(panel.query(search, filters))})
        except OpenSearchError as exc:
            context["error"] = redacted(str(exc))  # an answer can quote what was sent
        return context

    def render(panel_names: list[str]) -> Response:
        context = page_context(panel_names)
        html = env.get_template("page.html.j2").render(**context)
        return Response(html, 503 if context["error"] else 200, {"Content-Type": "text/html; charset=utf-8"})

    @app.get("/")
    def index():
        return render(list(PANELS))

    @app.get("/panel/<name>")
    def panel_page(name: str):
        if name not in PANELS:
            abort(404)
        return render([name])

    @app.get("/api/<name>")
    def panel_json(name: str):
        if name not in PANELS:
            return jsonify({"error": f"no panel {name!r}; panels: {', '.join(PANELS)}"}), 404
        filters, problems = Filters.from_args(request.args)
        try:
            data = PANELS[name].query(search, filters)
        except OpenSearchError as exc:
            return jsonify({"error": redacted(str(exc))}), 503
        return jsonify({"panel": name, "filters": filters.as_dict(), "problems": problems, "data": data})

    @app.get("/healthz")
    def healthz():
        return {"ok": True}

    return app


def _refresh(raw: str | None, default: int) -> int:
    try:
        value = int(raw) if raw not in (None, "") else default
    except ValueError:
        return default
    return max(0, min(value, 3600))


def _safe_local(target: str) -> str:
    # Only ever redirect within this site.
    return target if target.startswith("/") and not target.startswith("//") else "/"

