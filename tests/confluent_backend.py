"""An autouse fixture for the modules that run the service's tests again on confluent-kafka: the
environment names the backend, and every service the test started must have logged that it
subscribed with it (a run on the wrong backend cannot pass)."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(autouse=True)
def confluent_backend(monkeypatch, tmp_path):
    monkeypatch.setenv("GANGSCOPE_KAFKA_CLIENT", "confluent")
    yield
    clients = set()
    for path in tmp_path.rglob("*"):
        if not path.is_file() or path.stat().st_size > 64 << 20:
            continue
        for line in path.read_text(errors="replace").splitlines():
            if '"subscribed"' in line and "kafka_client" in line:
                try:
                    clients.add(json.loads(line).get("kafka_client"))
                except ValueError:
                    pass
    assert clients <= {"confluent"}, f"services ran on {clients}"
