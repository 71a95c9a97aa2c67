"""Which Kafka backend `gangscope consume` runs on: `--kafka-client auto`, the default, is confluent
(librdkafka) where confluent-kafka is installed and kafka-python where it is not; a backend named
by flag, config file or GANGSCOPE_KAFKA_CLIENT is the one used."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from gangscope.pipeline.errors import UsageError
from gangscope.pipeline.run import config

ENV = {"GANGSCOPE_KAFKA_BOOTSTRAP": "env-broker:9092", "GANGSCOPE_OPENSEARCH_URL": "http://env-os:9200"}


def test_auto_is_confluent_where_confluent_kafka_is_installed():
    installed = importlib.util.find_spec("confluent_kafka") is not None
    assert config.load({}, None, ENV).kafka_client == ("confluent" if installed else "kafka-python")


def test_auto_is_kafka_python_where_confluent_kafka_is_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "confluent_kafka", None)  # what an import then finds: nothing
    assert config.load({}, None, ENV).kafka_client == "kafka-python"
    with pytest.raises(UsageError, match="needs confluent-kafka"):
        config.load({"kafka_client": "confluent"}, None, ENV)


@pytest.mark.parametrize("client", ["kafka-python", "confluent"])
def test_a_named_backend_is_the_one_used(client, tmp_path):
    if client == "confluent":
        pytest.importorskip("confluent_kafka")
    assert config.load({"kafka_client": client}, None, ENV).kafka_client == client
    assert config.load({}, None, dict(ENV, GANGSCOPE_KAFKA_CLIENT=client)).kafka_client == client
    path = tmp_path / "consume.toml"
    path.write_text(f'[consume]\nkafka_client = "{client}"\n')
    assert config.load({}, str(path), ENV).kafka_client == client


def test_an_unknown_backend_is_a_usage_error():
    with pytest.raises(UsageError, match="kafka_client must be auto or one of kafka-python, confluent"):
        config.load({"kafka_client": "librdkafka"}, None, ENV)
