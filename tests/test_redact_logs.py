"""What gangscope writes about itself holds no secret (issue 20): the consume service's structlog
lines and the libraries' log records (pipeline/run/log_redaction.py), and what the command line
and the dashboard write on stderr. The secrets are planted where such lines take their text
from: the OpenSearch URL's userinfo, a server's error answer, an exception's message, a poison
message whose parsing fails, a library's warning. Each process runs in a child: logging is
configured once per process, for good."""

from __future__ import annotations

import json
import re
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "fixtures" / "runs" / "rank_raises"
CLI = [sys.executable, "-c", "from gangscope.pipeline.run.cli import main; raise SystemExit(main())"]

# Made-up values of real formats (tests/secrets_corpus.py has the families).
URL_PASSWORD = "Url-Pa55w0rd-x9"
GITHUB = "ghp_" + "R8kT2mQ9vL4xW7zN1pB6cF3hJ5sD0gY8aE2u"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJnYW5nc2NvcGUtdGVzdCJ9.Zm9vYmFyYmF6cXV4cXV1eGNvcmdl"
DB_PASSWORD = "Db-Pa55w0rd-7731"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYz9EXAMPLE1"
SECRETS = (URL_PASSWORD, GITHUB, JWT, DB_PASSWORD, AWS_SECRET)
# An error answer that quotes what it was sent, as servers and proxies do.
ERROR_REASON = (f"request rejected: Authorization: Bearer {JWT}; token {GITHUB}; "
                f"DB_PASSWORD={DB_PASSWORD}; aws_secret_access_key={AWS_SECRET}")
# What must survive next to them.
KEPT = "TOKEN_LIMIT=4096 NoCredentialsError: Unable to locate credentials"


def _assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} in:\n{text[-3000:]}"


class _ProxyAnswer(BaseHTTPRequestHandler):
    """Answers every request with the server's `status` and `body`: a misbehaving proxy in front
    of OpenSearch (a login page, a gateway's error that quotes the request's headers)."""

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = self.server.body.encode()
        self.send_response(self.server.status)
        self.send_header("Content-Type", self.server.content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _answer

    def log_message(self, *args):
        pass


@pytest.fixture
def misbehaving_proxy():
    """Not OpenSearch: a misbehaving proxy in front of it, whose every answer is an error quoting
    secrets (the headers it was sent, a login page), which the real OpenSearch never answers.
    What the real server can produce is asserted against it (the `*_real_opensearch` tests
    below). Yields a function setting (status, body, content type) and the URL with credentials
    in its userinfo."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _ProxyAnswer)
    srv.status, srv.content_type = 500, "application/json"
    srv.body = json.dumps({"error": {"type": "exception", "reason": ERROR_REASON}, "status": 500})
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()

    def answer(status: int, body: str, content_type: str = "application/json") -> None:
        srv.status, srv.body, srv.content_type = status, body, content_type

    yield answer, f"http://admin:{URL_PASSWORD}@127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    thread.join(5)


def _child(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


# ----------------------------------------------------------------------------- the processor


def _consume_until_unreachable(log: Path, *args: str) -> tuple[str, dict[str, dict]]:
    """`gangscope consume ARGS` in a child, until it has logged that OpenSearch is unreachable (and
    waits), then SIGTERM, which it must answer with exit 0: (its log, its first line of each event)."""
    with open(log, "wb") as out:
        proc = subprocess.Popen([*CLI, "consume", *args, "--metrics-port", "-1", "--backoff-initial", "0.1",
                                 "--backoff-max", "0.2"],
                                stdout=out, stderr=out, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        try:
            deadline = time.monotonic() + 60
            while "opensearch unreachable" not in log.read_text():
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "no 'opensearch unreachable' in 60 s:\n" + log.read_text()
                time.sleep(0.2)
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(60) == 0, log.read_text()
    text = log.read_text()
    first: dict[str, dict] = {}
    for line in text.splitlines():
        entry = json.loads(line)  # every line stays JSON
        first.setdefault(entry["event"], entry)
    return text, first


def test_every_value_of_the_service_log_lines_is_redacted_and_the_lines_stay_json():
    done = _child(f"""
        import logging, structlog
        from gangscope.pipeline.run import log_redaction
        log_redaction.configure("info")
        log = structlog.get_logger("gangscope.consume")
        log.info("starting", opensearch="http://admin:{URL_PASSWORD}@db:9200", sasl_password="***")
        log.warning("opensearch unreachable, waiting", error={ERROR_REASON!r}, retry_in=0.5)
        log.warning("nested", example={{"message": ["x", {{"token": "{GITHUB}"}}]}}, obj=RuntimeError("key {GITHUB}"))
        log.warning("secret-named key", db_password="{DB_PASSWORD}")
        log.info("kept", line={KEPT!r}, TOKEN_LIMIT=4096, PAD_TOKEN=0)
        try:
            raise ValueError("cannot parse 'DB_PASSWORD={DB_PASSWORD}'")
        except ValueError:
            log.exception("unit of work failed and was skipped")
    """)
    assert done.returncode == 0, done.stderr
    _assert_clean(done.stderr)
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    by_event = {line["event"]: line for line in lines}
    assert by_event["starting"]["opensearch"] == "http://admin:[REDACTED]@db:9200"
    assert by_event["starting"]["sasl_password"] == "***"
    assert by_event["opensearch unreachable, waiting"]["retry_in"] == 0.5
    assert by_event["secret-named key"]["db_password"] == "[REDACTED]"
    assert by_event["kept"] == {**by_event["kept"], "line": KEPT, "TOKEN_LIMIT": 4096, "PAD_TOKEN": 0}
    failed = by_event["unit of work failed and was skipped"]
    assert "ValueError: cannot parse 'DB_PASSWORD=[REDACTED]'" in failed["exception"]


def test_the_libraries_log_records_and_their_tracebacks_are_redacted():
    done = _child(f"""
        import logging
        from gangscope.pipeline.run import log_redaction
        log_redaction.configure("info")
        logging.getLogger("kafka.conn").warning("SASL login as %s failed: %s", "ml", {ERROR_REASON!r})
        try:
            raise ConnectionError("GET https://admin:{URL_PASSWORD}@os:9200/ failed")
        except ConnectionError:
            logging.getLogger("opensearch").error("request failed", exc_info=True)
        logging.getLogger("kafka.client").warning({KEPT!r})
    """)
    assert done.returncode == 0, done.stderr
    _assert_clean(done.stderr)
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    assert lines[0]["logger"] == "kafka.conn" and lines[0]["event"].startswith("SASL login as ml failed: request rejected")
    assert "ConnectionError: GET https://admin:[REDACTED]@os:9200/ failed" in lines[1]["exception"]
    assert lines[2]["event"] == KEPT


def test_the_command_lines_stderr_and_an_uncaught_exception_pass_the_redactor():
    done = _child(f"""
        import sys, warnings
        from gangscope.pipeline.run import cli, log_redaction

        def boom(args, err):
            err.print("gangscope: OpenSearch answered 500: " + {ERROR_REASON!r}, markup=False)
            sys.stderr.write({KEPT!r} + "\\n")
            warnings.warn("retrying https://admin:{URL_PASSWORD}@os:9200")
            raise RuntimeError("crashed on DB_PASSWORD={DB_PASSWORD}")

        cli.COMMANDS["indices"] = boom
        cli.main(["indices", "--opensearch", "http://127.0.0.1:9"])
    """)
    assert done.returncode == 1
    _assert_clean(done.stderr)
    assert "OpenSearch answered 500: request rejected" in done.stderr
    assert KEPT in done.stderr
    assert "RuntimeError: crashed on DB_PASSWORD=[REDACTED]" in done.stderr  # the traceback, redacted


# ----------------------------------------------------------------------------- the commands


def test_replay_through_a_proxy_that_answers_an_error_quoting_secrets_says_so_without_them(misbehaving_proxy, tmp_path):
    _answer, url = misbehaving_proxy
    done = subprocess.run([*CLI, "replay", str(RUN), "--opensearch", url, "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    _assert_clean(done.stdout + done.stderr)
    assert "answered 500: exception: request rejected: Authorization: Bearer [REDACTED]" in done.stderr


def test_consume_logs_the_url_and_a_proxys_error_without_their_secrets(misbehaving_proxy, tmp_path):
    """No Kafka needed: the service says what it was started with, then waits for OpenSearch,
    logging each error answer, until SIGTERM."""
    _answer, url = misbehaving_proxy
    text, first = _consume_until_unreachable(tmp_path / "service.log", "--bootstrap", "127.0.0.1:9", "--opensearch",
                                             url, "--topic", "t")
    _assert_clean(text)
    assert first["starting"]["opensearch"] == url.replace(URL_PASSWORD, "[REDACTED]")
    waiting = first["opensearch unreachable, waiting"]
    assert "answered 500: exception: request rejected: Authorization: Bearer [REDACTED]" in waiting["error"]


def test_the_dashboard_logs_a_proxys_unexpected_answer_without_its_secrets(misbehaving_proxy, tmp_path):
    """An answer opensearch-py cannot read (not JSON) raises past the dashboard's handling:
    Flask logs the exception, whose message quotes the answer."""
    answer, url = misbehaving_proxy
    answer(200, f"<html>proxy login required; token {GITHUB}; password={DB_PASSWORD}</html>", "application/json")
    log = tmp_path / "dashboard.log"
    with open(log, "wb") as out:
        # port 0: the system picks a free one; the dashboard says which once it listens
        # SIGINT as a terminal's foreground process has it: a suite started in the background (`nohup ... &`)
        # hands its children SIGINT ignored, and Python then installs no KeyboardInterrupt for Ctrl-C
        proc = subprocess.Popen([*CLI, "dashboard", "--opensearch", url, "--port", "0"], stdout=out, stderr=out,
                                env=dict(os.environ, PYTHONUNBUFFERED="1"),
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            deadline = time.monotonic() + 60
            while not (said := re.search(r"dashboard on http://127\.0\.0\.1:(\d+)/", log.read_text())):
                assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
            port = int(said.group(1))
            for path in ("/", "/panel/errors", f"/?token={GITHUB}"):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30).close()
                except urllib.error.HTTPError:
                    pass  # an error page: what it logged is the point
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(60)
    text = log.read_text()
    _assert_clean(text)
    assert "GET /panel/errors" in text


# ----------------------------------------------------------------------------- the real OpenSearch

# A real GitHub token shape (its CRC32 checksum holds). The real OpenSearch quotes it back when it
# is an index prefix it refuses: 400 invalid_index_name_exception names the index.
PLANTED = "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"
REFUSED_PREFIX = f"_{PLANTED}-"


def _with_password(url: str) -> str:
    """The real server's URL with a password in its userinfo (OpenSearch without the security
    plugin ignores basic auth, so the requests go through)."""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://admin:{URL_PASSWORD}@{rest}"


def test_replay_into_the_real_opensearch_keeps_the_urls_password_out_of_what_it_prints(opensearch_url, index_prefix,
                                                                                       tmp_path):
    url = _with_password(opensearch_url)
    done = subprocess.run([*CLI, "replay", str(RUN), "--opensearch", url, "--index-prefix", f"{index_prefix}-",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert URL_PASSWORD not in done.stdout + done.stderr
    assert opensearch_url.split("://", 1)[1] in done.stdout + done.stderr  # the server is named, without it


def test_replay_shows_the_real_opensearchs_error_quoting_a_secret_redacted(opensearch_url, tmp_path):
    url = _with_password(opensearch_url)
    done = subprocess.run([*CLI, "replay", str(RUN), "--opensearch", url, "--index-prefix", REFUSED_PREFIX,
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=180)
    text = done.stdout + done.stderr
    assert done.returncode != 0
    assert "answered 400: invalid_index_name_exception: Invalid index name [_[REDACTED]-" in done.stderr
    assert PLANTED not in text and URL_PASSWORD not in text


def test_consume_with_the_real_servers_logs_the_url_and_the_error_without_their_secrets(
        opensearch_url, kafka_bootstrap, kafka_topic, tmp_path):
    """The real Kafka and OpenSearch: `starting` names the URL without its password, and the real
    server's refusal of the index prefix, which quotes it, is logged masked until SIGTERM."""
    url = _with_password(opensearch_url)
    text, first = _consume_until_unreachable(tmp_path / "service.log", "--bootstrap", kafka_bootstrap, "--opensearch",
                                             url, "--index-prefix", REFUSED_PREFIX, "--topic", kafka_topic())
    assert PLANTED not in text and URL_PASSWORD not in text
    # the password in the URL of its command line is warned of, as a line of its JSON log
    assert any(event.startswith("a password in the URL given with --opensearch, on the command line") for event in first)
    assert first["starting"]["opensearch"] == url.replace(URL_PASSWORD, "[REDACTED]")
    waiting = first["opensearch unreachable, waiting"]
    assert "answered 400: invalid_index_name_exception: Invalid index name [_[REDACTED]-" in waiting["error"]


def test_consume_dead_letters_and_logs_poison_messages_without_the_secrets_they_quote(
        opensearch_url, kafka_bootstrap, kafka_topic, index_prefix, tmp_path):
    """The real Kafka and OpenSearch: poison messages holding secrets (broken JSON, a label named
    by a token, an events object whose `kind` is one) go to the dead-letter topic as they came,
    their reason headers masked; a good record beside them is indexed masked; the service's log
    holds none of them."""
    from kafka import KafkaConsumer

    from kafka_fixtures import documents, produce, service_command, start_service, stop, wait_until

    logs, events, dead = kafka_topic(), kafka_topic(), kafka_topic()
    kube = {"pod_name": "llama-train-worker-0", "namespace_name": "team-a", "container_name": "pytorch",
            "pod_id": "0c6d1111-2222-3333-4444-555566667777"}
    good = {"time": "2024-05-01T12:00:00Z", "stream": "stderr", "_p": "F", "kubernetes": kube,
            "log": f"node-7:4021:4102 [3] NCCL WARN connect failed: DB_PASSWORD={DB_PASSWORD} token {GITHUB}"}
    produce(kafka_bootstrap, logs, [
        (b"not-json", f'{{"log": "DB_PASSWORD={DB_PASSWORD} {GITHUB}'.encode()),
        (b"bad-label", json.dumps({**good, "kubernetes": {**kube, "labels": {JWT: 1}}}).encode()),
        (b"good", json.dumps(good).encode())])
    produce(kafka_bootstrap, events, [(b"bad-kind", json.dumps({"kind": GITHUB}).encode())])
    log = tmp_path / "service.log"
    prefix = f"{index_prefix}-"
    proc = start_service(service_command(kafka_bootstrap, opensearch_url, logs, prefix, f"{logs}-g", "--events-topic",
                                         events, "--dead-letter-topic", dead), log)
    try:
        consumer = KafkaConsumer(dead, bootstrap_servers=kafka_bootstrap, auto_offset_reset="earliest",
                                 consumer_timeout_ms=60_000)
        letters = []
        for m in consumer:
            letters.append((m.key, m.value, {k: v.decode() for k, v in m.headers}))
            if len(letters) == 3:
                break
        consumer.close()
        wait_until(lambda: documents(opensearch_url, prefix).get("error"), 60, what="the good record indexed")
        indexed = json.dumps(documents(opensearch_url, prefix))
    finally:
        assert stop(proc) == 0, log.read_text()[-3000:]
    by_key = {key: (value, headers) for key, value, headers in letters}
    assert {k: h["gangscope-reason"] for k, (_v, h) in by_key.items()} == {
        b"not-json": "not_json", b"bad-label": "bad_kubernetes", b"bad-kind": "unknown_kind"}
    assert by_key[b"bad-kind"][1]["gangscope-detail"] == "[REDACTED]"
    # a JWT-named label, cut for the message where a word ends: its header, never its start of claims
    assert by_key[b"bad-label"][1]["gangscope-detail"].startswith(f"kubernetes.labels['{JWT.split('.')[0]}....']")
    assert GITHUB.encode() in by_key[b"bad-kind"][0]  # the message itself as it came, to be read again
    headers = json.dumps([h for _v, h in by_key.values()])
    _assert_clean(headers + indexed + log.read_text())
    assert JWT.split(".")[1][:12] not in headers
    assert "DB_PASSWORD=[REDACTED]" in indexed
    assert '"event": "starting"' in log.read_text()
