"""`gangscope consume` settings: flags > config file > GANGSCOPE_* environment > defaults; bad ones in one line."""

from __future__ import annotations

import pytest

from gangscope.pipeline.run import config
from gangscope.pipeline.run.cli import main
from gangscope.pipeline.errors import UsageError

BASE = {"GANGSCOPE_KAFKA_BOOTSTRAP": "env-broker:9092", "GANGSCOPE_OPENSEARCH_URL": "http://env-os:9200"}


def test_flags_beat_the_file_which_beats_the_environment_which_beats_defaults(tmp_path):
    path = tmp_path / "consume.toml"
    path.write_text('group = "from-file"\nflush_idle = 7.5\ntopics = ["file-logs"]\n')
    env = dict(BASE, GANGSCOPE_GROUP="from-env", GANGSCOPE_FLUSH_IDLE="9", GANGSCOPE_COMMIT_INTERVAL="3")
    cfg = config.load({"flush_idle": "1.5"}, str(path), env)
    assert cfg.flush_idle == 1.5 and cfg.origin["flush_idle"] == "flag"
    assert cfg.group == "from-file" and cfg.topics == ["file-logs"]
    assert cfg.commit_interval == 3.0 and cfg.origin["commit_interval"] == "env"
    assert cfg.attempt_idle == 300.0 and cfg.origin["attempt_idle"] == "default"


def test_bootstrap_and_opensearch_read_the_spec_variables():
    cfg = config.load({}, None, BASE)
    assert cfg.bootstrap == "env-broker:9092" and cfg.opensearch == "http://env-os:9200"


def test_a_consume_table_in_a_shared_file_is_read(tmp_path):
    path = tmp_path / "gangscope.toml"
    path.write_text('[consume]\nevents_topics = ["k8s-events"]\nsecurity_protocol = "SASL_SSL"\n'
                    'sasl_mechanism = "SCRAM-SHA-512"\nsasl_username = "gangscope"\n')
    cfg = config.load({}, str(path), dict(BASE, GANGSCOPE_SASL_PASSWORD="s3cret"))
    assert cfg.events_topics == ["k8s-events"] and cfg.sasl_mechanism == "SCRAM-SHA-512"
    assert cfg.sasl_password == "s3cret" and cfg.public()["sasl_password"] == "***"


def test_kafka_client_options_carry_tls_and_sasl(tmp_path):
    from gangscope.pipeline.sources.kafka import consumer_options

    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    cfg = config.load({"security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN", "sasl_username": "u",
                       "sasl_password": "p", "ssl_cafile": str(ca), "instance_id": "consume-0"}, None, BASE)
    opts = consumer_options(cfg)
    assert opts["security_protocol"] == "SASL_SSL" and opts["ssl_cafile"] == str(ca)
    assert opts["sasl_mechanism"] == "PLAIN" and opts["sasl_plain_username"] == "u"
    assert opts["enable_auto_commit"] is False and opts["group_instance_id"] == "consume-0"


@pytest.mark.parametrize("flags, says", [
    ({"start": "middle"}, "start must be earliest or latest"),
    ({"flush_idle": "soon"}, "flush_idle = 'soon'"),
    ({"security_protocol": "SASL_SSL"}, "SASL needs sasl_mechanism"),
    ({"security_protocol": "SASL_SSL", "sasl_mechanism": "OAUTHBEARER"}, "sasl_mechanism must be one of PLAIN"),
    ({"max_containers": 0}, "max_containers must be at least 1"),
    ({"digest_max_bytes": -1}, "digest_max_bytes must not be negative"),
    ({"ssl_cafile": "/nonexistent/ca.pem"}, "no such file"),
])
def test_bad_settings_are_one_line_usage_errors(flags, says):
    with pytest.raises(UsageError, match=says.replace("(", r"\(")) as err:
        config.load(flags, None, BASE)
    assert "\n" not in str(err.value)


def test_unknown_keys_in_the_file_are_named(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('grop = "typo"\n')
    with pytest.raises(UsageError, match="unknown setting.*grop"):
        config.load({}, str(path), BASE)


def test_consume_without_a_broker_exits_2_with_one_line(monkeypatch, capsys):
    monkeypatch.delenv("GANGSCOPE_KAFKA_BOOTSTRAP", raising=False)
    assert main(["consume", "--opensearch", "http://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "GANGSCOPE_KAFKA_BOOTSTRAP" in err


def test_replay_needs_paths_or_a_topic(capsys):
    assert main(["replay"]) == 2
    assert "--from-kafka" in capsys.readouterr().err


def test_memory_bounds_of_the_service_are_settings_with_replays_defaults():
    from gangscope.pipeline.curate.stats import CurationLimits
    from gangscope.pipeline.diagnose.digest import JobDigest

    cfg = config.load({}, None, BASE)
    assert cfg.max_containers == CurationLimits.max_containers and cfg.digest_max_bytes == JobDigest.max_bytes
    cfg = config.load({"max_containers": 500, "digest_max_bytes": 1 << 20}, None, BASE)
    assert (cfg.max_containers, cfg.digest_max_bytes) == (500, 1 << 20)
