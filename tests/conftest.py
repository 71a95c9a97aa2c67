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

# server name -> (its address variable, the fixtures that need it)
SERVERS = {
    "kafka": ("GANGSCOPE_KAFKA_BOOTSTRAP", {"kafka_bootstrap", "kafka_topic", "kafka_sasl"}),
    "opensearch": ("GANGSCOPE_OPENSEARCH_URL", {"opensearch_url", "index_prefix"}),
}
SASL_ENV = "GANGSCOPE_KAFKA_SASL_BOOTSTRAP"
# services/up's test-only SASL/PLAIN user (services/conf/kafka/server.properties), not a secret
SASL_TEST_USER = ("gangscope", "gangscope-test-only")
# A cold first start fetches the jars with Maven: give it time, but not forever.
UP_TIMEOUT_S = 900
# The consumer backend of every service a test starts, unless its module or the `kafka_client`
# fixture (tests/kafka_backends.py) names one: kafka-python, so that it stays tested now that
# `--kafka-client auto` picks confluent where it is installed (test_kafka_confluent.py,
# test_kafka_sasl_confluent.py and test_consume_order.py run on confluent).
os.environ.setdefault("GANGSCOPE_KAFKA_CLIENT", "kafka-python")


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
        if any(fixtures & set(getattr(item, "fixturenames", ())) for _, fixtures in SERVERS.values()):
            item.add_marker(pytest.mark.servers)
        if skip and item.get_closest_marker("servers"):
            item.add_marker(pytest.mark.skip(reason=f"{SKIP_ENV} is set"))


def _script(name: str, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SERVICES / name), *args], capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=timeout,
    )


class _LocalServers:
    """Starts the servers this session needs through services/up, at most once each.

    The first test that needs a server starts every server the collected tests will need,
    in one `services/up` call, so their JVMs start side by side.
    """

    def __init__(self, session):
        self.session = session
        self.addresses: dict[str, str] = {}
        self.errors: dict[str, str] = {}
        self.started: list[str] = []
        self.sasl: str | None = None  # the Kafka SASL/PLAIN listener, when services/up started one

    def address(self, name: str) -> str:
        env_name = SERVERS[name][0]
        if os.environ.get(env_name):
            return os.environ[env_name]
        if name not in self.addresses and name not in self.errors:
            self._start(sorted({name, *self._anticipated()}))
        if name in self.errors:
            pytest.fail(self.errors[name], pytrace=False)
        return self.addresses[name]

    def _anticipated(self) -> set[str]:
        used = set().union(*(set(getattr(i, "fixturenames", ())) for i in self.session.items))
        return {
            n for n, (env_name, fixtures) in SERVERS.items()
            if fixtures & used and not os.environ.get(env_name)
            and n not in self.addresses and n not in self.errors
        }

    def _start(self, names: list[str]) -> None:
        already_up = {n for n in names if _script("status", n).returncode == 0}
        up = _script("up", *names, timeout=UP_TIMEOUT_S)
        if up.returncode != 0:
            # up names the server its one-line error is about; the others get a start of their own
            blamed = [n for n in names if f"services/up: {n}:" in up.stderr] or names[:1]
            for n in blamed:
                self.errors[n] = (
                    f"services/up {n} failed (exit {up.returncode}); set {SERVERS[n][0]} to use "
                    f"a running server, or {SKIP_ENV}=1 to skip server tests:\n{up.stderr.strip()}"
                )
            rest = [n for n in names if n not in blamed]
            if rest:
                self._start(rest)
            return
        lines = dict(line.partition("=")[::2] for line in up.stdout.splitlines() if "=" in line)
        self.sasl = lines.get(SASL_ENV) or self.sasl
        for n in names:
            self.addresses[n] = lines[SERVERS[n][0]]
            if n not in already_up:
                self.started.append(n)

    def stop(self) -> None:
        """services/down for what this session started; a server that was up stays up."""
        if self.started:
            _script("down", *self.started)


@pytest.fixture(scope="session")
def _local_servers(request):
    servers = _LocalServers(request.session)
    yield servers
    servers.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap(_local_servers) -> str:
    """host:port of a real Kafka broker."""
    return _local_servers.address("kafka")


@pytest.fixture(scope="session")
def opensearch_url(_local_servers) -> str:
    """http://host:port of a real OpenSearch node."""
    return _local_servers.address("opensearch").rstrip("/")


@pytest.fixture(scope="session")
def kafka_sasl(_local_servers, kafka_bootstrap) -> tuple[str, str, str]:
    """(bootstrap, user, password) of the broker's SASL_PLAINTEXT listener, mechanism PLAIN
    (services/README.md: a test-only user). With GANGSCOPE_KAFKA_BOOTSTRAP set, only
    GANGSCOPE_KAFKA_SASL_BOOTSTRAP (and _USER / _PASSWORD) says where one is."""
    user = os.environ.get("GANGSCOPE_KAFKA_SASL_USER", SASL_TEST_USER[0])
    password = os.environ.get("GANGSCOPE_KAFKA_SASL_PASSWORD", SASL_TEST_USER[1])
    if os.environ.get(SASL_ENV):
        return os.environ[SASL_ENV], user, password
    if os.environ.get(SERVERS["kafka"][0]):
        pytest.skip(f"the Kafka in use is not services/up's: set {SASL_ENV} to test SASL against it")
    if not _local_servers.sasl:
        pytest.fail("the running Kafka has no SASL listener (started by an older services/up): "
                    "services/down kafka, then run again", pytrace=False)
    return _local_servers.sasl, user, password


def _unique(request, prefix: str, keep: int) -> str:
    """prefix-<test name, slugged>-<random>: unique, and easy to trace back to its test."""
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:keep].strip("-")
    return f"{prefix}-{slug}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def kafka_topic(kafka_bootstrap, request):
    """Factory: kafka_topic(partitions=1, configs=None) creates a topic of this test's own (with
    those topic configs) and returns its name.

    Topics are deleted when the test ends.
    """
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap, client_id="gangscope-tests")
    created: list[str] = []

    def make(partitions: int = 1, configs: dict[str, str] | None = None) -> str:
        name = _unique(request, "gst", 60)
        admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1,
                                      topic_configs=configs or {})])
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


@pytest.fixture
def private_kafka():
    """A Kafka broker of this test's own (kafka_fixtures.PrivateServer: its own ports and run folder),
    so the test may stop and restart it; removed when the test ends."""
    from kafka_fixtures import PrivateServer

    broker = PrivateServer("kafka")
    try:
        broker.up()
        yield broker
    finally:
        broker.remove()
