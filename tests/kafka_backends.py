"""The consumer service's Kafka backends in the tests: a fixture that runs a test once per backend
(`kafka_client`), and the check that every service a test started subscribed with the backend the
test meant (a run on the wrong backend cannot pass)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

BACKENDS = ("kafka-python", "confluent")


def clients_logged(folder: Path) -> set[str]:
    """The backends the services logging under `folder` subscribed with (their `subscribed` lines)."""
    clients = set()
    for path in folder.rglob("*"):
        if not path.is_file() or path.stat().st_size > 64 << 20:
            continue
        for line in path.read_text(errors="replace").splitlines():
            if '"subscribed"' in line and "kafka_client" in line:
                try:
                    clients.add(json.loads(line).get("kafka_client"))
                except ValueError:
                    pass
    return clients


def _installed(client: str) -> bool:
    return client != "confluent" or importlib.util.find_spec("confluent_kafka") is not None


@pytest.fixture(params=BACKENDS)
def kafka_client(request, monkeypatch, tmp_path) -> str:
    """The test once per backend: the services it starts read GANGSCOPE_KAFKA_CLIENT. confluent is
    skipped only where gangscope[confluent] is not installed (it is in the test extra)."""
    client = request.param
    if not _installed(client):
        pytest.skip("confluent-kafka is not installed (pip install 'gangscope[confluent]')")
    monkeypatch.setenv("GANGSCOPE_KAFKA_CLIENT", client)
    yield client
    logged = clients_logged(tmp_path)
    assert logged and logged <= {client}, f"services ran on {logged or 'no logged backend'}, not {client}"
