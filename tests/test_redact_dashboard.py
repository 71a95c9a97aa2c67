"""The dashboard's token (issue 20): from a file or the environment, never printed, never in the
access log (the `?token=` login and every wrong guess), and `--token VALUE` still works but warns
(it shows in the process list). No OpenSearch needed: the routes asked here answer before any
query."""

from __future__ import annotations

import io
import threading
import urllib.error
import urllib.request

import pytest

import gangscope.pipeline.dashboard as dashboard_pkg
from gangscope.pipeline.dashboard.access_log import redacted_line, redacted_target
from gangscope.pipeline.dashboard.app import create_app
from gangscope.pipeline.run.cli import main

TOKEN = "s3cret-Tok3n-4dmin-9f2a"
GUESS = "wrong-Gu3ss-77c1"


def test_secret_query_values_are_masked_and_the_rest_kept():
    assert redacted_target(f"/panel/errors?job=team-a%2Fllama&token={TOKEN}&since=now-1h") == \
        "/panel/errors?job=team-a%2Fllama&token=[REDACTED]&since=now-1h"  # fmt: skip
    assert redacted_target(f"/?tok%65n={GUESS}") == "/?tok%65n=[REDACTED]"  # an encoded name is still the name
    assert redacted_target("/?job=x&refresh=30") == "/?job=x&refresh=30"
    assert GUESS not in redacted_line(f"code 400, message Bad request syntax ('GET /?access_token={GUESS} HTTP/1.1')")


@pytest.fixture
def server():
    """The server `gangscope dashboard` runs (waitress behind the access log), its log in a buffer."""
    from gangscope.pipeline.dashboard.server import make_server as make_dashboard_server

    log = io.StringIO()
    srv = make_dashboard_server(create_app("http://127.0.0.1:9", token=TOKEN), "127.0.0.1", 0, stream=log)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.effective_port}", log
    srv.close()
    thread.join(5)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _get(url: str, headers: dict[str, str] | None = None) -> int:
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _visit(base: str) -> None:
    assert _get(f"{base}/panel/errors?job=x&token={GUESS}") == 401
    assert _get(f"{base}/panel/errors?job=x&tok%65n={GUESS}") == 401
    assert _get(f"{base}/panel/errors?job=x&token={TOKEN}") == 302  # the login: a cookie, and away
    assert _get(f"{base}/healthz", {"Cookie": f"gangscope_token={TOKEN}", "Authorization": f"Bearer {TOKEN}"}) == 200


def test_the_access_log_holds_neither_the_token_nor_a_guess_nor_a_cookie(server):
    base, log = server
    _visit(base)
    logged = log.getvalue()
    assert "/panel/errors?job=x&token=[REDACTED]" in logged and "/healthz" in logged  # the requests were logged
    assert TOKEN not in logged and GUESS not in logged


@pytest.fixture
def served(monkeypatch):
    seen = {}
    monkeypatch.setattr(dashboard_pkg, "serve", lambda url, **kw: seen.update(kw, url=url))
    monkeypatch.delenv("GANGSCOPE_DASHBOARD_TOKEN", raising=False)
    monkeypatch.delenv("GANGSCOPE_DASHBOARD_TOKEN_FILE", raising=False)
    return seen


def test_the_token_comes_from_a_file_and_is_never_printed(served, tmp_path, capsys):
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    assert main(["dashboard", "--opensearch", "http://127.0.0.1:9", "--token-file", str(path)]) == 0
    assert served["token"] == TOKEN
    printed = capsys.readouterr()
    assert TOKEN not in printed.out + printed.err and "warning" not in printed.err


def test_the_token_comes_from_the_environment(served, monkeypatch, capsys):
    monkeypatch.setenv("GANGSCOPE_DASHBOARD_TOKEN", TOKEN)
    assert main(["dashboard", "--opensearch", "http://127.0.0.1:9"]) == 0
    assert served["token"] == TOKEN
    assert TOKEN not in "".join(capsys.readouterr())


def test_the_old_token_flag_still_works_and_warns(served, capsys):
    assert main(["dashboard", "--opensearch", "http://127.0.0.1:9", "--token", TOKEN]) == 0
    assert served["token"] == TOKEN
    err = capsys.readouterr().err
    assert "process list" in err and "--token-file" in err and TOKEN not in err


def test_an_empty_or_missing_token_file_is_a_usage_error(served, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.write_text("\n")
    assert main(["dashboard", "--opensearch", "http://127.0.0.1:9", "--token-file", str(empty)]) == 2
    assert main(["dashboard", "--opensearch", "http://127.0.0.1:9", "--token-file", str(tmp_path / "nope")]) == 2
    assert not served
    assert "token-file" in capsys.readouterr().err


# A real GitHub token shape (its CRC32 checksum holds), planted where the real OpenSearch quotes
# it back: an index prefix it refuses names the index in its answer (400 invalid_index_name_exception).
PLANTED = "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"


def test_an_opensearch_error_that_quotes_a_secret_is_shown_redacted(opensearch_url):
    client = create_app(opensearch_url, prefix=f"_{PLANTED}-").test_client()
    page = client.get("/")
    answer = client.get("/api/steps")
    html = page.get_data(as_text=True)
    assert page.status_code == 503 and answer.status_code == 503
    assert "invalid_index_name_exception" in html and "[REDACTED]" in html  # the error is shown, masked
    assert "invalid_index_name_exception" in answer.get_json()["error"]
    assert PLANTED not in html and PLANTED not in answer.get_data(as_text=True)
