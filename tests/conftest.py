"""Real Kafka and OpenSearch for the test session, and per-test isolation on them.

`kafka_bootstrap` / `opensearch_url` use GANGSCOPE_KAFKA_BOOTSTRAP / GANGSCOPE_OPENSEARCH_URL
when set; otherwise they start the server with services/up and, at the end of the session,
stop it with services/down, but only a server this session started itself.

Every test that uses them is marked `servers`. Such tests run by default and fail loudly when
a server cannot start; GANGSCOPE_SKIP_SERVERS=1 (or `-m "not servers"`) leaves them out.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ROOT / "services"
SKIP_ENV = "GANGSCOPE_SKIP_SERVERS"
SERVER_FIXTURES = {"kafka_bootstrap", "opensearch_url", "kafka_topic", "index_prefix"}
# A cold first start fetches the jars with Maven: give it time, but not forever.
UP_TIMEOUT_S = 900


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"servers: talks to the real Kafka and/or OpenSearch (skipped only when {SKIP_ENV}=1)",
    )
    # kafka-python loads its protocol schemas through an importlib API that warns on 3.11+.
    config.addinivalue_line("filterwarnings", r"ignore:.*is deprecated\. Use files\(\) instead:DeprecationWarning")


def pytest_collection_modifyitems(config, items):
    skip = os.environ.get(SKIP_ENV, "") not in ("", "0")
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.servers)
        if skip and item.get_closest_marker("servers"):
            item.add_marker(pytest.mark.skip(reason=f"{SKIP_ENV} is set"))


def _service(name: str, env_name: str, request) -> str:
    given = os.environ.get(env_name)
    if given:
        return given
    status = subprocess.run(
        [str(SERVICES / "status"), name], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    already_up = status.returncode == 0
    up = subprocess.run(
        [str(SERVICES / "up"), name],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=UP_TIMEOUT_S,
    )
    if up.returncode != 0:
        pytest.fail(
            f"services/up {name} failed (exit {up.returncode}); set {env_name} to use a running "
            f"server, or {SKIP_ENV}=1 to skip server tests:\n{up.stderr.strip()}",
            pytrace=False,
        )
    if not already_up:
        request.addfinalizer(lambda: subprocess.run([str(SERVICES / "down"), name], stdin=subprocess.DEVNULL))
    for line in up.stdout.splitlines():
        key, _, value = line.partition("=")
        if key == env_name:
            return value
    pytest.fail(f"services/up {name} printed no {env_name}= line: {up.stdout!r}", pytrace=False)


@pytest.fixture(scope="session")
def kafka_bootstrap(request) -> str:
    """host:port of a real Kafka broker."""
    return _service("kafka", "GANGSCOPE_KAFKA_BOOTSTRAP", request)


@pytest.fixture(scope="session")
def opensearch_url(request) -> str:
    """http://host:port of a real OpenSearch node."""
    return _service("opensearch", "GANGSCOPE_OPENSEARCH_URL", request).rstrip("/")


def _unique(request, prefix: str, keep: int) -> str:
    """prefix-<test name, slugged>-<random>: unique, and easy to trace back to its test."""
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:keep].strip("-")
    return f"{prefix}-{slug}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def kafka_topic(kafka_bootstrap, request):
    """Factory: kafka_topic(partitions=1) creates a topic of this test's own and returns its name.

    Topics are deleted when the test ends.
    """
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap, client_id="gangscope-tests")
    created: list[str] = []

    def make(partitions: int = 1) -> str:
        name = _unique(request, "gst", 60)
        admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
        created.append(name)
        return name

    yield make
    try:
        if created:
            admin.delete_topics(created)
    finally:
        admin.close()


def _delete(url: str) -> None:
    req = urllib.request.Request(url, method="DELETE")
    try:
        urllib.request.urlopen(req, timeout=30).close()
    except urllib.error.HTTPError as e:
        if e.code != 404:
            raise


@pytest.fixture
def index_prefix(opensearch_url, request) -> str:
    """A prefix of this test's own for index, alias and template names (in place of "gangscope").

    Everything named with it is deleted when the test ends.
    """
    prefix = _unique(request, "gst", 40)
    yield prefix
    _delete(f"{opensearch_url}/{prefix}*?expand_wildcards=all")
    try:
        with urllib.request.urlopen(f"{opensearch_url}/_index_template/{prefix}*", timeout=30) as answer:
            names = [t["name"] for t in json.load(answer).get("index_templates", [])]
    except urllib.error.HTTPError as e:
        if e.code != 404:
            raise
        names = []
    for name in names:
        _delete(f"{opensearch_url}/_index_template/{name}")
