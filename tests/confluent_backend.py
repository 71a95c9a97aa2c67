"""An autouse fixture for the modules that run the service's tests again on confluent-kafka: the
environment names the backend, and every service the test started must have logged that it
subscribed with it (a run on the wrong backend cannot pass)."""

from __future__ import annotations

import pytest

from kafka_backends import clients_logged


@pytest.fixture(autouse=True)
def confluent_backend(monkeypatch, tmp_path):
    monkeypatch.setenv("GANGSCOPE_KAFKA_CLIENT", "confluent")
    yield
    clients = clients_logged(tmp_path)
    assert clients <= {"confluent"}, f"services ran on {clients}"
